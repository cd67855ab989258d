package core_test

import (
	"testing"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/clustertest"
)

// TestCluster runs the Redis Cluster suite (real clusters, slots migrated
// and primaries failed over for real) against the native core.
func TestCluster(t *testing.T) {
	clustertest.Run(t, core.New)
}
