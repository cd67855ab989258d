package core_test

import (
	"testing"

	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/sentineltest"
)

// TestSentinel runs the Sentinel and WAIT suite (a real primary, two
// replicas and three sentinels, failed over for real) against the native
// core.
func TestSentinel(t *testing.T) {
	sentineltest.Run(t, locktest.Native)
}
