package locktest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// A one-node client's driver reads each reply on the goroutine of the
// caller that waits for it and leaves an idle connection unread (core's
// driver.go, where the engine tells which connections await bytes). These
// scenarios hold that mode to the behaviour of the reader-goroutine one.

// oneNodePair acquires and releases res once.
func oneNodePair(cl Client, res string) error {
	ctx := context.Background()
	l, err := cl.Acquire(ctx, res, time.Second)
	if err != nil {
		return err
	}
	return l.Release(ctx)
}

// oneNodeIdle: between operations the client keeps no goroutine (no reader
// parked on its idle connection), and none after Close.
func (s *suite) oneNodeIdle(t *testing.T) {
	c := redistest.Start(t, 1)
	base := runtime.NumGoroutine()
	cl := s.client(t, c)
	for i := range 20 {
		require.NoError(t, oneNodePair(cl, "idle"), "pair %d", i)
	}
	Eventually(t, 5*time.Second, "no goroutine left between operations", func() bool {
		return runtime.NumGoroutine() <= base
	})
}

// oneNodeConnClosed: the node closes the client's idle connection (CLIENT
// KILL, then a restart); the next single attempt still succeeds, on a new
// connection, as it does with a reader goroutine that saw the close at once.
func (s *suite) oneNodeConnClosed(t *testing.T) {
	c := redistest.Start(t, 1)
	n := c.Nodes[0]
	cl := s.client(t, c)
	require.NoError(t, oneNodePair(cl, "k"))
	_, err := n.Do("CLIENT", "KILL", "TYPE", "normal")
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, oneNodePair(cl, fmt.Sprint("k-", i)), "pair %d after the kill", i)
	}
	require.NoError(t, n.Restart())
	require.NoError(t, oneNodePair(cl, "k"), "the first pair after a restart")
	c.AssertNoKeys(t)
}

// oneNodeFrozen: a caller reading its reply from a frozen node is freed by
// the node timeout like any other; after the thaw the client works again.
func (s *suite) oneNodeFrozen(t *testing.T) {
	c := redistest.Start(t, 1)
	cl := s.client(t, c)
	require.NoError(t, oneNodePair(cl, "f"))
	require.NoError(t, c.Nodes[0].Freeze())
	var err error
	within(t, NodeTimeout+Bound, "an acquire from a frozen node", func() {
		_, err = cl.Acquire(context.Background(), "f", time.Second)
	})
	require.NoError(t, c.Nodes[0].Thaw())
	assert.True(t, errors.Is(err, core.ErrUnavailable), "%v", err)
	Eventually(t, 10*time.Second, "a lock after the thaw", func() bool {
		return oneNodePair(cl, "f2") == nil
	})
}

// oneNodeConcurrent: many goroutines on one client, some on resources of
// their own, some contending for one: every reply reaches its caller
// whoever reads the connection, and no two holders overlap.
func (s *suite) oneNodeConcurrent(t *testing.T) {
	c := redistest.Start(t, 1)
	// A reply that never reached its caller still fails the pair (after the
	// node timeout); 14 callers at once on a busy machine can keep a healthy
	// node's reply past the suite's 100 ms, which is not what is tested.
	cl, err := s.backend(t, core.Config{Nodes: c.URLs(), NodeTimeout: 2 * time.Second})
	require.NoError(t, err, "new client")
	t.Cleanup(func() { _ = cl.Close() })
	ctx := context.Background()
	var wg sync.WaitGroup
	var check OverlapChecker
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if err := oneNodePair(cl, fmt.Sprint("own-", g)); err != nil {
					errs <- fmt.Errorf("own %d/%d: %w", g, i, err)
					return
				}
			}
		}()
	}
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				l, err := cl.Acquire(ctx, "shared", 5*time.Second, core.Wait(20*time.Second))
				if err != nil {
					errs <- fmt.Errorf("shared: %w", err)
					return
				}
				check.Enter(t)
				runtime.Gosched()
				check.Exit()
				if err := l.Release(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	assert.Equal(t, int64(120), check.entries.Load())
	require.NoError(t, cl.Close())
	c.AssertNoKeys(t)
}
