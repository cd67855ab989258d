package clustertest

import (
	"context"
	"errors"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// clusterTimeout is the node timeout of the cluster scenarios: WAIT's
// timeout is half of it, generous so that a replica's acknowledgement
// delayed by a busy machine (-race, other suites) does not fail a grant
// the scenario needs. (At 1 s, "WAIT: 0 of the 1 replicas acknowledged
// the grant within 500ms" failed Primitives and Password once each under
// load; the budgets below scale with it.)
const clusterTimeout = 3 * time.Second

// NewClient makes a client of the backend under test (core.New, or
// wasm/host's Module.NewClient).
type NewClient func(core.Config) (*core.Client, error)

// Run runs every scenario against the backend.
func Run(t *testing.T, nc NewClient) {
	for _, sc := range []struct {
		name string
		run  func(*testing.T, NewClient)
	}{
		{"Primitives", primitives},
		{"WakeUp", wakeUp},
		{"SlotMigration", slotMigration},
		{"ShardedWakeUp", shardedWakeUp},                         // spubsub.go
		{"ShardedWakeAfterMigration", shardedWakeAfterMigration}, // spubsub.go
		{"FailoverKeepsGrant", failoverKeepsGrant},
		{"GrantLostWithoutWait", grantLostWithoutWait},
		{"RedlockOfClusters", redlockOfClusters},
		{"FrozenShard", frozenShard},
		{"Password", password},
		{"ListedTwice", listedTwice},
		{"PlainURLToClusterNode", plainURLToClusterNode},
		{"NoReplicas", noReplicas},
	} {
		t.Run(sc.name, func(t *testing.T) { sc.run(t, nc) })
	}
}

func clusterClient(t *testing.T, nc NewClient, urls []string, wait *int) *core.Client {
	t.Helper()
	c, err := nc(core.Config{Nodes: urls, NodeTimeout: clusterTimeout, WaitReplicas: wait})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func intPtr(n int) *int { return &n }

// noClusterLeak registers the goroutine check (run last: after the clients
// closed and the cluster stopped).
func noClusterLeak(t *testing.T) {
	base := runtime.NumGoroutine()
	t.Cleanup(func() { locktest.NoGoroutineLeak(t, base) })
}

// getKey reads key on the primary serving it.
func getKey(t *testing.T, c *redistest.RedisCluster, key string) string {
	t.Helper()
	v, err := c.PrimaryOfKey(t, key).Do("GET", key)
	require.NoError(t, err)
	return v
}

// primitives: every primitive on a 3-primary cluster (one
// replica each) as the only node (quorum 1): the keys of one resource
// share a hash tag, so every script runs on one shard; WAIT 1 by default.
func primitives(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 1)
	c := clusterClient(t, nc, []string{rc.URL()}, nil)
	ctx := context.Background()

	// Mutex: acquire, contention, extend, inspect, release.
	l, err := c.Acquire(ctx, "orders", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "{orders}", l.Key(), "a resource without a tag is wrapped in one")
	assert.Equal(t, l.Token(), getKey(t, rc, "{orders}"))
	for _, r := range rc.ReplicasOf(rc.PrimaryOfKey(t, "{orders}")) {
		v, err := r.GetOnReplica("{orders}")
		require.NoError(t, err)
		assert.Equal(t, l.Token(), v, "WAIT 1 by default: the replica has the grant when the acquire returns")
	}
	_, err = c.Acquire(ctx, "orders", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, l.Extend(ctx, 20*time.Second))
	in, err := c.Inspect(ctx, "orders")
	require.NoError(t, err)
	assert.True(t, in.Held)
	require.NoError(t, l.Release(ctx))

	// A resource with its own tag keeps it.
	l, err = c.Acquire(ctx, "{grp}a", 10*time.Second)
	require.NoError(t, err)
	assert.Equal(t, "{grp}a", l.Key())
	require.NoError(t, l.Release(ctx))

	// Fencing: the counter and the key in one slot, increasing.
	var last int64
	for i := 0; i < 3; i++ {
		l, err := c.Acquire(ctx, "fenced", 10*time.Second, core.Fence())
		require.NoError(t, err)
		assert.Greater(t, l.Fence(), last)
		last = l.Fence()
		require.NoError(t, l.Release(ctx))
	}

	// Semaphore of 2 permits.
	p1, err := c.Acquire(ctx, "sem", 10*time.Second, core.Permits(2))
	require.NoError(t, err)
	p2, err := c.Acquire(ctx, "sem", 10*time.Second, core.Permits(2))
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "sem", time.Second, core.Permits(2))
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, p1.Release(ctx))
	require.NoError(t, p2.Release(ctx))

	// Read-write lock: two readers, then the writer once they are gone.
	r1, err := c.Acquire(ctx, "rw", 10*time.Second, core.Read())
	require.NoError(t, err)
	r2, err := c.Acquire(ctx, "rw", 10*time.Second, core.Read())
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "rw", time.Second, core.Write())
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, r1.Release(ctx))
	require.NoError(t, r2.Release(ctx))
	w, err := c.Acquire(ctx, "rw", 10*time.Second, core.Write(), core.Fence())
	require.NoError(t, err)
	require.NoError(t, w.Release(ctx))

	// Multi-resource in one slot (one tag), fenced.
	m, err := c.AcquireAll(ctx, []string{"{cart}1", "{cart}2", "{cart}3"}, 10*time.Second, core.Fence())
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "{cart}2", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, m.Release(ctx))

	// Across slots: refused before anything is sent, naming the resources.
	_, err = c.AcquireAll(ctx, []string{"a", "b"}, 10*time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, core.ErrInvalidArgument)
	assert.Contains(t, err.Error(), "resources")
	assert.Contains(t, err.Error(), `"a"`)
	assert.Contains(t, err.Error(), `"b"`)

	// Election: campaign, a rival waits, resign hands over.
	ld, err := c.Campaign(ctx, "boss", "one")
	require.NoError(t, err)
	lead, err := c.Leader(ctx, "boss")
	require.NoError(t, err)
	assert.Equal(t, "one", lead.Value)
	require.NoError(t, ld.Resign(ctx))

	// The engine's slots are the cluster's.
	for _, k := range []string{"{orders}", "a", "{grp}a", "x{}y", "\xffz", "{cart}1\xfffence"} {
		assert.Equal(t, rc.Slot(t, k), engine.KeySlot(k), "%q", k)
	}

	require.NoError(t, c.Close())
	assertNoLockKeys(t, rc)
}

// wakeUp: a waiter on a cluster node subscribes (SSUBSCRIBE on the shard
// of its key's slot: spubsub.go) and is woken by the holder's release from
// another client.
func wakeUp(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 1)
	holder := clusterClient(t, nc, []string{rc.URL()}, nil)
	waiter := clusterClient(t, nc, []string{rc.URL()}, nil)
	ctx := context.Background()
	l, err := holder.Acquire(ctx, "wake", 30*time.Second)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() {
		lw, err := waiter.Acquire(ctx, "wake", 30*time.Second, core.Wait(time.Minute))
		if err == nil {
			err = lw.Release(ctx)
		}
		got <- err
	}()
	channel := engine.ReleasedChannel("{wake}")
	locktest.Eventually(t, 10*time.Second, "the waiter subscribed on the key's shard", func() bool {
		return shardSubscribers(rc.PrimaryOfKey(t, "{wake}"), channel) == "1"
	})
	require.NoError(t, l.Release(ctx))
	select {
	case err := <-got:
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the waiter was not woken")
	}
	assertNoLockKeys(t, rc)
}

// assertNoLockKeys polls until the cluster holds no key but fence
// counters (which outlive their locks by design).
func assertNoLockKeys(t *testing.T, rc *redistest.RedisCluster) {
	t.Helper()
	var left []string
	ok := assert.Eventually(t, func() bool {
		left = left[:0]
		for _, k := range rc.Keys(t) {
			if !strings.Contains(k, "\xfffence") {
				left = append(left, k)
			}
		}
		return len(left) == 0
	}, 5*time.Second, 10*time.Millisecond)
	if !ok {
		t.Errorf("keys left behind: %q", left)
	}
}

// clusterContend runs clients goroutines that take resource in a loop (with a
// wait budget), each holder checked alone in its critical section, and
// calls slower than the budget recorded; stop ends them.
type contention struct {
	overlap  locktest.OverlapChecker
	wg       sync.WaitGroup
	stop     chan struct{}
	mu       sync.Mutex
	acquired int
	slow     []time.Duration
	errs     []error
}

const (
	contendTTL  = 2 * time.Second
	contendWait = 2 * time.Second
	// contendBudget bounds one call: its wait, then a node timeout per
	// round trip of a redirect chain and the map loads, with slack for
	// -race on a busy machine.
	contendBudget = contendWait + 2*locktest.Bound + (maxRedirectsForTest+2)*clusterTimeout
	// maxRedirectsForTest is the engine's bound on redirects of one
	// command.
	maxRedirectsForTest = 5
)

func clusterContend(t *testing.T, clients []*core.Client, resource string) *contention {
	k := &contention{stop: make(chan struct{})}
	ctx := context.Background()
	for _, c := range clients {
		k.wg.Add(1)
		go func() {
			defer k.wg.Done()
			for {
				select {
				case <-k.stop:
					return
				default:
				}
				start := time.Now()
				l, err := c.Acquire(ctx, resource, contendTTL, core.Wait(contendWait))
				k.note(time.Since(start), contendBudget)
				if err != nil {
					if !errors.Is(err, core.ErrNotAcquired) && !errors.Is(err, core.ErrUnavailable) {
						k.mu.Lock()
						k.errs = append(k.errs, err)
						k.mu.Unlock()
					}
					continue
				}
				k.overlap.Enter(t)
				time.Sleep(time.Millisecond) // a critical section
				k.overlap.Exit()
				k.mu.Lock()
				k.acquired++
				k.mu.Unlock()
				start = time.Now()
				_ = l.Release(ctx)
				k.note(time.Since(start), 2*locktest.Bound+(maxRedirectsForTest+2)*clusterTimeout)
			}
		}()
	}
	return k
}

func (k *contention) note(d, budget time.Duration) {
	if d > budget {
		k.mu.Lock()
		k.slow = append(k.slow, d)
		k.mu.Unlock()
	}
}

func (k *contention) count() int { k.mu.Lock(); defer k.mu.Unlock(); return k.acquired }

// progress waits until n more locks were granted.
func (k *contention) progress(t *testing.T, n int, what string) {
	t.Helper()
	before := k.count()
	locktest.Eventually(t, 30*time.Second, what, func() bool { return k.count() >= before+n })
}

func (k *contention) finish(t *testing.T) {
	t.Helper()
	close(k.stop)
	k.wg.Wait()
	assert.Empty(t, k.slow, "calls past the budget")
	assert.Empty(t, k.errs, "unexpected errors")
}

// slotMigration moves the slot of a held and contended
// resource to another primary for real (IMPORTING/MIGRATING, MIGRATE
// KEYS, SETSLOT NODE): while the slot migrates, commands on keys the old
// primary no longer has are answered -ASK (followed with ASKING); once it
// has moved, -MOVED (followed, the map refreshed). The held lock extends
// and stays exclusive throughout; the contenders never overlap, no call
// passes its budget, and no key is left behind.
func slotMigration(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 1)
	url := rc.URL()
	holder := clusterClient(t, nc, []string{url}, nil)
	rival := clusterClient(t, nc, []string{url}, nil)
	ctx := context.Background()

	held, err := holder.Acquire(ctx, "{mig}held", 30*time.Second)
	require.NoError(t, err)
	slot := rc.Slot(t, "{mig}held")
	from := rc.PrimaryOfKey(t, "{mig}held")
	to := rc.OtherPrimary(t, from)

	k := clusterContend(t, []*core.Client{clusterClient(t, nc, []string{url}, nil), clusterClient(t, nc, []string{url}, nil), clusterClient(t, nc, []string{url}, nil)}, "{mig}contended")
	k.progress(t, 10, "locks granted before the migration")

	rc.BeginMigration(t, slot, from, to)
	require.NoError(t, held.Extend(ctx, 30*time.Second), "the key is still on the old primary")
	k.progress(t, 10, "locks granted while the slot is migrating")

	// The keys move: the old primary answers -ASK for them.
	locktest.Eventually(t, 10*time.Second, "every key of the slot moved", func() bool {
		rc.MoveKeys(t, slot, from, to)
		n, err := from.Do("CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot))
		return err == nil && n == "0"
	})
	require.NoError(t, held.Extend(ctx, 30*time.Second), "extended through -ASK")
	_, err = rival.Acquire(ctx, "{mig}held", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired, "still held, on the importing primary")
	k.progress(t, 10, "locks granted after the keys moved (through -ASK)")

	rc.EndMigration(t, slot, from, to)
	require.NoError(t, held.Extend(ctx, 30*time.Second), "extended through -MOVED")
	_, err = rival.Acquire(ctx, "{mig}held", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	k.progress(t, 10, "locks granted after the slot moved (through -MOVED)")
	k.finish(t)

	in, err := rival.Inspect(ctx, "{mig}held")
	require.NoError(t, err)
	assert.True(t, in.Held)
	require.NoError(t, held.Release(ctx))
	assertNoLockKeys(t, rc)
	keys, err := from.Keys()
	require.NoError(t, err)
	assert.Empty(t, keys, "nothing written on the old primary after the move")
}

// failoverKeepsGrant: with the default WAIT 1, a grant is on
// the replica when the call returns, so a failover keeps it: a manual
// CLUSTER FAILOVER (the old primary, now a replica, answers -MOVED, which
// the engine follows), then a SIGKILL of the new primary: while its slots
// have no primary, calls fail within the node-timeout budget; once the
// replica took over (CLUSTER FAILOVER TAKEOVER), the lock is still held,
// extends and releases.
func failoverKeepsGrant(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 1)
	c := clusterClient(t, nc, []string{rc.URL()}, nil)
	rival := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	ctx := context.Background()
	const key = "{fo}"
	l, err := c.Acquire(ctx, "fo", 60*time.Second)
	require.NoError(t, err)
	require.Equal(t, key, l.Key())

	// A manual failover: the replica catches up and takes over.
	p := rc.PrimaryOfKey(t, key)
	reps := rc.ReplicasOf(p)
	require.Len(t, reps, 1)
	rc.Failover(t, reps[0], "")
	require.Equal(t, reps[0], rc.PrimaryOfKey(t, key))
	require.NoError(t, l.Extend(ctx, 60*time.Second), "followed to the new primary")
	_, err = rival.Acquire(ctx, "fo", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired, "still held after CLUSTER FAILOVER")

	// A killed primary: the extension (WAIT 1) reached the old primary,
	// now its replica.
	p = rc.PrimaryOfKey(t, key)
	reps = rc.ReplicasOf(p)
	require.Len(t, reps, 1)
	v, err := reps[0].GetOnReplica(key)
	require.NoError(t, err)
	require.Equal(t, l.Token(), v)
	require.NoError(t, p.Kill())
	start := time.Now()
	err = l.Extend(ctx, 60*time.Second)
	assert.Error(t, err, "no primary for the slot")
	assert.Less(t, time.Since(start), 2*locktest.Bound+(maxRedirectsForTest+2)*clusterTimeout, "failed within the budget")

	rc.Failover(t, reps[0], "TAKEOVER")
	// The promoted replica has no replica of its own now (its primary is
	// dead): the holder's extensions fail their WAIT 1, which is right.
	// The lock is still held: the rival is refused, not let in.
	locktest.Eventually(t, 10*time.Second, "the rival reaches the promoted replica and is refused", func() bool {
		_, err := rival.Acquire(ctx, "fo", time.Second)
		return errors.Is(err, core.ErrNotAcquired)
	})
	in, err := rival.Inspect(ctx, "fo")
	require.NoError(t, err)
	assert.True(t, in.Held, "still held after the primary's SIGKILL")
	// Its release is refused as its extensions are: no replica could
	// acknowledge the deletion. The rival (no WAIT) re-enters the lock by
	// its token and releases it.
	err = l.Release(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	lr, err := rival.Acquire(ctx, "fo", time.Second, core.WithToken(l.Token()))
	require.NoError(t, err)
	require.NoError(t, lr.Release(ctx))
	assertNoLockKeys(t, rc)
}

// grantLostWithoutWait is the negative control of the WAIT
// check, deterministic: the key's replica is frozen until its primary has
// dropped its link, so the grant cannot reach it (it has no link to
// receive it on). With WAIT 1 the grant is refused (and its key deleted);
// with wait_replicas=0 it counts, and after the primary's SIGKILL, the
// replica thawed and promoted (TAKEOVER), the key is gone and a rival
// acquires.
func grantLostWithoutWait(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 1)
	ctx := context.Background()
	const key = "{lost}"
	p := rc.PrimaryOfKey(t, key)
	reps := rc.ReplicasOf(p)
	require.Len(t, reps, 1)
	r := reps[0]
	require.NoError(t, r.Freeze())
	rc.WaitReplicaDropped(t, p, r)

	checked := clusterClient(t, nc, []string{rc.URL()}, nil)
	_, err := checked.Acquire(ctx, "lost", 10*time.Second)
	require.Error(t, err, "WAIT 1 with no replica linked: the grant must not count")
	assert.ErrorIs(t, err, core.ErrUnavailable)
	// Refused by the WAIT, or at connect when the shard's connection is
	// made once the replica's link is gone (connected_slaves:0).
	assert.Regexp(t, `WAIT|the primary has no replica`, err.Error())
	locktest.Eventually(t, 2*time.Second, "the refused grant's key deleted", func() bool {
		v, err := p.Do("EXISTS", key)
		return err == nil && v == "0"
	})

	unchecked := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	l, err := unchecked.Acquire(ctx, "lost", 60*time.Second)
	require.NoError(t, err, "WAIT off: the primary's grant alone counts")
	v, err := p.Do("GET", key)
	require.NoError(t, err)
	require.Equal(t, l.Token(), v)

	require.NoError(t, p.Kill())
	require.NoError(t, r.Thaw())
	rc.Failover(t, r, "TAKEOVER")
	v, err = r.Do("GET", key)
	require.NoError(t, err)
	assert.Equal(t, "(nil)", v, "the promoted replica never received the grant")

	rival := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	var lr *core.Lock
	locktest.Eventually(t, 10*time.Second, "a rival acquires the lost lock", func() bool {
		lr, err = rival.Acquire(ctx, "lost", 10*time.Second)
		return err == nil
	})
	require.NoError(t, lr.Release(ctx))
	_ = l.Release(ctx) // its key is gone: not held any more
	assertNoLockKeys(t, rc)
}

// redlockOfClusters: a Redlock of 3 clusters (one primary
// each, no replicas: wait_replicas=0), quorum 2: each cluster one vote.
// One cluster killed, the others still grant.
func redlockOfClusters(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	var urls []string
	var rcs []*redistest.RedisCluster
	for i := 0; i < 3; i++ {
		rc := redistest.StartRedisCluster(t, 1, 0)
		rcs = append(rcs, rc)
		urls = append(urls, rc.URL())
	}
	c := clusterClient(t, nc, urls, intPtr(0))
	require.Equal(t, 2, c.Quorum())
	ctx := context.Background()
	l, err := c.Acquire(ctx, "rl", 10*time.Second, core.Fence())
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "rl", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, l.Release(ctx))

	require.NoError(t, rcs[2].Nodes[0].Kill())
	l, err = c.Acquire(ctx, "rl", 10*time.Second, core.Fence())
	require.NoError(t, err, "two clusters of three are a quorum")
	require.NoError(t, l.Release(ctx))
	for _, rc := range rcs[:2] {
		assertNoLockKeys(t, rc)
	}
}

// frozenShard: a SIGSTOPped primary fails the calls on its slots within
// the node-timeout budget, and does not hold up the other shards' slots
// (their requests keep the map they have while a new one is asked for);
// once thawed (and, maybe, failed over by the cluster meanwhile), its
// slots work again.
func frozenShard(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 1)
	c := clusterClient(t, nc, []string{rc.URL()}, nil)
	ctx := context.Background()
	// Two resources on different shards.
	frozenRes, otherRes := "fz0", ""
	fp := rc.PrimaryOfKey(t, "{"+frozenRes+"}")
	for i := 1; otherRes == ""; i++ {
		r := "fz" + strconv.Itoa(i)
		if rc.PrimaryOfKey(t, "{"+r+"}") != fp {
			otherRes = r
		}
	}
	// The map is loaded and both shards' connections are open.
	for _, r := range []string{frozenRes, otherRes} {
		l, err := c.Acquire(ctx, r, 10*time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
	}
	require.NoError(t, fp.Freeze())
	thawed := false
	defer func() {
		if !thawed {
			_ = fp.Thaw()
		}
	}()
	budget := 2*locktest.Bound + (maxRedirectsForTest+2)*clusterTimeout
	start := time.Now()
	// A short ttl: the SET waits in the frozen node's socket buffer and
	// runs when it thaws, after the attempt's cleanup gave up (README,
	// "Late commands on a frozen node"); it must expire before the check
	// for keys left behind.
	_, err := c.Acquire(ctx, frozenRes, time.Second)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.Less(t, time.Since(start), budget, "failed within the budget")
	for i := 0; i < 3; i++ {
		start = time.Now()
		l, err := c.Acquire(ctx, otherRes, 10*time.Second)
		require.NoError(t, err, "another shard's slots are not held up by the frozen one")
		assert.Less(t, time.Since(start), budget)
		require.NoError(t, l.Release(ctx))
	}
	require.NoError(t, fp.Thaw())
	thawed = true
	rc.WaitOK(t, 60*time.Second)
	locktest.Eventually(t, 20*time.Second, "the thawed shard's slots work again", func() bool {
		l, err := c.Acquire(ctx, frozenRes, 10*time.Second)
		if err != nil {
			return false
		}
		require.NoError(t, l.Release(ctx))
		return true
	})
	assertNoLockKeys(t, rc)
}

// password: a cluster whose nodes require a password: the URL's applies to
// every shard connection (resources on all three shards), and a wrong one
// fails the acquire as unavailable with AUTH refused, never repeating it.
func password(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisClusterWith(t, redistest.RedisClusterOptions{Primaries: 3, ReplicasEach: 1, Password: "s3cret"})
	c := clusterClient(t, nc, []string{rc.URL()}, nil)
	ctx := context.Background()
	shards := map[*redistest.Node]bool{}
	for i := 0; len(shards) < 3; i++ {
		res := "pw" + strconv.Itoa(i)
		p := rc.PrimaryOfKey(t, "{"+res+"}")
		if shards[p] {
			continue
		}
		shards[p] = true
		l, err := c.Acquire(ctx, res, 10*time.Second)
		require.NoError(t, err, "on %s", p.Addr())
		require.NoError(t, l.Release(ctx))
	}
	bad := clusterClient(t, nc, []string{strings.Replace(rc.URL(), "s3cret", "wrong", 1)}, nil)
	_, err := bad.Acquire(ctx, "pw0", time.Second)
	require.Error(t, err)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.Contains(t, err.Error(), "AUTH")
	assert.NotContains(t, err.Error(), "wrong")
	assertNoLockKeys(t, rc)
}

// listedTwice: one cluster under two seed lists (node 0 by its first
// node, node 1 by the other two) beside a standalone server. The engine
// finds it when the second map loads, before any lock command reaches the
// cluster: every call fails naming both entries, and no key is left on
// the cluster or the server (the server's grant is released). Node URLs
// that differ only in their seeds are otherwise accepted at creation: the
// client does not connect before its first call.
func listedTwice(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 0)
	solo := redistest.Start(t, 1)
	a := "redis://" + rc.Nodes[0].Addr() + "?cluster=yes"
	b := "redis://" + rc.Nodes[1].Addr() + "?cluster=yes&addr=" + rc.Nodes[2].Addr()
	c := clusterClient(t, nc, []string{a, b, solo.URLs()[0]}, intPtr(0))
	ctx := context.Background()
	for i := 0; i < 2; i++ {
		_, err := c.Acquire(ctx, "twice", 10*time.Second)
		require.ErrorIs(t, err, core.ErrUnavailable)
		require.ErrorContains(t, err, "nodes[0] and nodes[1] are one Redis Cluster")
		require.ErrorContains(t, err, "list each cluster once")
	}
	for _, n := range rc.Nodes {
		stats, err := n.Do("INFO", "commandstats")
		require.NoError(t, err)
		require.NotContains(t, stats, "cmdstat_set:", "no lock command reached the cluster listed twice (node %s)", n.Addr())
	}
	assertNoLockKeys(t, rc)
	solo.AssertNoKeys(t)
}

// plainURLToClusterNode: a URL without cluster=yes naming a node of a
// Redis Cluster would lock the resources of that node's slots and fail the
// others with MOVED. It is refused at connect (cluster_enabled:1) on every
// acquire, naming the node and cluster=yes, and no key is left.
func plainURLToClusterNode(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 0)
	c := clusterClient(t, nc, []string{"redis://" + rc.Nodes[0].Addr()}, intPtr(0))
	ctx := context.Background()
	for i := 0; i < 12; i++ {
		l, err := c.Acquire(ctx, "plain"+strconv.Itoa(i), 10*time.Second)
		if l != nil {
			_ = l.Release(ctx)
		}
		require.Error(t, err, "resource %d locked through a plain URL at a cluster node", i)
		assert.ErrorIs(t, err, core.ErrInvalidArgument)
		assert.ErrorContains(t, err, "nodes[0]")
		assert.ErrorContains(t, err, "cluster=yes")
		assert.NotRegexp(t, `MOVED \d`, err.Error(), "refused at connect, not by a redirect")
	}
	assertNoLockKeys(t, rc)
}

// noReplicas: a cluster without replicas (redis-cli --cluster create
// --cluster-replicas 0) cannot acknowledge the WAIT 1 a Cluster node asks
// by default. Every acquire is refused at connect, before a lock command
// is sent, with the fix named (wait_replicas=0), instead of each grant
// failing after the WAIT's timeout; with wait_replicas=0 it locks. (The
// with-replica default, WAIT 1, is Primitives' and FailoverKeepsGrant's.)
func noReplicas(t *testing.T, nc NewClient) {
	noClusterLeak(t)
	rc := redistest.StartRedisCluster(t, 3, 0)
	c := clusterClient(t, nc, []string{rc.URL()}, nil)
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		_, err := c.Acquire(ctx, "norep"+strconv.Itoa(i), 10*time.Second)
		require.Error(t, err)
		assert.ErrorIs(t, err, core.ErrUnavailable)
		assert.ErrorContains(t, err, "no replica")
		assert.ErrorContains(t, err, "wait_replicas=0")
	}
	for _, n := range rc.Nodes {
		stats, err := n.Do("INFO", "commandstats")
		require.NoError(t, err)
		require.NotContains(t, stats, "cmdstat_set:", "no lock command sent (node %s)", n.Addr())
		require.NotContains(t, stats, "cmdstat_wait:", "no WAIT sent (node %s)", n.Addr())
	}
	off := clusterClient(t, nc, []string{rc.URL()}, intPtr(0))
	for i := 0; i < 6; i++ {
		l, err := off.Acquire(ctx, "norep"+strconv.Itoa(i), 10*time.Second)
		require.NoError(t, err, "wait_replicas=0")
		require.NoError(t, l.Release(ctx))
	}
	assertNoLockKeys(t, rc)
}
