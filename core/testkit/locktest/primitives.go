package locktest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The primitives beyond the mutex are optional capabilities of a Client: a
// host that does not implement one has the scenarios of that primitive
// skipped, with the reason in -v output.

// SemaphoreClient is a Client that takes permits of counting semaphores
// (core.Permits) and inspects them (core.InspectPermits).
type SemaphoreClient interface {
	AcquirePermit(ctx context.Context, resource string, permits int, ttl time.Duration, opts ...core.AcquireOption) (PermitLock, error)
	InspectPermits(ctx context.Context, resource string, permits int) (*core.Inspection, error)
}

// PermitLock is a semaphore's permit: a Lock with its slot.
type PermitLock interface {
	Lock
	Slot() int
}

// ReadWriteClient is a Client that takes either side of a read-write lock
// (core.Read, core.Write).
type ReadWriteClient interface {
	AcquireRead(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error)
	AcquireWrite(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error)
}

// MultiClient is a Client that takes a set of resources together
// (core.Client.AcquireAll).
type MultiClient interface {
	AcquireAll(ctx context.Context, resources []string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error)
}

// ElectionClient is a Client that campaigns in leader elections and
// observes them. wait < 0 campaigns until ctx ends.
type ElectionClient interface {
	Campaign(ctx context.Context, name, value string, ttl, wait time.Duration) (Leadership, error)
	Observe(ctx context.Context, name string) (<-chan core.Leader, error)
}

// Leadership is the part of core.Leadership the scenarios use.
type Leadership interface {
	Term() int64
	Value() string
	Resign(ctx context.Context) error
	Lost() <-chan struct{}
}

func (c nativeClient) AcquirePermit(ctx context.Context, resource string, permits int, ttl time.Duration, opts ...core.AcquireOption) (PermitLock, error) {
	l, err := c.Client.Acquire(ctx, resource, ttl, append([]core.AcquireOption{core.Permits(permits)}, opts...)...)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (c nativeClient) InspectPermits(ctx context.Context, resource string, permits int) (*core.Inspection, error) {
	return c.Client.Inspect(ctx, resource, core.InspectPermits(permits))
}

func (c nativeClient) AcquireRead(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error) {
	return c.Acquire(ctx, resource, ttl, append([]core.AcquireOption{core.Read()}, opts...)...)
}

func (c nativeClient) AcquireWrite(ctx context.Context, resource string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error) {
	return c.Acquire(ctx, resource, ttl, append([]core.AcquireOption{core.Write()}, opts...)...)
}

func (c nativeClient) AcquireAll(ctx context.Context, resources []string, ttl time.Duration, opts ...core.AcquireOption) (Lock, error) {
	l, err := c.Client.AcquireAll(ctx, resources, ttl, opts...)
	if err != nil {
		return nil, err
	}
	return l, nil
}

func (c nativeClient) Campaign(ctx context.Context, name, value string, ttl, wait time.Duration) (Leadership, error) {
	opts := []core.CampaignOption{core.CampaignTTL(ttl)}
	if wait >= 0 {
		opts = append(opts, core.CampaignWait(wait))
	}
	ld, err := c.Client.Campaign(ctx, name, value, opts...)
	if err != nil {
		return nil, err
	}
	return ld, nil
}

func (c nativeClient) Observe(ctx context.Context, name string) (<-chan core.Leader, error) {
	// A short poll: the scenarios see a change pub/sub missed (a leader's
	// process gone) within a few node timeouts.
	return c.Client.Observe(ctx, name, core.ObservePoll(5*NodeTimeout))
}

// primitiveScenarios are the scenarios of the semaphore, the read-write
// lock, the multi-resource lock and leader elections.
func (s *suite) primitiveScenarios() []scenario {
	return []scenario{
		{"SemaphoreHolders", s.semaphoreHolders},
		{"SemaphoreWakePerPermit", s.semaphoreWakePerPermit},
		{"SemaphoreContention", s.semaphoreContention},
		{"SemaphoreLoss", s.semaphoreLoss},
		{"SemaphoreMinority", s.semaphoreMinority},
		{"SemaphoreBadInput", s.semaphoreBadInput},
		{"ReadWriteShareAndExclude", s.rwShareAndExclude},
		{"ReadWriteWriterNotStarved", s.rwWriterNotStarved},
		{"ReadWriteMinority", s.rwMinority},
		{"ReadWriteBadInput", s.rwBadInput},
		{"MultiAllOrNone", s.multiAllOrNone},
		{"MultiEitherOrder", s.multiEitherOrder},
		{"MultiMinority", s.multiMinority},
		{"MultiBadInput", s.multiBadInput},
		{"ElectionResignHandsOver", s.electionResign},
		{"ElectionLeaderClosed", s.electionLeaderClosed},
		{"ElectionMinority", s.electionMinority},
		{"ElectionBadInput", s.electionBadInput},
		{"WaitBudgetNodeDown", s.waitBudgetNodeDown},
		{"WaitBudgetSplitNodeHeld", s.waitBudgetSplit},
	}
}

type scenario struct {
	name string
	fn   func(*testing.T)
}

func (s *suite) semaphores(t *testing.T, c *redistest.Cluster) (Client, SemaphoreClient) {
	t.Helper()
	cl := s.client(t, c)
	sc, ok := cl.(SemaphoreClient)
	if !ok {
		t.Skipf("this host's Client does not implement locktest.SemaphoreClient (%T)", cl)
	}
	return cl, sc
}

func (s *suite) readWrite(t *testing.T, c *redistest.Cluster) ReadWriteClient {
	t.Helper()
	cl := s.client(t, c)
	rw, ok := cl.(ReadWriteClient)
	if !ok {
		t.Skipf("this host's Client does not implement locktest.ReadWriteClient (%T)", cl)
	}
	return rw
}

func (s *suite) multi(t *testing.T, c *redistest.Cluster) MultiClient {
	t.Helper()
	cl := s.client(t, c)
	m, ok := cl.(MultiClient)
	if !ok {
		t.Skipf("this host's Client does not implement locktest.MultiClient (%T)", cl)
	}
	return m
}

func (s *suite) elections(t *testing.T, c *redistest.Cluster) (Client, ElectionClient) {
	t.Helper()
	cl := s.client(t, c)
	e, ok := cl.(ElectionClient)
	if !ok {
		t.Skipf("this host's Client does not implement locktest.ElectionClient (%T)", cl)
	}
	return cl, e
}

// HolderChecker proves a bound on concurrent holders: it counts every
// entry that found Max holders already inside. Max 1 is mutual exclusion.
type HolderChecker struct {
	Max        int32
	inside     atomic.Int32
	entries    atomic.Int64
	violations atomic.Int64
}

// Enter records a holder entering.
func (h *HolderChecker) Enter() {
	h.entries.Add(1)
	if h.inside.Add(1) > h.Max {
		h.violations.Add(1)
	}
}

// Exit records a holder leaving.
func (h *HolderChecker) Exit() { h.inside.Add(-1) }

// Violations is how many entries found the bound already reached.
func (h *HolderChecker) Violations() int64 { return h.violations.Load() }

// RWChecker proves a read-write lock's exclusion: a writer alone, readers
// only with readers. It also records whether readers were ever together.
type RWChecker struct {
	mu                 sync.Mutex
	readers, writers   int
	violations, shared int
}

// Enter records a holder entering, a writer when write.
func (r *RWChecker) Enter(write bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if write {
		if r.readers > 0 || r.writers > 0 {
			r.violations++
		}
		r.writers++
		return
	}
	if r.writers > 0 {
		r.violations++
	}
	r.readers++
	if r.readers > 1 {
		r.shared++
	}
}

// Exit records the holder leaving.
func (r *RWChecker) Exit(write bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if write {
		r.writers--
	} else {
		r.readers--
	}
}

// Counts returns the violations and how often a reader joined others.
func (r *RWChecker) Counts() (violations, shared int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.violations, r.shared
}

// noKeysButCounters waits, with a deadline, until the live nodes hold no
// key but fence counters (permanent by design).
func noKeysButCounters(t testing.TB, c *redistest.Cluster) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		var left []string
		ok := poll.Wait(time.Until(deadline), func() bool {
			keys, err := n.Keys()
			if err != nil {
				return false
			}
			left = left[:0]
			for _, k := range keys {
				if !strings.HasSuffix(k, "\xfffence") {
					left = append(left, k)
				}
			}
			return len(left) == 0
		})
		assert.True(t, ok, "node %d still holds %q", n.Index, left)
	}
}

// argErr checks that err is an invalid-argument error naming arg.
func argErr(t testing.TB, err error, arg, what string) {
	t.Helper()
	if assertArg(t, err, arg, what) {
		assert.ErrorIs(t, err, core.ErrInvalidArgument, what)
	}
}

// semaphoreHolders: a semaphore of 3 has at most 3 holders, each in its own
// slot; the 4th is refused; Inspect lists the holders by slot; a freed slot
// is taken by the next holder.
func (s *suite) semaphoreHolders(t *testing.T) {
	c := redistest.Start(t, 3)
	_, a := s.semaphores(t, c)
	_, b := s.semaphores(t, c)
	ctx := context.Background()
	const n = 3
	checkSlots := !s.skipped(t, "Semaphore/Lock.Slot")
	var held []PermitLock
	slots := map[int]bool{}
	for i := 0; i < n; i++ {
		cl := a
		if i%2 == 1 {
			cl = b
		}
		l, err := cl.AcquirePermit(ctx, "pool", n, 10*time.Second)
		must(t, err)
		if checkSlots {
			require.False(t, slots[l.Slot()], "slot %d given twice", l.Slot())
			require.True(t, l.Slot() >= 0 && l.Slot() < n, "slot %d out of 0..%d", l.Slot(), n-1)
			slots[l.Slot()] = true
		}
		held = append(held, l)
	}
	_, err := b.AcquirePermit(ctx, "pool", n, 10*time.Second)
	wantErr(t, err, core.ErrNotAcquired)
	in, err := a.InspectPermits(ctx, "pool", n)
	must(t, err)
	require.True(t, in.Held, "inspect: held")
	var got []int
	for _, h := range in.Holders {
		got = append(got, h.Slot)
		assert.Positive(t, h.Validity, "holder of slot %d: validity", h.Slot)
	}
	sort.Ints(got)
	require.Equal(t, []int{0, 1, 2}, got, "inspect: the holders' slots")
	// The freed slot goes to the next holder.
	freed := held[1].Slot()
	must(t, held[1].Release(ctx))
	l, err := b.AcquirePermit(ctx, "pool", n, 10*time.Second)
	must(t, err)
	if checkSlots {
		require.Equal(t, freed, l.Slot(), "the next holder takes the freed slot")
	}
	held[1] = l
	for _, l := range held {
		must(t, l.Release(ctx))
	}
	in, err = a.InspectPermits(ctx, "pool", n)
	must(t, err)
	require.False(t, in.Held, "inspect after every release")
	require.Empty(t, in.Holders, "inspect after every release")
	c.AssertNoKeys(t)
}

// semaphoreWakePerPermit: with both permits held and two waiters, each
// freed permit wakes exactly one waiter.
func (s *suite) semaphoreWakePerPermit(t *testing.T) {
	c := redistest.Start(t, 3)
	_, a := s.semaphores(t, c)
	ctx := context.Background()
	h1, err := a.AcquirePermit(ctx, "pool", 2, 10*time.Second)
	must(t, err)
	h2, err := a.AcquirePermit(ctx, "pool", 2, 10*time.Second)
	must(t, err)
	type result struct {
		l   PermitLock
		err error
	}
	won := make(chan result, 2)
	for i := 0; i < 2; i++ {
		_, w := s.semaphores(t, c)
		go func() {
			l, err := w.AcquirePermit(ctx, "pool", 2, 10*time.Second, core.Wait(10*time.Second))
			won <- result{l, err}
		}()
	}
	must(t, h1.Release(ctx))
	r := <-won
	must(t, r.err)
	// The permits are full again: the other waiter must still wait.
	select {
	case r2 := <-won:
		if r2.l != nil {
			_ = r2.l.Release(ctx)
		}
		require.FailNow(t, "one freed permit woke two waiters into it", "second: %v", r2.err)
	default:
	}
	must(t, h2.Release(ctx))
	r2 := <-won
	must(t, r2.err)
	if !s.skipped(t, "Semaphore/Lock.Slot") {
		assert.NotEqual(t, r.l.Slot(), r2.l.Slot(), "the two waiters' slots")
	}
	must(t, r.l.Release(ctx))
	must(t, r2.l.Release(ctx))
	c.AssertNoKeys(t)
}

// semaphoreContention: workers contend for a semaphore of 2 and never more
// than 2 hold it; the checker's negative control holds 2 permits of one
// semaphore and one of another, recorded as one: it must see 3.
func (s *suite) semaphoreContention(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	check := HolderChecker{Max: 2}
	const workers, rounds = 4, 6
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		_, cl := s.semaphores(t, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				l, err := cl.AcquirePermit(ctx, "pool", 2, 5*time.Second, core.Wait(30*time.Second))
				if !assert.NoError(t, err, "worker %d", w) {
					return
				}
				check.Enter()
				time.Sleep(2 * time.Millisecond) // deliberate: the critical section's work
				check.Exit()
				assert.NoError(t, l.Release(ctx), "worker %d release", w)
			}
		}()
	}
	wg.Wait()
	require.Zero(t, check.Violations(), "more than 2 holders at once")
	require.EqualValues(t, workers*rounds, check.entries.Load())

	// The negative control.
	_, cl := s.semaphores(t, c)
	control := HolderChecker{Max: 2}
	var ls []PermitLock
	for _, res := range []string{"pool", "pool", "other-pool"} {
		l, err := cl.AcquirePermit(ctx, res, 2, 5*time.Second)
		must(t, err)
		control.Enter()
		ls = append(ls, l)
	}
	require.Positive(t, control.Violations(), "negative control: the checker missed 3 holders of 2 permits")
	for _, l := range ls {
		must(t, l.Release(ctx))
	}
	c.AssertNoKeys(t)
}

// semaphoreLoss: a permit whose keys are deleted behind its back is lost:
// Extend reports it, Lost closes, Release reports it, nothing is recreated.
func (s *suite) semaphoreLoss(t *testing.T) {
	c := redistest.Start(t, 3)
	_, cl := s.semaphores(t, c)
	ctx := context.Background()
	l, err := cl.AcquirePermit(ctx, "pool", 2, 10*time.Second)
	must(t, err)
	// Every key of the semaphore (its slots' keys), on every node.
	settled(t, c, "the permit's key", func(n *redistest.Node) bool {
		keys, err := n.Keys()
		return err == nil && len(keys) > 0
	})
	for _, n := range c.Nodes {
		keys, err := n.Keys()
		must(t, err)
		for _, k := range keys {
			_, err := n.Do("DEL", k)
			must(t, err)
		}
	}
	wantErr(t, l.Extend(ctx, 10*time.Second), core.ErrLost)
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		require.FailNow(t, "Lost not closed after Extend found the permit gone")
	}
	wantErr(t, l.Release(ctx), core.ErrLost)
	c.AssertNoKeys(t)
	// Expiry: a permit's validity runs out and its slot is free again.
	l, err = cl.AcquirePermit(ctx, "pool", 1, 3*NodeTimeout)
	must(t, err)
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		require.FailNow(t, "Lost not closed after the permit's validity ran out")
	}
	Eventually(t, 5*time.Second, "the expired permit's slot is taken again", func() bool {
		l2, err := cl.AcquirePermit(ctx, "pool", 1, 10*time.Second)
		if err == nil {
			must(t, l2.Release(ctx))
		}
		return err == nil
	})
	c.AssertNoKeys(t)
}

// minority runs body with two of five nodes failed (frozen, then killed),
// each call of body bounded.
func (s *suite) minority(t *testing.T, body func(t *testing.T, c *redistest.Cluster)) {
	for _, f := range []struct {
		name string
		fail func(*redistest.Node) error
	}{
		{"frozen", func(n *redistest.Node) error { return n.Freeze() }},
		{"killed", func(n *redistest.Node) error { return n.Kill() }},
	} {
		t.Run(f.name, func(t *testing.T) {
			c := redistest.Start(t, 5)
			must(t, f.fail(c.Nodes[0]))
			must(t, f.fail(c.Nodes[1]))
			body(t, c)
		})
	}
}

// bound: an operation with a minority down answers within this.
const bound = NodeTimeout + Bound

func (s *suite) semaphoreMinority(t *testing.T) {
	s.minority(t, func(t *testing.T, c *redistest.Cluster) {
		_, a := s.semaphores(t, c)
		ctx := context.Background()
		var l1, l2 PermitLock
		var err error
		within(t, bound, "first permit", func() { l1, err = a.AcquirePermit(ctx, "pool", 2, 10*time.Second) })
		must(t, err)
		within(t, bound, "second permit", func() { l2, err = a.AcquirePermit(ctx, "pool", 2, 10*time.Second) })
		must(t, err)
		within(t, bound, "third permit", func() { _, err = a.AcquirePermit(ctx, "pool", 2, 10*time.Second) })
		wantErr(t, err, core.ErrNotAcquired)
		within(t, bound, "extend", func() { err = l1.Extend(ctx, 10*time.Second) })
		must(t, err)
		within(t, bound, "release", func() { err = l1.Release(ctx) })
		must(t, err)
		within(t, bound, "release", func() { err = l2.Release(ctx) })
		must(t, err)
		(&redistest.Cluster{Nodes: c.Nodes[2:]}).AssertNoKeys(t)
	})
}

// semaphoreBadInput: a bad permit count is refused naming permits, by
// Acquire and Inspect, and nothing is left.
func (s *suite) semaphoreBadInput(t *testing.T) {
	c := redistest.Start(t, 1)
	_, cl := s.semaphores(t, c)
	ctx := context.Background()
	for _, n := range []int{0, -1, core.MaxPermits + 1} {
		_, err := cl.AcquirePermit(ctx, "pool", n, time.Second)
		argErr(t, err, "permits", fmt.Sprintf("acquire with %d permits", n))
		_, err = cl.InspectPermits(ctx, "pool", n)
		argErr(t, err, "permits", fmt.Sprintf("inspect with %d permits", n))
	}
	_, err := cl.AcquirePermit(ctx, "pool", 2, 0)
	argErr(t, err, "ttl", "a permit with ttl 0")
	c.AssertNoKeys(t)
}

// rwShareAndExclude: readers share; a writer excludes readers and writers,
// and readers exclude a writer. The checker's negative control records a
// reader and a writer of two different locks as one: it must see it.
func (s *suite) rwShareAndExclude(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := s.readWrite(t, c), s.readWrite(t, c)
	ctx := context.Background()
	var check RWChecker
	r1, err := a.AcquireRead(ctx, "doc", 10*time.Second)
	must(t, err)
	check.Enter(false)
	r2, err := b.AcquireRead(ctx, "doc", 10*time.Second)
	must(t, err)
	check.Enter(false)
	_, err = b.AcquireWrite(ctx, "doc", 10*time.Second)
	wantErr(t, err, core.ErrNotAcquired)
	must(t, r1.Release(ctx))
	check.Exit(false)
	_, err = a.AcquireWrite(ctx, "doc", 10*time.Second)
	wantErr(t, err, core.ErrNotAcquired)
	must(t, r2.Release(ctx))
	check.Exit(false)
	w, err := a.AcquireWrite(ctx, "doc", 10*time.Second)
	must(t, err)
	check.Enter(true)
	_, err = b.AcquireRead(ctx, "doc", 10*time.Second)
	wantErr(t, err, core.ErrNotAcquired)
	_, err = b.AcquireWrite(ctx, "doc", 10*time.Second)
	wantErr(t, err, core.ErrNotAcquired)
	must(t, w.Release(ctx))
	check.Exit(true)
	r3, err := b.AcquireRead(ctx, "doc", 10*time.Second)
	must(t, err)
	must(t, r3.Release(ctx))
	v, shared := check.Counts()
	require.Zero(t, v, "read-write exclusion")
	require.Positive(t, shared, "the readers never held together")

	// The negative control: a writer of another lock recorded as this one's.
	var control RWChecker
	r, err := a.AcquireRead(ctx, "doc", 10*time.Second)
	must(t, err)
	control.Enter(false)
	w, err = b.AcquireWrite(ctx, "other-doc", 10*time.Second)
	must(t, err)
	control.Enter(true)
	v, _ = control.Counts()
	require.Positive(t, v, "negative control: the checker missed a writer beside a reader")
	must(t, r.Release(ctx))
	must(t, w.Release(ctx))
	noKeysButCounters(t, c)
}

// rwWriterNotStarved: readers hold the lock back to back, each in before
// the last one leaves; a waiting writer still gets it, and never beside a
// reader.
func (s *suite) rwWriterNotStarved(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var check RWChecker
	var reads atomic.Int64
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	for i := 0; i < 3; i++ {
		r := s.readWrite(t, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				l, err := r.AcquireRead(ctx, "doc", 2*time.Second, core.Wait(5*time.Second))
				if err != nil {
					if ctx.Err() == nil && !errors.Is(err, core.ErrNotAcquired) {
						t.Errorf("reader %d: %v", i, err)
					}
					continue
				}
				check.Enter(false)
				reads.Add(1)
				time.Sleep(30 * time.Millisecond) // deliberate: the readers' work, overlapping
				check.Exit(false)
				_ = l.Release(context.Background())
			}
		}()
	}
	Eventually(t, 10*time.Second, "the readers got going", func() bool { return reads.Load() >= 6 })
	w := s.readWrite(t, c)
	for i := 0; i < 2; i++ {
		before := reads.Load()
		l, err := w.AcquireWrite(context.Background(), "doc", 2*time.Second, core.Wait(5*time.Second))
		require.NoError(t, err, "the writer starved behind the readers")
		check.Enter(true)
		time.Sleep(5 * time.Millisecond) // deliberate: the writer's work
		check.Exit(true)
		must(t, l.Release(context.Background()))
		Eventually(t, 10*time.Second, "the readers go on", func() bool { return reads.Load() >= before+3 })
	}
	cancel()
	wg.Wait()
	v, _ := check.Counts()
	require.Zero(t, v, "a writer beside another holder")
	noKeysButCounters(t, c)
}

func (s *suite) rwMinority(t *testing.T) {
	s.minority(t, func(t *testing.T, c *redistest.Cluster) {
		a, b := s.readWrite(t, c), s.readWrite(t, c)
		ctx := context.Background()
		var r, w Lock
		var err error
		within(t, bound, "read", func() { r, err = a.AcquireRead(ctx, "doc", 10*time.Second) })
		must(t, err)
		within(t, bound, "write beside a reader", func() { _, err = b.AcquireWrite(ctx, "doc", 10*time.Second) })
		wantErr(t, err, core.ErrNotAcquired)
		within(t, bound, "release the reader", func() { err = r.Release(ctx) })
		must(t, err)
		within(t, bound, "write", func() { w, err = b.AcquireWrite(ctx, "doc", 10*time.Second) })
		must(t, err)
		within(t, bound, "read beside the writer", func() { _, err = a.AcquireRead(ctx, "doc", 10*time.Second) })
		wantErr(t, err, core.ErrNotAcquired)
		within(t, bound, "release the writer", func() { err = w.Release(ctx) })
		must(t, err)
		noKeysButCounters(t, &redistest.Cluster{Nodes: c.Nodes[2:]})
	})
}

// rwBadInput: a caller's token with a read-write mode is refused, naming
// mode; a bad ttl names ttl.
func (s *suite) rwBadInput(t *testing.T) {
	c := redistest.Start(t, 1)
	cl := s.readWrite(t, c)
	ctx := context.Background()
	_, err := cl.AcquireRead(ctx, "doc", time.Second, core.WithToken(strings.Repeat("t", 20)))
	argErr(t, err, "mode", "read with a token")
	_, err = cl.AcquireWrite(ctx, "doc", time.Second, core.WithToken(strings.Repeat("t", 20)))
	argErr(t, err, "mode", "write with a token")
	_, err = cl.AcquireWrite(ctx, "doc", -time.Second)
	argErr(t, err, "ttl", "write with a negative ttl")
	noKeysButCounters(t, c)
}

// multiAllOrNone: a set with one member held is not taken, and none of its
// other members is left locked; once free it is taken whole.
func (s *suite) multiAllOrNone(t *testing.T) {
	c := redistest.Start(t, 3)
	a := s.multi(t, c)
	bc := s.client(t, c)
	ctx := context.Background()
	hb, err := bc.Acquire(ctx, "b", 10*time.Second)
	must(t, err)
	_, err = a.AcquireAll(ctx, []string{"a", "b", "c"}, 10*time.Second)
	wantErr(t, err, core.ErrNotAcquired)
	for _, res := range []string{"a", "c"} {
		settled(t, c, res+" not left locked", func(n *redistest.Node) bool { return keyOn(t, n, res) == "(nil)" })
	}
	l, err := bc.Acquire(ctx, "c", 10*time.Second)
	must(t, err)
	must(t, l.Release(ctx))
	must(t, hb.Release(ctx))
	set, err := a.AcquireAll(ctx, []string{"a", "b", "c"}, 10*time.Second)
	must(t, err)
	for _, res := range []string{"a", "b", "c"} {
		_, err = bc.Acquire(ctx, res, 10*time.Second)
		wantErr(t, err, core.ErrNotAcquired)
	}
	must(t, set.Release(ctx))
	l, err = bc.Acquire(ctx, "b", 10*time.Second)
	must(t, err)
	must(t, l.Release(ctx))
	c.AssertNoKeys(t)
}

// multiEitherOrder: clients take overlapping sets, named in either order,
// with waits: every one completes (no deadlock) and no resource ever has
// two holders. The checker's negative control takes two disjoint sets
// recorded as the same resources: it must see the overlap.
func (s *suite) multiEitherOrder(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	checks := map[string]*HolderChecker{"x": {Max: 1}, "y": {Max: 1}, "z": {Max: 1}}
	sets := [][]string{{"x", "y"}, {"y", "x"}, {"y", "z"}, {"z", "x", "y"}}
	const rounds = 5
	var wg sync.WaitGroup
	for i, set := range sets {
		cl := s.multi(t, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				l, err := cl.AcquireAll(ctx, set, 5*time.Second, core.Wait(30*time.Second))
				if !assert.NoError(t, err, "client %d (%v)", i, set) {
					return
				}
				for _, res := range set {
					checks[res].Enter()
				}
				time.Sleep(2 * time.Millisecond) // deliberate: the critical section's work
				for _, res := range set {
					checks[res].Exit()
				}
				assert.NoError(t, l.Release(ctx), "client %d release", i)
			}
		}()
	}
	wg.Wait()
	for res, ch := range checks {
		require.Zero(t, ch.Violations(), "two holders of %s at once", res)
	}

	// The negative control.
	cl := s.multi(t, c)
	control := HolderChecker{Max: 1}
	l1, err := cl.AcquireAll(ctx, []string{"x", "y"}, 5*time.Second)
	must(t, err)
	control.Enter()
	l2, err := cl.AcquireAll(ctx, []string{"x2", "y2"}, 5*time.Second)
	must(t, err)
	control.Enter()
	require.Positive(t, control.Violations(), "negative control: the checker missed two holders of x")
	must(t, l1.Release(ctx))
	must(t, l2.Release(ctx))
	c.AssertNoKeys(t)
}

func (s *suite) multiMinority(t *testing.T) {
	s.minority(t, func(t *testing.T, c *redistest.Cluster) {
		a, b := s.multi(t, c), s.multi(t, c)
		ctx := context.Background()
		var l Lock
		var err error
		within(t, bound, "acquire all", func() { l, err = a.AcquireAll(ctx, []string{"a", "b"}, 10*time.Second) })
		must(t, err)
		within(t, bound, "an overlapping set", func() { _, err = b.AcquireAll(ctx, []string{"b", "c"}, 10*time.Second) })
		wantErr(t, err, core.ErrNotAcquired)
		within(t, bound, "extend", func() { err = l.Extend(ctx, 10*time.Second) })
		must(t, err)
		within(t, bound, "release", func() { err = l.Release(ctx) })
		must(t, err)
		(&redistest.Cluster{Nodes: c.Nodes[2:]}).AssertNoKeys(t)
	})
}

// multiBadInput: every bad set is refused naming resources or its member.
func (s *suite) multiBadInput(t *testing.T) {
	c := redistest.Start(t, 1)
	cl := s.multi(t, c)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		resources []string
		arg       string
	}{
		{"empty", []string{}, "resources"},
		{"empty member", []string{"a", "b", ""}, "resources[2]"},
		{"duplicate", []string{"a", "b", "c", "b"}, "resources[3]"},
		{"long member", []string{strings.Repeat("x", 1025)}, "resources[0]"},
	} {
		if s.skipped(t, "MultiBadInput/"+tc.name) {
			continue
		}
		_, err := cl.AcquireAll(ctx, tc.resources, time.Second)
		argErr(t, err, tc.arg, tc.name)
	}
	_, err := cl.AcquireAll(ctx, []string{"a", "b"}, 0)
	argErr(t, err, "ttl", "ttl 0")
	// A set is neither a semaphore nor a read-write lock: every host
	// refuses the pair with the engine's words.
	for _, tc := range []struct {
		name, arg string
		opt       core.AcquireOption
	}{{"permits", "permits", core.Permits(2)}, {"mode", "mode", core.Read()}} {
		if s.skipped(t, "MultiBadInput/"+tc.name) {
			continue
		}
		l, err := cl.AcquireAll(ctx, []string{"a", "b"}, time.Second, tc.opt)
		argErr(t, err, tc.arg, "a set with "+tc.name)
		if err == nil {
			_ = l.Release(ctx) // what the failed check acquired
		} else {
			assert.Contains(t, err.Error(), "with several resources", "a set with %s: the engine's reason", tc.name)
		}
	}
	c.AssertNoKeys(t)
}

// collect reads an Observe stream into a list, until it is closed.
type collected struct {
	mu   sync.Mutex
	seen []core.Leader
	done chan struct{}
}

func collect(ch <-chan core.Leader) *collected {
	c := &collected{done: make(chan struct{})}
	go func() {
		defer close(c.done)
		for l := range ch {
			c.mu.Lock()
			c.seen = append(c.seen, l)
			c.mu.Unlock()
		}
	}()
	return c
}

func (c *collected) terms() []int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var ts []int64
	for _, l := range c.seen {
		ts = append(ts, l.Term)
	}
	return ts
}

func (c *collected) sawTerm(term int64) bool {
	for _, t := range c.terms() {
		if t == term {
			return true
		}
	}
	return false
}

// changesOnceInOrder checks an Observe stream: no entry repeats the one
// before it, and the leaders' terms rise.
func changesOnceInOrder(t testing.TB, seen []core.Leader) {
	t.Helper()
	var last int64
	for i, l := range seen {
		if i > 0 {
			assert.NotEqual(t, seen[i-1], l, "entry %d repeats the one before: %v", i, seen)
		}
		if l.Term != 0 {
			assert.Greater(t, l.Term, last, "entry %d: terms must rise: %v", i, seen)
			last = l.Term
		}
	}
}

// electionResign: a leads; b campaigns meanwhile; a resigns and b leads
// with a higher term; an observer sees each change once, in order.
func (s *suite) electionResign(t *testing.T) {
	c := redistest.Start(t, 3)
	_, a := s.elections(t, c)
	_, b := s.elections(t, c)
	_, o := s.elections(t, c)
	ctx := context.Background()
	octx, stop := context.WithCancel(ctx)
	defer stop()
	ch, err := o.Observe(octx, "e")
	must(t, err)
	seen := collect(ch)
	la, err := a.Campaign(ctx, "e", "a", 2*time.Second, 0)
	must(t, err)
	require.Equal(t, "a", la.Value())
	Eventually(t, 10*time.Second, "the observer sees a lead", func() bool { return seen.sawTerm(la.Term()) })
	_, err = b.Campaign(ctx, "e", "b", 2*time.Second, 0)
	wantErr(t, err, core.ErrNotAcquired)
	type result struct {
		ld  Leadership
		err error
	}
	won := make(chan result, 1)
	go func() {
		ld, err := b.Campaign(ctx, "e", "b", 2*time.Second, 10*time.Second)
		won <- result{ld, err}
	}()
	must(t, la.Resign(ctx))
	r := <-won
	must(t, r.err)
	require.Greater(t, r.ld.Term(), la.Term(), "the next leader's term")
	Eventually(t, 10*time.Second, "the observer sees b lead", func() bool { return seen.sawTerm(r.ld.Term()) })
	must(t, r.ld.Resign(ctx))
	Eventually(t, 10*time.Second, "the observer sees no leader", func() bool {
		ts := seen.terms()
		return len(ts) > 0 && ts[len(ts)-1] == 0
	})
	stop()
	<-seen.done
	changesOnceInOrder(t, seen.seen)
	var leaders []string
	for _, l := range seen.seen {
		if l.Term != 0 {
			leaders = append(leaders, l.Value)
		}
	}
	require.Equal(t, []string{"a", "b"}, leaders, "the leaders observed: %v", seen.seen)
	noKeysButCounters(t, c)
}

// electionLeaderClosed: the leader's client closes (as its process would
// end); a waiting campaigner then leads with a higher term, and an observer
// sees it.
func (s *suite) electionLeaderClosed(t *testing.T) {
	c := redistest.Start(t, 3)
	acl, a := s.elections(t, c)
	_, b := s.elections(t, c)
	_, o := s.elections(t, c)
	ctx := context.Background()
	la, err := a.Campaign(ctx, "e", "a", 10*NodeTimeout, 0)
	must(t, err)
	octx, stop := context.WithCancel(ctx)
	defer stop()
	ch, err := o.Observe(octx, "e")
	must(t, err)
	seen := collect(ch)
	type result struct {
		ld  Leadership
		err error
	}
	won := make(chan result, 1)
	go func() {
		ld, err := b.Campaign(ctx, "e", "b", 10*NodeTimeout, 10*time.Second)
		won <- result{ld, err}
	}()
	must(t, acl.Close())
	r := <-won
	must(t, r.err)
	require.Greater(t, r.ld.Term(), la.Term(), "the next leader's term")
	Eventually(t, 10*time.Second, "the observer sees b lead", func() bool { return seen.sawTerm(r.ld.Term()) })
	must(t, r.ld.Resign(ctx))
	stop()
	<-seen.done
	changesOnceInOrder(t, seen.seen)
	noKeysButCounters(t, c)
}

func (s *suite) electionMinority(t *testing.T) {
	s.minority(t, func(t *testing.T, c *redistest.Cluster) {
		_, a := s.elections(t, c)
		_, b := s.elections(t, c)
		ctx := context.Background()
		var la, lb Leadership
		var err error
		within(t, bound, "campaign", func() { la, err = a.Campaign(ctx, "e", "a", 2*time.Second, 0) })
		must(t, err)
		within(t, bound, "a second campaign", func() { _, err = b.Campaign(ctx, "e", "b", 2*time.Second, 0) })
		wantErr(t, err, core.ErrNotAcquired)
		within(t, bound, "resign", func() { err = la.Resign(ctx) })
		must(t, err)
		within(t, bound, "campaign after the resignation", func() { lb, err = b.Campaign(ctx, "e", "b", 2*time.Second, 0) })
		must(t, err)
		require.Greater(t, lb.Term(), la.Term())
		must(t, lb.Resign(ctx))
		noKeysButCounters(t, &redistest.Cluster{Nodes: c.Nodes[2:]})
	})
}

// electionBadInput: an empty name names name; a bad lease names ttl.
func (s *suite) electionBadInput(t *testing.T) {
	c := redistest.Start(t, 1)
	_, cl := s.elections(t, c)
	ctx := context.Background()
	_, err := cl.Campaign(ctx, "", "v", time.Second, 0)
	argErr(t, err, "name", "an empty election name")
	_, err = cl.Campaign(ctx, "e", "v", -time.Second, 0)
	argErr(t, err, "ttl", "a negative lease")
	_, err = cl.Observe(ctx, "")
	argErr(t, err, "name", "observing an empty election name")
	noKeysButCounters(t, c)
}

// waitBudgetSplit: the live nodes split (one holds the resource for
// another owner, the other grants it) and the third node's connects are
// held open and never answered, so that each attempt's outcome waits for
// that node: an acquire with a wait still returns once its wait is spent,
// within the bound (a node's connect and handshake have the node timeout;
// an engine that waited for the node to answer would wait for ever).
func (s *suite) waitBudgetSplit(t *testing.T) {
	const wait = 300 * time.Millisecond
	c := redistest.Start(t, 3)
	// Node 1 holds the mutex and the read-write lock's writer key for
	// another owner; node 2 holds nothing.
	for _, key := range []string{"m", engine.RWKey("rw")} {
		_, err := c.Nodes[1].Do("SET", key, "another-owner", "PX", "60000")
		must(t, err)
	}
	must(t, c.Nodes[0].Kill())
	held, err := holdOpen(c.Nodes[0].Addr())
	must(t, err)
	t.Cleanup(held.close)
	waiter := s.client(t, c)
	// Past twice the bound, the acquire is ended: an engine that waits for
	// the held node then fails here instead of hanging the suite.
	ctx, cancel := context.WithTimeout(context.Background(), 2*(wait+bound))
	defer cancel()
	cases := []struct {
		name string
		try  func() error
	}{{"mutex", func() error {
		_, err := waiter.Acquire(ctx, "m", 10*time.Second, core.Wait(wait))
		return err
	}}}
	if w, ok := waiter.(ReadWriteClient); ok {
		cases = append(cases, struct {
			name string
			try  func() error
		}{"read", func() error {
			_, err := w.AcquireRead(ctx, "rw", 10*time.Second, core.Wait(wait))
			return err
		}})
	} else {
		t.Logf("read: skipped: the host's Client does not implement locktest.ReadWriteClient")
	}
	for _, cs := range cases {
		var err error
		within(t, wait+bound, cs.name+" with a wait", func() { err = cs.try() })
		if !errors.Is(err, core.ErrNotAcquired) && !errors.Is(err, core.ErrUnavailable) {
			t.Errorf("%s: want not-acquired or unavailable once the wait is spent, got %v", cs.name, err)
			continue
		}
		t.Logf("%s: %v", cs.name, err)
	}
	// The grants node 2 gave the attempts were cleaned up.
	noKeysButCounters(t, &redistest.Cluster{Nodes: c.Nodes[2:]})
}

// heldOpen accepts connections on a node's address and never answers
// them (waitBudgetNodeDown's "held open").
type heldOpen struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	done  chan struct{}
}

func holdOpen(addr string) (*heldOpen, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	h := &heldOpen{l: l, done: make(chan struct{})}
	go func() {
		defer close(h.done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h.mu.Lock()
			h.conns = append(h.conns, c)
			h.mu.Unlock()
		}
	}()
	return h, nil
}

// close stops accepting and closes every connection it held.
func (h *heldOpen) close() {
	if h == nil {
		return
	}
	_ = h.l.Close()
	<-h.done
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		_ = c.Close()
	}
}

// budgetCase is one primitive in waitBudgetNodeDown: hold takes it (and
// returns its release), try waits for it behind the holder.
type budgetCase struct {
	name string
	hold func() (release func())
	try  func(ctx context.Context) error
}

// waitBudgetNodeDown: with one node of three down (refusing connections,
// frozen, restarting, or its connects held open and never answered), an
// acquire of each primitive waiting behind a holder returns
// not-acquired (or unavailable) once its wait is spent, within the bound.
func (s *suite) waitBudgetNodeDown(t *testing.T) {
	const wait = 300 * time.Millisecond
	// The holders auto-extend a short ttl: they hold as long as the
	// attempts take, and a release that fails on a loaded machine leaves
	// keys that expire within the final check's deadline.
	const hold = 3 * time.Second
	restarted := make(chan error, 1)
	var held *heldOpen
	for _, f := range []struct {
		name       string
		fail, back func(*redistest.Node) error
	}{
		{"refusing", func(n *redistest.Node) error { return n.Kill() }, func(n *redistest.Node) error { return n.Restart() }},
		{"frozen", func(n *redistest.Node) error { return n.Freeze() }, func(n *redistest.Node) error { return n.Thaw() }},
		// Killed, and restarting (empty) while the acquires wait.
		{"restarting", func(n *redistest.Node) error {
			if err := n.Kill(); err != nil {
				return err
			}
			go func() { restarted <- n.Restart() }()
			return nil
		}, func(*redistest.Node) error { return <-restarted }},
		// Killed, its port then held by a listener that accepts and never
		// answers: a proxy (or a load balancer) that holds a connect open
		// while the node behind it is down, so that a connection opens
		// and its handshake waits.
		{"held open", func(n *redistest.Node) error {
			if err := n.Kill(); err != nil {
				return err
			}
			h, err := holdOpen(n.Addr())
			held = h
			return err
		}, func(n *redistest.Node) error {
			held.close()
			return n.Restart()
		}},
	} {
		t.Run(f.name, func(t *testing.T) {
			c := redistest.Start(t, 3)
			holder, waiter := s.client(t, c), s.client(t, c)
			ctx := context.Background()
			// Each primitive: take it with holder, then try it with waiter.
			cases := []budgetCase{{
				"mutex",
				func() func() {
					l, err := holder.Acquire(ctx, "m", hold, core.AutoExtend())
					must(t, err)
					return func() { _ = l.Release(ctx) }
				},
				func(ctx context.Context) error {
					_, err := waiter.Acquire(ctx, "m", 10*time.Second, core.Wait(wait))
					return err
				},
			}}
			if h, ok := holder.(SemaphoreClient); ok {
				w := waiter.(SemaphoreClient)
				cases = append(cases, budgetCase{"semaphore", func() func() {
					l, err := h.AcquirePermit(ctx, "s", 1, hold, core.AutoExtend())
					must(t, err)
					return func() { _ = l.Release(ctx) }
				}, func(ctx context.Context) error {
					_, err := w.AcquirePermit(ctx, "s", 1, 10*time.Second, core.Wait(wait))
					return err
				}})
			} else {
				t.Logf("semaphore: skipped: the host's Client does not implement locktest.SemaphoreClient")
			}
			if h, ok := holder.(ReadWriteClient); ok {
				w := waiter.(ReadWriteClient)
				cases = append(cases, budgetCase{"read", func() func() {
					l, err := h.AcquireWrite(ctx, "rw1", hold, core.AutoExtend())
					must(t, err)
					return func() { _ = l.Release(ctx) }
				}, func(ctx context.Context) error {
					_, err := w.AcquireRead(ctx, "rw1", 10*time.Second, core.Wait(wait))
					return err
				}}, budgetCase{"write", func() func() {
					l, err := h.AcquireRead(ctx, "rw2", hold, core.AutoExtend())
					must(t, err)
					return func() { _ = l.Release(ctx) }
				}, func(ctx context.Context) error {
					_, err := w.AcquireWrite(ctx, "rw2", 10*time.Second, core.Wait(wait))
					return err
				}})
			} else {
				t.Logf("read, write: skipped: the host's Client does not implement locktest.ReadWriteClient")
			}
			if w, ok := waiter.(MultiClient); ok {
				cases = append(cases, budgetCase{"multi", func() func() {
					l, err := holder.Acquire(ctx, "m2", hold, core.AutoExtend())
					must(t, err)
					return func() { _ = l.Release(ctx) }
				}, func(ctx context.Context) error {
					_, err := w.AcquireAll(ctx, []string{"m1", "m2"}, 10*time.Second, core.Wait(wait))
					return err
				}})
			} else {
				t.Logf("multi: skipped: the host's Client does not implement locktest.MultiClient")
			}
			if h, ok := holder.(ElectionClient); ok {
				w := waiter.(ElectionClient)
				cases = append(cases, budgetCase{"campaign", func() func() {
					ld, err := h.Campaign(ctx, "e", "h", hold, 0)
					must(t, err)
					return func() { _ = ld.Resign(ctx) }
				}, func(ctx context.Context) error {
					_, err := w.Campaign(ctx, "e", "w", 10*time.Second, wait)
					return err
				}})
			} else {
				t.Logf("campaign: skipped: the host's Client does not implement locktest.ElectionClient")
			}
			kept := cases[:0]
			for _, cs := range cases {
				if !s.skipped(t, "WaitBudgetNodeDown/"+cs.name) {
					kept = append(kept, cs)
				}
			}
			cases = kept
			var releases []func()
			for _, cs := range cases {
				releases = append(releases, cs.hold())
			}
			must(t, f.fail(c.Nodes[0]))
			for _, cs := range cases {
				var err error
				within(t, wait+bound, cs.name+" with a wait", func() { err = cs.try(ctx) })
				if !errors.Is(err, core.ErrNotAcquired) && !errors.Is(err, core.ErrUnavailable) {
					t.Errorf("%s: want not-acquired or unavailable once the wait is spent, got %v", cs.name, err)
					continue
				}
				// Unavailable names its failed nodes. A not-acquired names the
				// node down only when its answer came before the outcome.
				var ue *core.UnavailableError
				if errors.As(err, &ue) {
					assert.Contains(t, err.Error(), c.Nodes[0].Addr(), "%s: the error names the node down", cs.name)
				}
				t.Logf("%s: %v", cs.name, err)
			}
			must(t, f.back(c.Nodes[0]))
			for _, r := range releases {
				r()
			}
			noKeysButCounters(t, &redistest.Cluster{Nodes: c.Nodes[1:]})
		})
	}
}
