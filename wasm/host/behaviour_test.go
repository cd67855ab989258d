package host_test

import (
	"testing"

	"github.com/liblock/liblock/core/testkit/locktest"
)

// TestBehaviour runs the shared behaviour suite (real redis-servers, nodes
// killed and frozen) against the Go driver over liblock.wasm's engine.
func TestBehaviour(t *testing.T) {
	locktest.Run(t, locktest.Of(mod.NewClient))
}
