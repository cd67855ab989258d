package hostabi

import (
	"testing"

	"github.com/liblock/liblock/core/engine"
)

// TestActionKindsMatchEngine: the spec's actions 1–7 are the engine's own.
func TestActionKindsMatchEngine(t *testing.T) {
	for _, k := range [][2]engine.ActionKind{
		{ActOpen, engine.ActOpen}, {ActWrite, engine.ActWrite}, {ActClose, engine.ActClose},
		{ActDone, engine.ActDone}, {ActLost, engine.ActLost}, {ActTimer, engine.ActTimer},
		{ActClosed, engine.ActClosed},
	} {
		if k[0] != k[1] {
			t.Errorf("the spec's action %d is the engine's %d", k[0], k[1])
		}
	}
}
