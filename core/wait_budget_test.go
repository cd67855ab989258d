package core_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// silentListener accepts connections and never answers them: a node whose
// connect completes (the kernel's) and whose handshake never does, as a
// proxy that holds a connect open while its node is down.
func silentListener(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "redis://" + l.Addr().String()
}

// refusingURL is a port where nothing listens: every connect is refused
// (a node that is down).
func refusingURL(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return "redis://" + addr
}

// TestWaitBudgetWithABadNode: every primitive's wait budget, with one node
// of three that refuses connections or holds a connect open and a resource
// held by another owner on one of the two good nodes, so that no attempt
// can decide before the bad node's answer (its connect deadline, one node
// timeout, or its refusal): the call retries for its wait and then returns
// its outcome — not acquired, or unavailable — naming the bad node's cause.
// It never waits for the bad node to come back (it never does here: a call
// that waited for it would hang the test).
func TestWaitBudgetWithABadNode(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	const nodeTimeout = 200 * time.Millisecond
	wait := 4 * nodeTimeout
	// The holder holds every resource on node 0 alone.
	holder, err := core.New(core.Config{Nodes: []string{c.Nodes[0].URL()}, NodeTimeout: time.Second})
	require.NoError(t, err)
	t.Cleanup(func() { _ = holder.Close() })

	type primitive struct {
		name string
		hold func(res string) error
		try  func(cl *core.Client, res string) error
	}
	acquire := func(opts ...core.AcquireOption) func(*core.Client, string) error {
		return func(cl *core.Client, res string) error {
			l, err := cl.Acquire(ctx, res, 10*time.Second, append(opts, core.Wait(wait))...)
			if err == nil {
				_ = l.Release(ctx)
			}
			return err
		}
	}
	held := func(opts ...core.AcquireOption) func(string) error {
		return func(res string) error {
			_, err := holder.Acquire(ctx, res, time.Minute, opts...)
			return err
		}
	}
	prims := []primitive{
		{"mutex", held(), acquire()},
		{"semaphore", held(core.Permits(1)), acquire(core.Permits(1))},
		{"read behind a writer", held(core.Write()), acquire(core.Read())},
		{"write behind a writer", held(core.Write()), acquire(core.Write())},
		{"multi", func(res string) error {
			_, err := holder.AcquireAll(ctx, []string{res + ":a", res + ":b"}, time.Minute)
			return err
		}, func(cl *core.Client, res string) error {
			l, err := cl.AcquireAll(ctx, []string{res + ":a", res + ":b"}, 10*time.Second, core.Wait(wait))
			if err == nil {
				_ = l.Release(ctx)
			}
			return err
		}},
		{"election", func(res string) error {
			_, err := holder.Campaign(ctx, res, "holder")
			return err
		}, func(cl *core.Client, res string) error {
			l, err := cl.Campaign(ctx, res, "waiter", core.CampaignWait(wait))
			if err == nil {
				_ = l.Resign(ctx)
			}
			return err
		}},
	}
	bads := []struct {
		name, url, cause string
	}{
		{"refusing", refusingURL(t), "connection refused"},
		{"holding a connect open", silentListener(t), "connect: no answer within the node timeout (200ms)"},
	}
	for _, bad := range bads {
		cl, err := core.New(core.Config{Nodes: []string{c.Nodes[0].URL(), c.Nodes[1].URL(), bad.url}, NodeTimeout: nodeTimeout})
		require.NoError(t, err)
		for i, p := range prims {
			res := "budget:" + strconv.Itoa(i) + ":" + bad.name
			require.NoError(t, p.hold(res), "%s: the holder", p.name)
			err := p.try(cl, res)
			require.Error(t, err, "%s with a node %s", p.name, bad.name)
			assert.True(t, errors.Is(err, core.ErrNotAcquired) || errors.Is(err, core.ErrUnavailable),
				"%s with a node %s: %v", p.name, bad.name, err)
			assert.Contains(t, err.Error(), "node 2 ", "%s with a node %s: the bad node is named", p.name, bad.name)
			assert.Contains(t, err.Error(), bad.cause, "%s with a node %s: its cause", p.name, bad.name)
		}
		require.NoError(t, cl.Close())
	}
}
