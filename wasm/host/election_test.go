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

// TestElection: leader election through liblock.wasm's engine (the
// campaign travels as ACQUIRE's election flag and value, Leader as
// INSPECT's, Observe as WATCH/LEADER): a campaign leads, Leader and an
// observer see it, a waiting campaign takes over on resign with a higher
// term, and bad input names the parameter.
func TestElection(t *testing.T) {
	c := redistest.Start(t, 3)
	newClient := func() *core.Client {
		cl, err := mod.NewClient(core.Config{Nodes: c.URLs()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	a, b := newClient(), newClient()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changes, err := b.Observe(ctx, "svc", core.ObservePoll(100*time.Millisecond))
	require.NoError(t, err)
	assert.Equal(t, int64(0), (<-changes).Term, "no leader at first")
	la, err := a.Campaign(ctx, "svc", "A", core.CampaignTTL(2*time.Second))
	require.NoError(t, err)
	assert.Positive(t, la.Term())
	seen := <-changes
	assert.Equal(t, "A", seen.Value)
	assert.Equal(t, la.Term(), seen.Term)
	l, err := b.Leader(ctx, "svc")
	require.NoError(t, err)
	assert.Equal(t, "A", l.Value)
	got := make(chan *core.Leadership, 1)
	go func() {
		lb, err := b.Campaign(ctx, "svc", "B")
		assert.NoError(t, err)
		got <- lb
	}()
	require.NoError(t, la.Resign(ctx))
	lb := <-got
	assert.Greater(t, lb.Term(), la.Term())
	for ch := range changes {
		if ch.Term == lb.Term() {
			break
		}
		assert.True(t, ch.Term == 0, "only the resignation in between: %+v", ch)
	}
	require.NoError(t, lb.Resign(ctx))

	var ae *core.ArgumentError
	_, err = a.Campaign(ctx, "", "v")
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "name", ae.Arg)
	_, err = a.Campaign(ctx, "svc", "")
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "value", ae.Arg)
}
