package locktest

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/core/testkit/redistest/faultproxy"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Client is what a backend offers: core.Client's Acquire and Close.
type Client interface {
	Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error)
	Inspect(ctx context.Context, resource string) (*core.Inspection, error)
	Close() error
}

// Lock is the part of core.Lock the scenarios use.
type Lock interface {
	Extend(ctx context.Context, ttl time.Duration) error
	Release(ctx context.Context) error
	Key() string
	Token() string
	Validity() time.Duration
	Lost() <-chan struct{}
	TTL() time.Duration
	Fence() int64
	Reentered() bool
}

// Factory makes a Client from a configuration, as core.New does.
type Factory func(tb testing.TB, cfg core.Config) (Client, error)

// Native is the Factory of the native core (core.New).
func Native(tb testing.TB, cfg core.Config) (Client, error) {
	c, err := core.New(cfg)
	if err != nil {
		return nil, err
	}
	return nativeClient{c}, nil
}

// Of makes the Factory of any constructor of *core.Client, such as the Go
// driver over liblock.wasm's engine (wasm/host).
func Of(newClient func(core.Config) (*core.Client, error)) Factory {
	return func(_ testing.TB, cfg core.Config) (Client, error) {
		c, err := newClient(cfg)
		if err != nil {
			return nil, err
		}
		return nativeClient{c}, nil
	}
}

type nativeClient struct{ *core.Client }

// Inspect is core.Client.Inspect of the mutex (the scenarios' form).
func (c nativeClient) Inspect(ctx context.Context, resource string) (*core.Inspection, error) {
	return c.Client.Inspect(ctx, resource)
}

func (c nativeClient) Acquire(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error) {
	l, err := c.Client.Acquire(ctx, resource, ttl, opts...)
	if err != nil {
		return nil, err
	}
	return l, nil
}

// NodeTimeout is the node timeout the scenarios configure. Bound is the
// slack allowed on top of it when checking that a call with failing nodes
// still returns in bounded time: generous, because -race on a loaded 2-core
// machine (the CI's, shared with other suites) can stall a process for most
// of a second, but with the node timeout still below go-redis's 3 s read
// timeout that an unbounded client would show.
const (
	NodeTimeout = 100 * time.Millisecond
	Bound       = 1900 * time.Millisecond
)

// Skip names scenarios a backend cannot run, each with why: a scenario
// ("OneNodeIdleHoldsNoGoroutine") or one case of BadInput
// ("BadInput/nil ctx"). A host in another runtime (package remote) skips
// what only Go can express or what is about Go's own goroutines.
type Skip map[string]string

// Run runs every scenario against backend, but those skip names.
func Run(t *testing.T, backend Factory, skip ...Skip) {
	s := &suite{backend: backend, skip: Skip{}}
	for _, sk := range skip {
		for name, why := range sk {
			s.skip[name] = why
		}
	}
	for _, sc := range append([]scenario{
		{"SeedContention", s.seedContention},
		{"NodeCounts", s.nodeCounts},
		{"MinorityFrozen", s.minorityFrozen},
		{"MinorityKilled", s.minorityKilled},
		{"MajorityFrozen", s.majorityFrozen},
		{"MajorityKilled", s.majorityKilled},
		{"AllNodesDown", s.allNodesDown},
		{"Expiry", s.expiry},
		{"ExtendKeepsAndNeverReacquires", s.extend},
		{"ReleaseAfterExpiryLeavesOtherOwner", s.releaseAfterExpiry},
		{"ReleaseTwice", s.releaseTwice},
		{"WaitGivesUpOnTime", s.waitGivesUp},
		{"WaitWinsAfterRelease", s.waitWins},
		{"CancelMidWait", s.cancelMidWait},
		{"AutoExtendOutlivesTTL", s.autoExtendOutlives},
		{"AutoExtendLossOnOverwrite", s.lossOnOverwrite},
		{"AutoExtendLossOnMajorityDeath", s.lossOnMajorityDeath},
		{"PlainSetNXExcludes", s.plainSetNX},
		{"ScriptCacheFlushed", s.scriptFlushed},
		{"BadInput", s.badInput},
		{"CloseReleasesLocks", s.closeReleases},
		{"WakeOnReleaseAcrossClients", s.wakeAcrossClients},
		{"TurnsAcrossClients", s.turnsAcrossClients},
		{"HandOffPublishesNothing", s.handOffPublishesNothing},
		{"UnusedWaitCostsNothing", s.unusedWaitCostsNothing},
		{"Inspect", s.inspect},
		{"InspectMinorityDown", s.inspectMinorityDown},
		{"ReenterByToken", s.reenter},
		{"UnsureOutcomesWaitForTheDecidingNodes", s.unsureOutcomes},
		{"FencesIncrease", s.fencesIncrease},
		{"FenceWithANodeFrozen", s.fenceFrozen},
		{"FenceRoundOneNodeFrozen", s.fenceRoundOneFrozen},
		{"FenceRoundOneNodeKilled", s.fenceRoundOneKilled},
		{"FenceRoundTwoNodesFrozen", s.fenceRoundTwoFrozen},
		{"OneNodeIdleHoldsNoGoroutine", s.oneNodeIdle},
		{"OneNodeIdleConnectionClosed", s.oneNodeConnClosed},
		{"OneNodeFrozen", s.oneNodeFrozen},
		{"OneNodeConcurrent", s.oneNodeConcurrent},
	}, s.primitiveScenarios()...) {
		t.Run(sc.name, func(t *testing.T) {
			if why, ok := s.skip[sc.name]; ok {
				t.Skip(why)
			}
			base := runtime.NumGoroutine()
			// Registered first, so it runs last: after the clients are
			// closed and the nodes stopped.
			t.Cleanup(func() { NoGoroutineLeak(t, base) })
			sc.fn(t)
		})
	}
}

type suite struct {
	backend Factory
	skip    Skip
}

// skipped reports whether the case name (e.g. "BadInput/nil ctx") is
// skipped, logging why.
func (s *suite) skipped(t *testing.T, name string) bool {
	t.Helper()
	why, ok := s.skip[name]
	if ok {
		t.Logf("skipped %s: %s", name, why)
	}
	return ok
}

func (s *suite) client(t *testing.T, c *redistest.Cluster) Client {
	t.Helper()
	return s.clientOf(t, c.URLs())
}

// clientOf makes a client of the given node URLs (e.g. proxies').
func (s *suite) clientOf(t *testing.T, urls []string) Client {
	t.Helper()
	cl, err := s.backend(t, core.Config{Nodes: urls, NodeTimeout: NodeTimeout})
	require.NoError(t, err, "new client")
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// NoGoroutineLeak waits, with a deadline, for the goroutine count to come
// back to base; background work ends within a node timeout or two.
func NoGoroutineLeak(t testing.TB, base int) {
	t.Helper()
	// Not poll.Eventually: the failure shows the goroutines' stacks, taken
	// when the deadline passed.
	if !poll.Wait(5*time.Second, func() bool { return runtime.NumGoroutine() <= base }) {
		buf := make([]byte, 1<<16)
		t.Fatalf("goroutine leak: %d > %d\n%s", runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
	}
}

// Eventually fails the test unless cond holds within the deadline; what
// names the condition in the failure. It is poll.Eventually (cond runs in
// the caller's goroutine, so it may call require on t), kept here for the
// callers of the suite's kit.
func Eventually(t require.TestingT, within time.Duration, what string, cond func() bool) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	poll.Eventually(t, within, what, cond)
}

// OverlapChecker proves mutual exclusion: Enter fails the test if another
// holder is inside.
type OverlapChecker struct {
	inside, max atomic.Int32
	entries     atomic.Int64
}

// Enter records a holder entering the critical section.
func (o *OverlapChecker) Enter(t testing.TB) {
	n := o.inside.Add(1)
	o.entries.Add(1)
	for {
		m := o.max.Load()
		if n <= m || o.max.CompareAndSwap(m, n) {
			break
		}
	}
	assert.Equal(t, int32(1), n, "overlap: %d holders at once", n)
}

// Exit records the holder leaving.
func (o *OverlapChecker) Exit() { o.inside.Add(-1) }

func must(t testing.TB, err error) {
	t.Helper()
	require.NoError(t, err)
}

func wantErr(t testing.TB, err, kind error) {
	t.Helper()
	require.ErrorIs(t, err, kind)
}

// assertArg checks that err is a *core.ArgumentError naming arg (what
// names the call in the failure); it reports whether it is.
func assertArg(t testing.TB, err error, arg, what string) bool {
	t.Helper()
	var ae *core.ArgumentError
	return assert.ErrorAs(t, err, &ae, "%s: want an invalid-argument error for %q", what, arg) &&
		assert.Equal(t, arg, ae.Arg, "%s: the argument named by %v", what, err)
}

// within runs fn and fails the test if it took longer than limit.
func within(t testing.TB, limit time.Duration, what string, fn func()) {
	t.Helper()
	start := time.Now()
	fn()
	d := time.Since(start)
	assert.LessOrEqual(t, d, limit, "%s took %v, bound is %v", what, d, limit)
}

// settled waits, with a deadline, until cond holds on every node. An
// operation returns as soon as a quorum answered; its commands to the other
// nodes are still on their way, so a test that looks at every node waits
// for them first.
func settled(t testing.TB, c *redistest.Cluster, what string, cond func(n *redistest.Node) bool) {
	t.Helper()
	// One deadline for all the nodes: they work at the same time.
	deadline := time.Now().Add(5 * time.Second)
	for _, n := range c.Nodes {
		poll.Eventually(t, time.Until(deadline), fmt.Sprintf("node %d: %s", n.Index, what), func() bool { return cond(n) })
	}
}

func keyOn(t testing.TB, n *redistest.Node, key string) string {
	t.Helper()
	v, err := n.Do("GET", key)
	must(t, err)
	return v
}

// seedContention: ten goroutines, one resource, many rounds, at most one
// holder at a time.
func (s *suite) seedContention(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := s.client(t, c)
	var check OverlapChecker
	const workers, rounds = 10, 15
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				l, err := cl.Acquire(context.Background(), "account_id123", 5*time.Second, core.Wait(30*time.Second))
				if err != nil {
					assert.NoError(t, err, "worker %d", w)
					return
				}
				check.Enter(t)
				// Deliberate: the critical section's work. It keeps the
				// holder inside long enough for an overlapping holder, if
				// the lock let one in, to be seen by check.Enter.
				time.Sleep(time.Millisecond)
				check.Exit()
				assert.NoError(t, l.Release(context.Background()), "worker %d release", w)
			}
		}()
	}
	wg.Wait()
	require.EqualValues(t, workers*rounds, check.entries.Load(), "critical sections")
	c.AssertNoKeys(t)
}

func (s *suite) nodeCounts(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			c := redistest.Start(t, n)
			a, b := s.client(t, c), s.client(t, c)
			l, err := a.Acquire(context.Background(), "res", 10*time.Second)
			must(t, err)
			// The validity first: it runs down while the test waits below.
			v := l.Validity()
			require.Greater(t, v, 9*time.Second, "validity, want just under 10s")
			require.LessOrEqual(t, v, 10*time.Second, "validity, want just under 10s")
			settled(t, c, "holds the token", func(node *redistest.Node) bool { return keyOn(t, node, "res") == l.Token() })
			_, err = b.Acquire(context.Background(), "res", 10*time.Second)
			wantErr(t, err, core.ErrNotAcquired)
			must(t, l.Release(context.Background()))
			l2, err := b.Acquire(context.Background(), "res", 10*time.Second)
			must(t, err)
			must(t, l2.Release(context.Background()))
			c.AssertNoKeys(t)
		})
	}
}

// failMinority takes down the minority of a 5-node set and checks that
// every operation still works within the bound.
func (s *suite) failMinority(t *testing.T, fail func(*redistest.Node) error) {
	c := redistest.Start(t, 5)
	cl := s.client(t, c)
	ctx := context.Background()
	// Connect first, so the failure hits live connections too.
	l, err := cl.Acquire(ctx, "warm", time.Second)
	must(t, err)
	must(t, l.Release(ctx))
	must(t, fail(c.Nodes[0]))
	must(t, fail(c.Nodes[1]))
	bound := NodeTimeout + Bound
	within(t, bound, "acquire", func() { l, err = cl.Acquire(ctx, "res", 10*time.Second) })
	must(t, err)
	within(t, bound, "extend", func() { err = l.Extend(ctx, 10*time.Second) })
	must(t, err)
	within(t, bound, "release", func() { err = l.Release(ctx) })
	must(t, err)
	live := &redistest.Cluster{Nodes: c.Nodes[2:]}
	settled(t, live, "no key after the release", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "(nil)" })
}

func (s *suite) minorityFrozen(t *testing.T) {
	s.failMinority(t, func(n *redistest.Node) error { return n.Freeze() })
}

func (s *suite) minorityKilled(t *testing.T) {
	s.failMinority(t, func(n *redistest.Node) error { return n.Kill() })
}

// failMajority: acquire reports unavailable, not "not acquired", within the
// bound, with per-node causes, and leaves no key on the live nodes.
func (s *suite) failMajority(t *testing.T, fail, restore func(*redistest.Node) error) {
	c := redistest.Start(t, 5)
	cl := s.client(t, c)
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "warm", time.Second)
	must(t, err)
	must(t, l.Release(ctx))
	for _, n := range c.Nodes[:3] {
		must(t, fail(n))
	}
	// Decided within one node timeout; the cleanup runs in the background.
	within(t, NodeTimeout+Bound, "acquire", func() { _, err = cl.Acquire(ctx, "res", 10*time.Second) })
	wantErr(t, err, core.ErrUnavailable)
	require.NotErrorIs(t, err, core.ErrNotAcquired, "unavailable must not also be not-acquired")
	var ue *core.UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Len(t, ue.Nodes, 3, "want the causes of the 3 failed nodes, got %v", err)
	require.Contains(t, err.Error(), "3 of 5 nodes failed")
	// The failed attempt's cleanup runs in the background, each node
	// bounded by the node timeout.
	live := &redistest.Cluster{Nodes: c.Nodes[3:]}
	settled(t, live, "no key after a failed acquire", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "(nil)" })
	// Back (thawed, or restarted empty), the failed nodes hold no key either
	// once they ran what was queued for them (or, at the latest, its ttl).
	for _, n := range c.Nodes[:3] {
		must(t, restore(n))
	}
	Eventually(t, 15*time.Second, "no key on any node after the failed nodes are back", func() bool {
		for _, n := range c.Nodes {
			if keyOn(t, n, "res") != "(nil)" {
				return false
			}
		}
		return true
	})
}

func (s *suite) majorityFrozen(t *testing.T) {
	s.failMajority(t, func(n *redistest.Node) error { return n.Freeze() }, func(n *redistest.Node) error { return n.Thaw() })
}

func (s *suite) majorityKilled(t *testing.T) {
	s.failMajority(t, func(n *redistest.Node) error { return n.Kill() }, func(n *redistest.Node) error { return n.Restart() })
}

// allNodesDown: with every node refusing connections, an acquire (with a
// wait or without) is unavailable and its error names every node with its
// own cause, not only the quorum's worth that made the outcome certain.
func (s *suite) allNodesDown(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := s.client(t, c)
	for _, n := range c.Nodes {
		must(t, n.Kill())
	}
	ctx := context.Background()
	for _, opts := range [][]core.AcquireOption{nil, {core.Wait(300 * time.Millisecond)}} {
		_, err := cl.Acquire(ctx, "res", 10*time.Second, opts...)
		var ue *core.UnavailableError
		require.ErrorAs(t, err, &ue, "want unavailable: all 3 nodes failed")
		require.Contains(t, err.Error(), "all 3 nodes failed, quorum is 2")
		require.Len(t, ue.Nodes, 3, "nodes named in %v", err)
		for i, ne := range ue.Nodes {
			assert.Equal(t, i, ne.Node, "node %d: %v", i, ne)
			assert.Equal(t, strings.TrimPrefix(c.URLs()[i], "redis://"), ne.Addr, "node %d: %v", i, ne)
			assert.Error(t, ne.Err, "node %d: its cause", i)
			assert.NotErrorIs(t, ne, core.ErrNoAnswer, "node %d: a refused connection is an answer", i)
		}
	}
}

func (s *suite) expiry(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	ctx := context.Background()
	// Every ttl is at least 3 node timeouts, the shortest the Node and
	// Python bindings accept.
	l, err := a.Acquire(ctx, "res", 3*NodeTimeout)
	must(t, err)
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		require.FailNow(t, "Lost did not close after the validity ran out")
	}
	require.Zero(t, l.Validity(), "validity after expiry")
	Eventually(t, 5*time.Second, "another owner acquires after expiry", func() bool {
		l2, err := b.Acquire(ctx, "res", 10*time.Second)
		if err == nil {
			must(t, l2.Release(ctx))
		}
		return err == nil
	})
	wantErr(t, l.Extend(ctx, time.Second), core.ErrLost)
	wantErr(t, l.Release(ctx), core.ErrLost)
	c.AssertNoKeys(t)
}

func (s *suite) extend(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := s.client(t, c)
	ctx := context.Background()
	// 2 s: the extension must come before the key expires, on a slow
	// machine too; it raises the ttl to 10 s.
	l, err := cl.Acquire(ctx, "res", 2*time.Second)
	must(t, err)
	must(t, l.Extend(ctx, 10*time.Second))
	require.Greater(t, l.Validity(), 9*time.Second, "validity after extending to 10s")
	settled(t, c, "PTTL of about 10 s after extend", func(n *redistest.Node) bool {
		pttl, err := n.Do("PTTL", "res")
		must(t, err)
		ms, err := strconv.Atoi(pttl)
		return err == nil && ms > 8000 && ms <= 10000
	})
	// Delete the keys behind the lock's back: Extend must report the loss
	// and must not create the key again.
	for _, n := range c.Nodes {
		_, err := n.Do("DEL", "res")
		must(t, err)
	}
	wantErr(t, l.Extend(ctx, 10*time.Second), core.ErrLost)
	c.AssertNoKeys(t)
	select {
	case <-l.Lost():
	default:
		require.FailNow(t, "Lost not closed after Extend found the lock gone")
	}
	wantErr(t, l.Release(ctx), core.ErrLost)
}

func (s *suite) releaseAfterExpiry(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	ctx := context.Background()
	l, err := a.Acquire(ctx, "res", 3*NodeTimeout)
	must(t, err)
	<-l.Lost()
	var l2 Lock
	Eventually(t, 5*time.Second, "other owner acquires", func() bool {
		l2, err = b.Acquire(ctx, "res", 10*time.Second)
		return err == nil
	})
	// The other owner holds a quorum, not necessarily every node: on a node
	// where the first key had not yet expired its SET NX was refused.
	var held []*redistest.Node
	for _, n := range c.Nodes {
		if keyOn(t, n, "res") == l2.Token() {
			held = append(held, n)
		}
	}
	require.GreaterOrEqual(t, len(held), 2, "nodes of 3 the other owner holds")
	wantErr(t, l.Release(ctx), core.ErrLost)
	for _, n := range held {
		require.Equal(t, l2.Token(), keyOn(t, n, "res"), "node %d: the other owner's key changed", n.Index)
	}
	must(t, l2.Release(ctx))
}

func (s *suite) releaseTwice(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := s.client(t, c)
	ctx := context.Background()
	l, err := cl.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	// Extend racing Release must be safe (run under -race).
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = l.Extend(ctx, 10*time.Second) }()
	go func() { defer wg.Done(); assert.NoError(t, l.Release(ctx)) }() // not require: another goroutine
	wg.Wait()
	wantErr(t, l.Release(ctx), core.ErrLost)
	wantErr(t, l.Extend(ctx, time.Second), core.ErrLost)
	select {
	case <-l.Lost():
		require.FailNow(t, "Lost closed by a release")
	default:
	}
	c.AssertNoKeys(t)
}

func (s *suite) waitGivesUp(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	ctx := context.Background()
	l, err := a.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	const wait = 300 * time.Millisecond
	start := time.Now()
	_, err = b.Acquire(ctx, "res", time.Second, core.Wait(wait))
	took := time.Since(start)
	wantErr(t, err, core.ErrNotAcquired)
	require.GreaterOrEqual(t, took, wait, "gave up before the wait ran out")
	require.LessOrEqual(t, took, wait+NodeTimeout+Bound, "gave up long after the %v wait", wait)
	must(t, l.Release(ctx))
	c.AssertNoKeys(t)
}

func (s *suite) waitWins(t *testing.T) {
	c := redistest.Start(t, 3)
	for _, sameClient := range []bool{true, false} {
		a := s.client(t, c)
		b := a
		if !sameClient {
			b = s.client(t, c)
		}
		ctx := context.Background()
		l, err := a.Acquire(ctx, "res", 10*time.Second)
		must(t, err)
		got := make(chan error, 1)
		go func() {
			l2, err := b.Acquire(ctx, "res", time.Second, core.Wait(20*time.Second))
			if err == nil {
				err = l2.Release(ctx)
			}
			got <- err
		}()
		// Release only once the waiter has failed an attempt and waits.
		waitingFor(t, c, "res")
		must(t, l.Release(ctx))
		select {
		case err := <-got:
			must(t, err)
		case <-time.After(10 * time.Second):
			require.FailNow(t, "waiter did not win after the release")
		}
	}
	c.AssertNoKeys(t)
}

func (s *suite) cancelMidWait(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	l, err := a.Acquire(context.Background(), "res", 10*time.Second)
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := b.Acquire(ctx, "res", time.Second, core.Wait(time.Minute))
		got <- err
	}()
	waitingFor(t, c, "res") // an attempt refused, and waiting
	cancel()
	select {
	case err := <-got:
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(10 * time.Second): // a deadline for the failure only
		require.FailNow(t, "cancel not honoured")
	}
	must(t, l.Release(context.Background()))
	c.AssertNoKeys(t)

	// A deadline is reported as such.
	l, err = a.Acquire(context.Background(), "res", 10*time.Second)
	must(t, err)
	dctx, dcancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer dcancel()
	_, err = b.Acquire(dctx, "res", time.Second, core.Wait(time.Minute))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	must(t, l.Release(context.Background()))
	c.AssertNoKeys(t)
}

func (s *suite) autoExtendOutlives(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	ctx := context.Background()
	// Ten node timeouts, not the shortest ttl (three): an extension is due
	// every third of it, and a -race process on a loaded 2-core machine
	// can stall for a few hundred milliseconds, which would let a 300 ms
	// key expire between two extensions whatever the library does.
	const ttl = 10 * NodeTimeout
	l, err := a.Acquire(ctx, "res", ttl, core.AutoExtend())
	must(t, err)
	// Deliberate waits: the scenario is that time passes, three ttls, while
	// the lock stays held. Every quarter ttl it checks what held means: not
	// lost, another owner refused, and the token still on a quorum of nodes
	// (the key would be gone a ttl after the last extension).
	start := time.Now()
	for time.Since(start) < 3*ttl {
		select {
		case <-l.Lost():
			require.FailNow(t, "auto-extended lock lost", "after %v", time.Since(start))
		default:
		}
		_, err := b.Acquire(ctx, "res", time.Second)
		require.ErrorIs(t, err, core.ErrNotAcquired, "another owner while the lock is auto-extended")
		held := 0
		for _, n := range c.Nodes {
			if keyOn(t, n, "res") == l.Token() {
				held++
			}
		}
		require.GreaterOrEqual(t, held, 2, "the token is on %d of 3 nodes after %v", held, time.Since(start))
		time.Sleep(ttl / 4)
	}
	must(t, l.Release(ctx))
	c.AssertNoKeys(t)
}

func (s *suite) lossOnOverwrite(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := s.client(t, c)
	l, err := cl.Acquire(context.Background(), "res", 300*time.Millisecond, core.AutoExtend())
	must(t, err)
	for _, n := range c.Nodes {
		_, err := n.Do("SET", "res", "someone-else", "PX", "60000")
		must(t, err)
	}
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		require.FailNow(t, "loss not signalled after the keys were overwritten")
	}
	wantErr(t, l.Release(context.Background()), core.ErrLost)
	for _, n := range c.Nodes {
		require.Equal(t, "someone-else", keyOn(t, n, "res"), "node %d: the other owner's key changed", n.Index)
	}
}

func (s *suite) lossOnMajorityDeath(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := s.client(t, c)
	l, err := cl.Acquire(context.Background(), "res", 300*time.Millisecond, core.AutoExtend())
	must(t, err)
	must(t, c.Nodes[0].Kill())
	must(t, c.Nodes[1].Kill())
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		require.FailNow(t, "loss not signalled after a majority died")
	}
	require.Zero(t, l.Validity(), "validity after loss")
	_ = l.Release(context.Background())
}

// plainSetNX: the wire format is plain SET NX, so liblock and other
// programs' locks on the same key exclude each other.
func (s *suite) plainSetNX(t *testing.T) {
	c := redistest.Start(t, 3)
	cl, err := s.backend(t, core.Config{Nodes: c.URLs(), NodeTimeout: NodeTimeout, KeyPrefix: "app:"})
	must(t, err)
	defer cl.Close()
	ctx := context.Background()
	for _, n := range c.Nodes {
		_, err := n.Do("SET", "app:res", "legacy", "NX", "PX", "60000")
		must(t, err)
	}
	_, err = cl.Acquire(ctx, "res", time.Second)
	wantErr(t, err, core.ErrNotAcquired)
	must(t, c.FlushAll())
	l, err := cl.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	require.Equal(t, "app:res", l.Key())
	require.GreaterOrEqual(t, len(l.Token()), 22, "token %q too short for 122 random bits", l.Token())
	// A quorum holds the token; the others get it unless their request
	// timed out (a slow -race run): check exclusion where the key is ours.
	held := 0
	for _, n := range c.Nodes {
		if !poll.Wait(time.Second, func() bool { return keyOn(t, n, "app:res") == l.Token() }) {
			continue
		}
		held++
		got, _ := n.Do("SET", "app:res", "legacy", "NX", "PX", "60000")
		require.Equal(t, "(nil)", got, "node %d: plain SET NX on a held key", n.Index)
	}
	require.GreaterOrEqual(t, held, len(c.Nodes)/2+1, "nodes with the token, fewer than a quorum")
	must(t, l.Release(ctx))
	c.AssertNoKeys(t)
}

// scriptFlushed: EVALSHA falls back to EVAL when a node lost its script
// cache (restart, SCRIPT FLUSH).
func (s *suite) scriptFlushed(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := s.client(t, c)
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		l, err := cl.Acquire(ctx, "res", 10*time.Second)
		must(t, err)
		for _, n := range c.Nodes {
			_, err := n.Do("SCRIPT", "FLUSH")
			must(t, err)
		}
		must(t, l.Extend(ctx, 10*time.Second))
		for _, n := range c.Nodes {
			_, err := n.Do("SCRIPT", "FLUSH")
			must(t, err)
		}
		must(t, l.Release(ctx))
	}
	c.AssertNoKeys(t)
}

// badInput: every kind of bad argument gives ErrInvalidArgument naming the
// argument, and sends nothing to any node.
func (s *suite) badInput(t *testing.T) {
	c := redistest.Start(t, 3)
	urls := c.URLs()
	neg := -0.5
	nan := func() *float64 { z := 0.0; v := z / z; return &v }()
	for _, tc := range []struct {
		name string
		cfg  core.Config
		arg  string
	}{
		{"no nodes", core.Config{}, "nodes"},
		{"empty url", core.Config{Nodes: []string{""}}, "nodes[0]"},
		{"bad scheme", core.Config{Nodes: []string{"http://127.0.0.1:1"}}, "nodes[0]"},
		{"malformed url", core.Config{Nodes: []string{urls[0], "redis://%zz"}}, "nodes[1]"},
		// "redis://" is go-redis's localhost:6379, accepted like every URL
		// go-redis's ParseURL accepts.
		{"unknown option", core.Config{Nodes: []string{"redis://127.0.0.1:1?bogus=1"}}, "nodes[0]"},
		{"bad db", core.Config{Nodes: []string{"redis://127.0.0.1:1/notadb"}}, "nodes[0]"},
		{"negative timeout", core.Config{Nodes: urls, NodeTimeout: -time.Second}, "node_timeout"},
		{"absurd timeout", core.Config{Nodes: urls, NodeTimeout: time.Hour}, "node_timeout"},
		{"negative drift", core.Config{Nodes: urls, DriftFactor: &neg}, "drift_factor"},
		{"NaN drift", core.Config{Nodes: urls, DriftFactor: nan}, "drift_factor"},
		{"long prefix", core.Config{Nodes: urls, KeyPrefix: strings.Repeat("p", core.MaxKeyPrefix+1)}, "key_prefix"},
		{"too many nodes", core.Config{Nodes: make([]string, core.MaxNodes+1)}, "nodes"},
		{"same node twice", core.Config{Nodes: []string{urls[0], urls[1], urls[0]}}, "nodes[2]"},
		{"same server, another db", core.Config{Nodes: []string{urls[0] + "/1", urls[0] + "/2"}}, "nodes[1]"},
		{"same host in capitals", core.Config{Nodes: []string{"redis://localhost:1", "redis://LOCALHOST:1"}}, "nodes[1]"},
		{"no scheme", core.Config{Nodes: []string{"127.0.0.1:6379"}}, "nodes[0]"},
		// A port outside 1-65535: go-redis accepts it and fails at dial,
		// Node's socket layer throws; the engine refuses it for every host.
		{"port above 65535", core.Config{Nodes: []string{urls[0], "redis://127.0.0.1:99999"}}, "nodes[1]"},
		{"port 0", core.Config{Nodes: []string{"redis://127.0.0.1:0", urls[0]}}, "nodes[0]"},
		{"cluster seed port above 65535", core.Config{Nodes: []string{"redis://127.0.0.1:1?cluster=yes&addr=127.0.0.1:70000"}}, "nodes[0]"},
	} {
		if s.skipped(t, "BadInput/"+tc.name) {
			continue
		}
		_, err := s.backend(t, tc.cfg)
		if assertArg(t, err, tc.arg, tc.name) {
			assert.ErrorIs(t, err, core.ErrInvalidArgument, tc.name)
		}
	}
	// Both entries are named, with why.
	_, err := s.backend(t, core.Config{Nodes: []string{urls[0], urls[0]}})
	if assert.Error(t, err, "a node listed twice") {
		assert.Contains(t, err.Error(), "nodes[1]: the same server as nodes[0]")
		assert.Contains(t, err.Error(), "fake a quorum")
	}
	_, err = s.backend(t, core.Config{Nodes: []string{"127.0.0.1:6379"}})
	if assert.Error(t, err, "a URL without a scheme") {
		assert.Contains(t, err.Error(), "write redis://127.0.0.1:6379", "the redis:// form suggested")
	}
	_, err = s.backend(t, core.Config{Nodes: []string{"redis://user:s3cret@127.0.0.1:1/notadb"}})
	if assert.Error(t, err, "a bad db") {
		assert.NotContains(t, err.Error(), "s3cret", "the password in an error")
	}

	cl := s.client(t, c)
	for _, n := range c.Nodes {
		_, err := n.Do("CONFIG", "RESETSTAT")
		must(t, err)
	}
	ctx := context.Background()
	var nilCtx context.Context
	for _, tc := range []struct {
		name string
		ctx  context.Context
		res  string
		ttl  time.Duration
		opts []core.AcquireOption
		arg  string
	}{
		{"nil ctx", nilCtx, "r", time.Second, nil, "ctx"},
		{"empty resource", ctx, "", time.Second, nil, "resource"},
		{"long resource", ctx, strings.Repeat("r", core.MaxResourceLength+1), time.Second, nil, "resource"},
		{"invalid utf-8", ctx, "r\xff", time.Second, nil, "resource"},
		{"zero ttl", ctx, "r", 0, nil, "ttl"},
		{"negative ttl", ctx, "r", -time.Second, nil, "ttl"},
		{"sub-ms ttl", ctx, "r", time.Microsecond, nil, "ttl"},
		{"absurd ttl", ctx, "r", 365 * 24 * time.Hour, nil, "ttl"},
		{"negative wait", ctx, "r", time.Second, []core.AcquireOption{core.Wait(-time.Millisecond)}, "wait"},
		{"absurd wait", ctx, "r", time.Second, []core.AcquireOption{core.Wait(1000 * time.Hour)}, "wait"},
		{"nil option", ctx, "r", time.Second, []core.AcquireOption{nil}, "opts"},
	} {
		if s.skipped(t, "BadInput/"+tc.name) {
			continue
		}
		_, err := cl.Acquire(tc.ctx, tc.res, tc.ttl, tc.opts...)
		assertArg(t, err, tc.arg, tc.name)
	}
	l, err := cl.Acquire(ctx, "held", 10*time.Second)
	must(t, err)
	for _, ttl := range []time.Duration{0, -1, 25 * time.Hour} {
		assertArg(t, l.Extend(ctx, ttl), "ttl", fmt.Sprintf("extend(%v)", ttl))
	}
	if !s.skipped(t, "BadInput/nil ctx") {
		assertArg(t, l.Extend(nilCtx, time.Second), "ctx", "extend(nil ctx)")
		assertArg(t, l.Release(nilCtx), "ctx", "release(nil ctx)")
	}
	assert.Positive(t, l.Validity(), "bad calls changed the lock")
	must(t, l.Release(ctx))
	// Only the one good acquire and release reached the nodes. The engine
	// decides as soon as a quorum answered, so the last node's commands may
	// still be on their way: wait for them, with a deadline.
	for _, n := range c.Nodes {
		var stats string
		// Not a failure by itself if it never comes: the checks below
		// then say what the node saw.
		poll.Wait(5*time.Second, func() bool {
			var err error
			stats, err = n.Do("INFO", "commandstats")
			must(t, err)
			return strings.Contains(stats, "cmdstat_evalsha:calls=1,")
		})
		assert.Contains(t, stats, "cmdstat_set:calls=1,", "node %d saw other SETs than the one good acquire", n.Index)
		assert.NotContains(t, stats, "cmdstat_evalsha:calls=2", "node %d saw a bad call", n.Index)
		assert.NotContains(t, stats, "cmdstat_pexpire", "node %d saw a bad call", n.Index)
	}
	c.AssertNoKeys(t)
}

func (s *suite) closeReleases(t *testing.T) {
	c := redistest.Start(t, 3)
	a, err := s.backend(t, core.Config{Nodes: c.URLs(), NodeTimeout: NodeTimeout})
	must(t, err)
	b := s.client(t, c)
	ctx := context.Background()
	one, err := a.Acquire(ctx, "one", 10*time.Second)
	must(t, err)
	two, err := a.Acquire(ctx, "two", 10*time.Second, core.AutoExtend())
	must(t, err)
	held, err := b.Acquire(ctx, "three", 10*time.Second)
	must(t, err)
	waiting := make(chan error, 1)
	go func() {
		_, err := a.Acquire(ctx, "three", time.Second, core.Wait(time.Minute))
		waiting <- err
	}()
	waitingFor(t, c, "three")
	must(t, a.Close())
	select {
	case err := <-waiting:
		wantErr(t, err, core.ErrClosed)
	case <-time.After(5 * time.Second):
		require.FailNow(t, "a waiting acquire outlived Close")
	}
	must(t, a.Close()) // twice is harmless
	_, err = a.Acquire(ctx, "four", time.Second)
	wantErr(t, err, core.ErrClosed)
	// The locks Close released say so, the same way in every language.
	for _, l := range []Lock{one, two} {
		wantErr(t, l.Release(ctx), core.ErrClosed)
		wantErr(t, l.Extend(ctx, time.Second), core.ErrClosed)
		select {
		case <-l.Lost():
			assert.Fail(t, "lost after Close released it", l.Key())
		default:
		}
	}
	must(t, held.Release(ctx))
	c.AssertNoKeys(t)
}

// numSub returns how many connections of node n listen for releases of key.
func numSub(t testing.TB, n *redistest.Node, key string) string {
	t.Helper()
	v, err := n.Do("PUBSUB", "NUMSUB", "liblock:released:"+key)
	must(t, err)
	return v[strings.LastIndexByte(v, '\n')+1:] // the reply is [channel, count]
}

// waitingFor returns once an acquire waits for key: it listens for the
// key's releases on every node, which an acquire does only after an
// attempt of it was refused (or it queued behind another). It assumes one
// waiting client.
func waitingFor(t testing.TB, c *redistest.Cluster, key string) {
	t.Helper()
	settled(t, c, "an acquire waits for "+key, func(n *redistest.Node) bool { return numSub(t, n, key) == "1" })
}

// wakeAcrossClients: an acquire waiting in one client listens for releases
// on every node (one pub/sub connection per node), is woken by another
// client's release, and stops listening once it holds the lock. A pub/sub
// connection killed while waiting is replaced (polling covers the gap).
func (s *suite) wakeAcrossClients(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	woken := acquireBehind(ctx, b, "res")
	listening := func(want string) {
		t.Helper()
		settled(t, c, "PUBSUB NUMSUB = "+want, func(n *redistest.Node) bool { return numSub(t, n, "res") == want })
	}
	listening("1")
	// Drop the waiter's pub/sub connections: it subscribes again.
	for _, n := range c.Nodes {
		_, err := n.Do("CLIENT", "KILL", "TYPE", "pubsub")
		must(t, err)
	}
	listening("1")
	must(t, held.Release(ctx))
	lb := woken(t, "the waiter was not woken by the other client's release")
	listening("0")
	must(t, lb.Release(ctx))
	c.AssertNoKeys(t)
}

// acquireBehind starts an acquire of key through cl that waits (up to a
// minute) for the key's holder; the function it returns gives that lock,
// failing the test with why unless it is granted within 10 s.
func acquireBehind(ctx context.Context, cl Client, key string) func(t *testing.T, why string) Lock {
	type result struct {
		l   Lock
		err error
	}
	got := make(chan result, 1)
	go func() {
		l, err := cl.Acquire(ctx, key, 10*time.Second, core.Wait(time.Minute))
		got <- result{l, err}
	}()
	return func(t *testing.T, why string) Lock {
		t.Helper()
		select {
		case r := <-got:
			must(t, r.err)
			return r.l
		case <-time.After(10 * time.Second):
			require.FailNow(t, why)
			return nil
		}
	}
}

// commandCalls returns how many times node n ran command (redistest's
// CommandCalls: e.g. "publish" or "pubsub|numsub"), scripts' calls included.
func commandCalls(t testing.TB, n *redistest.Node, command string) int {
	t.Helper()
	calls, err := n.CommandCalls(command)
	must(t, err)
	return calls
}

// handOffPublishesNothing: a release that hands the key to a waiter of the
// same client publishes nothing (nobody else need wake; it only counts the
// listeners, for turns between clients); the last release, with nobody
// waiting here, publishes for the waiters of other clients.
func (s *suite) handOffPublishesNothing(t *testing.T) {
	c := redistest.Start(t, 3)
	a := s.client(t, c)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	handedOver := acquireBehind(ctx, a, "res")
	settled(t, c, "PUBSUB NUMSUB = 1", func(n *redistest.Node) bool { return numSub(t, n, "res") == "1" })
	for _, n := range c.Nodes {
		_, err := n.Do("CONFIG", "RESETSTAT")
		must(t, err)
	}
	must(t, held.Release(ctx))
	must(t, handedOver(t, "the waiter did not get the key handed over").Release(ctx))
	// The last release may reach a node after the quorum answered, and so
	// may the hand-off's NUMSUB: wait for both, then count them exactly.
	settled(t, c, "the hand-off and the last release ran", func(n *redistest.Node) bool {
		return commandCalls(t, n, "publish") >= 1 && commandCalls(t, n, "pubsub|numsub") >= 1
	})
	for _, n := range c.Nodes {
		assert.Equal(t, 1, commandCalls(t, n, "publish"), "node %d: PUBLISH for one hand-off and one last release", n.Index)
		assert.Equal(t, 1, commandCalls(t, n, "pubsub|numsub"), "node %d: PUBSUB NUMSUB for one hand-off and one last release", n.Index)
	}
	c.AssertNoKeys(t)
}

// turnsAcrossClients: two clients, three contenders each, one key, short
// sections. A client hands the key to its own next waiter within one round
// trip, which would let it keep the key for good; it must yield to the
// other client's waiters instead. Both clients get a fair part of the
// sections and the key goes back and forth between them many times (it
// cannot be a matter of luck: the releaser's next waiter is always first).
func (s *suite) turnsAcrossClients(t *testing.T) {
	// The negative control: the share check catches one client keeping
	// the key.
	require.Less(t, TurnShare(map[int]int{0: 10, 1: 190}), 0.25, "the share check cannot fail")
	require.Equal(t, 0.5, TurnShare(map[int]int{0: 100, 1: 100}), "the share of even turns")
	c := redistest.Start(t, 3)
	// The scenario is about turns, not node timeouts: a node timeout of
	// seconds keeps a busy machine's slow reply from failing a release.
	clients := make([]Client, 2)
	for i := range clients {
		cl, err := s.backend(t, core.Config{Nodes: c.URLs(), NodeTimeout: 2 * time.Second})
		require.NoError(t, err, "new client")
		t.Cleanup(func() { _ = cl.Close() })
		clients[i] = cl
	}
	const sections = 240
	var (
		mu    sync.Mutex
		order []int // the client of each section, in lock order
		in    OverlapChecker
		wg    sync.WaitGroup
	)
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl := w % 2
			for {
				mu.Lock()
				done := len(order) >= sections
				mu.Unlock()
				if done {
					return
				}
				l, err := clients[cl].Acquire(context.Background(), "res", 10*time.Second, core.Wait(time.Minute))
				if !assert.NoError(t, err) {
					return
				}
				in.Enter(t)
				mu.Lock()
				order = append(order, cl)
				mu.Unlock()
				// Deliberate: the section's work, long enough for the
				// other clients to queue behind it (the scenario is
				// about their turns, which need a queue).
				time.Sleep(500 * time.Microsecond)
				in.Exit()
				if !assert.NoError(t, l.Release(context.Background())) {
					return
				}
			}
		}()
	}
	wg.Wait()
	per := map[int]int{}
	cross := 0
	for i, cl := range order {
		per[cl]++
		if i > 0 && order[i-1] != cl {
			cross++
		}
	}
	t.Logf("sections per client %v, %d hand-offs between the clients", per, cross)
	require.GreaterOrEqual(t, TurnShare(per), 0.25, "sections per client %v: one client kept the key", per)
	require.GreaterOrEqual(t, cross, len(order)/20, "%d hand-offs between the clients of %d sections: one client kept the key", cross, len(order))
	c.AssertNoKeys(t)
}

// TurnShare is the smaller of two clients' shares of the sections.
func TurnShare(per map[int]int) float64 {
	total := per[0] + per[1]
	if total == 0 {
		return 0
	}
	return float64(min(per[0], per[1])) / float64(total)
}

func (s *suite) clientWith(t *testing.T, c *redistest.Cluster, owner string) Client {
	t.Helper()
	cl, err := s.backend(t, core.Config{Nodes: c.URLs(), NodeTimeout: NodeTimeout, Owner: owner})
	must(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// inspect: a free resource, one held with an owner label (seen by another
// client too), one held by another program (no label), one without expiry,
// a minority's value; inspecting takes nothing; bad input.
func (s *suite) inspect(t *testing.T) {
	c := redistest.Start(t, 3)
	a := s.clientWith(t, c, "worker-7")
	other := s.client(t, c)
	ctx := context.Background()
	in, err := a.Inspect(ctx, "res")
	must(t, err)
	assert.False(t, in.Held, "free resource: %+v", in)
	assert.Zero(t, in.Validity, "free resource: %+v", in)
	assert.Empty(t, in.Owner, "free resource: %+v", in)
	require.Len(t, in.Nodes, 3, "free resource: %+v", in)
	for i, n := range in.Nodes {
		assert.Equal(t, i, n.Node, "free resource, node %d: %+v", i, n)
		assert.Equal(t, strings.TrimPrefix(c.URLs()[i], "redis://"), n.Addr, "free resource, node %d", i)
		assert.False(t, n.Locked, "free resource, node %d: %+v", i, n)
		assert.False(t, n.Holder, "free resource, node %d: %+v", i, n)
		assert.NoError(t, n.Err, "free resource, node %d", i)
	}
	l, err := a.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	require.Zero(t, l.Fence(), "a plain lock's fence")
	require.False(t, l.Reentered(), "a plain lock reentered")
	settled(t, c, "holds the token", func(n *redistest.Node) bool { return keyOn(t, n, "res") == l.Token() })
	for _, who := range []Client{a, other} {
		in, err = who.Inspect(ctx, "res")
		must(t, err)
		assert.True(t, in.Held, "held: %+v", in)
		assert.Equal(t, "worker-7", in.Owner, "held: %+v", in)
		assert.Greater(t, in.Validity, 9*time.Second, "held: %+v", in)
		assert.LessOrEqual(t, in.Validity, 10*time.Second, "held: %+v", in)
		for _, n := range in.Nodes {
			assert.True(t, n.Locked, "node %+v", n)
			assert.True(t, n.Holder, "node %+v", n)
			assert.Equal(t, "worker-7", n.Owner, "node %+v", n)
			assert.NoError(t, n.Err, "node %d", n.Node)
			assert.Greater(t, n.TTL, 9*time.Second, "node %+v", n)
			assert.LessOrEqual(t, n.TTL, 10*time.Second, "node %+v", n)
		}
	}
	assert.True(t, strings.HasPrefix(l.Token(), "worker-7/"), "token %q: want worker-7/<uuid>", l.Token())
	assert.Len(t, l.Token(), len("worker-7/")+36, "token %q: want worker-7/<uuid>", l.Token())
	must(t, l.Release(ctx))
	// The release returned at a quorum: on the third node the key may
	// still be there, and the SET NX below would not take it.
	settled(t, c, "released", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "(nil)" })
	// Another program's plain SET NX: held, no owner.
	for _, n := range c.Nodes {
		_, err := n.Do("SET", "res", "legacy", "NX", "PX", "60000")
		must(t, err)
	}
	in, err = a.Inspect(ctx, "res")
	must(t, err)
	assert.True(t, in.Held, "foreign lock: %+v", in)
	assert.Empty(t, in.Owner, "foreign lock: %+v", in)
	assert.Greater(t, in.Validity, 50*time.Second, "foreign lock: %+v", in)
	// Without expiry.
	for _, n := range c.Nodes {
		_, err := n.Do("SET", "res", "forever")
		must(t, err)
	}
	in, err = a.Inspect(ctx, "res")
	must(t, err)
	assert.True(t, in.Held, "no expiry: %+v", in)
	assert.Equal(t, core.NoExpiry, in.Validity, "no expiry: %+v", in)
	for _, n := range in.Nodes {
		assert.True(t, n.Locked, "no expiry, node %+v", n)
		assert.True(t, n.Holder, "no expiry, node %+v", n)
		assert.Equal(t, core.NoExpiry, n.TTL, "no expiry, node %+v", n)
	}
	// A minority's value is no holder.
	_, err = c.Nodes[0].Do("SET", "res", "other")
	must(t, err)
	_, err = c.Nodes[1].Do("DEL", "res")
	must(t, err)
	in, err = a.Inspect(ctx, "res")
	must(t, err)
	assert.False(t, in.Held, "split: %+v", in)
	assert.Zero(t, in.Validity, "split: %+v", in)
	assert.True(t, in.Nodes[0].Locked, "split, node 0: %+v", in.Nodes[0])
	assert.False(t, in.Nodes[0].Holder, "split, node 0: %+v", in.Nodes[0])
	assert.False(t, in.Nodes[1].Locked, "split, node 1: %+v", in.Nodes[1])
	assert.Equal(t, "other", keyOn(t, c.Nodes[0], "res"), "inspecting changed node 0's key")
	assert.Equal(t, "forever", keyOn(t, c.Nodes[2], "res"), "inspecting changed node 2's key")
	_, err = a.Inspect(ctx, "")
	assertArg(t, err, "resource", "inspect of an empty resource")
	_, err = s.backend(t, core.Config{Nodes: c.URLs(), Owner: "a/b"})
	assertArg(t, err, "owner", "an owner with '/'")
}

// inspectMinorityDown: with one of three nodes killed the answer stands; with
// two, it cannot tell.
func (s *suite) inspectMinorityDown(t *testing.T) {
	c := redistest.Start(t, 3)
	a := s.client(t, c)
	ctx := context.Background()
	l, err := a.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	settled(t, c, "holds the token", func(n *redistest.Node) bool { return keyOn(t, n, "res") == l.Token() })
	must(t, c.Nodes[2].Kill())
	in, err := a.Inspect(ctx, "res")
	must(t, err)
	require.True(t, in.Held, "one node down: %+v", in)
	assert.Greater(t, in.Validity, 5*time.Second, "one node down: %+v", in)
	assert.Error(t, in.Nodes[2].Err, "one node down, the killed node: %+v", in.Nodes[2])
	assert.False(t, in.Nodes[2].Locked, "one node down, the killed node: %+v", in.Nodes[2])
	for _, n := range in.Nodes[:2] {
		assert.NoError(t, n.Err, "one node down, node %d", n.Node)
		assert.True(t, n.Holder, "one node down, node %+v", n)
	}
	must(t, c.Nodes[1].Kill())
	_, err = a.Inspect(ctx, "res")
	wantErr(t, err, core.ErrUnavailable)
	var ue *core.UnavailableError
	require.ErrorAs(t, err, &ue)
	require.Len(t, ue.Nodes, 2, "want the causes of nodes 1 and 2, got %v", err)
	assert.Equal(t, 1, ue.Nodes[0].Node, "want the causes of nodes 1 and 2, got %v", err)
	assert.Equal(t, 2, ue.Nodes[1].Node, "want the causes of nodes 1 and 2, got %v", err)
}

// reenter: a token handed to another client re-enters the held lock (ttl
// raised), an unknown token is an ordinary acquire, another's lock is not
// taken; release frees it for every holder of the token.
// unsureOutcomes: an outcome that the nodes still to answer could change
// waits for them. A re-entry whose token's key is gone from one node (that
// node grants it afresh) is still a re-entry when the other two hold the
// token; an extension of a lock deleted from both live nodes, the third
// node dead, is a loss, not "unavailable: the lock stays held until its
// validity ends". Decided on the first answers, both depended on which node
// answered first.
func (s *suite) unsureOutcomes(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	ctx := context.Background()
	l, err := a.Acquire(ctx, "res", 10*time.Second)
	must(t, err)
	settled(t, c, "holds the token", func(n *redistest.Node) bool { return keyOn(t, n, "res") == l.Token() })
	_, err = c.Nodes[0].Do("DEL", "res")
	must(t, err)
	h, err := b.Acquire(ctx, "res", 10*time.Second, core.WithToken(l.Token()))
	must(t, err)
	require.True(t, h.Reentered(), "a re-entry where two of three nodes held the token")

	must(t, c.Nodes[2].Kill())
	for _, n := range c.Nodes[:2] {
		_, err := n.Do("DEL", "res")
		must(t, err)
	}
	wantErr(t, h.Extend(ctx, 10*time.Second), core.ErrLost)
	wantErr(t, h.Release(ctx), core.ErrLost)
	_ = l.Release(ctx)
}

func (s *suite) reenter(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.client(t, c), s.client(t, c)
	ctx := context.Background()
	// 5 s: the key must outlive the waits below on a slow machine; the
	// re-entry raises it to 20 s.
	l, err := a.Acquire(ctx, "res", 5*time.Second)
	must(t, err)
	require.False(t, l.Reentered(), "a fresh lock reentered")
	require.Zero(t, l.Fence(), "a fresh lock's fence")
	settled(t, c, "holds the token", func(n *redistest.Node) bool { return keyOn(t, n, "res") == l.Token() })
	h, err := b.Acquire(ctx, "res", 20*time.Second, core.WithToken(l.Token()))
	must(t, err)
	require.True(t, h.Reentered(), "re-entry reentered")
	require.Equal(t, l.Token(), h.Token(), "re-entry token")
	require.Zero(t, h.Fence(), "re-entry fence")
	require.Greater(t, h.Validity(), 19*time.Second, "re-entry validity")
	settled(t, c, "ttl raised", func(n *redistest.Node) bool {
		pttl, err := n.Do("PTTL", "res")
		must(t, err)
		return len(pttl) == 5 // 10000..19999 ms
	})
	// Someone else's token does not get in.
	_, err = b.Acquire(ctx, "res", time.Second, core.WithToken("someone-elses-token-0123"), core.Wait(0))
	wantErr(t, err, core.ErrNotAcquired)
	for _, n := range c.Nodes {
		require.Equal(t, l.Token(), keyOn(t, n, "res"), "node %d after someone else's token tried", n.Index)
	}
	must(t, h.Release(ctx))
	c.AssertNoKeys(t)
	wantErr(t, l.Release(ctx), core.ErrLost) // the key went with the hand-over's release
	// An unknown token on a free resource is an ordinary acquire.
	f, err := b.Acquire(ctx, "res", time.Second, core.WithToken("a-token-of-my-own-0001"))
	must(t, err)
	require.False(t, f.Reentered(), "a fresh token reentered")
	require.Equal(t, "a-token-of-my-own-0001", f.Token(), "a fresh token")
	settled(t, c, "holds the caller's token", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "a-token-of-my-own-0001" })
	must(t, f.Release(ctx))
	for i, bad := range []core.AcquireOption{core.WithToken("short"), core.WithToken(strings.Repeat("t", 513))} {
		_, err := a.Acquire(ctx, "res", time.Second, bad)
		assertArg(t, err, "token", fmt.Sprintf("bad token %d", i))
	}
	_, err = a.Acquire(ctx, "res", time.Second, core.WithToken("a-token-of-my-own-0001"), core.Fence())
	assertArg(t, err, "fence", "a token with a fence")
	c.AssertNoKeys(t)
}

// StrictlyIncreasing reports the first index where fences do not strictly
// increase, or -1.
func StrictlyIncreasing(fences []int64) int {
	for i := 1; i < len(fences); i++ {
		if fences[i] <= fences[i-1] {
			return i
		}
	}
	return -1
}

// fencesIncrease: contenders in two clients take turns; the fences, in the
// order the critical sections ran, strictly increase. The checker is shown
// to catch a repeat and a decrease.
func (s *suite) fencesIncrease(t *testing.T) {
	// The negative controls: the checker catches a repeat and a decrease.
	require.Equal(t, 2, StrictlyIncreasing([]int64{1, 2, 2}), "the fence checker cannot fail")
	require.Equal(t, 1, StrictlyIncreasing([]int64{3, 1}), "the fence checker cannot fail")
	require.Equal(t, -1, StrictlyIncreasing([]int64{1, 5, 9}), "the fence checker fails increasing fences")
	c := redistest.Start(t, 3)
	clients := []Client{s.client(t, c), s.client(t, c)}
	var mu sync.Mutex
	var order []int64
	var wg sync.WaitGroup
	var in OverlapChecker
	for w := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				l, err := clients[w%2].Acquire(context.Background(), "res", 5*time.Second, core.Fence(), core.Wait(20*time.Second))
				if !assert.NoError(t, err) {
					return
				}
				in.Enter(t)
				assert.False(t, l.Reentered(), "a fenced acquire reports a re-entry")
				mu.Lock()
				order = append(order, l.Fence())
				mu.Unlock()
				in.Exit()
				assert.NoError(t, l.Release(context.Background()))
			}
		}()
	}
	wg.Wait()
	require.Len(t, order, 30, "fences in lock order")
	require.Equal(t, -1, StrictlyIncreasing(order), "fences in lock order %v do not strictly increase at that index", order)
	require.GreaterOrEqual(t, order[0], int64(1), "the first fence")
	// No lock left; each node that granted keeps its fence counter (key,
	// 0xFF, "fence": no expiry, by design): a quorum at least.
	settled(t, c, "no lock key", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "(nil)" })
	counters := 0
	for _, n := range c.Nodes {
		keys, err := n.Do("KEYS", "*")
		must(t, err)
		switch keys {
		case "res\xfffence":
			counters++
		case "", "(empty array)", "(nil)":
		default:
			require.FailNow(t, "a key left", "node %d keys %q, want only the fence counter", n.Index, keys)
		}
	}
	require.GreaterOrEqual(t, counters, 2, "nodes with a fence counter")
}

// fenceFrozen: with one node of three frozen, fenced acquires still succeed
// and increase.
func (s *suite) fenceFrozen(t *testing.T) {
	c := redistest.Start(t, 3)
	a := s.client(t, c)
	ctx := context.Background()
	l, err := a.Acquire(ctx, "res", 5*time.Second, core.Fence())
	must(t, err)
	first := l.Fence()
	must(t, l.Release(ctx))
	require.GreaterOrEqual(t, first, int64(1), "the first fence")
	require.False(t, l.Reentered(), "a fenced lock reentered")
	must(t, c.Nodes[0].Freeze())
	defer func() { _ = c.Nodes[0].Thaw() }()
	for range 3 {
		l, err = a.Acquire(ctx, "res", 5*time.Second, core.Fence(), core.Wait(0))
		must(t, err)
		require.Greater(t, l.Fence(), first, "fence after %d", first)
		first = l.Fence()
		must(t, l.Release(ctx))
	}
	must(t, c.Nodes[0].Thaw())
	// The commands queued at the frozen node run at its thaw: the lock keys
	// they set are deleted by the queued releases, or expire with their ttl.
	Eventually(t, 15*time.Second, "no lock key on any node", func() bool {
		for _, n := range c.Nodes {
			if keyOn(t, n, "res") != "(nil)" {
				return false
			}
		}
		return true
	})
}

// The fence round under fault: a client reaches the three nodes through a
// faultproxy that freezes (SIGSTOP) or kills (SIGKILL) the first `faults`
// nodes the second round's command (fence.lua) reaches, just before it does.
// The nodes have granted the first round.
//
// The second round goes to the nodes whose grants made the first round's
// quorum (2 of 3, since the engine decides on each reply), and to the third
// as its grant comes in. Losing one node in the second round still leaves
// a quorum to take the fence: the acquire succeeds with a higher fence.
// Losing two leaves the fence on fewer than a quorum: the acquire fails
// with ErrUnavailable — never a lock — within the node timeout's bound.
// After the nodes are back (thawed, or restarted empty), no lock key is
// left (the release or the failed attempt's cleanup, or at the latest the
// ttl) and the next fenced acquire gets a fence above every fence before.
func (s *suite) fenceRoundFault(t *testing.T, sig syscall.Signal, faults int) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	direct := s.client(t, c)
	l, err := direct.Acquire(ctx, "res", 5*time.Second, core.Fence())
	must(t, err)
	first := l.Fence()
	must(t, l.Release(ctx))
	settled(t, c, "released", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "(nil)" })

	routes := make([]faultproxy.Route, len(c.Nodes))
	for i, n := range c.Nodes {
		routes[i] = faultproxy.Route{Target: n.Addr(), PID: n.PID()}
	}
	p, err := faultproxy.Start(faultproxy.Config{Routes: routes, Patterns: faultproxy.FencePatterns(), Signal: sig, Faults: faults})
	must(t, err)
	t.Cleanup(func() { _ = p.Close() })
	t.Cleanup(func() { // a failed test must not leave a node stopped
		for _, n := range c.Nodes {
			_ = n.Thaw()
		}
	})
	urls := make([]string, len(routes))
	for i, a := range p.Addrs() {
		urls[i] = "redis://" + a
	}
	cl := s.clientOf(t, urls)

	const ttl = 2 * time.Second // a key the cleanup cannot reach expires soon
	within(t, NodeTimeout+Bound, "acquire", func() {
		l, err = cl.Acquire(ctx, "res", ttl, core.Fence())
	})
	if faults == 1 {
		// A minority: the third node's grant comes late, and the fence
		// round takes it in instead of the signalled node.
		must(t, err)
		require.Greater(t, l.Fence(), first, "fence after %d", first)
		first = l.Fence()
		must(t, l.Release(ctx))
	} else {
		if err == nil {
			require.FailNow(t, "a lock without its fence round's quorum", "acquired fence %d with %d of its fence round's nodes signalled", l.Fence(), faults)
		}
		wantErr(t, err, core.ErrUnavailable)
		require.NotErrorIs(t, err, core.ErrNotAcquired, "unavailable must not also be not-acquired")
		require.Contains(t, err.Error(), "fence", "the error says the fence round failed")
	}
	fired := p.Fired()
	require.Len(t, fired, faults, "the nodes the proxy signalled")
	for _, i := range fired {
		if sig == syscall.SIGKILL {
			must(t, c.Nodes[i].Restart())
		} else {
			must(t, c.Nodes[i].Thaw())
		}
	}
	settled(t, c, "no lock key after the failed acquire", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "(nil)" })

	l, err = direct.Acquire(ctx, "res", 5*time.Second, core.Fence())
	must(t, err)
	require.Greater(t, l.Fence(), first, "fence after %d", first)
	must(t, l.Release(ctx))
	settled(t, c, "released", func(n *redistest.Node) bool { return keyOn(t, n, "res") == "(nil)" })
}

func (s *suite) fenceRoundOneFrozen(t *testing.T) { s.fenceRoundFault(t, syscall.SIGSTOP, 1) }
func (s *suite) fenceRoundOneKilled(t *testing.T) { s.fenceRoundFault(t, syscall.SIGKILL, 1) }
func (s *suite) fenceRoundTwoFrozen(t *testing.T) { s.fenceRoundFault(t, syscall.SIGSTOP, 2) }

// commandStats returns every command node n ran since its last CONFIG
// RESETSTAT, with its number of calls (redistest's CommandStats).
func commandStats(t testing.TB, n *redistest.Node) map[string]int {
	t.Helper()
	stats, err := n.CommandStats()
	must(t, err)
	return stats
}

// unusedWaitCostsNothing: uncontended acquire+release pairs with a wait
// budget send exactly the commands of pairs without one — no SUBSCRIBE,
// no pub/sub connection and its handshake — on one node and on three.
func (s *suite) unusedWaitCostsNothing(t *testing.T) {
	const pairs = 50
	for _, nodes := range []int{1, 3} {
		t.Run(fmt.Sprint(nodes), func(t *testing.T) {
			c := redistest.Start(t, nodes)
			// A roomy node timeout: the counts compare every command, and
			// a request timed out on a loaded machine could cost a new
			// connection (its handshake) in one run and not the other.
			cl, err := s.backend(t, core.Config{Nodes: c.URLs(), NodeTimeout: 2 * time.Second})
			must(t, err)
			t.Cleanup(func() { _ = cl.Close() })
			ctx := context.Background()
			run := func(opts ...core.AcquireOption) []map[string]int {
				for _, n := range c.Nodes {
					_, err := n.Do("CONFIG", "RESETSTAT")
					must(t, err)
				}
				for range pairs {
					l, err := cl.Acquire(ctx, "res", 10*time.Second, opts...)
					must(t, err)
					must(t, l.Release(ctx))
				}
				// A node outside the quorum may run its last release
				// just after the call returned.
				settled(t, c, "every release ran", func(n *redistest.Node) bool {
					return commandStats(t, n)["evalsha"]+commandStats(t, n)["eval"] >= pairs
				})
				stats := make([]map[string]int, nodes)
				for i, n := range c.Nodes {
					stats[i] = commandStats(t, n)
					delete(stats[i], "config|resetstat")
					delete(stats[i], "info")
				}
				return stats
			}
			run() // connects and loads the release script
			single := run()
			waiting := run(core.Wait(10 * time.Second))
			for i := range c.Nodes {
				assert.Equal(t, single[i], waiting[i], "node %d: the commands of %d pairs without a wait budget (expected) and with one (actual)", i, pairs)
				assert.Equal(t, pairs, single[i]["set"], "node %d: SETs for %d acquires: %v", i, pairs, single[i])
			}
			c.AssertNoKeys(t)
		})
	}
}
