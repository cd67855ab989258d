package core_test

// Leader election (Client.Campaign, Leader, Observe) on real redis-servers:
// three campaigner processes, the leader's process killed (SIGKILL) and a
// new leader with a higher term taking over, observed in order; resign
// handing over; a node killed and a node frozen under a leader; bad input;
// no key left behind but the election's fence counter.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
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

// assertOnlyCounters: no node holds a key but fence counters (an
// election's term counter is permanent by design, as a fenced lock's is).
func assertOnlyCounters(t *testing.T, c *redistest.Cluster) {
	t.Helper()
	for _, n := range c.Nodes {
		if n.PID() == 0 {
			continue
		}
		var left []string
		poll.Wait(5*time.Second, func() bool {
			keys, err := n.Keys()
			require.NoError(t, err)
			left = left[:0]
			for _, k := range keys {
				if k != "" && !strings.HasSuffix(k, engine.FenceKey("")) {
					left = append(left, k)
				}
			}
			return len(left) == 0
		})
		assert.Empty(t, left, "node %d still holds keys", n.Index)
	}
}

// observed collects an Observe stream in the background.
type observedLog struct {
	mu  sync.Mutex
	all []core.Leader
}

func observe(t *testing.T, cl *core.Client, name string) (*observedLog, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := cl.Observe(ctx, name, core.ObservePoll(200*time.Millisecond))
	require.NoError(t, err)
	log := &observedLog{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for l := range ch {
			log.mu.Lock()
			log.all = append(log.all, l)
			log.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return log, cancel
}

func (o *observedLog) snapshot() []core.Leader {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]core.Leader(nil), o.all...)
}

// has reports whether the stream has shown a leader of term.
func (o *observedLog) has(term int64) bool {
	for _, l := range o.snapshot() {
		if l.Term == term {
			return true
		}
	}
	return false
}

// assertInOrder: the leaders a stream showed have strictly increasing
// terms, and no change is reported twice in a row.
func (o *observedLog) assertInOrder(t *testing.T) {
	t.Helper()
	var last int64
	all := o.snapshot()
	for i, l := range all {
		if i > 0 {
			assert.NotEqual(t, all[i-1], l, "change %d repeated: %v", i, all)
		}
		if l.Term == 0 {
			continue
		}
		assert.Greater(t, l.Term, last, "change %d out of order: %v", i, all)
		last = l.Term
	}
}

// TestElectionFailoverProcesses: three campaigner processes; the leader's
// process is killed (SIGKILL) twice, and each time a new leader takes over
// with a higher term; an observer sees every leader, in order, and finally
// that there is none.
func TestElectionFailoverProcesses(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	cl := newClient(t, c)
	obs, _ := observe(t, cl, "svc")

	type proc struct {
		cmd   *exec.Cmd
		value string
		term  chan int64
	}
	procs := map[string]*proc{}
	for i := range 3 {
		p := &proc{value: fmt.Sprintf("replica-%d", i), term: make(chan int64, 1)}
		p.cmd = exec.Command(os.Args[0], "-test.run=^TestElectHelperProcess$", "-test.count=1")
		p.cmd.Env = append(os.Environ(), "LIBLOCK_ELECT_HELPER=1",
			"LIBLOCK_NODES="+strings.Join(c.URLs(), ","), "LIBLOCK_ELECT_VALUE="+p.value)
		out, err := p.cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, p.cmd.Start())
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				var term int64
				if _, err := fmt.Sscanf(sc.Text(), "LEADER %d", &term); err == nil {
					p.term <- term
				}
			}
		}()
		procs[p.value] = p
		t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	}
	ctx := context.Background()
	var lastTerm int64
	for round := range 3 {
		var ld *core.Leader
		poll.Eventually(t, 10*time.Second, "a leader", func() bool {
			var err error
			ld, err = cl.Leader(ctx, "svc")
			return err == nil && ld.Term > lastTerm
		})
		p := procs[ld.Value]
		require.NotNil(t, p, "leader value %q", ld.Value)
		select {
		case term := <-p.term:
			assert.Equal(t, ld.Term, term, "the leader's own term and Leader's")
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: %s leads but never said so", round, ld.Value)
		}
		assert.Greater(t, ld.Term, lastTerm)
		assert.Positive(t, ld.Validity)
		lastTerm = ld.Term
		poll.Eventually(t, 5*time.Second, "the observer sees the leader", func() bool { return obs.has(ld.Term) })
		// Killed without a word: the lease runs out, and another takes over.
		require.NoError(t, p.cmd.Process.Signal(syscall.SIGKILL))
		_ = p.cmd.Wait()
		delete(procs, ld.Value)
	}
	poll.Eventually(t, 10*time.Second, "no leader once all are dead", func() bool {
		_, err := cl.Leader(ctx, "svc")
		return errors.Is(err, core.ErrNoLeader)
	})
	poll.Eventually(t, 5*time.Second, "the observer sees there is none", func() bool {
		all := obs.snapshot()
		return len(all) > 0 && all[len(all)-1].Term == 0
	})
	obs.assertInOrder(t)
	held := 0
	for _, l := range obs.snapshot() {
		if l.Term != 0 {
			held++
		}
	}
	assert.Equal(t, 3, held, "every leader observed once: %v", obs.snapshot())
	assertOnlyCounters(t, c)
}

// TestElectHelperProcess is one campaigner of
// TestElectionFailoverProcesses: it campaigns, says "LEADER term" when it
// leads, and leads until it is killed.
func TestElectHelperProcess(t *testing.T) {
	if os.Getenv("LIBLOCK_ELECT_HELPER") != "1" {
		return // works only as TestElectionFailoverProcesses's child process
	}
	cl, err := core.New(core.Config{Nodes: strings.Split(os.Getenv("LIBLOCK_NODES"), ","), NodeTimeout: locktest.NodeTimeout})
	require.NoError(t, err)
	defer cl.Close()
	// 2 s: the lease must outlive a stall of this -race process on a loaded
	// machine (an extension is due every third of it); a leader that lost
	// it by a stall would end the helper and fail the test.
	ld, err := cl.Campaign(context.Background(), "svc", os.Getenv("LIBLOCK_ELECT_VALUE"), core.CampaignTTL(2*time.Second))
	require.NoError(t, err)
	fmt.Printf("LEADER %d\n", ld.Term())
	<-ld.Lost() // until killed (a loss would end the helper early: the test then fails)
	t.Fatalf("leadership lost: %v", ld.Err())
}

// TestElectionResignHandsOver: a waiting campaign takes over when the
// leader resigns, with a higher term; the observer sees both, in order,
// and then none once the second resigns; nothing is left behind.
func TestElectionResignHandsOver(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	a, b, o := newClient(t, c), newClient(t, c), newClient(t, c)
	ctx := context.Background()
	obs, _ := observe(t, o, "e")
	poll.Eventually(t, 10*time.Second, "the first report (no leader)", func() bool { return len(obs.snapshot()) > 0 })
	assert.Equal(t, core.Leader{Name: "e"}, obs.snapshot()[0], "a late observer first gets the current state")

	la, err := a.Campaign(ctx, "e", "a", core.CampaignTTL(2*time.Second))
	require.NoError(t, err)
	assert.Equal(t, "e", la.Name())
	assert.Equal(t, "a", la.Value())
	assert.Positive(t, la.Term())
	assert.Positive(t, la.Validity())
	ld, err := b.Leader(ctx, "e")
	require.NoError(t, err)
	assert.Equal(t, core.Leader{Name: "e", Value: "a", Term: la.Term(), Validity: ld.Validity}, *ld)

	// b waits; a second waiter with a bounded wait gives up.
	_, err = b.Campaign(ctx, "e", "b2", core.CampaignWait(0))
	require.ErrorIs(t, err, core.ErrNotAcquired)
	got := make(chan *core.Leadership, 1)
	go func() {
		lb, err := b.Campaign(ctx, "e", "b")
		assert.NoError(t, err)
		got <- lb
	}()
	poll.Eventually(t, 10*time.Second, "the observer sees a", func() bool { return obs.has(la.Term()) })
	require.NoError(t, la.Resign(ctx))
	var lb *core.Leadership
	select {
	case lb = <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("b never took over")
	}
	assert.Greater(t, lb.Term(), la.Term())
	assert.Zero(t, la.Validity(), "a resigned")
	poll.Eventually(t, 10*time.Second, "the observer sees b", func() bool { return obs.has(lb.Term()) })
	require.NoError(t, lb.Resign(ctx))
	poll.Eventually(t, 10*time.Second, "the observer sees nobody", func() bool {
		all := obs.snapshot()
		return all[len(all)-1].Term == 0
	})
	obs.assertInOrder(t)
	// A late observer gets the current state first: none.
	late, cancel := observe(t, o, "e")
	poll.Eventually(t, 10*time.Second, "the late observer's first report", func() bool { return len(late.snapshot()) > 0 })
	assert.Equal(t, int64(0), late.snapshot()[0].Term)
	cancel()
	_, err = a.Leader(ctx, "e")
	require.ErrorIs(t, err, core.ErrNoLeader)
	assertOnlyCounters(t, c)
}

// TestElectionNodeKilledAndFrozen: a leader keeps leading (extended, not
// lost) with a node killed, and then with another frozen; the others'
// campaigns are refused meanwhile; Close resigns.
func TestElectionNodeKilledAndFrozen(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	a, b := newClient(t, c), newClient(t, c)
	ctx := context.Background()
	// 1.5 s, not less: an extension is due every third of the ttl, and a
	// -race process on a loaded 2-core machine can stall for a few hundred
	// milliseconds, which would lose a shorter lease whatever the library
	// does (the test is about a node down, not about stalls).
	const ttl = 1500 * time.Millisecond
	la, err := a.Campaign(ctx, "e", "a", core.CampaignTTL(ttl))
	require.NoError(t, err)
	require.NoError(t, c.Nodes[0].Kill())
	// Past two ttls: it was extended on the two nodes left.
	deadline := time.Now().Add(2*ttl + 100*time.Millisecond)
	poll.Eventually(t, 3*ttl, "two ttls pass", func() bool { return time.Now().After(deadline) })
	require.False(t, la.Lock().IsLost(), "lost with one node of three down: %v", la.Err())
	_, err = b.Campaign(ctx, "e", "b", core.CampaignWait(100*time.Millisecond))
	require.ErrorIs(t, err, core.ErrNotAcquired)
	ld, err := b.Leader(ctx, "e")
	require.NoError(t, err)
	assert.Equal(t, la.Term(), ld.Term)
	// The restarted node came back empty (no persistence here), and an
	// extension never creates a key: the leadership now lives on two
	// nodes, and one more lost would lose it. A new term takes all three.
	require.NoError(t, c.Nodes[0].Restart())
	require.NoError(t, la.Resign(ctx))
	// (Its term need not exceed the last one here: a node that restarts
	// without its data may have been the one of the quorum that accepted
	// the last term — the fencing argument's stated exception, as for
	// Redlock's exclusion itself.)
	la, err = a.Campaign(ctx, "e", "a", core.CampaignTTL(ttl))
	require.NoError(t, err)
	// The campaign returned at a quorum: let the third node's grant land
	// (node 0's, say, on a connection redialed after the restart), or the
	// freeze below could leave the leadership on one node.
	poll.Eventually(t, 5*time.Second, "the leadership on every node", func() bool {
		for _, n := range c.Nodes {
			if v, err := n.Do("EXISTS", engine.ElectionKey("e")); err != nil || v != "1" {
				return false
			}
		}
		return true
	})
	require.NoError(t, c.Nodes[1].Freeze())
	deadline = time.Now().Add(2*ttl + 100*time.Millisecond)
	poll.Eventually(t, 3*ttl, "two ttls pass", func() bool { return time.Now().After(deadline) })
	require.False(t, la.Lock().IsLost(), "lost with one node frozen: %v", la.Err())
	require.NoError(t, c.Nodes[1].Thaw())
	require.NoError(t, a.Close())
	lb, err := b.Campaign(ctx, "e", "b", core.CampaignWait(5*time.Second))
	require.NoError(t, err, "Close resigned")
	assert.Greater(t, lb.Term(), la.Term())
	require.NoError(t, lb.Resign(ctx))
	assertOnlyCounters(t, c)
}

// TestElectionLeadershipLost: a leader whose key is deleted everywhere
// learns it at its next extension (Lost), and the observer sees the change.
func TestElectionLeadershipLost(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	a := newClient(t, c)
	ctx := context.Background()
	la, err := a.Campaign(ctx, "e", "a", core.CampaignTTL(300*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, c.FlushAll())
	select {
	case <-la.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the leadership was never found lost")
	}
	require.ErrorIs(t, la.Err(), core.ErrLost)
	_, err = a.Leader(ctx, "e")
	require.ErrorIs(t, err, core.ErrNoLeader)
	assertOnlyCounters(t, c)
}

// TestElectionBadInput: every bad argument is refused naming it, and
// changes nothing.
func TestElectionBadInput(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 1)
	cl := newClient(t, c)
	ctx := context.Background()
	argErr := func(err error, arg string) {
		t.Helper()
		var ae *core.ArgumentError
		require.ErrorAs(t, err, &ae)
		assert.Equal(t, arg, ae.Arg, "%v", err)
		assert.ErrorIs(t, err, core.ErrInvalidArgument)
	}
	_, err := cl.Campaign(ctx, "", "v")
	argErr(err, "name")
	_, err = cl.Campaign(ctx, "e", "")
	argErr(err, "value")
	_, err = cl.Campaign(ctx, "e", strings.Repeat("x", core.MaxElectionValue+1))
	argErr(err, "value")
	_, err = cl.Campaign(ctx, "e", "\xff")
	argErr(err, "value")
	_, err = cl.Campaign(ctx, "e", "v", core.CampaignTTL(0))
	argErr(err, "ttl")
	_, err = cl.Campaign(ctx, "e", "v", core.CampaignWait(-time.Second))
	argErr(err, "wait")
	_, err = cl.Campaign(ctx, "e", "v", nil)
	argErr(err, "opts")
	_, err = cl.Campaign(nil, "e", "v") //nolint:staticcheck // the nil ctx is the bad input
	argErr(err, "ctx")
	_, err = cl.Leader(ctx, "")
	argErr(err, "name")
	_, err = cl.Observe(ctx, "")
	argErr(err, "name")
	_, err = cl.Observe(ctx, "e", core.ObservePoll(-time.Second))
	argErr(err, "poll")
	_, err = cl.Leader(ctx, "e")
	require.ErrorIs(t, err, core.ErrNoLeader)
	c.AssertNoKeys(t)
}

// TestElectionTermOnLateHolder: a node that grants a campaign after its
// fence round (frozen past the node timeout, then thawed) holds the key
// without the term; with a node of the fence round's quorum killed, the
// leader is held on that node and one that shows the term. leader() names
// a leader only where a quorum shows its term, so the leader's extension
// writes the term on the late holder, and leader() names it again.
func TestElectionTermOnLateHolder(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	a, b := newClient(t, c), newClient(t, c)
	ctx := context.Background()
	const ttl = 1500 * time.Millisecond
	// Connections open first, so that the campaign's command reaches
	// node 2's socket before it is frozen.
	_, err := a.Leader(ctx, "e")
	require.ErrorIs(t, err, core.ErrNoLeader)
	require.NoError(t, c.Nodes[2].Freeze())
	la, err := a.Campaign(ctx, "e", "a", core.CampaignTTL(ttl))
	require.NoError(t, err)
	// Past the node timeout: node 2's grant is no answer to the campaign
	// but runs once thawed.
	deadline := time.Now().Add(3 * locktest.NodeTimeout)
	poll.Eventually(t, time.Second, "the node timeout passes", func() bool { return time.Now().After(deadline) })
	require.NoError(t, c.Nodes[2].Thaw())
	poll.Eventually(t, 5*time.Second, "node 2 holds the leader's key", func() bool {
		v, err := c.Nodes[2].Do("EXISTS", engine.ElectionKey("e"))
		return err == nil && v == "1"
	})
	require.NoError(t, c.Nodes[0].Kill())
	poll.Eventually(t, 10*time.Second, "leader() names a once the extension wrote its term on node 2", func() bool {
		ld, err := b.Leader(ctx, "e")
		return err == nil && ld.Term == la.Term()
	})
	require.False(t, la.Lock().IsLost(), "lost: %v", la.Err())
	require.NoError(t, la.Resign(ctx))
}
