package core_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Three workers share a pool of two permits: the third waits until a
// permit is released.
func ExamplePermits() {
	dir, _ := os.MkdirTemp("", "liblock-example")
	defer os.RemoveAll(dir)
	nodes, err := redistest.StartCluster(3, dir)
	if err != nil {
		fmt.Println("no redis-server:", err)
		return
	}
	defer nodes.Close()
	client, err := core.New(core.Config{Nodes: nodes.URLs(), Owner: "worker"})
	if err != nil {
		panic(err)
	}
	defer client.Close()
	ctx := context.Background()
	a, _ := client.Acquire(ctx, "api-quota", 10*time.Second, core.Permits(2))
	b, _ := client.Acquire(ctx, "api-quota", 10*time.Second, core.Permits(2))
	_, err = client.Acquire(ctx, "api-quota", 10*time.Second, core.Permits(2))
	fmt.Println("third:", errors.Is(err, core.ErrNotAcquired))
	in, _ := client.Inspect(ctx, "api-quota", core.InspectPermits(2))
	fmt.Println("in use:", in.InUse, "of", in.Permits, "owner:", in.Holders[0].Owner)
	done := make(chan *core.Lock)
	go func() {
		c, _ := client.Acquire(ctx, "api-quota", 10*time.Second, core.Permits(2), core.Wait(5*time.Second))
		done <- c
	}()
	_ = a.Release(ctx)
	c := <-done
	fmt.Println("waiter got slot", c.Slot(), "after a release")
	_ = b.Release(ctx)
	_ = c.Release(ctx)
	// Output:
	// third: true
	// in use: 2 of 2 owner: worker
	// waiter got slot 0 after a release
}

func TestSemaphoreBasics(t *testing.T) {
	c := redistest.Start(t, 3)
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: locktest.NodeTimeout, Owner: "me"})
	require.NoError(t, err)
	ctx := context.Background()
	var held []*core.Lock
	slots := map[int]bool{}
	for range 3 {
		l, err := cl.Acquire(ctx, "pool", 10*time.Second, core.Permits(3), core.Fence())
		require.NoError(t, err)
		assert.Equal(t, 3, l.Permits())
		assert.Positive(t, l.Validity())
		slots[l.Slot()] = true
		if len(held) > 0 {
			assert.Greater(t, l.Fence(), held[len(held)-1].Fence(), "fences increase")
		}
		held = append(held, l)
	}
	assert.Len(t, slots, 3, "three different slots")
	_, err = cl.Acquire(ctx, "pool", 10*time.Second, core.Permits(3))
	require.ErrorIs(t, err, core.ErrNotAcquired)
	// The mutex of the name and a semaphore of another count are others.
	m, err := cl.Acquire(ctx, "pool", 10*time.Second)
	require.NoError(t, err)
	require.NoError(t, m.Release(ctx))

	in, err := cl.Inspect(ctx, "pool", core.InspectPermits(3))
	require.NoError(t, err)
	assert.Equal(t, 3, in.Permits)
	assert.Equal(t, 3, in.InUse)
	require.Len(t, in.Holders, 3)
	for i, h := range in.Holders {
		assert.Equal(t, i, h.Slot)
		assert.Equal(t, "me", h.Owner)
		assert.Positive(t, h.Validity)
	}

	// A release wakes a waiter of another client at once (pub/sub).
	other, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: locktest.NodeTimeout})
	require.NoError(t, err)
	got := make(chan *core.Lock, 1)
	go func() {
		l, err := other.Acquire(ctx, "pool", 10*time.Second, core.Permits(3), core.Wait(20*time.Second))
		assert.NoError(t, err)
		got <- l
	}()
	freed := held[1].Slot()
	require.NoError(t, held[1].Release(ctx))
	var w *core.Lock
	select {
	case w = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter was not woken")
	}
	assert.Equal(t, freed, w.Slot())
	require.NoError(t, w.Extend(ctx, 20*time.Second))
	require.NoError(t, w.Release(ctx))
	require.NoError(t, other.Close())
	for _, l := range []*core.Lock{held[0], held[2]} {
		require.NoError(t, l.Release(ctx))
	}
	in, err = cl.Inspect(ctx, "pool", core.InspectPermits(3))
	require.NoError(t, err)
	assert.Zero(t, in.InUse)
	assert.False(t, in.Held)
	require.NoError(t, cl.Close())
	// Only the name's fence counter stays (permanent by design), on the
	// nodes that granted a fenced permit: at least a quorum. The releases
	// returned at a quorum: a slot may take a moment to go from the third.
	counters := 0
	for _, n := range c.Nodes {
		var keys []string
		poll.Wait(5*time.Second, func() bool {
			var err error
			keys, err = n.Keys()
			require.NoError(t, err)
			return len(keys) == 0 || (len(keys) == 1 && keys[0] == engine.FenceKey("pool"))
		})
		if len(keys) > 0 {
			assert.Equal(t, []string{engine.FenceKey("pool")}, keys, "node %d", n.Index)
			counters++
		}
	}
	assert.GreaterOrEqual(t, counters, len(c.Nodes)/2+1, "fence counters on a quorum")
}

// TestSemaphoreBadInput: every bad permit count is an ArgumentError
// naming permits, and nothing is sent.
func TestSemaphoreBadInput(t *testing.T) {
	c := redistest.Start(t, 1)
	cl := newClient(t, c)
	ctx := context.Background()
	for _, n := range []int{0, -1, core.MaxPermits + 1, 1 << 40} {
		_, err := cl.Acquire(ctx, "pool", time.Second, core.Permits(n))
		var ae *engine.ArgumentError
		require.ErrorAs(t, err, &ae, "permits %d", n)
		assert.Equal(t, "permits", ae.Arg)
		require.ErrorIs(t, err, core.ErrInvalidArgument)
		_, err = cl.Inspect(ctx, "pool", core.InspectPermits(n))
		require.ErrorAs(t, err, &ae, "permits %d", n)
		assert.Equal(t, "permits", ae.Arg)
	}
	_, err := cl.Inspect(ctx, "pool", nil)
	require.ErrorIs(t, err, core.ErrInvalidArgument)
	// A permit is of one resource, not of a multi-resource lock's set.
	_, err = cl.AcquireAll(ctx, []string{"pool", "other"}, time.Second, core.Permits(2))
	var ae *engine.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "permits", ae.Arg)
	l, err := cl.Acquire(ctx, "pool", time.Second, core.Permits(core.MaxPermits))
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
	c.AssertNoKeys(t)
}

// interval is a permit's validity as its holder saw it (wall clock).
type interval struct {
	start, end time.Time
	who        string
}

// maxOverlap returns the most intervals valid at one instant.
func maxOverlap(iv []interval) int {
	type ev struct {
		at time.Time
		d  int
	}
	var evs []ev
	for _, i := range iv {
		if i.end.After(i.start) {
			evs = append(evs, ev{i.start, 1}, ev{i.end, -1})
		}
	}
	sort.Slice(evs, func(a, b int) bool {
		if !evs[a].at.Equal(evs[b].at) {
			return evs[a].at.Before(evs[b].at)
		}
		return evs[a].d < evs[b].d // ends first: [start, end)
	})
	cur, best := 0, 0
	for _, e := range evs {
		cur += e.d
		best = max(best, cur)
	}
	return best
}

// TestSemaphoreOverlapCheckerControl: the checker catches N+1 holders.
func TestSemaphoreOverlapCheckerControl(t *testing.T) {
	t0 := time.Now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ok := []interval{{at(0), at(10), "a"}, {at(5), at(15), "b"}, {at(10), at(20), "c"}}
	assert.Equal(t, 2, maxOverlap(ok))
	assert.Equal(t, 3, maxOverlap(append(ok, interval{at(12), at(13), "d"})))
}

// TestSemaphoreUnderFailures: eight workers contend for 2 permits on 3
// nodes while one node is killed (and restarted) and another frozen (and
// thawed); never more than 2 valid holders, every permit's validity as its
// holder saw it; no key left after the clients close.
func TestSemaphoreUnderFailures(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	ctx := context.Background()
	const permits, workers = 2, 8
	var mu sync.Mutex
	var ivs []interval
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var clients []*core.Client
	for w := range workers {
		cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: locktest.NodeTimeout})
		require.NoError(t, err)
		clients = append(clients, cl)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				opts := []core.AcquireOption{core.Permits(permits), core.Wait(300 * time.Millisecond)}
				if w%2 == 0 {
					opts = append(opts, core.AutoExtend())
				}
				l, err := cl.Acquire(ctx, "contended", 200*time.Millisecond, opts...)
				if err != nil {
					continue
				}
				// The permit as its holder sees it: from now until it
				// releases it, or until the validity last seen ends.
				start := time.Now()
				vEnd := start.Add(l.Validity())
				select {
				case <-time.After(time.Duration(5+w) * time.Millisecond):
				case <-l.Lost():
				}
				if v := l.Validity(); v > 0 {
					vEnd = time.Now().Add(v)
				}
				now := minTime(time.Now(), vEnd)
				mu.Lock()
				ivs = append(ivs, interval{start, now, fmt.Sprint(w)})
				mu.Unlock()
				_ = l.Release(ctx)
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(ivs) }
	require.Eventually(t, func() bool { return count() > 30 }, 20*time.Second, 10*time.Millisecond)
	require.NoError(t, c.Nodes[0].Kill())
	n := count()
	require.Eventually(t, func() bool { return count() > n+20 }, 20*time.Second, 10*time.Millisecond, "permits go on with a node down")
	require.NoError(t, c.Nodes[0].Restart())
	require.NoError(t, c.Nodes[1].Freeze())
	n = count()
	require.Eventually(t, func() bool { return count() > n+20 }, 20*time.Second, 10*time.Millisecond, "permits go on with a node frozen")
	require.NoError(t, c.Nodes[1].Thaw())
	n = count()
	require.Eventually(t, func() bool { return count() > n+20 }, 20*time.Second, 10*time.Millisecond)
	close(stop)
	wg.Wait()
	for _, cl := range clients {
		require.NoError(t, cl.Close())
	}
	mu.Lock()
	defer mu.Unlock()
	assert.LessOrEqual(t, maxOverlap(ivs), permits, "more valid holders than permits")
	t.Logf("%d permits held in turn", len(ivs))
	c.AssertNoKeys(t)
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// TestSemaphoreSplitGrants: nodes that see different slots free. Other
// programs' keys occupy slot 0 on node 0, slot 1 on node 1 and slots 0 and 1
// on node 2: the first attempt is granted slot 1, 0 and 2 (no quorum on
// any), deletes those grants, and the retry prefers the slot free on the
// most nodes, 2, which all three grant. Nothing of ours is left after the
// release, and the others' keys are untouched.
func TestSemaphoreSplitGrants(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()
	base := engine.SemKey("split", 3)
	foreign := map[int][]int{0: {0}, 1: {1}, 2: {0, 1}}
	for i, slots := range foreign {
		for _, s := range slots {
			_, err := c.Nodes[i].Do("SET", engine.SlotKey(base, s), "another-program", "PX", "60000")
			require.NoError(t, err)
		}
	}
	_, err := cl.Acquire(ctx, "split", 10*time.Second, core.Permits(3))
	require.ErrorIs(t, err, core.ErrNotAcquired, "one attempt: the nodes granted three different slots")
	l, err := cl.Acquire(ctx, "split", 10*time.Second, core.Permits(3), core.Wait(5*time.Second))
	require.NoError(t, err)
	assert.Equal(t, 2, l.Slot())
	require.NoError(t, l.Release(ctx))
	require.Eventually(t, func() bool {
		for i, n := range c.Nodes {
			keys, err := n.Keys()
			if err != nil || len(keys) != len(foreign[i]) {
				return false
			}
		}
		return true
	}, 5*time.Second, 5*time.Millisecond, "only the other program's keys are left")
	for i, slots := range foreign {
		for _, s := range slots {
			v, err := c.Nodes[i].Do("GET", engine.SlotKey(base, s))
			require.NoError(t, err)
			assert.Equal(t, "another-program", v)
		}
	}
}

// TestSemaphoreTokenAndLoss: re-entry by token (a hand-over of a permit),
// and the loss signal when a permit's slot is gone from a quorum.
func TestSemaphoreTokenAndLoss(t *testing.T) {
	c := redistest.Start(t, 3)
	a, b := newClient(t, c), newClient(t, c)
	ctx := context.Background()
	const token = "a-permit-token-0001"
	l, err := a.Acquire(ctx, "tok", 10*time.Second, core.Permits(2), core.WithToken(token))
	require.NoError(t, err)
	assert.False(t, l.Reentered())
	// The acquire returned at a quorum: let the third node's grant land, or
	// the re-entry below could meet that node before it (a fresh grant
	// there, not a re-entry) and count a re-entry on one node only.
	slotOnEveryNode(t, c, engine.SlotKey(engine.SemKey("tok", 2), l.Slot()))
	h, err := b.Acquire(ctx, "tok", 20*time.Second, core.Permits(2), core.WithToken(token))
	require.NoError(t, err)
	assert.True(t, h.Reentered(), "the token's permit is handed over")
	assert.Equal(t, l.Slot(), h.Slot())
	in, err := b.Inspect(ctx, "tok", core.InspectPermits(2))
	require.NoError(t, err)
	assert.Equal(t, 1, in.InUse, "one holder: the token")
	require.NoError(t, h.Release(ctx))
	require.ErrorIs(t, l.Release(ctx), core.ErrLost, "the release by the other holder ended it for both")

	// Loss: an auto-extended permit whose slot is deleted on two nodes is
	// told at its next extension.
	p, err := a.Acquire(ctx, "lost", 600*time.Millisecond, core.Permits(2), core.AutoExtend())
	require.NoError(t, err)
	key := engine.SlotKey(engine.SemKey("lost", 2), p.Slot())
	slotOnEveryNode(t, c, key) // else a late grant could set it again after the DEL
	for _, n := range c.Nodes[:2] {
		_, err := n.Do("DEL", key)
		require.NoError(t, err)
	}
	select {
	case <-p.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the loss was not signalled")
	}
	require.ErrorIs(t, p.Err(), core.ErrLost)
	require.NoError(t, a.Close())
	require.NoError(t, b.Close())
	c.AssertNoKeys(t)
}

// slotOnEveryNode waits until key exists on every node (an acquire returns
// once a quorum granted; the other nodes' grants land soon after).
func slotOnEveryNode(t *testing.T, c *redistest.Cluster, key string) {
	t.Helper()
	poll.Eventually(t, 5*time.Second, key+" on every node", func() bool {
		for _, n := range c.Nodes {
			if v, err := n.Do("EXISTS", key); err != nil || v != "1" {
				return false
			}
		}
		return true
	})
}
