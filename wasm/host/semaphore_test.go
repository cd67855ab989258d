package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSemaphoreOverWasm: the Go driver over liblock.wasm's engine takes
// permits, is refused the N+1th, inspects the holders, and leaves nothing.
func TestSemaphoreOverWasm(t *testing.T) {
	cl := redistest.Start(t, 3)
	c, err := mod.NewClient(core.Config{Nodes: cl.URLs(), NodeTimeout: 200 * time.Millisecond, Owner: "wasm"})
	require.NoError(t, err)
	ctx := context.Background()
	var held []*core.Lock
	for range 2 {
		l, err := c.Acquire(ctx, "pool", 10*time.Second, core.Permits(2))
		require.NoError(t, err)
		held = append(held, l)
	}
	_, err = c.Acquire(ctx, "pool", 10*time.Second, core.Permits(2))
	require.ErrorIs(t, err, core.ErrNotAcquired)
	in, err := c.Inspect(ctx, "pool", core.InspectPermits(2))
	require.NoError(t, err)
	assert.Equal(t, 2, in.Permits)
	assert.Equal(t, 2, in.InUse)
	require.Len(t, in.Holders, 2)
	assert.Equal(t, "wasm", in.Holders[1].Owner)
	_, err = c.Acquire(ctx, "pool", time.Second, core.Permits(0))
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	for _, l := range held {
		require.NoError(t, l.Release(ctx))
	}
	require.NoError(t, c.Close())
	cl.AssertNoKeys(t)
}
