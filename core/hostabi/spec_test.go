package hostabi

import (
	"testing"

	"github.com/liblock/liblock/core/engine"
	"github.com/stretchr/testify/assert"
)

// TestActionKindsMatchEngine: the spec's actions 1–7 are the engine's own.
func TestActionKindsMatchEngine(t *testing.T) {
	for _, k := range [][2]engine.ActionKind{
		{ActOpen, engine.ActOpen}, {ActWrite, engine.ActWrite}, {ActClose, engine.ActClose},
		{ActDone, engine.ActDone}, {ActLost, engine.ActLost}, {ActTimer, engine.ActTimer},
		{ActClosed, engine.ActClosed},
	} {
		assert.Equal(t, k[1], k[0], "the spec's action kind (actual), the engine's (expected)")
	}
}
