package host_test

import (
	"testing"

	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/sentineltest"
)

// TestSentinel runs the Sentinel and WAIT suite against the Go driver over
// liblock.wasm's engine.
func TestSentinel(t *testing.T) {
	sentineltest.Run(t, locktest.Of(mod.NewClient))
}
