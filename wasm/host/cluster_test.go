package host_test

import (
	"testing"

	"github.com/liblock/liblock/core/testkit/clustertest"
)

// TestCluster runs the Redis Cluster suite against the Go driver over
// liblock.wasm's engine.
func TestCluster(t *testing.T) {
	clustertest.Run(t, mod.NewClient)
}
