package core_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestBehaviour runs the shared behaviour suite against the native core.
func TestBehaviour(t *testing.T) {
	locktest.Run(t, locktest.Native)
}

func newClient(t *testing.T, c *redistest.Cluster) *core.Client {
	t.Helper()
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: locktest.NodeTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

func leakCheck(t *testing.T) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() { locktest.NoGoroutineLeak(t, base) })
}

// TestProcessContention: ten processes contend for one resource; each
// proves exclusion by creating a marker file with O_EXCL inside its
// critical section, which fails if another process is inside.
func TestProcessContention(t *testing.T) {
	c := redistest.Start(t, 3)
	dir := t.TempDir()
	const procs, rounds = 10, 10
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(),
			"LIBLOCK_HELPER_PROCESS=1",
			"LIBLOCK_NODES="+strings.Join(c.URLs(), ","),
			"LIBLOCK_CHECK_DIR="+dir,
			fmt.Sprintf("LIBLOCK_ROUNDS=%d", rounds))
		out := &strings.Builder{}
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		assert.NoError(t, cmd.Wait(), "process %d:\n%s", i, cmd.Stdout)
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	require.NoError(t, err)
	require.Equal(t, procs*rounds, strings.Count(string(log), "\n"), "critical sections logged")
	c.AssertNoKeys(t)
}

// TestHelperProcess is one contender of TestProcessContention.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("LIBLOCK_HELPER_PROCESS") != "1" {
		return // the helper of TestProcessContention: it works only as that test's child process
	}
	cl, err := core.New(core.Config{Nodes: strings.Split(os.Getenv("LIBLOCK_NODES"), ","), NodeTimeout: locktest.NodeTimeout})
	require.NoError(t, err)
	defer cl.Close()
	dir := os.Getenv("LIBLOCK_CHECK_DIR")
	var rounds int
	fmt.Sscan(os.Getenv("LIBLOCK_ROUNDS"), &rounds)
	ctx := context.Background()
	for r := 0; r < rounds; r++ {
		l, err := cl.Acquire(ctx, "account_id123", 5*time.Second, core.Wait(60*time.Second))
		require.NoError(t, err)
		marker := filepath.Join(dir, "holder")
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		require.NoError(t, err, "overlap: another process is inside the critical section")
		f.Close()
		logf, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		fmt.Fprintf(logf, "%d %d\n", os.Getpid(), r)
		logf.Close()
		// Deliberate: the critical section's work. The marker stays long
		// enough for an overlapping process, if the lock let one in, to
		// find it.
		time.Sleep(time.Millisecond)
		require.NoError(t, os.Remove(marker))
		require.NoError(t, l.Release(ctx))
	}
}

func TestOnLost(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()

	l, err := cl.Acquire(ctx, "res", 300*time.Millisecond, core.AutoExtend())
	require.NoError(t, err)
	assert.Equal(t, "res", l.Resource())
	assert.True(t, l.AutoExtend(), "AutoExtend of a fresh auto-extended lock")
	assert.Equal(t, 300*time.Millisecond, l.TTL())
	require.False(t, l.IsLost(), "IsLost of a fresh lock")
	require.NoError(t, l.Err(), "Err of a fresh lock")
	var calls atomic.Int32
	replaced := make(chan error, 1)
	l.OnLost(func(error) { calls.Add(100) }) // replaced below: never called
	l.OnLost(func(err error) { calls.Add(1); replaced <- err })
	for _, n := range c.Nodes {
		_, err := n.Do("SET", "res", "other", "PX", "60000")
		require.NoError(t, err)
	}
	select {
	case err := <-replaced:
		require.ErrorIs(t, err, core.ErrLost, "OnLost's error")
	case <-time.After(5 * time.Second):
		require.FailNow(t, "OnLost not called")
	}
	assert.True(t, l.IsLost(), "IsLost after the loss")
	assert.ErrorIs(t, l.Err(), core.ErrLost, "Err after the loss")
	// Registered after the loss: called at once.
	late := make(chan error, 1)
	l.OnLost(func(err error) { late <- err })
	select {
	case <-late:
	case <-time.After(5 * time.Second):
		require.FailNow(t, "OnLost registered after the loss was not called")
	}
	assert.Equal(t, int32(1), calls.Load(), "OnLost calls in total (×100 = the replaced one)")
	_ = l.Release(ctx)

	// Never after a release.
	// 500 ms: the release must come before the lock expires, on a loaded
	// machine too.
	const ttl2 = 500 * time.Millisecond
	l2, err := cl.Acquire(ctx, "res2", ttl2)
	require.NoError(t, err)
	acquired := time.Now()
	called := make(chan struct{}, 2)
	l2.OnLost(func(error) { called <- struct{}{} })
	require.NoError(t, l2.Release(ctx))
	l2.OnLost(func(error) { called <- struct{}{} })
	// Deliberate: the test proves something does NOT happen, so it must let
	// the time pass in which it would: twice the ttl, when an expiry timer
	// left running by mistake would have fired.
	time.Sleep(2*ttl2 - time.Since(acquired))
	require.GreaterOrEqual(t, time.Since(acquired), 2*ttl2, "the window checked")
	assert.Empty(t, called, "OnLost called after Release")
}

// TestRestartedNode: a node that restarts empty costs the lock one vote,
// not the lock; the harness's restart really empties it.
func TestRestartedNode(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "res", 10*time.Second)
	require.NoError(t, err)
	// The acquire returned at a quorum: let node 2's SET land first, so
	// that the restart below is what empties it (and not a SET that came
	// late, or never, to the new process).
	locktest.Eventually(t, 5*time.Second, "node 2 holds the lock", func() bool {
		v, _ := c.Nodes[2].Do("GET", "res")
		return v == l.Token()
	})
	require.NoError(t, c.Nodes[2].Restart())
	v, _ := c.Nodes[2].Do("GET", "res")
	require.Equal(t, "(nil)", v, "restarted node kept the key")
	require.NoError(t, l.Extend(ctx, 10*time.Second), "extend with 2 of 3 nodes")
	require.NoError(t, l.Release(ctx))
	c.AssertNoKeys(t)
}

func TestNewFromClients(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	var clients []*redis.Client
	for _, n := range c.Nodes {
		rc := redis.NewClient(&redis.Options{Addr: n.Addr(), ContextTimeoutEnabled: true})
		defer rc.Close()
		clients = append(clients, rc)
	}
	cl, err := core.NewFromClients(core.Config{NodeTimeout: locktest.NodeTimeout}, clients...)
	require.NoError(t, err)
	require.Equal(t, 2, cl.Quorum(), "quorum")
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "res", 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, cl.Close()) // releases l, leaves the clients open
	require.NoError(t, clients[0].Ping(ctx).Err(), "Close closed a client it does not own")
	require.ErrorIs(t, l.Release(ctx), core.ErrClosed, "release after Close")
	c.AssertNoKeys(t)

	for _, tc := range []struct {
		cfg     core.Config
		clients []*redis.Client
		arg     string
	}{
		{core.Config{}, nil, "clients"},
		{core.Config{}, []*redis.Client{nil}, "clients[0]"},
		{core.Config{Nodes: c.URLs()}, clients, "nodes"},
		{core.Config{}, []*redis.Client{clients[0], clients[1], clients[0]}, "clients[2]"},
	} {
		var ae *core.ArgumentError
		_, err := core.NewFromClients(tc.cfg, tc.clients...)
		if assert.ErrorAs(t, err, &ae, "want an error for %q", tc.arg) {
			assert.Equal(t, tc.arg, ae.Arg, "the argument named by %v", err)
		}
	}
}

// TestEndedContext: Extend and Acquire with an ended context report it and
// leave the lock as it was; Release cleans up all the same (a deferred
// Release after a canceled request must not leave the key for its ttl).
func TestEndedContext(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	l, err := cl.Acquire(context.Background(), "res", 10*time.Second)
	require.NoError(t, err)
	// The acquire returned once a quorum granted: node 0's SET may land a
	// moment later.
	locktest.Eventually(t, 5*time.Second, "node 0 holds the lock", func() bool {
		v, _ := c.Nodes[0].Do("GET", "res")
		return v == l.Token()
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, l.Extend(ctx, time.Second), context.Canceled, "extend")
	_, err = cl.Acquire(ctx, "other", time.Second)
	require.ErrorIs(t, err, context.Canceled, "acquire")
	v, _ := c.Nodes[0].Do("GET", "res")
	require.Equal(t, l.Token(), v, "the lock changed")
	require.NoError(t, l.Release(ctx), "release with a canceled context")
	c.AssertNoKeys(t)
}

func TestErrorMessages(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	for _, n := range c.Nodes[:2] {
		require.NoError(t, n.Kill())
	}
	_, err := cl.Acquire(context.Background(), "res", time.Second)
	// "connection refused", not "context deadline exceeded": a dead node is
	// dialed once, not retried until the node timeout runs out.
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{"unavailable", c.Nodes[0].Addr(), c.Nodes[1].Addr(), "quorum is 2", "connection refused"} {
		assert.Contains(t, msg, want)
	}
	assert.NotContains(t, core.RedactURL("redis://u:secret@h:1"), "secret", "RedactURL kept the password")
}
