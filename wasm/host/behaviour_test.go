package host_test

import (
	"testing"

	"github.com/liblock/liblock/core/testkit/locktest"
)

// TestBehaviour runs the shared behaviour suite (real redis-servers, nodes
// killed and frozen) against the Go driver over liblock.wasm's engine.
func TestBehaviour(t *testing.T) {
	locktest.Run(t, locktest.Of(mod.NewClient), locktest.Skip{
		// The module's INFO action (core/hostabi/spec/protocol.json) carries
		// no permit slot, so a semaphore permit's Lock.Slot is 0 over wasm.
		"Semaphore/Lock.Slot": "the host ABI's INFO action does not carry a permit's slot: Lock.Slot() is 0 over wasm",
	})
}
