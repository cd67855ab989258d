package core_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/locktest"
	"github.com/liblock/liblock/core/redistest"
)

// A one-node Client reads each reply on the goroutine of the caller that
// waits for it and leaves an idle connection unread (driver.go: inline).
// These tests hold that mode to the behaviour of the reader-goroutine one.

// TestOneNodeIdleHoldsNoGoroutine: between operations a one-node Client
// keeps no goroutine (no reader parked on its idle connection); while an
// acquire waits (pub/sub), and after Close, the count is back too.
func TestOneNodeIdleHoldsNoGoroutine(t *testing.T) {
	c := redistest.Start(t, 1)
	base := runtime.NumGoroutine()
	cl := newClient(t, c)
	ctx := context.Background()
	for range 20 {
		l, err := cl.Acquire(ctx, "idle", time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
	}
	locktest.Eventually(t, 5*time.Second, "no goroutine left between operations", func() bool {
		return runtime.NumGoroutine() <= base
	})
	require.NoError(t, cl.Close())
	assert.LessOrEqual(t, runtime.NumGoroutine(), base)
}

// TestOneNodeIdleConnectionClosed: the node closes the client's idle
// connection (CLIENT KILL, then a restart); the next single attempt still
// succeeds, on a new connection, as it does with a reader goroutine that
// saw the close at once. The negative control turns the look at idle
// connections off: the attempt then goes out on the dead connection and
// fails.
func TestOneNodeIdleConnectionClosed(t *testing.T) {
	c := redistest.Start(t, 1)
	n := c.Nodes[0]
	ctx := context.Background()
	pair := func(cl *core.Client, res string) error {
		l, err := cl.Acquire(ctx, res, time.Second)
		if err != nil {
			return err
		}
		return l.Release(ctx)
	}
	kill := func(t *testing.T) {
		t.Helper()
		_, err := n.Do("CLIENT", "KILL", "TYPE", "normal")
		require.NoError(t, err)
	}
	t.Run("client kill", func(t *testing.T) {
		cl := newClient(t, c)
		require.NoError(t, pair(cl, "k1"))
		kill(t)
		for i := range 5 {
			require.NoError(t, pair(cl, fmt.Sprint("k1-", i)), "pair %d after the kill", i)
		}
	})
	t.Run("restart", func(t *testing.T) {
		cl := newClient(t, c)
		require.NoError(t, pair(cl, "k2"))
		require.NoError(t, n.Restart())
		require.NoError(t, pair(cl, "k2"))
	})
	t.Run("negative control: not looked at", func(t *testing.T) {
		cl := newClient(t, c)
		require.NoError(t, pair(cl, "k3"))
		defer core.SkipCheckIdle()()
		kill(t) // the node closed the socket before it answered CLIENT KILL
		err := pair(cl, "k3")
		require.Error(t, err)
		assert.True(t, errors.Is(err, core.ErrUnavailable), "%v", err)
	})
	c.AssertNoKeys(t)
}

// TestOneNodeFrozen: a caller reading its reply inline from a frozen node
// is freed by the node timeout like any other; after the thaw the Client
// works again.
func TestOneNodeFrozen(t *testing.T) {
	c := redistest.Start(t, 1)
	cl := newClient(t, c)
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "f", time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	require.NoError(t, c.Nodes[0].Freeze())
	start := time.Now()
	_, err = cl.Acquire(ctx, "f", time.Second)
	took := time.Since(start)
	require.NoError(t, c.Nodes[0].Thaw())
	assert.True(t, errors.Is(err, core.ErrUnavailable), "%v", err)
	assert.Less(t, took, 10*locktest.NodeTimeout, "the node timeout bounds the inline read")
	locktest.Eventually(t, 10*time.Second, "a lock after the thaw", func() bool {
		l, err := cl.Acquire(ctx, "f2", time.Second)
		if err != nil {
			return false
		}
		return l.Release(ctx) == nil
	})
}

// TestOneNodeConcurrent: many goroutines on one one-node Client, some on
// their own resources, some contending for one: every reply reaches its
// caller whoever reads the connection, and no two holders overlap.
func TestOneNodeConcurrent(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 1)
	cl := newClient(t, c)
	ctx := context.Background()
	var wg sync.WaitGroup
	var inside, overlaps, sections atomic.Int32
	errs := make(chan error, 64)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				l, err := cl.Acquire(ctx, fmt.Sprint("own-", g), time.Second)
				if err != nil {
					errs <- fmt.Errorf("own %d/%d: %w", g, i, err)
					return
				}
				if err := l.Release(ctx); err != nil {
					errs <- err
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
				if inside.Add(1) != 1 {
					overlaps.Add(1)
				}
				sections.Add(1)
				runtime.Gosched()
				inside.Add(-1)
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
	assert.Equal(t, int32(0), overlaps.Load())
	assert.Equal(t, int32(120), sections.Load())
	require.NoError(t, cl.Close())
	c.AssertNoKeys(t)
}
