package core_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestOneServerUnderTwoNames: 127.0.0.1:P and localhost:P are one server
// (one run_id): listed as two nodes of three, it would give two votes. The
// client refuses it at connect with the configuration check's error for
// two identical URLs, naming both entries, on every acquire, and no lock
// command reaches the server through the second name.
func TestOneServerUnderTwoNames(t *testing.T) {
	rc := redistest.Start(t, 2)
	p, q := rc.Nodes[0], rc.Nodes[1]
	urls := []string{"redis://127.0.0.1:" + strconv.Itoa(p.Port), "redis://localhost:" + strconv.Itoa(p.Port), "redis://127.0.0.1:" + strconv.Itoa(q.Port)}
	c, err := core.New(core.Config{Nodes: urls, NodeTimeout: 2 * time.Second})
	require.NoError(t, err, "the URLs differ: only a connection tells they are one server")
	defer c.Close()
	ctx := context.Background()
	// q frozen: the two names of p would be a quorum of 2 on their own.
	require.NoError(t, q.Freeze())
	defer func() { _ = q.Thaw() }()
	for i := 0; i < 3; i++ {
		l, err := c.Acquire(ctx, "alias", 10*time.Second)
		if l != nil {
			_ = l.Release(ctx)
		}
		require.Error(t, err, "acquire %d: a quorum faked by one server under two names", i)
		assert.ErrorIs(t, err, core.ErrInvalidArgument)
		assert.ErrorContains(t, err, "nodes[1]: the same server as nodes[0]")
		assert.ErrorContains(t, err, "list each server once")
	}
	require.NoError(t, q.Thaw())
	rc.AssertNoKeys(t)
}
