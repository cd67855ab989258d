package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cmdCalls is how many times node n ran cmd (redistest's CommandCalls).
func cmdCalls(t *testing.T, n *redistest.Node, cmd string) int {
	t.Helper()
	v, err := n.CommandCalls(cmd)
	require.NoError(t, err)
	return v
}

// countingClient is newClient with a node timeout far above a loaded
// machine's stalls (under -race, beside other jobs): the tests that count the
// commands an acquire sends need its first attempt to succeed, and a node
// that timed out would make the engine try again, sending its SET twice.
func countingClient(t *testing.T, c *redistest.Cluster) *core.Client {
	t.Helper()
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 2 * time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// TestSemaphoreFirstRoundIsSetNX: an uncontended permit's first round is
// the mutex's SET NX PX on the preferred slot's key, with no script (the
// acquire script costs a node several times a SET); the release is one
// script call per node. Counted on every node by polling: a node outside
// the quorum may run its command after Acquire returned.
func TestSemaphoreFirstRoundIsSetNX(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := countingClient(t, c)
	ctx := context.Background()
	for _, n := range c.Nodes {
		_, err := n.Do("CONFIG", "RESETSTAT")
		require.NoError(t, err)
	}
	l, err := cl.Acquire(ctx, "fast", 10*time.Second, core.Permits(3))
	require.NoError(t, err)
	assert.Equal(t, 0, l.Slot())
	require.Eventually(t, func() bool {
		for _, n := range c.Nodes {
			if cmdCalls(t, n, "set") != 1 {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "one SET per node")
	for i, n := range c.Nodes {
		assert.Zero(t, cmdCalls(t, n, "evalsha")+cmdCalls(t, n, "eval"), "node %d ran a script for an uncontended acquire", i)
		v, err := n.Do("GET", engine.SlotKey(engine.SemKey("fast", 3), 0))
		require.NoError(t, err)
		assert.NotEmpty(t, v, "node %d: slot 0 holds the permit's token", i)
	}
	require.NoError(t, l.Release(ctx))
	require.Eventually(t, func() bool {
		for _, n := range c.Nodes {
			if keys, err := n.Keys(); err != nil || len(keys) != 0 {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "nothing left after the release")
}

// TestSemaphoreFirstRoundFallback: where the preferred slot is taken, the
// node answers SET NX with nil and gets the acquire script. Slot 0 held by
// another program on a minority (node 2): nodes 0 and 1 grant slot 0, a
// quorum; node 2 grants nothing or (its script) another slot, deleted as a
// stray. Slot 0 held on a majority (nodes 0 and 1): their scripts grant
// slot 1, a quorum, and node 2's grant of slot 0 is the stray. Either
// way nothing of ours is left after the release, and the other program's
// keys are untouched.
func TestSemaphoreFirstRoundFallback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		takenOn  []int
		wantSlot int
	}{
		{"minority", []int{2}, 0},
		{"majority", []int{0, 1}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := redistest.Start(t, 3)
			cl := newClient(t, c)
			ctx := context.Background()
			foreign := engine.SlotKey(engine.SemKey("fallback", 3), 0)
			for _, i := range tc.takenOn {
				_, err := c.Nodes[i].Do("SET", foreign, "another-program", "PX", "60000")
				require.NoError(t, err)
			}
			l, err := cl.Acquire(ctx, "fallback", 10*time.Second, core.Permits(3))
			require.NoError(t, err)
			assert.Equal(t, tc.wantSlot, l.Slot())
			require.NoError(t, l.Release(ctx))
			require.Eventually(t, func() bool { return onlyForeign(c, tc.takenOn) }, 5*time.Second, 5*time.Millisecond, "only the other program's keys are left")
			// The check's negative control: one key of ours left on a node
			// (a stray not deleted) fails it.
			_, err = c.Nodes[2].Do("SET", engine.SlotKey(engine.SemKey("fallback", 3), 2), "ours", "PX", "60000")
			require.NoError(t, err)
			assert.False(t, onlyForeign(c, tc.takenOn), "a key left behind must fail the check")
			_, err = c.Nodes[2].Do("DEL", engine.SlotKey(engine.SemKey("fallback", 3), 2))
			require.NoError(t, err)
			for _, i := range tc.takenOn {
				v, err := c.Nodes[i].Do("GET", foreign)
				require.NoError(t, err)
				assert.Equal(t, "another-program", v)
			}
		})
	}
}

// onlyForeign reports whether each node holds exactly the other program's
// key (nodes takenOn) or nothing.
func onlyForeign(c *redistest.Cluster, takenOn []int) bool {
	for i, n := range c.Nodes {
		keys, err := n.Keys()
		if err != nil {
			return false
		}
		want := 0
		for _, j := range takenOn {
			if j == i {
				want = 1
			}
		}
		if len(keys) != want {
			return false
		}
	}
	return true
}

// TestSemaphoreSlotHint: with slot 0 held for long by another program on
// every node, the first permit costs a nil and a script per node (slot 1);
// the client's next permit prefers the slot it last won, and is one SET
// NX per node again, with no script.
func TestSemaphoreSlotHint(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := countingClient(t, c)
	ctx := context.Background()
	held := engine.SlotKey(engine.SemKey("hint", 3), 0)
	for _, n := range c.Nodes {
		_, err := n.Do("SET", held, "long-holder", "PX", "60000")
		require.NoError(t, err)
	}
	l, err := cl.Acquire(ctx, "hint", 10*time.Second, core.Permits(3))
	require.NoError(t, err)
	assert.Equal(t, 1, l.Slot())
	require.NoError(t, l.Release(ctx))
	require.Eventually(t, func() bool { return onlyForeign(c, []int{0, 1, 2}) }, 5*time.Second, 5*time.Millisecond)
	for _, n := range c.Nodes {
		_, err := n.Do("CONFIG", "RESETSTAT")
		require.NoError(t, err)
	}
	l, err = cl.Acquire(ctx, "hint", 10*time.Second, core.Permits(3))
	require.NoError(t, err)
	assert.Equal(t, 1, l.Slot())
	require.Eventually(t, func() bool {
		for _, n := range c.Nodes {
			if cmdCalls(t, n, "set") != 1 {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "one SET per node")
	for i, n := range c.Nodes {
		assert.Zero(t, cmdCalls(t, n, "evalsha")+cmdCalls(t, n, "eval"), "node %d ran a script", i)
	}
	require.NoError(t, l.Release(ctx))
	require.Eventually(t, func() bool { return onlyForeign(c, []int{0, 1, 2}) }, 5*time.Second, 5*time.Millisecond)
}
