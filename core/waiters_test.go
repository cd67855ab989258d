package core_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// setCalls is how many SET commands node has served (redistest's CommandCalls).
func setCalls(t *testing.T, n *redistest.Node) int {
	t.Helper()
	v, err := n.CommandCalls("set")
	require.NoError(t, err)
	return v
}

// TestOnlyOldestWaiterPolls: many local waiters on a key held elsewhere
// cost one poller, not one each. Fifty waiters over 2 s would make
// thousands of attempts if each polled (backoff ≤ 50 ms); with one poller
// it is one attempt each plus one poller's.
func TestOnlyOldestWaiterPolls(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 1)
	holder, waiters := newClient(t, c), newClient(t, c)
	ctx := context.Background()
	held, err := holder.Acquire(ctx, "busy", time.Minute)
	require.NoError(t, err)
	before := setCalls(t, c.Nodes[0])
	const n, wait = 50, 2 * time.Second
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := waiters.Acquire(ctx, "busy", time.Second, core.Wait(wait))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.ErrorIs(t, err, core.ErrNotAcquired, "waiter")
	}
	// One poller's backoff reaches 25–50 ms after five attempts, so it
	// makes well under 200 attempts in 2 s; every waiter adds its first and
	// last attempt. Fifty pollers would make over 2,000.
	calls, limit := setCalls(t, c.Nodes[0])-before, 2*n+200
	t.Logf("%d SET attempts by %d waiters in %v", calls, n, wait)
	require.LessOrEqual(t, calls, limit, "%d SET attempts by %d waiters in %v: more than one poller (limit %d)", calls, n, wait, limit)
	require.NoError(t, held.Release(ctx))
	c.AssertNoKeys(t)
}

// TestNextWaiterTakesOverPolling: when the polling waiter leaves (its
// context ends), the next one polls in its place, so a release by another
// process (which wakes nobody here) is still noticed long before the
// waiter's own wait runs out.
func TestNextWaiterTakesOverPolling(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 1)
	holder, waiters := newClient(t, c), newClient(t, c)
	held, err := holder.Acquire(context.Background(), "handover", time.Minute)
	require.NoError(t, err)
	firstCtx, cancelFirst := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := waiters.Acquire(firstCtx, "handover", time.Second, core.Wait(time.Minute))
		first <- err
	}()
	// The first waiter is queued before the second one starts.
	waitForSetCalls(t, c.Nodes[0], setCalls(t, c.Nodes[0])+1)
	const wait = time.Minute
	second := make(chan error, 1)
	var got *core.Lock
	go func() {
		l, err := waiters.Acquire(context.Background(), "handover", time.Second, core.Wait(wait))
		got = l
		second <- err
	}()
	cancelFirst()
	require.ErrorIs(t, <-first, context.Canceled, "first waiter")
	start := time.Now()
	require.NoError(t, held.Release(context.Background()))
	require.NoError(t, <-second, "second waiter")
	// Without a poller it would only have tried again at the end of its
	// one-minute wait.
	waited := time.Since(start)
	assert.LessOrEqual(t, waited, wait/2, "second waiter got the lock %v after the release: nobody was polling", waited)
	require.NoError(t, got.Release(context.Background()))
	c.AssertNoKeys(t)
}

func waitForSetCalls(t *testing.T, n *redistest.Node, atLeast int) {
	t.Helper()
	poll.Eventually(t, 10*time.Second, fmt.Sprintf("at least %d SET calls", atLeast), func() bool {
		return setCalls(t, n) >= atLeast
	})
}
