package core_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// lossText is the engine's reason for an auto-extended lock whose keys
// were deleted on 2 of 3 nodes: the same text in every language.
const lossText = "held on at most 1 of 3 nodes (2 answered it is gone), quorum is 2"

// loseAutoExtended acquires resource auto-extended on c's 3 nodes, deletes
// its key on nodes 0 and 1, and waits until the lock is lost.
func loseAutoExtended(t *testing.T, c *redistest.Cluster, cfg core.Config, resource string) error {
	t.Helper()
	cfg.Nodes = c.URLs()
	cfg.NodeTimeout = time.Second
	cl, err := core.New(cfg)
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	l, err := cl.Acquire(context.Background(), resource, 3*time.Second, core.AutoExtend())
	require.NoError(t, err)
	// Acquire returns at a quorum: the third grant may still be on its way,
	// and a DEL that overtook it would leave the lock held on 2 of 3.
	poll.Eventually(t, 10*time.Second, "the key on every node", func() bool {
		for _, n := range c.Nodes {
			if v, err := n.Do("EXISTS", resource); err != nil || v != "1" {
				return false
			}
		}
		return true
	})
	for _, n := range c.Nodes[:2] {
		v, err := n.Do("DEL", resource)
		require.NoError(t, err)
		require.Equal(t, "1", v, "DEL %s", resource)
	}
	poll.Eventually(t, 20*time.Second, "the lock is lost", l.IsLost)
	return l.Err()
}

// TestLossWarnsOnSlogDefault: with no Logger, a lost lock is a Warn line on
// slog.Default() naming the resource, the reason and the count.
func TestLossWarnsOnSlogDefault(t *testing.T) {
	c := redistest.Start(t, 3)
	var out syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	err := loseAutoExtended(t, c, core.Config{}, "loss-default")
	require.ErrorIs(t, err, core.ErrLost)
	assert.Contains(t, err.Error(), lossText)
	poll.Eventually(t, 10*time.Second, "the warning", func() bool { return bytes.Contains([]byte(out.String()), []byte("lock lost")) })
	line := out.String()
	assert.Contains(t, line, "level=WARN")
	assert.Contains(t, line, `msg="liblock: lock lost"`)
	assert.Contains(t, line, "resource=loss-default")
	assert.Contains(t, line, lossText)
	assert.NotContains(t, line, `resource=""`)
	// A lost auto-extension is told once, by the loss.
	assert.NotContains(t, line, "auto-extension failed")
}

// TestLossWarnsOnTheConfiguredLogger: Config.Logger replaces slog.Default().
func TestLossWarnsOnTheConfiguredLogger(t *testing.T) {
	c := redistest.Start(t, 3)
	var def, own syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&def, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	err := loseAutoExtended(t, c, core.Config{Logger: slog.New(slog.NewTextHandler(&own, nil))}, "loss-own")
	require.ErrorIs(t, err, core.ErrLost)
	poll.Eventually(t, 10*time.Second, "the warning", func() bool { return bytes.Contains([]byte(own.String()), []byte("lock lost")) })
	assert.Contains(t, own.String(), "resource=loss-own")
	assert.Contains(t, own.String(), lossText)
	assert.NotContains(t, def.String(), "lock lost", "the default logger got it too")
}
