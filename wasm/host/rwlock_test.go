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

// TestRWOverWasm: the Go driver over liblock.wasm's engine passes the
// read-write mode through the host protocol: readers share, the writer
// excludes them, Lock.Mode and Inspect with InspectReadWrite (the writer) answer as natively.
func TestRWOverWasm(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	cl, err := mod.NewClient(core.Config{Nodes: c.URLs(), Owner: "wasm"})
	require.NoError(t, err)
	defer cl.Close()
	r1, err := cl.Acquire(ctx, "doc", 10*time.Second, core.Read())
	require.NoError(t, err)
	r2, err := cl.Acquire(ctx, "doc", 10*time.Second, core.Read())
	require.NoError(t, err)
	assert.Equal(t, core.ModeRead, r1.Mode())
	_, err = cl.Acquire(ctx, "doc", 10*time.Second, core.Write())
	require.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, r1.Release(ctx))
	require.NoError(t, r2.Release(ctx))
	w, err := cl.Acquire(ctx, "doc", 10*time.Second, core.Write(), core.Fence())
	require.NoError(t, err)
	assert.Equal(t, core.ModeWrite, w.Mode())
	assert.Positive(t, w.Fence())
	in, err := cl.Inspect(ctx, "doc", core.InspectReadWrite())
	require.NoError(t, err)
	assert.True(t, in.Held)
	assert.Equal(t, "wasm", in.Owner)
	_, err = cl.Acquire(ctx, "doc", 10*time.Second, core.Read())
	require.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, w.Release(ctx))
}
