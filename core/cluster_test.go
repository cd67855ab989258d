package core_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// clusterTimeout is the node timeout of the cluster scenarios.
const clusterTimeout = 500 * time.Millisecond

func clusterClient(t *testing.T, urls []string, wait *int) *core.Client {
	t.Helper()
	c, err := core.New(core.Config{Nodes: urls, NodeTimeout: clusterTimeout, WaitReplicas: wait})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func intPtr(n int) *int { return &n }

// noClusterLeak registers the goroutine check (run last: after the clients
// closed and the cluster stopped).
func noClusterLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() { locktest.NoGoroutineLeak(t, base) })
}

// getKey reads key on the primary serving it.
func getKey(t *testing.T, c *redistest.RedisCluster, key string) string {
	t.Helper()
	v, err := c.PrimaryOfKey(t, key).Do("GET", key)
	require.NoError(t, err)
	return v
}

// TestClusterPrimitives: every primitive on a 3-primary cluster (one
// replica each) as the only node (quorum 1): the keys of one resource
// share a hash tag, so every script runs on one shard; WAIT 1 by default.
func TestClusterPrimitives(t *testing.T) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 1)
	c := clusterClient(t, []string{rc.URL()}, nil)
	ctx := context.Background()

	// Mutex: acquire, contention, extend, inspect, release.
	l, err := c.Acquire(ctx, "orders", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "{orders}", l.Key(), "a resource without a tag is wrapped in one")
	assert.Equal(t, l.Token(), getKey(t, rc, "{orders}"))
	for _, r := range rc.ReplicasOf(rc.PrimaryOfKey(t, "{orders}")) {
		v, err := r.GetOnReplica("{orders}")
		require.NoError(t, err)
		assert.Equal(t, l.Token(), v, "WAIT 1 by default: the replica has the grant when the acquire returns")
	}
	_, err = c.Acquire(ctx, "orders", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, l.Extend(ctx, 20*time.Second))
	in, err := c.Inspect(ctx, "orders")
	require.NoError(t, err)
	assert.True(t, in.Held)
	require.NoError(t, l.Release(ctx))

	// A resource with its own tag keeps it.
	l, err = c.Acquire(ctx, "{grp}a", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "{grp}a", l.Key())
	require.NoError(t, l.Release(ctx))

	// Fencing: the counter and the key in one slot, increasing.
	var last int64
	for i := 0; i < 3; i++ {
		l, err := c.Acquire(ctx, "fenced", 10*time.Second, core.Fence())
		require.NoError(t, err)
		assert.Greater(t, l.Fence(), last)
		last = l.Fence()
		require.NoError(t, l.Release(ctx))
	}

	// Semaphore of 2 permits.
	p1, err := c.Acquire(ctx, "sem", 10*time.Second, core.Permits(2))
	require.NoError(t, err)
	p2, err := c.Acquire(ctx, "sem", 10*time.Second, core.Permits(2))
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "sem", time.Second, core.Permits(2))
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, p1.Release(ctx))
	require.NoError(t, p2.Release(ctx))

	// Read-write lock: two readers, then the writer once they are gone.
	r1, err := c.Acquire(ctx, "rw", 10*time.Second, core.Read())
	require.NoError(t, err)
	r2, err := c.Acquire(ctx, "rw", 10*time.Second, core.Read())
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "rw", time.Second, core.Write())
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, r1.Release(ctx))
	require.NoError(t, r2.Release(ctx))
	w, err := c.Acquire(ctx, "rw", 10*time.Second, core.Write(), core.Fence())
	require.NoError(t, err)
	require.NoError(t, w.Release(ctx))

	// Multi-resource in one slot (one tag), fenced.
	m, err := c.AcquireAll(ctx, []string{"{cart}1", "{cart}2", "{cart}3"}, 10*time.Second, core.Fence())
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "{cart}2", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, m.Release(ctx))

	// Across slots: refused before anything is sent, naming the resources.
	_, err = c.AcquireAll(ctx, []string{"a", "b"}, 10*time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, core.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "resources")
	assert.Contains(t, err.Error(), `"a"`)
	assert.Contains(t, err.Error(), `"b"`)

	// Election: campaign, a rival waits, resign hands over.
	ld, err := c.Campaign(ctx, "boss", "one")
	require.NoError(t, err)
	lead, err := c.Leader(ctx, "boss")
	require.NoError(t, err)
	assert.Equal(t, "one", lead.Value)
	require.NoError(t, ld.Resign(ctx))

	require.NoError(t, c.Close())
	assertNoLockKeys(t, rc)
}

// assertNoLockKeys polls until the cluster holds no key but fence
// counters (which outlive their locks by design).
func assertNoLockKeys(t *testing.T, rc *redistest.RedisCluster) {
	t.Helper()
	var left []string
	ok := assert.Eventually(t, func() bool {
		left = left[:0]
		for _, k := range rc.Keys(t) {
			if !strings.Contains(k, "\xfffence") {
				left = append(left, k)
			}
		}
		return len(left) == 0
	}, 5*time.Second, 10*time.Millisecond)
	if !ok {
		t.Errorf("keys left behind: %q", left)
	}
}
