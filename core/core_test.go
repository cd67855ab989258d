package core_test

import (
	"context"
	"errors"
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
	if err != nil {
		t.Fatal(err)
	}
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
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, cmd.Stdout)
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, "log"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(log), "\n"); got != procs*rounds {
		t.Fatalf("%d critical sections logged, want %d", got, procs*rounds)
	}
	c.AssertNoKeys(t)
}

// TestHelperProcess is one contender of TestProcessContention.
func TestHelperProcess(t *testing.T) {
	if os.Getenv("LIBLOCK_HELPER_PROCESS") != "1" {
		return // the helper of TestProcessContention: it works only as that test's child process
	}
	cl, err := core.New(core.Config{Nodes: strings.Split(os.Getenv("LIBLOCK_NODES"), ","), NodeTimeout: locktest.NodeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	dir := os.Getenv("LIBLOCK_CHECK_DIR")
	var rounds int
	fmt.Sscan(os.Getenv("LIBLOCK_ROUNDS"), &rounds)
	ctx := context.Background()
	for r := 0; r < rounds; r++ {
		l, err := cl.Acquire(ctx, "account_id123", 5*time.Second, core.Wait(60*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		marker := filepath.Join(dir, "holder")
		f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatalf("overlap: another process is inside the critical section (%v)", err)
		}
		f.Close()
		logf, err := os.OpenFile(filepath.Join(dir, "log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(logf, "%d %d\n", os.Getpid(), r)
		logf.Close()
		time.Sleep(time.Millisecond)
		if err := os.Remove(marker); err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOnLost(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()

	l, err := cl.Acquire(ctx, "res", 300*time.Millisecond, core.AutoExtend())
	if err != nil {
		t.Fatal(err)
	}
	if l.Resource() != "res" || !l.AutoExtend() || l.TTL() != 300*time.Millisecond || l.IsLost() || l.Err() != nil {
		t.Fatalf("fresh lock: resource %q auto %v ttl %v lost %v err %v", l.Resource(), l.AutoExtend(), l.TTL(), l.IsLost(), l.Err())
	}
	var calls atomic.Int32
	replaced := make(chan error, 1)
	l.OnLost(func(error) { calls.Add(100) }) // replaced below: never called
	l.OnLost(func(err error) { calls.Add(1); replaced <- err })
	for _, n := range c.Nodes {
		if _, err := n.Do("SET", "res", "other", "PX", "60000"); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case err := <-replaced:
		if !errors.Is(err, core.ErrLost) {
			t.Fatalf("OnLost got %v, want ErrLost", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("OnLost not called")
	}
	if !l.IsLost() || !errors.Is(l.Err(), core.ErrLost) {
		t.Fatal("IsLost/Err do not report the loss")
	}
	// Registered after the loss: called at once.
	late := make(chan error, 1)
	l.OnLost(func(err error) { late <- err })
	select {
	case <-late:
	case <-time.After(5 * time.Second):
		t.Fatal("OnLost registered after the loss was not called")
	}
	if calls.Load() != 1 {
		t.Fatalf("OnLost functions ran %d times in total (×100 = the replaced one)", calls.Load())
	}
	_ = l.Release(ctx)

	// Never after a release.
	l2, err := cl.Acquire(ctx, "res2", 100*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	called := make(chan struct{}, 1)
	l2.OnLost(func(error) { called <- struct{}{} })
	if err := l2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2.OnLost(func(error) { called <- struct{}{} })
	time.Sleep(200 * time.Millisecond) // past the ttl: an expiry timer would fire now
	if len(called) != 0 {
		t.Fatal("OnLost called after Release")
	}
}

// TestRestartedNode: a node that restarts empty costs the lock one vote,
// not the lock; the harness's restart really empties it.
func TestRestartedNode(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "res", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Nodes[2].Restart(); err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Nodes[2].Do("GET", "res"); v != "(nil)" {
		t.Fatalf("restarted node kept the key: %q", v)
	}
	if err := l.Extend(ctx, 10*time.Second); err != nil {
		t.Fatalf("extend with 2 of 3 nodes: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
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
	if err != nil {
		t.Fatal(err)
	}
	if cl.Quorum() != 2 {
		t.Fatalf("quorum %d, want 2", cl.Quorum())
	}
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "res", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Close(); err != nil { // releases l, leaves the clients open
		t.Fatal(err)
	}
	if err := clients[0].Ping(ctx).Err(); err != nil {
		t.Fatalf("Close closed a client it does not own: %v", err)
	}
	if err := l.Release(ctx); !errors.Is(err, core.ErrClosed) {
		t.Fatalf("release after Close: %v", err)
	}
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
		if _, err := core.NewFromClients(tc.cfg, tc.clients...); !errors.As(err, &ae) || ae.Arg != tc.arg {
			t.Errorf("got %v, want an error for %q", err, tc.arg)
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
	if err != nil {
		t.Fatal(err)
	}
	// The acquire returned once a quorum granted: node 0's SET may land a
	// moment later.
	locktest.Eventually(t, 5*time.Second, "node 0 holds the lock", func() bool {
		v, _ := c.Nodes[0].Do("GET", "res")
		return v == l.Token()
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := l.Extend(ctx, time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("extend: %v", err)
	}
	if _, err := cl.Acquire(ctx, "other", time.Second); !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire: %v", err)
	}
	if v, _ := c.Nodes[0].Do("GET", "res"); v != l.Token() {
		t.Fatalf("the lock changed: %q", v)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("release with a canceled context: %v", err)
	}
	c.AssertNoKeys(t)
}

func TestErrorMessages(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	for _, n := range c.Nodes[:2] {
		if err := n.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := cl.Acquire(context.Background(), "res", time.Second)
	// "connection refused", not "context deadline exceeded": a dead node is
	// dialed once, not retried until the node timeout runs out.
	msg := err.Error()
	for _, want := range []string{"unavailable", c.Nodes[0].Addr(), c.Nodes[1].Addr(), "quorum is 2", "connection refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q lacks %q", msg, want)
		}
	}
	if got := core.RedactURL("redis://u:secret@h:1"); strings.Contains(got, "secret") {
		t.Errorf("RedactURL kept the password: %s", got)
	}
}
