package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestAcquireAll: a multi-resource lock through liblock.wasm's engine (the
// set travels in the ACQUIRE event's resources): the set excludes a member
// and an overlapping set, Lock.Resources names it, the release frees it, and
// bad input names the element.
func TestAcquireAll(t *testing.T) {
	c := redistest.Start(t, 3)
	newClient := func() *core.Client {
		cl, err := mod.NewClient(core.Config{Nodes: c.URLs()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	a, b := newClient(), newClient()
	ctx := context.Background()
	l, err := a.AcquireAll(ctx, []string{"x", "y"}, 5*time.Second, core.Fence())
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "y"}, l.Resources())
	assert.Positive(t, l.Fence())
	_, err = b.Acquire(ctx, "y", time.Second)
	require.ErrorIs(t, err, core.ErrNotAcquired)
	_, err = b.AcquireAll(ctx, []string{"z", "x"}, time.Second)
	require.ErrorIs(t, err, core.ErrNotAcquired)
	assert.Contains(t, err.Error(), `resource "x" is held`)
	require.NoError(t, l.Extend(ctx, 5*time.Second))
	require.NoError(t, l.Release(ctx))
	l2, err := b.AcquireAll(ctx, []string{"y", "z"}, time.Second)
	require.NoError(t, err)
	require.NoError(t, l2.Release(ctx))

	var ae *core.ArgumentError
	_, err = a.AcquireAll(ctx, []string{"p", "q", "p"}, time.Second)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "resources[2]", ae.Arg)
	_, err = a.AcquireAll(ctx, []string{"", "q"}, time.Second)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "resources[0]", ae.Arg)
}
