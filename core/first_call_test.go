package core_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestFirstCallWithFrozenNodes: the first call of a fresh client with
// frozen nodes (SIGSTOP: they accept connections and never answer) ends on
// the engine's connect deadline, one node timeout, like every later call:
// one of three frozen, it is granted by the other two; two of three frozen,
// it is unavailable and each frozen node's cause is that deadline.
func TestFirstCallWithFrozenNodes(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	fresh := func() *core.Client {
		cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 500 * time.Millisecond})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}

	require.NoError(t, c.Nodes[2].Freeze())
	t.Cleanup(func() { _ = c.Nodes[2].Thaw() })
	l, err := fresh().Acquire(ctx, "first:one", 5*time.Second)
	require.NoError(t, err, "one frozen node of three")
	require.NoError(t, l.Release(ctx))

	require.NoError(t, c.Nodes[1].Freeze())
	t.Cleanup(func() { _ = c.Nodes[1].Thaw() })
	_, err = fresh().Acquire(ctx, "first:two", 5*time.Second)
	require.ErrorIs(t, err, core.ErrUnavailable)
	var ue *engine.UnavailableError
	require.True(t, errors.As(err, &ue), "%v", err)
	causes := map[int]string{}
	for _, ne := range ue.Nodes {
		causes[ne.Node] = ne.Err.Error()
	}
	require.Len(t, causes, 2, "%v", err)
	for _, i := range []int{1, 2} {
		assert.Contains(t, causes[i], "connect: no answer within the node timeout (500ms)", "node %d", i)
	}
}
