package clustertest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Sharded pub/sub (core/engine/spubsub.go): on a cluster node a waiter
// SSUBSCRIBEs on the shard of its key's slot and the release scripts
// SPUBLISH there; nothing uses plain PUBLISH or SUBSCRIBE. The scenarios
// run on 3 primaries without replicas and wait_replicas=0: they are about
// pub/sub, and a replica's acknowledgement missing WAIT's deadline on a
// busy machine would fail a grant they need.

// calls is how often node n ran cmd (redistest's CommandCalls).
func calls(t *testing.T, n *redistest.Node, cmd string) int {
	t.Helper()
	c, err := n.CommandCalls(cmd)
	require.NoError(t, err)
	return c
}

// shardSubscribers is PUBSUB SHARDNUMSUB channel on n.
func shardSubscribers(n *redistest.Node, channel string) string {
	out, err := n.Do("PUBSUB", "SHARDNUMSUB", channel)
	if err != nil {
		return ""
	}
	f := strings.Fields(out)
	if len(f) == 0 {
		return ""
	}
	return f[len(f)-1]
}

// waitFor starts a waiting acquire of resource on c (then releases it),
// its outcome on the channel returned.
func waitFor(c *core.Client, resource string) chan error {
	got := make(chan error, 1)
	go func() {
		ctx := context.Background()
		lw, err := c.Acquire(ctx, resource, 30*time.Second, core.Wait(time.Minute))
		if err == nil {
			err = lw.Release(ctx)
		}
		got <- err
	}()
	return got
}

func outcome(t *testing.T, got chan error, what string) {
	t.Helper()
	select {
	case err := <-got:
		require.NoError(t, err, what)
	case <-time.After(time.Minute):
		t.Fatal(what + ": the waiter did not get the lock within its wait budget")
	}
}

// shardedWakeUp: a waiter on a 3-primary cluster subscribes on exactly its
// key's shard (SSUBSCRIBE), another client's release SPUBLISHes there and
// the waiter gets the lock; no node runs a plain PUBLISH or SUBSCRIBE.
func shardedWakeUp(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 0)
	for _, n := range rc.Nodes {
		_, err := n.Do("CONFIG", "RESETSTAT")
		require.NoError(t, err)
	}
	holder := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	waiter := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	ctx := context.Background()
	l, err := holder.Acquire(ctx, "swake", 30*time.Second)
	require.NoError(t, err)
	got := waitFor(waiter, "swake")
	channel := engine.ReleasedChannel("{swake}")
	owner := rc.PrimaryOfKey(t, "{swake}")
	locktest.Eventually(t, 10*time.Second, "the waiter subscribed on the key's shard", func() bool {
		return shardSubscribers(owner, channel) == "1"
	})
	require.NoError(t, l.Release(ctx))
	outcome(t, got, "woken")
	assert.GreaterOrEqual(t, calls(t, owner, "spublish"), 1, "the release SPUBLISHed on the key's shard")
	for _, n := range rc.Nodes {
		if n == owner {
			assert.GreaterOrEqual(t, calls(t, n, "ssubscribe"), 1, "%s: the key's shard", n.Addr())
		} else {
			assert.Zero(t, calls(t, n, "ssubscribe"), "%s: SSUBSCRIBE on the key's shard only", n.Addr())
			assert.Zero(t, calls(t, n, "spublish"), "%s", n.Addr())
		}
		for _, cmd := range []string{"publish", "subscribe"} {
			assert.Zero(t, calls(t, n, cmd), "%s: no plain %s on a cluster", n.Addr(), cmd)
		}
	}
	assertNoLockKeys(t, rc)
}

// shardedWakeAfterMigration: the waited key's slot migrates to another
// primary while a client waits; the old owner unsubscribes it
// (sunsubscribe), the waiter subscribes on the new owner and gets the lock
// once the holder releases (no hang).
func shardedWakeAfterMigration(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 0)
	holder := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	waiter := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	ctx := context.Background()
	l, err := holder.Acquire(ctx, "smig", 30*time.Second)
	require.NoError(t, err)
	got := waitFor(waiter, "smig")
	channel := engine.ReleasedChannel("{smig}")
	from := rc.PrimaryOfKey(t, "{smig}")
	to := rc.OtherPrimary(t, from)
	locktest.Eventually(t, 10*time.Second, "the waiter subscribed on the key's shard", func() bool {
		return shardSubscribers(from, channel) == "1"
	})
	rc.MigrateSlot(t, rc.Slot(t, "{smig}"), to)
	locktest.Eventually(t, 20*time.Second, "the waiter subscribed on the slot's new owner", func() bool {
		return shardSubscribers(to, channel) == "1"
	})
	assert.Equal(t, "0", shardSubscribers(from, channel), "nothing left on the old owner")
	require.NoError(t, l.Release(ctx))
	outcome(t, got, "after the migration")
	assertNoLockKeys(t, rc)
}
