package core_test

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/ownthread"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestOneNodeCallerWaitsOnNetpoller: a Go caller of a one-node Client,
// reading its reply itself, waits parked on Go's netpoller ([IO wait]),
// where the M that wakes in epoll_wait runs it at once, not in a poll(2)
// of its own ([syscall]), which costs a Go caller a wake-up more per round
// trip. The node is frozen so that the reply does not come while the test
// looks.
func TestOneNodeCallerWaitsOnNetpoller(t *testing.T) {
	requireInlineWait(t, context.Background(), "[IO wait")
}

// TestOneNodeOwnThreadCallerWaitsInPoll: a call marked by ownthread (the C
// ABI's blocking calls, whose caller is a C thread the goroutine is locked
// to) waits in a poll(2) of its own on that thread: the control that the
// look at the goroutine's state tells the two waits apart.
func TestOneNodeOwnThreadCallerWaitsInPoll(t *testing.T) {
	requireInlineWait(t, ownthread.With(context.Background()), "[syscall")
}

// requireInlineWait starts an Acquire with ctx on a one-node Client whose
// node is frozen and requires the caller's goroutine, in readInline, to be
// seen in state (the prefix of the state in a goroutine dump).
func requireInlineWait(t *testing.T, ctx context.Context, state string) {
	c := redistest.Start(t, 1)
	// The node timeout outlasts the look: the wait ends when the node thaws.
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: core.MaxNodeTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	l, err := cl.Acquire(ctx, "k", time.Minute) // the connection is open
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	require.NoError(t, c.Nodes[0].Freeze())
	thawed := false
	t.Cleanup(func() {
		if !thawed {
			_ = c.Nodes[0].Thaw()
		}
	})
	done := make(chan error, 1)
	go func() {
		l, err := cl.Acquire(ctx, "k", time.Minute)
		if err == nil {
			err = l.Release(context.Background())
		}
		done <- err
	}()
	var last string
	seen := poll.Wait(30*time.Second, func() bool {
		last = inlineReaderState()
		return strings.HasPrefix(last, state)
	})
	require.NoError(t, c.Nodes[0].Thaw())
	thawed = true
	require.NoError(t, <-done)
	require.True(t, seen, "the caller waiting for its reply was last seen in %q, want a state starting with %q", last, state)
}

// inlineReaderState is the state of the goroutine reading a reply inline
// ("IO wait", "syscall, locked to thread"…, with its opening bracket), or
// "" when none is.
func inlineReaderState() string {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "core.(*Client).readInline(") {
			continue
		}
		head, _, _ := strings.Cut(g, "\n")
		if i := strings.Index(head, "["); i >= 0 {
			return head[i:]
		}
	}
	return ""
}
