package core_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestOneNodeIdleCheckNegativeControl: the behaviour suite's
// OneNodeIdleConnectionClosed passes because the driver looks at an idle,
// unread connection before a command goes out on it. With that look turned
// off, the attempt goes out on the connection the node closed and fails:
// the scenario can fail.
func TestOneNodeIdleCheckNegativeControl(t *testing.T) {
	c := redistest.Start(t, 1)
	cl := newClient(t, c)
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "k", time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	defer core.SkipCheckIdle()()
	_, err = c.Nodes[0].Do("CLIENT", "KILL", "TYPE", "normal") // closed before it answers
	require.NoError(t, err)
	_, err = cl.Acquire(ctx, "k", time.Second)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	c.AssertNoKeys(t)
}
