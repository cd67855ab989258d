package core_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// Read-write locks on real redis-servers (3 nodes).

// rwInterval is a stretch of real time over which a reader or a writer
// certainly held the lock: from Acquire's return until its Release was
// called, cut at the validity Acquire reported.
type rwInterval struct {
	mode       core.LockMode
	who        string
	start, end time.Time
}

// rwRecorder collects intervals and checks reader/writer exclusion.
type rwRecorder struct {
	mu  sync.Mutex
	ivs []rwInterval
}

func (r *rwRecorder) add(iv rwInterval) {
	if !iv.end.After(iv.start) {
		return
	}
	r.mu.Lock()
	r.ivs = append(r.ivs, iv)
	r.mu.Unlock()
}

// overlaps returns every pair of intervals that overlap where one is a
// writer: the invariant forbids them. It also counts reader pairs that
// overlapped (readers sharing the lock).
func (r *rwRecorder) overlaps() (bad []string, shared int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ivs := append([]rwInterval(nil), r.ivs...)
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].start.Before(ivs[j].start) })
	for i, a := range ivs {
		for _, b := range ivs[i+1:] {
			if !b.start.Before(a.end) {
				break
			}
			if a.mode == core.ModeRead && b.mode == core.ModeRead {
				shared++
				continue
			}
			bad = append(bad, fmt.Sprintf("%v %s [%v, %v) overlaps %v %s [%v, %v)", a.mode, a.who, a.start.Format("05.000000"), a.end.Format("05.000000"), b.mode, b.who, b.start.Format("05.000000"), b.end.Format("05.000000")))
		}
	}
	return bad, shared
}

// hold acquires, holds for d, releases, and records the interval.
func (r *rwRecorder) hold(ctx context.Context, c *core.Client, res string, mode core.AcquireOption, who string, ttl, wait, d time.Duration) error {
	l, err := c.Acquire(ctx, res, ttl, mode, core.Wait(wait))
	if err != nil {
		return err
	}
	start := time.Now()
	validEnd := start.Add(l.Validity())
	select {
	case <-time.After(d):
	case <-ctx.Done():
	}
	end := time.Now()
	if end.After(validEnd) {
		end = validEnd
	}
	r.add(rwInterval{mode: l.Mode(), who: who, start: start, end: end})
	_ = l.Release(context.Background())
	return nil
}

func newRWClient(t *testing.T, c *redistest.Cluster) *core.Client {
	t.Helper()
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: locktest.NodeTimeout})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cl.Close() })
	return cl
}

// assertNoRWKeys: no key but fence counters (permanent by design) on the
// live nodes, polled with a deadline (the last commands to the nodes that
// did not count for a quorum may still be on their way).
func assertNoRWKeys(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		var left []string
		assert.Eventually(t, func() bool {
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
		}, 5*time.Second, 5*time.Millisecond, "node %d still holds %q", n.Index, left)
	}
}

func TestRWManyReadersTogether(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	var readers []*core.Lock
	for i := range 5 {
		cl := newRWClient(t, c)
		l, err := cl.Acquire(ctx, "doc", 10*time.Second, core.Read())
		require.NoError(t, err, "reader %d", i)
		assert.Equal(t, core.ModeRead, l.Mode())
		assert.Positive(t, l.Validity())
		readers = append(readers, l)
	}
	w := newRWClient(t, c)
	_, err := w.Acquire(ctx, "doc", 10*time.Second, core.Write())
	require.ErrorIs(t, err, core.ErrNotAcquired, "a writer while readers hold it")
	// The mutex of the same name is another lock: its keys are its own.
	m, err := w.Acquire(ctx, "doc", 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, m.Release(ctx))
	for _, l := range readers {
		require.NoError(t, l.Extend(ctx, 20*time.Second))
		require.NoError(t, l.Release(ctx))
	}
	wl, err := w.Acquire(ctx, "doc", 10*time.Second, core.Write())
	require.NoError(t, err)
	assert.Equal(t, core.ModeWrite, wl.Mode())
	require.NoError(t, wl.Release(ctx))
	assertNoRWKeys(t, c)
}

func TestRWWriterExcludesReadersAndWriters(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	a, b := newRWClient(t, c), newRWClient(t, c)
	w, err := a.Acquire(ctx, "doc", 10*time.Second, core.Write(), core.Fence())
	require.NoError(t, err)
	_, err = b.Acquire(ctx, "doc", 10*time.Second, core.Write())
	require.ErrorIs(t, err, core.ErrNotAcquired)
	_, err = b.Acquire(ctx, "doc", 10*time.Second, core.Read())
	require.ErrorIs(t, err, core.ErrNotAcquired)
	// A reader waiting for the writer is woken by its release.
	got := make(chan *core.Lock, 1)
	go func() {
		l, err := b.Acquire(ctx, "doc", 10*time.Second, core.Read(), core.Fence(), core.Wait(5*time.Second))
		assert.NoError(t, err)
		got <- l
	}()
	require.NoError(t, w.Release(ctx))
	r := <-got
	require.NotNil(t, r)
	assert.Greater(t, r.Fence(), w.Fence(), "a reader after the writer")
	require.NoError(t, r.Release(ctx))
	w2, err := a.Acquire(ctx, "doc", 10*time.Second, core.Write(), core.Fence())
	require.NoError(t, err)
	assert.Greater(t, w2.Fence(), r.Fence(), "the writer's fence is above the earlier reader's")
	require.NoError(t, w2.Release(ctx))
	assertNoRWKeys(t, c)
}

// TestRWBadInput: a caller's token with a mode is refused, naming mode,
// with nothing sent.
func TestRWBadInput(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := newRWClient(t, c)
	_, err := cl.Acquire(context.Background(), "doc", time.Second, core.Read(), core.WithToken(strings.Repeat("t", 20)))
	var ae *core.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "mode", ae.Arg)
	assertNoRWKeys(t, c)
}

// TestRWWriterNotStarved: readers keep the lock busy back to back (each
// holding half its ttl, the next one in before the last one leaves); a
// writer that waits is admitted within its wait, while the readers go on.
func TestRWWriterNotStarved(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	ctx, cancel := context.WithCancel(context.Background())
	rec := &rwRecorder{}
	var wg sync.WaitGroup
	var reads atomic.Int64
	for i := range 6 {
		cl := newRWClient(t, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if rec.hold(ctx, cl, "doc", core.Read(), fmt.Sprintf("reader%d", i), 400*time.Millisecond, 5*time.Second, 60*time.Millisecond) == nil {
					reads.Add(1)
				}
			}
		}()
	}
	require.Eventually(t, func() bool { return reads.Load() >= 12 }, 10*time.Second, time.Millisecond, "the readers never got going")
	w := newRWClient(t, c)
	for i := range 3 {
		before := reads.Load()
		start := time.Now()
		require.NoError(t, rec.hold(context.Background(), w, "doc", core.Write(), fmt.Sprintf("writer%d", i), time.Second, 3*time.Second, 20*time.Millisecond),
			"the writer starved behind the readers")
		t.Logf("writer %d admitted after %v (%d reads meanwhile)", i, time.Since(start).Round(time.Millisecond), reads.Load()-before)
		require.Eventually(t, func() bool { return reads.Load() >= before+6 }, 10*time.Second, time.Millisecond, "the readers stopped")
	}
	cancel()
	wg.Wait()
	bad, shared := rec.overlaps()
	assert.Empty(t, bad)
	assert.Positive(t, shared, "the readers never held the lock together: no stream")
	assertNoRWKeys(t, c)
}

// rwContend runs readers and writers on res (the readers on readRes: the
// same for the real test, another name for the checker's negative
// control) for d, calling fault halfway.
func rwContend(t *testing.T, c *redistest.Cluster, res, readRes string, d time.Duration, fault func()) *rwRecorder {
	rec := &rwRecorder{}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	for i := range 6 {
		cl := newRWClient(t, c)
		mode, name, r := core.Read(), fmt.Sprintf("reader%d", i), readRes
		if i%3 == 0 {
			mode, name, r = core.Write(), fmt.Sprintf("writer%d", i), res
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				err := rec.hold(ctx, cl, r, mode, name, 300*time.Millisecond, 500*time.Millisecond, 15*time.Millisecond)
				if err != nil && !errors.Is(err, core.ErrNotAcquired) && !errors.Is(err, core.ErrUnavailable) && ctx.Err() == nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		}()
	}
	if fault != nil {
		time.Sleep(d / 2) // deliberate: the fault comes halfway through the contention, not after a condition
		fault()
	}
	wg.Wait()
	return rec
}

// TestRWContentionWithFaults: readers and writers contend while a node is
// killed (and restarted), then while another is frozen (and thawed); no
// writer ever overlaps another holder, and nothing is left behind. The
// overlap checker's negative control runs the same workload with the
// readers on another name, recorded as the same lock: it must see overlaps.
func TestRWContentionWithFaults(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	rec := rwContend(t, c, "doc", "doc", 1500*time.Millisecond, func() {
		require.NoError(t, c.Nodes[0].Kill())
	})
	bad, shared := rec.overlaps()
	assert.Empty(t, bad, "node killed")
	t.Logf("node killed: %d intervals, %d reader pairs shared", len(rec.ivs), shared)
	require.NoError(t, c.Nodes[0].Restart())
	rec = rwContend(t, c, "doc", "doc", 1500*time.Millisecond, func() {
		require.NoError(t, c.Nodes[1].Freeze())
		time.Sleep(200 * time.Millisecond) // the freeze's length, not a wait for a condition
		require.NoError(t, c.Nodes[1].Thaw())
	})
	bad, shared = rec.overlaps()
	assert.Empty(t, bad, "node frozen")
	t.Logf("node frozen: %d intervals, %d reader pairs shared", len(rec.ivs), shared)
	assert.Positive(t, shared)
	assertNoRWKeys(t, c)

	ctl := rwContend(t, c, "doc", "other", 800*time.Millisecond, nil)
	bad, _ = ctl.overlaps()
	assert.NotEmpty(t, bad, "negative control: readers of another lock recorded as this one's must overlap its writers")
	t.Logf("control: %d overlaps caught", len(bad))
	assertNoRWKeys(t, c)
}

// TestRWCloseAndLoss: Close releases readers and writers (no key left);
// a reader whose keys are deleted under it is reported lost at its next
// extension, and leaves nothing behind.
func TestRWCloseAndLoss(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	ctx := context.Background()
	a, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: locktest.NodeTimeout})
	require.NoError(t, err)
	_, err = a.Acquire(ctx, "x", 10*time.Second, core.Read())
	require.NoError(t, err)
	_, err = a.Acquire(ctx, "y", 10*time.Second, core.Write(), core.Wait(time.Second))
	require.NoError(t, err)
	require.NoError(t, a.Close())
	assertNoRWKeys(t, c)

	b := newRWClient(t, c)
	r, err := b.Acquire(ctx, "z", 10*time.Second, core.Read())
	require.NoError(t, err)
	// The acquire returned at a quorum: let the third node's grant land
	// before the FLUSHALL, or it would come after it and be left there.
	for _, n := range c.Nodes {
		readers := strings.TrimSuffix(engine.RWKey("z"), "w") + "r"
		poll.Eventually(t, 5*time.Second, fmt.Sprintf("node %d: the reader's key", n.Index), func() bool {
			v, err := n.Do("EXISTS", readers)
			return err == nil && v == "1"
		})
	}
	for _, n := range c.Nodes {
		_, err := n.Do("FLUSHALL")
		require.NoError(t, err)
	}
	require.ErrorIs(t, r.Extend(ctx, 10*time.Second), core.ErrLost)
	select {
	case <-r.Lost():
	default:
		t.Fatal("Lost not closed")
	}
	assertNoRWKeys(t, c)
}

// ExampleRead: readers share a read-write lock; a writer excludes them.
func ExampleRead() {
	nodes, err := redistest.StartCluster(3, "")
	if err != nil {
		panic(err)
	}
	defer nodes.Close()
	client, err := core.New(core.Config{Nodes: nodes.URLs()})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx := context.Background()
	r1, _ := client.Acquire(ctx, "catalog", 10*time.Second, core.Read())
	r2, _ := client.Acquire(ctx, "catalog", 10*time.Second, core.Read())
	fmt.Println("two readers:", r1.Mode(), r2.Mode())
	_, err = client.Acquire(ctx, "catalog", 10*time.Second, core.Write())
	fmt.Println("a writer meanwhile:", errors.Is(err, core.ErrNotAcquired))
	r1.Release(ctx)
	r2.Release(ctx)
	w, err := client.Acquire(ctx, "catalog", 10*time.Second, core.Write(), core.Wait(5*time.Second))
	fmt.Println("the writer once they left:", err == nil, w.Mode())
	w.Release(ctx)
	// Output:
	// two readers: read read
	// a writer meanwhile: true
	// the writer once they left: true write
}

// TestRWInspect: Inspect(InspectReadWrite()) reports the readers with their owner
// labels and validity, and the writer as Held/Owner/Validity.
func TestRWInspect(t *testing.T) {
	c := redistest.Start(t, 3)
	ctx := context.Background()
	mk := func(owner string) *core.Client {
		cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: locktest.NodeTimeout, Owner: owner})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	a, b := mk("alice"), mk("bob")
	ra, err := a.Acquire(ctx, "doc", 10*time.Second, core.Read())
	require.NoError(t, err)
	rb, err := b.Acquire(ctx, "doc", 5*time.Second, core.Read())
	require.NoError(t, err)
	in, err := a.Inspect(ctx, "doc", core.InspectReadWrite())
	require.NoError(t, err)
	assert.False(t, in.Held, "no writer")
	require.Len(t, in.Readers, 2)
	owners := map[string]time.Duration{}
	for _, r := range in.Readers {
		owners[r.Owner] = r.Validity
		assert.GreaterOrEqual(t, r.Nodes, 2, "on a quorum (the third node may not have answered the acquire yet)")
	}
	assert.Greater(t, owners["alice"], 5*time.Second)
	assert.Positive(t, owners["bob"])
	assert.LessOrEqual(t, owners["bob"], 5*time.Second)
	// The mutex of the name is not held.
	mi, err := a.Inspect(ctx, "doc")
	require.NoError(t, err)
	assert.False(t, mi.Held)
	require.NoError(t, ra.Release(ctx))
	require.NoError(t, rb.Release(ctx))

	w, err := b.Acquire(ctx, "doc", 10*time.Second, core.Write())
	require.NoError(t, err)
	in, err = a.Inspect(ctx, "doc", core.InspectReadWrite())
	require.NoError(t, err)
	assert.True(t, in.Held)
	assert.Equal(t, "bob", in.Owner)
	assert.Positive(t, in.Validity)
	assert.Empty(t, in.Readers)
	require.NoError(t, w.Release(ctx))

	_, err = a.Inspect(ctx, "doc", core.InspectReadWrite(), core.InspectPermits(3))
	var ae *core.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "opts", ae.Arg)
	assertNoRWKeys(t, c)
}

// TestRWAutoExtendAndLossSignal: an auto-extended reader and writer outlive
// their ttl many times over (the other side stays refused), and when their
// keys are deleted under them, the auto-extension reports the loss.
func TestRWAutoExtendAndLossSignal(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	ctx := context.Background()
	a, b := newRWClient(t, c), newRWClient(t, c)
	// 1 s, not the shortest ttl: an extension is due every third of it,
	// and a -race process on a loaded 2-core machine can stall for a few
	// hundred milliseconds, which would let a 300 ms key expire between
	// two extensions whatever the library does.
	const ttl = time.Second
	r, err := a.Acquire(ctx, "auto-r", ttl, core.Read(), core.AutoExtend())
	require.NoError(t, err)
	w, err := a.Acquire(ctx, "auto-w", ttl, core.Write(), core.AutoExtend())
	require.NoError(t, err)
	start := time.Now()
	poll.Eventually(t, 4*ttl, "three ttls pass", func() bool { return time.Since(start) > 3*ttl })
	assert.False(t, r.IsLost())
	assert.False(t, w.IsLost())
	assert.Positive(t, r.Validity())
	_, err = b.Acquire(ctx, "auto-r", time.Second, core.Write())
	require.ErrorIs(t, err, core.ErrNotAcquired, "the auto-extended reader still holds")
	_, err = b.Acquire(ctx, "auto-w", time.Second, core.Read())
	require.ErrorIs(t, err, core.ErrNotAcquired, "the auto-extended writer still holds")
	require.NoError(t, c.FlushAll())
	for _, l := range []*core.Lock{r, w} {
		select {
		case <-l.Lost():
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: no loss signal after its keys were deleted", l.Mode())
		}
		require.ErrorIs(t, l.Err(), core.ErrLost)
	}
	assertNoRWKeys(t, c)
}
