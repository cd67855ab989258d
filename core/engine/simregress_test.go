package engine

// Engine bugs the simulation found, each kept as a regression test (they
// failed before the engine was fixed):
//
//	go test -run TestSimBug -v ./core/engine/

import (
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// manualEnv is a clock the test moves by hand.
type manualEnv struct {
	now time.Duration
	r   *mrand.Rand
}

func (m *manualEnv) Now() time.Duration { return m.now }
func (m *manualEnv) Random(p []byte) {
	for i := range p {
		p[i] = byte(m.r.Uint32())
	}
}

// drainActions returns the actions pending.
func drainActions(e *Engine) []Action {
	var as []Action
	for {
		a, ok := e.Next()
		if !ok {
			return as
		}
		if a.Kind == ActWrite {
			a.Data = append([]byte(nil), a.Data...)
		}
		as = append(as, a)
	}
}

// TestSimBugExtendShorterTTL: Extend(lock, ttl) with a ttl shorter than the
// validity the lock has left. The round's PEXPIRE shortens the keys as soon
// as a node runs it, but the engine keeps the old, longer validUntil while
// the round is in flight, and keeps it for good when the round fails as
// unavailable ("the lock stays held until its current validity ends").
// LockInfo.Validity then promises time the keys no longer have, and another
// client acquires the resource inside it. (The simulation's default
// workload extends only to ttls at least the lock's, which cannot shorten
// the validity; the "shrink" profile does, and overlaps: see
// TestSimBugExtendShorterTTLSeed and ...Sweep.)
//
// A fix: when an extension round starts, lower the validity at once to
// min(validUntil, validUntil(start, ttl)): from then on a quorum's keys are
// only known to live until start + ttl.
func TestSimBugExtendShorterTTL(t *testing.T) {
	env := &manualEnv{r: mrand.New(mrand.NewPCG(1, 2))}
	nodes := []Node{{Network: "tcp", Addr: "a:1"}, {Network: "tcp", Addr: "b:1"}, {Network: "tcp", Addr: "c:1"}}
	e, err := New(Config{Nodes: nodes, NodeTimeout: 500 * time.Millisecond}, env)
	require.NoError(t, err)

	// Acquire with a 1 s ttl: every node opens, answers PING and grants.
	_, err = e.Acquire(AcquireRequest{Resource: "r", TTL: time.Second})
	require.NoError(t, err)
	var conns []ConnID
	for _, a := range drainActions(e) {
		if a.Kind == ActOpen {
			conns = append(conns, a.Conn)
		}
	}
	require.Len(t, conns, 3)
	for _, c := range conns {
		e.Opened(c)
		e.Received(c, []byte("+PONG\r\n"))
	}
	drainActions(e)
	var lock LockID
	for _, c := range conns {
		e.Received(c, []byte("+OK\r\n"))
		for _, a := range drainActions(e) {
			if a.Kind == ActDone {
				require.NoError(t, a.Err)
				lock = a.Lock
			}
		}
	}
	require.NotZero(t, lock)
	info, _ := e.Lock(lock)
	t.Logf("acquired: validity %v", info.Validity)

	// 10 ms later, extend to 100 ms. Every node runs the script at once —
	// its PEXPIRE makes the key expire at 110 ms — but the replies are slow.
	env.now += 10 * time.Millisecond
	_, err = e.Extend(lock, 100*time.Millisecond)
	require.NoError(t, err)
	writes := 0
	for _, a := range drainActions(e) {
		if a.Kind == ActWrite && (strings.Contains(string(a.Data), ExtendSHA) || strings.Contains(string(a.Data), extendSrc)) {
			writes++
		}
	}
	require.Equal(t, 3, writes)
	keysExpireAt := env.now + 100*time.Millisecond

	// At 160 ms the keys are gone on every node; another client's SET NX
	// would succeed everywhere.
	env.now += 150 * time.Millisecond
	info, _ = e.Lock(lock)
	assert.LessOrEqual(t, info.Validity, max(0, keysExpireAt-env.now),
		"while the extension is in flight the engine promises %v more, but the keys expired %v ago", info.Validity, env.now-keysExpireAt)

	// The round times out (no replies): unavailable, and the engine keeps
	// the old validity for good.
	env.now += 400 * time.Millisecond
	e.Tick()
	for _, a := range drainActions(e) {
		if a.Kind == ActDone {
			t.Logf("extension: %v", a.Err)
		}
	}
	info, _ = e.Lock(lock)
	assert.Zero(t, info.Validity, "after the failed extension the engine still promises %v; the keys expired %v ago", info.Validity, env.now-keysExpireAt)
}

// TestSimBugExtendShorterTTLSeed is the same bug found by the simulation:
// seed 82 of the shrink profile (no client pauses), 2,000 operations.
// Replay it with
//
//	go test ./core/engine/ -run 'TestSimReplay$' -count=1 -v -args -sim.seed=82 -sim.profile=shrink -sim.ops=2000 -sim.trace
//
// Five nodes. c1 acquires r1 at 1.9621 s (ttl 38 ms; granted by n0, n2, n4):
// valid until 1.9923 s. n4 crashes and comes back with its data, answering
// LOADING for 5 ms. At 1.9658 s c1 extends to 19 ms: n0 and n2 run the
// script at once (their keys now expire at about 1.985 s), n3 has no key
// (0), n4 answers LOADING and n1 times out, so the round ends unavailable
// at 1.9733 s — "the lock stays held until its current validity ends",
// 1.9923 s. At 1.9859 s c4 acquires r1: 6.4 ms inside the validity c1 was
// promised.
//
// (The seed is tied to the simulation's random stream; if the simulation
// changes, TestSimBugExtendShorterTTLSweep still fails and a replay of a
// seed it names shows the bug.)
func TestSimBugExtendShorterTTLSeed(t *testing.T) {
	r, err := runSim(82, "shrink", 2000, nil)
	require.NoError(t, err)
	assert.Zero(t, r.counts["overlap"], r.report)
}

// TestSimBugExtendShorterTTLSweep: the shrink profile over 200 seeds of 2,000
// operations with -sim.long (2 of them overlapped before the fix), 40 of
// 1,000 otherwise: half the seeds of TestSimSafety extend to shorter ttls
// too.
func TestSimBugExtendShorterTTLSweep(t *testing.T) {
	seeds, ops := 40, 1000
	switch {
	case *simLong:
		seeds, ops = 200, 2000
	case simRace:
		seeds, ops = 4, 500
	}
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return "shrink" }) {
		assert.Zero(t, r.counts["overlap"], "seed %d: %s\nreplay: %s", r.seed, r.report, replayCmd(r, ops))
	}
}

// TestSimBugDoubleClose (minor, protocol): the engine can emit ActClose
// twice for one connection in one input. When the host reports Opened(c)
// late — after c's connect deadline, e.g. from a host that was paused —
// begin() first fires the deadline (node.fail: ActClose c, and the failed
// attempt's cleanup opens a new connection), then Opened finds c unknown
// and closes it again ("not wanted any more"). A host that looks the
// connection up and fails on an unknown id breaks; PROTOCOL.md says only
// that events about a closed connection are ignored, not that a CLOSE can
// repeat. (It happened about once per 8,000 operations in the default
// test; the simulation now reports a second ActClose as a violation.) Fix:
// in Opened, emit the ActClose only for a connection id the engine has not
// closed already.
func TestSimBugDoubleClose(t *testing.T) {
	env := &manualEnv{r: mrand.New(mrand.NewPCG(3, 4))}
	e, err := New(Config{Nodes: []Node{{Network: "tcp", Addr: "a:1"}}, NodeTimeout: 50 * time.Millisecond}, env)
	require.NoError(t, err)
	_, err = e.Acquire(AcquireRequest{Resource: "r", TTL: time.Second})
	require.NoError(t, err)
	var conn ConnID
	for _, a := range drainActions(e) {
		if a.Kind == ActOpen {
			conn = a.Conn
		}
	}
	require.NotZero(t, conn)
	env.now += 60 * time.Millisecond // the host reports the connection late
	e.Tick()                         // after the engine gave up on it
	e.Opened(conn)
	closes := 0
	for _, a := range drainActions(e) {
		if a.Kind == ActClose && a.Conn == conn {
			closes++
		}
	}
	assert.Equal(t, 1, closes, "ActClose for conn %d", conn)
}
