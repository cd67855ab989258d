package sentineltest

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
	"github.com/liblock/liblock/core/testkit/locktest"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// NodeTimeout is the scenarios' node timeout: the WAIT's timeout is three
// quarters of it.
const NodeTimeout = 250 * time.Millisecond

// failoverWithin bounds a failover of the deployment (its sentinels'
// down-after is 400 ms, its failover timeout 2 s): generous for -race on a
// busy machine.
const failoverWithin = 30 * time.Second

// Run runs every scenario against backend.
func Run(t *testing.T, backend locktest.Factory) {
	for _, sc := range []struct {
		name string
		run  func(*testing.T, locktest.Factory)
	}{
		{"AcquireThroughSentinel", acquireThroughSentinel},
		{"GrantSurvivesKillWithWait", survivesKill},
		{"GrantLostWithoutWait", lostWithoutWait},
		{"FailoverWhileContended", failoverContended},
		{"MultiResourceWaited", multiWaited},
		{"Passwords", passwords},
		{"ReleaseAfterForcedFailover", releaseAfterForcedFailover},
		{"ExtendAfterForcedFailover", extendAfterForcedFailover},
		{"ReleaseAfterPrimaryKilled", releaseAfterKill},
	} {
		t.Run(sc.name, func(t *testing.T) {
			// Registered first, checked last: after the clients closed
			// and the deployment stopped.
			base := runtime.NumGoroutine()
			t.Cleanup(func() { locktest.NoGoroutineLeak(t, base) })
			sc.run(t, backend)
		})
	}
}

func client(t *testing.T, backend locktest.Factory, url string, wait *int) locktest.Client {
	t.Helper()
	c, err := backend(t, core.Config{Nodes: []string{url}, NodeTimeout: NodeTimeout, WaitReplicas: wait})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func intp(n int) *int { return &n }

// get returns the key's value on n ("(nil)" when absent).
func get(t *testing.T, n *redistest.Node, key string) string {
	t.Helper()
	v, err := n.Do("GET", key)
	require.NoError(t, err)
	return v
}

func acquireThroughSentinel(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	c := client(t, backend, s.URL(), nil) // the default: WAIT 1 on a Sentinel node
	ctx := context.Background()
	l, err := c.Acquire(ctx, "sent:a", 10*time.Second)
	require.NoError(t, err)
	p := s.Primary()
	require.NotNil(t, p)
	assert.Equal(t, l.Token(), get(t, p, "sent:a"), "the key is on the primary")
	acked := 0
	for _, n := range s.Data {
		if n != p && get(t, n, "sent:a") == l.Token() {
			acked++
		}
	}
	assert.GreaterOrEqual(t, acked, 1, "WAIT 1: a replica has the key when the acquire returns")
	_, err = c.Acquire(ctx, "sent:a", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, l.Release(ctx))
	s.AssertNoKeys(t)

	// A bad URL is refused naming the parameter, and changes nothing.
	_, err = backend(t, core.Config{Nodes: []string{s.URL() + "&replica_only=true"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "replica_only")
	_, err = backend(t, core.Config{Nodes: []string{s.URL()}, WaitReplicas: intp(-1)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "wait_replicas")
	s.AssertNoKeys(t)
}

// survivesKill: with WAIT on every replica, a grant is on every replica
// when the acquire returns, so whichever Sentinel promotes has it: the lock
// is still held after the primary is SIGKILLed, and a second client is
// refused.
func survivesKill(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	a := client(t, backend, s.URL(), intp(2))
	ctx := context.Background()
	l, err := a.Acquire(ctx, "sent:kill", 60*time.Second)
	require.NoError(t, err)
	old := s.Primary()
	require.NotNil(t, old)
	require.NoError(t, old.Kill())
	p := s.WaitFailover(t, old, failoverWithin)
	assert.Equal(t, l.Token(), get(t, p, "sent:kill"), "the promoted replica has the grant")

	b := client(t, backend, s.URL(), intp(0))
	_, err = b.Acquire(ctx, "sent:kill", time.Second)
	assert.ErrorIs(t, err, core.ErrNotAcquired, "the lock is still held after the failover")

	// The holder's release goes to the new primary (its connection to the
	// dead one failed; the next one asks the sentinels), which has one
	// replica left: WAIT 2 cannot be met, and the release is not reported
	// done (its grants would fail the same way).
	err = l.Release(ctx)
	require.Error(t, err)
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.Contains(t, err.Error(), "acknowledged the release")
	// A client that asks no WAIT re-enters the lock by its token and
	// releases it.
	lb, err := b.Acquire(ctx, "sent:kill", time.Second, core.WithToken(l.Token()))
	require.NoError(t, err)
	require.NoError(t, lb.Release(ctx))
	assert.Equal(t, "(nil)", get(t, p, "sent:kill"))
	s.AssertNoKeys(t)
}

// lostWithoutWait is the negative control: the replicas frozen until the
// primary has dropped their links, the grant cannot reach them (not by
// luck: they have no link to receive it on); with WAIT off it counts all
// the same, and after the primary's SIGKILL and a replica's promotion the
// key is gone and a second client acquires. With WAIT on, the same grant
// is refused as unavailable and its key deleted.
func lostWithoutWait(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	old := s.Primary()
	require.NotNil(t, old)
	var replicas []*redistest.Node
	for _, n := range s.Data {
		if n != old {
			replicas = append(replicas, n)
		}
	}
	for _, r := range replicas {
		require.NoError(t, r.Freeze())
	}
	for _, r := range replicas {
		s.WaitReplicaDropped(t, old, r, 20*time.Second)
	}
	ctx := context.Background()

	withWait := client(t, backend, s.URL(), intp(1))
	_, err := withWait.Acquire(ctx, "sent:checked", 10*time.Second)
	require.Error(t, err, "WAIT 1 with no replica linked: the grant must not count")
	assert.ErrorIs(t, err, core.ErrUnavailable)
	assert.Contains(t, err.Error(), "WAIT")
	locktest.Eventually(t, 5*time.Second, "the refused grant's key deleted", func() bool {
		v, err := old.Do("EXISTS", "sent:checked")
		return err == nil && v == "0"
	})

	a := client(t, backend, s.URL(), intp(0))
	l, err := a.Acquire(ctx, "sent:lost", 60*time.Second)
	require.NoError(t, err, "WAIT off: the primary's grant alone counts")
	assert.Equal(t, l.Token(), get(t, old, "sent:lost"))

	require.NoError(t, old.Kill())
	for _, r := range replicas {
		require.NoError(t, r.Thaw())
	}
	p := s.WaitFailover(t, old, failoverWithin)
	assert.Equal(t, "(nil)", get(t, p, "sent:lost"), "the promoted replica never received the grant")

	b := client(t, backend, s.URL(), intp(0))
	var lb locktest.Lock
	locktest.Eventually(t, 10*time.Second, "a second client acquires the lost lock", func() bool {
		var err error
		lb, err = b.Acquire(ctx, "sent:lost", 10*time.Second)
		return err == nil
	})
	require.NoError(t, lb.Release(ctx))
	_ = l.Release(ctx) // its key is gone: not held any more
	s.AssertNoKeys(t)
}

// failoverContended: clients contend for one resource through a SENTINEL
// FAILOVER: never two holders, no call past its wait plus the node-timeout
// budget, no key left behind.
func failoverContended(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	old := s.Primary()
	require.NotNil(t, old)
	const (
		clients = 4
		ttl     = 2 * time.Second
		wait    = 3 * time.Second
		budget  = wait + 2*locktest.Bound
	)
	var (
		overlap  locktest.OverlapChecker
		stop     = make(chan struct{})
		wg       sync.WaitGroup
		mu       sync.Mutex
		acquired int
		slow     []time.Duration
	)
	ctx := context.Background()
	for i := 0; i < clients; i++ {
		c := client(t, backend, s.URL(), intp(2))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				l, err := c.Acquire(ctx, "sent:contended", ttl, core.Wait(wait))
				if d := time.Since(start); d > budget {
					mu.Lock()
					slow = append(slow, d)
					mu.Unlock()
				}
				if err != nil {
					if !errors.Is(err, core.ErrNotAcquired) && !errors.Is(err, core.ErrUnavailable) {
						t.Errorf("acquire: %v", err)
					}
					continue
				}
				overlap.Enter(t)
				time.Sleep(time.Millisecond) // a critical section
				overlap.Exit()
				mu.Lock()
				acquired++
				mu.Unlock()
				start = time.Now()
				_ = l.Release(ctx) // may fail on a demoted primary: the key then expires
				if d := time.Since(start); d > 2*locktest.Bound {
					mu.Lock()
					slow = append(slow, d)
					mu.Unlock()
				}
			}
		}()
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return acquired }
	locktest.Eventually(t, 10*time.Second, "locks granted before the failover", func() bool { return count() >= 20 })
	out, err := s.Sentinels[0].Do("SENTINEL", "FAILOVER", redistest.SentinelMaster)
	require.NoError(t, err)
	require.Equal(t, "OK", out)
	p := s.WaitFailover(t, old, failoverWithin)
	before := count()
	locktest.Eventually(t, 20*time.Second, "locks granted after the failover", func() bool { return count() >= before+20 })
	close(stop)
	wg.Wait()
	// overlap.Enter failed the test already if two held it at once.
	assert.Empty(t, slow, "calls past the wait plus the node-timeout budget (%v)", budget)
	// A release that met the demoted primary left its key to expire.
	locktest.Eventually(t, ttl+5*time.Second, "no key left behind on the new primary", func() bool {
		keys, err := p.Keys()
		return err == nil && len(keys) == 0
	})
	// The replicas follow the primary's deletes over replication, a
	// moment later: AssertNoKeys polls every data node.
	s.AssertNoKeys(t)
}

// multiWaited: a fenced multi-resource lock through a Sentinel node with
// WAIT 2: when AcquireAll and Extend return, every replica has every key.
func multiWaited(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	c := client(t, backend, s.URL(), intp(2))
	all, ok := c.(interface {
		AcquireAll(ctx context.Context, resources []string, ttl time.Duration, opts ...core.AcquireOption) (*core.Lock, error)
	})
	if !ok {
		t.Skip("the backend's client has no AcquireAll")
	}
	ctx := context.Background()
	l, err := all.AcquireAll(ctx, []string{"sent:m1", "sent:m2"}, 10*time.Second, core.Fence())
	require.NoError(t, err)
	for _, n := range s.Data {
		for _, k := range []string{"sent:m1", "sent:m2"} {
			assert.Equal(t, l.Token(), get(t, n, k), "%s on %s", k, n.Addr())
		}
	}
	require.NoError(t, l.Extend(ctx, 20*time.Second))
	for _, n := range s.Data {
		pttl, err := n.Do("PTTL", "sent:m2")
		require.NoError(t, err)
		assert.Greater(t, len(pttl), 4, "extended on %s: %s ms", n.Addr(), pttl)
	}
	require.NoError(t, l.Release(ctx))
	for _, n := range s.Data {
		locktest.Eventually(t, 5*time.Second, "no lock key left on "+n.Addr(), func() bool {
			keys, err := n.Keys()
			if err != nil {
				return false
			}
			for _, k := range keys {
				if !strings.HasSuffix(k, "\xfffence") { // fence counters stay, by design
					return false
				}
			}
			return true
		})
	}
}

// passwords: the sentinels' password is the URL's, the data nodes' the
// password= option (go-redis's rule); a wrong one of either fails the
// acquire as unavailable, naming the AUTH, never repeating a password.
func passwords(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinelWith(t, redistest.SentinelOptions{Replicas: 2, Sentinels: 3,
		Password: "data-secret", SentinelPassword: "sentinel-secret"})
	ctx := context.Background()
	c := client(t, backend, s.URL(), nil)
	l, err := c.Acquire(ctx, "sent:pw", 10*time.Second)
	require.NoError(t, err)
	p := s.Primary()
	require.NotNil(t, p)
	assert.Equal(t, l.Token(), get(t, p, "sent:pw"))
	require.NoError(t, l.Release(ctx))

	for what, url := range map[string]string{
		"sentinel": strings.Replace(s.URL(), "sentinel-secret", "wrong-sentinel-pw", 1),
		"data":     strings.Replace(s.URL(), "data-secret", "wrong-data-pw", 1),
	} {
		bad := client(t, backend, url, nil)
		_, err := bad.Acquire(ctx, "sent:pw", time.Second)
		require.Error(t, err, what)
		t.Logf("%s password wrong: %v", what, err)
		assert.ErrorIs(t, err, core.ErrUnavailable, what)
		assert.Contains(t, err.Error(), "AUTH", what)
		assert.NotContains(t, err.Error(), "wrong-", what)
		assert.NotContains(t, err.Error(), "secret", what)
	}
	s.AssertNoKeys(t)
}

// forceFailover runs SENTINEL FAILOVER and returns once every sentinel
// names the new primary while the old one still answers ROLE master with
// no replica left (Sentinel converts it to a replica only seconds later):
// the window in which a client connected to the old primary writes to a
// server that is no longer the one the deployment reads.
func forceFailover(t *testing.T, s *redistest.Sentinel) (old, p *redistest.Node) {
	t.Helper()
	old = s.Primary()
	require.NotNil(t, old)
	out, err := s.Sentinels[0].Do("SENTINEL", "FAILOVER", redistest.SentinelMaster)
	require.NoError(t, err)
	require.Equal(t, "OK", out)
	p = s.WaitFailover(t, old, failoverWithin)
	locktest.Eventually(t, failoverWithin, "the old primary has no replica left", func() bool {
		info, err := old.Do("INFO", "replication")
		return err == nil && strings.Contains(info, "connected_slaves:0")
	})
	require.Equal(t, "master", old.Role(), "the old primary still says it is the primary (the window under test)")
	return old, p
}

// releaseAfterForcedFailover: a release written to the old primary after
// the promotion deletes nothing the deployment reads. It must not report
// success while the key is on the new primary: the first release fails
// (its deletion reached no replica), the next ones ask the sentinels and
// delete the key on the new primary, and another client acquires at once.
func releaseAfterForcedFailover(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	a := client(t, backend, s.URL(), intp(2))
	ctx := context.Background()
	l, err := a.Acquire(ctx, "sent:rel", 60*time.Second)
	require.NoError(t, err)
	_, p := forceFailover(t, s)
	require.Equal(t, l.Token(), get(t, p, "sent:rel"), "the promoted replica has the grant")

	err = l.Release(ctx)
	if err == nil {
		assert.Equal(t, "(nil)", get(t, p, "sent:rel"), "a release reported done left the key on the new primary")
	} else {
		t.Logf("release on the old primary: %v", err)
		assert.ErrorIs(t, err, core.ErrUnavailable)
		assert.Equal(t, l.Token(), get(t, p, "sent:rel"))
		// The failed release dropped the connection: the next ones ask
		// the sentinels and reach the new primary, whose deletion counts
		// once two replicas acknowledge it (the old primary among them,
		// once Sentinel has turned it into one).
		locktest.Eventually(t, failoverWithin, "a release that succeeds", func() bool {
			err := l.Release(ctx)
			if err != nil && !errors.Is(err, core.ErrUnavailable) {
				t.Errorf("release after the failover: %v, want unavailable", err)
			}
			return err == nil
		})
		assert.Equal(t, "(nil)", get(t, p, "sent:rel"))
	}
	b := client(t, backend, s.URL(), intp(1))
	lb, err := b.Acquire(ctx, "sent:rel", 10*time.Second)
	require.NoError(t, err, "released: another client acquires at once")
	require.NoError(t, lb.Release(ctx))
}

// extendAfterForcedFailover: an extension written to the old primary after
// the promotion must not count: the key on the new primary keeps its old
// ttl. It fails, and the next one reaches the new primary.
func extendAfterForcedFailover(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	a := client(t, backend, s.URL(), nil)
	ctx := context.Background()
	l, err := a.Acquire(ctx, "sent:ext", 20*time.Second)
	require.NoError(t, err)
	_, p := forceFailover(t, s)
	pttl := func() int64 {
		v, err := p.Do("PTTL", "sent:ext")
		require.NoError(t, err)
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err)
		return n
	}
	err = l.Extend(ctx, 120*time.Second)
	if err == nil {
		assert.Greater(t, pttl(), int64(60_000), "an extension reported done did not reach the new primary")
	} else {
		t.Logf("extend on the old primary: %v", err)
		assert.ErrorIs(t, err, core.ErrUnavailable)
		assert.LessOrEqual(t, pttl(), int64(20_000))
		// The failed extension dropped the connection: the next ones ask
		// the sentinels and reach the new primary (each may still fall
		// short of its replica's acknowledgement on a loaded machine).
		locktest.Eventually(t, failoverWithin, "an extension that reaches the new primary", func() bool {
			err := l.Extend(ctx, 120*time.Second)
			if err != nil && !errors.Is(err, core.ErrUnavailable) {
				t.Errorf("extend after the failover: %v, want unavailable", err)
			}
			return err == nil
		})
		assert.Greater(t, pttl(), int64(60_000))
	}
	require.NoError(t, l.Release(ctx))
	assert.Equal(t, "(nil)", get(t, p, "sent:ext"))
}

// releaseAfterKill: the primary SIGKILLed under a held lock, the release is
// called at once and again until it succeeds (each call bounded by the
// node timeout); when it reports success the key is gone from the
// primary the sentinels promoted.
func releaseAfterKill(t *testing.T, backend locktest.Factory) {
	s := redistest.StartSentinel(t, 2, 3)
	a := client(t, backend, s.URL(), nil)
	ctx := context.Background()
	l, err := a.Acquire(ctx, "sent:killrel", 60*time.Second)
	require.NoError(t, err)
	old := s.Primary()
	require.NotNil(t, old)
	require.NoError(t, old.Kill())
	failures := 0
	locktest.Eventually(t, failoverWithin, "a release that succeeds", func() bool {
		err := l.Release(ctx)
		if err != nil {
			failures++
			if !errors.Is(err, core.ErrUnavailable) {
				t.Errorf("release while failing over: %v, want unavailable", err)
			}
		}
		return err == nil
	})
	t.Logf("releases refused as unavailable before the failover: %d", failures)
	p := s.WaitFailover(t, old, failoverWithin)
	assert.Equal(t, "(nil)", get(t, p, "sent:killrel"), "a release reported done left the key on the new primary")
}
