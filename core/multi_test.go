package core_test

// Multi-resource locks (Client.AcquireAll) on real redis-servers: the set
// against mutexes and overlapping sets, contention in opposite orders with
// a per-resource overlap checker (and its negative control), a node killed
// and a node frozen during contention, no partial set on any node, fences
// over the set, loss, bad input, and no key left behind.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
)

func TestAcquireAllExcludesMembersAndOverlappingSets(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	a, b := newClient(t, c), newClient(t, c)
	ctx := context.Background()

	l, err := a.AcquireAll(ctx, []string{"acct:1", "acct:2"}, 5*time.Second)
	require.NoError(t, err)
	assert.Equal(t, []string{"acct:1", "acct:2"}, l.Resources())
	assert.Equal(t, "acct:1", l.Resource())
	assert.Positive(t, l.Validity())
	// The acquire returned at a quorum: let the third node run the set's
	// script too, or b's attempts below could take a member there first
	// (and the set would never reach that node, nor its extension).
	setOnEveryNode(t, c, l.Token(), "acct:1", "acct:2")

	// A mutex on either member is refused.
	for _, r := range []string{"acct:1", "acct:2"} {
		_, err := b.Acquire(ctx, r, time.Second)
		require.ErrorIs(t, err, core.ErrNotAcquired, r)
	}
	// An overlapping set, in any order, is refused and says which resource
	// is held; it leaves nothing of itself behind (acct:3 stays free).
	_, err = b.AcquireAll(ctx, []string{"acct:3", "acct:2"}, time.Second)
	require.ErrorIs(t, err, core.ErrNotAcquired)
	assert.Contains(t, err.Error(), `resource "acct:2" is held`)
	l3, err := b.Acquire(ctx, "acct:3", time.Second)
	require.NoError(t, err, "a refused set held a part of itself")
	require.NoError(t, l3.Release(ctx))
	// A disjoint set is free.
	l2, err := b.AcquireAll(ctx, []string{"acct:4", "acct:3"}, time.Second)
	require.NoError(t, err)
	require.NoError(t, l2.Release(ctx))

	// Extend covers the set: both keys' PTTL rise (on every node once the
	// extension, which returned at a quorum, reached the third).
	require.NoError(t, l.Extend(ctx, 20*time.Second))
	for _, n := range c.Nodes {
		for _, k := range []string{"acct:1", "acct:2"} {
			poll.Eventually(t, 5*time.Second, fmt.Sprintf("node %d key %s: PTTL above 10 s", n.Index, k), func() bool {
				pttl, err := n.Do("PTTL", k)
				require.NoError(t, err)
				return atoi(t, pttl) > 10_000
			})
		}
	}
	// A mutex on a member blocks the set too.
	lm, err := b.Acquire(ctx, "acct:9", time.Second)
	require.NoError(t, err)
	_, err = a.AcquireAll(ctx, []string{"acct:8", "acct:9"}, time.Second)
	require.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, lm.Release(ctx))

	require.NoError(t, l.Release(ctx))
	c.AssertNoKeys(t)
	_, err = b.Acquire(ctx, "acct:1", time.Second)
	require.NoError(t, err, "the release freed the members")
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	var v int64
	_, err := fmt.Sscan(s, &v)
	require.NoError(t, err, "not a number: %q", s)
	return v
}

// A waiting AcquireAll wakes on the release of any of its resources: here
// the second one, held as a mutex by another client.
func TestAcquireAllWaitWakesOnMemberRelease(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	a, b := newClient(t, c), newClient(t, c)
	ctx := context.Background()
	held, err := a.Acquire(ctx, "y", 30*time.Second)
	require.NoError(t, err)
	// The acquire returned at a quorum: let y reach the third node, or the
	// set's attempt could take x and y there first (x then exists there
	// until the attempt's cleanup).
	setOnEveryNode(t, c, held.Token(), "y")
	got := make(chan error, 1)
	go func() {
		l, err := b.AcquireAll(ctx, []string{"x", "y"}, time.Second, core.Wait(20*time.Second))
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	// It is waiting: x stays free (no partial set is kept while it waits).
	require.Never(t, func() bool { return len(got) > 0 }, 200*time.Millisecond, 10*time.Millisecond)
	for _, n := range c.Nodes {
		v, err := n.Do("EXISTS", "x")
		require.NoError(t, err)
		assert.Equal(t, "0", v)
	}
	require.NoError(t, held.Release(ctx))
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting AcquireAll never took the set")
	}
	c.AssertNoKeys(t)
}

// Its own waiting Acquire of a member wakes when a set is released.
func TestAcquireAllReleaseWakesMemberWaiters(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	a, b := newClient(t, c), newClient(t, c)
	ctx := context.Background()
	set, err := a.AcquireAll(ctx, []string{"p", "q"}, 30*time.Second)
	require.NoError(t, err)
	got := make(chan error, 2)
	for _, r := range []string{"p", "q"} {
		go func() {
			l, err := b.Acquire(ctx, r, time.Second, core.Wait(20*time.Second))
			if err == nil {
				err = l.Release(ctx)
			}
			got <- err
		}()
	}
	require.Never(t, func() bool { return len(got) > 0 }, 200*time.Millisecond, 10*time.Millisecond)
	require.NoError(t, set.Release(ctx))
	for range 2 {
		select {
		case err := <-got:
			require.NoError(t, err)
		case <-time.After(15 * time.Second):
			t.Fatal("a waiter on a member of the released set never woke")
		}
	}
	c.AssertNoKeys(t)
}

// overlapChecker counts holders per resource: more than one at once is a
// violation.
type overlapChecker struct {
	mu         sync.Mutex
	holders    map[string]int
	violations atomic.Int64
	sections   atomic.Int64
}

func newOverlapChecker() *overlapChecker { return &overlapChecker{holders: map[string]int{}} }

func (o *overlapChecker) enter(rs []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.sections.Add(1)
	for _, r := range rs {
		o.holders[r]++
		if o.holders[r] > 1 {
			o.violations.Add(1)
		}
	}
}

func (o *overlapChecker) leave(rs []string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range rs {
		o.holders[r]--
	}
}

// The checker's negative control: two holders of overlapping sets inside
// their sections at once (no lock taken) are caught; disjoint ones are not.
func TestOverlapCheckerCatchesOverlap(t *testing.T) {
	o := newOverlapChecker()
	o.enter([]string{"a", "b"})
	o.enter([]string{"c"})
	assert.Zero(t, o.violations.Load())
	o.enter([]string{"b", "a"})
	assert.Equal(t, int64(2), o.violations.Load())
	o.leave([]string{"b", "a"})
	o.leave([]string{"a", "b"})
	o.enter([]string{"a"})
	assert.Equal(t, int64(2), o.violations.Load())
}

// contend runs workers that take overlapping sets in opposite orders and
// mutexes on their members, each section checked by o, until stop. Each
// held set is also checked on every live node: the node holds either all
// of the set's keys with its token or none (no partial set). fault runs
// once the contention is under way.
func contend(t *testing.T, c *redistest.Cluster, o *overlapChecker, fault func()) (partial int64) {
	t.Helper()
	sets := [][]string{{"a", "b"}, {"b", "a"}, {"b", "c"}, {"c", "a", "b"}, {"a"}, {"c"}}
	ctx := context.Background()
	var wg sync.WaitGroup
	var stop atomic.Bool
	var partials, acquired atomic.Int64
	for w := range 8 {
		cl := newClient(t, c)
		set := sets[w%len(sets)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; !stop.Load(); i++ {
				var l *core.Lock
				var err error
				if len(set) == 1 {
					l, err = cl.Acquire(ctx, set[0], 2*time.Second, core.Wait(500*time.Millisecond))
				} else {
					l, err = cl.AcquireAll(ctx, set, 2*time.Second, core.Wait(500*time.Millisecond))
				}
				if err != nil {
					if !errors.Is(err, core.ErrNotAcquired) && !errors.Is(err, core.ErrUnavailable) {
						t.Errorf("worker %d: %v", w, err)
						return
					}
					continue
				}
				acquired.Add(1)
				o.enter(set)
				if len(set) > 1 && i%4 == 0 {
					partials.Add(int64(partialSets(c, set, l.Token())))
				}
				time.Sleep(time.Millisecond) // the critical section's work
				o.leave(set)
				if err := l.Release(ctx); err != nil && !errors.Is(err, core.ErrUnavailable) && !errors.Is(err, core.ErrLost) {
					t.Errorf("worker %d: release: %v", w, err)
				}
			}
		}()
	}
	require.Eventually(t, func() bool { return acquired.Load() >= 40 }, 30*time.Second, 5*time.Millisecond)
	fault()
	before := acquired.Load()
	require.Eventually(t, func() bool { return acquired.Load() >= before+40 }, 60*time.Second, 5*time.Millisecond,
		"no progress after the fault")
	stop.Store(true)
	wg.Wait()
	t.Logf("%d sections, %d acquisitions", o.sections.Load(), acquired.Load())
	return partials.Load()
}

// partialSets counts the live nodes that hold some but not all of the
// set's keys with token.
func partialSets(c *redistest.Cluster, set []string, token string) int {
	n := 0
	for _, node := range c.Nodes {
		if node.PID() == 0 {
			continue
		}
		have := 0
		ok := true
		for _, k := range set {
			v, err := doQuick(node, "GET", k)
			if err != nil {
				ok = false // frozen or down: cannot tell
				break
			}
			if v == token {
				have++
			}
		}
		if ok && have != 0 && have != len(set) {
			n++
		}
	}
	return n
}

// The partial-set check's negative control: a node holding one key of a
// set with its token and not the other is counted; all or none is not.
func TestPartialSetCheckCatchesPartialSet(t *testing.T) {
	c := redistest.Start(t, 3)
	set, tok := []string{"ps:a", "ps:b"}, "tok-partial"
	assert.Zero(t, partialSets(c, set, tok))
	for _, n := range c.Nodes {
		_, err := n.Do("SET", "ps:a", tok)
		require.NoError(t, err)
	}
	_, err := c.Nodes[1].Do("SET", "ps:b", tok)
	require.NoError(t, err)
	assert.Equal(t, 2, partialSets(c, set, tok), "nodes 0 and 2 hold ps:a without ps:b")
	require.NoError(t, c.FlushAll())
}

// doQuick is Node.Do, giving up on a frozen node.
func doQuick(n *redistest.Node, args ...string) (string, error) {
	type res struct {
		v   string
		err error
	}
	ch := make(chan res, 1)
	go func() { v, err := n.Do(args...); ch <- res{v, err} }()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(100 * time.Millisecond):
		return "", errors.New("no answer")
	}
}

func TestAcquireAllContentionNodeKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("contention on real nodes")
	}
	c := redistest.Start(t, 3)
	t.Cleanup(func() { c.AssertNoKeys(t) }) // after the clients' Close (cleanups run last first)
	o := newOverlapChecker()
	partial := contend(t, c, o, func() { require.NoError(t, c.Nodes[0].Kill()) })
	assert.Zero(t, o.violations.Load(), "two holders of one resource at once")
	assert.Zero(t, partial, "a node held part of a set")
}

func TestAcquireAllContentionNodeFrozen(t *testing.T) {
	if testing.Short() {
		t.Skip("contention on real nodes")
	}
	c := redistest.Start(t, 3)
	t.Cleanup(func() { c.AssertNoKeys(t) }) // after the clients' Close
	o := newOverlapChecker()
	partial := contend(t, c, o, func() {
		require.NoError(t, c.Nodes[1].Freeze())
		time.AfterFunc(time.Second, func() { _ = c.Nodes[1].Thaw() })
	})
	require.NoError(t, c.Nodes[1].Thaw())
	assert.Zero(t, o.violations.Load(), "two holders of one resource at once")
	assert.Zero(t, partial, "a node held part of a set")
}

// After release, loss and close, no key of a set is left on any node.
func TestAcquireAllNoKeysLeft(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	ctx := context.Background()
	cl, err := core.New(core.Config{Nodes: c.URLs()})
	require.NoError(t, err)

	// Loss: the set's keys vanish from two nodes; the extension finds the
	// set held on one node only: lost, and the rest is dropped.
	l, err := cl.AcquireAll(ctx, []string{"m1", "m2", "m3"}, 10*time.Second)
	require.NoError(t, err)
	// The acquire returned at a quorum: wait until the third node ran its
	// script too, or it could set m2 again after the DEL below.
	poll.Eventually(t, 5*time.Second, "the set on every node", func() bool {
		for _, n := range c.Nodes {
			if v, err := n.Do("EXISTS", "m1", "m2", "m3"); err != nil || v != "3" {
				return false
			}
		}
		return true
	})
	for _, n := range c.Nodes[:2] {
		_, err := n.Do("DEL", "m2")
		require.NoError(t, err)
	}
	err = l.Extend(ctx, 10*time.Second)
	require.ErrorIs(t, err, core.ErrLost)
	select {
	case <-l.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("Lost never closed")
	}
	c.AssertNoKeys(t)

	// Close releases a held set.
	_, err = cl.AcquireAll(ctx, []string{"m1", "m2"}, 10*time.Second, core.AutoExtend())
	require.NoError(t, err)
	require.NoError(t, cl.Close())
	c.AssertNoKeys(t)
}

// One fence for the set, greater than every earlier fence on each of its
// resources, and every later fence on a member is greater still.
func TestAcquireAllFence(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()
	last := map[string]int64{} // per resource, the last fence of a lock on it
	var f int64
	take := func(rs ...string) {
		t.Helper()
		l, err := cl.AcquireAll(ctx, rs, time.Second, core.Fence())
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
		f = l.Fence()
		for _, r := range rs {
			assert.Greater(t, f, last[r], "%v got fence %d, not above the last on %s", rs, f, r)
			last[r] = f
		}
	}
	// b's counter runs ahead of the servers' clocks (many grants within
	// one microsecond, or a node whose clock ran ahead, would do it): a set
	// with b must still exceed it.
	ahead := time.Now().UnixMicro() + 1e12
	for _, n := range c.Nodes {
		_, err := n.Do("SET", "b\xfffence", strconv.FormatInt(ahead, 10))
		require.NoError(t, err)
	}
	last["b"] = ahead
	take("a", "b")
	take("a")
	take("c", "a")
	take("b")
	take("b", "c", "a")
	set := f
	take("c")
	assert.Equal(t, map[string]int64{"a": set, "b": set, "c": f}, last)
	// Every counter of a set is raised to its fence on a quorum (a node
	// that answered late may have missed the fence round: the argument
	// needs only the quorum).
	for _, k := range []string{"a", "b"} {
		at := 0
		for _, n := range c.Nodes {
			v, err := n.Do("GET", k+"\xfffence")
			require.NoError(t, err)
			if v == strconv.FormatInt(set, 10) {
				at++
			}
		}
		assert.GreaterOrEqual(t, at, 2, "the counter of %s holds the set's fence on %d nodes", k, at)
	}
}

// The largest set, fenced: 2 × MaxResources keys in one script (numkeys of
// two digits), every member's key and counter written.
func TestAcquireAllMaxResourcesFenced(t *testing.T) {
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()
	set := make([]string, core.MaxResources)
	for i := range set {
		set[i] = fmt.Sprint("big:", i)
	}
	l, err := cl.AcquireAll(ctx, set, 5*time.Second, core.Fence(), core.AutoExtend())
	require.NoError(t, err)
	assert.Equal(t, set, l.Resources())
	// The acquire returned at a quorum; every node runs the script soon after.
	for _, r := range set {
		poll.Eventually(t, 5*time.Second, r+" on every node", func() bool { return countNodes(t, c, r, l.Token()) == 3 })
	}
	_, err = cl.Acquire(ctx, set[core.MaxResources-1], time.Second)
	require.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, l.Extend(ctx, 5*time.Second))
	require.NoError(t, l.Release(ctx))
	for _, r := range set {
		poll.Eventually(t, 5*time.Second, r+" gone from every node", func() bool { return countNodes(t, c, r, "") == 0 })
	}
}

// setOnEveryNode waits until every node holds each key with token (an
// acquire returns at a quorum; the other nodes' grants land soon after).
func setOnEveryNode(t *testing.T, c *redistest.Cluster, token string, keys ...string) {
	t.Helper()
	for _, k := range keys {
		poll.Eventually(t, 5*time.Second, k+" on every node", func() bool { return countNodes(t, c, k, token) == len(c.Nodes) })
	}
}

// countNodes counts the nodes where key holds val (any value when val is "").
func countNodes(t *testing.T, c *redistest.Cluster, key, val string) int {
	t.Helper()
	n := 0
	for _, node := range c.Nodes {
		v, err := node.Do("GET", key)
		require.NoError(t, err)
		if v != "(nil)" && v != "" && (val == "" || v == val) {
			n++
		}
	}
	return n
}

func TestAcquireAllBadInput(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	ctx := context.Background()
	many := make([]string, core.MaxResources+1)
	for i := range many {
		many[i] = fmt.Sprint("r", i)
	}
	for _, tc := range []struct {
		name      string
		resources []string
		opts      []core.AcquireOption
		arg, msg  string
	}{
		{"nil", nil, nil, "resources", "at least one"},
		{"empty", []string{}, nil, "resources", "at least one"},
		{"empty member", []string{"a", "b", ""}, nil, "resources[2]", "must not be empty"},
		{"invalid member", []string{"a", "\xff"}, nil, "resources[1]", "UTF-8"},
		{"long member", []string{strings.Repeat("x", 1025)}, nil, "resources[0]", "longer than"},
		{"duplicate", []string{"a", "b", "c", "b"}, nil, "resources[3]", "duplicates resources[1]"},
		{"too many", many, nil, "resources", fmt.Sprint("at most ", core.MaxResources)},
		{"token", []string{"a", "b"}, []core.AcquireOption{core.WithToken(strings.Repeat("t", 20))}, "token", "not supported"},
		{"wait", []string{"a", "b"}, []core.AcquireOption{core.Wait(-1)}, "wait", "between"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := cl.AcquireAll(ctx, tc.resources, time.Second, tc.opts...)
			var ae *core.ArgumentError
			require.ErrorAs(t, err, &ae)
			require.ErrorIs(t, err, core.ErrInvalidArgument)
			assert.Equal(t, tc.arg, ae.Arg)
			assert.Contains(t, ae.Reason, tc.msg)
		})
	}
	_, err := cl.AcquireAll(ctx, []string{"a", "b"}, 0)
	var ae *core.ArgumentError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "ttl", ae.Arg)
	var noCtx context.Context // a nil context: the bad input under test
	_, err = cl.AcquireAll(noCtx, []string{"a"}, time.Second)
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "ctx", ae.Arg)
	c.AssertNoKeys(t)
}

// A transfer between two accounts, under one lock on both.
func ExampleClient_AcquireAll() {
	nodes, err := redistest.StartCluster(3, "")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer nodes.Close()
	client, err := core.New(core.Config{Nodes: nodes.URLs()})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer client.Close()
	ctx := context.Background()

	// Both accounts or neither, whatever order another transfer names them in.
	lock, err := client.AcquireAll(ctx, []string{"account:alice", "account:bob"}, 10*time.Second, core.Wait(5*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("holding", lock.Resources())

	// Meanwhile nobody can lock either account, alone or in another set.
	_, err = client.Acquire(ctx, "account:bob", time.Second)
	fmt.Println("bob alone:", errors.Is(err, core.ErrNotAcquired))
	_, err = client.AcquireAll(ctx, []string{"account:bob", "account:carol"}, time.Second)
	fmt.Println("bob and carol:", errors.Is(err, core.ErrNotAcquired))

	// ... move the money ...
	if err := lock.Release(ctx); err != nil {
		fmt.Println(err)
	}
	// Output:
	// holding [account:alice account:bob]
	// bob alone: true
	// bob and carol: true
}
