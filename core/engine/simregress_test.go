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
		if a.Kind == ActWrite && strings.Contains(string(a.Data), ExtendSHA) {
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
// seed 96 of the shrink profile, 300 operations. Replay it with
//
//	go test ./core/engine/ -run 'TestSimReplay$' -count=1 -v -args -sim.seed=96 -sim.profile=shrink -sim.ops=300 -sim.trace
//
// Three nodes. c0 acquires lk:r0 at 3.877 s with a 153 ms ttl on n1 and n2
// (n0 is frozen): valid until 4.020 s. At 3.917 s it extends to 68 ms: n1
// runs the script at once (its key now expires at about 3.985 s), n0 has
// no key (0), n2 is frozen again and times out, so the round ends
// unavailable at 3.930 s, "the lock stays held until its current validity
// ends" — 4.020 s. n2 thaws at 3.933 s and runs the script late (its key
// expires at about 4.001 s). At 3.987 s c2 acquires lk:r0 on n0 and n1:
// 33 ms inside the validity c0 was promised.
//
// (The seed is tied to the simulation's random stream; if the simulation
// changes, TestSimBugExtendShorterTTLSweep still fails and a replay of the
// first seed it names shows the bug.)
func TestSimBugExtendShorterTTLSeed(t *testing.T) {
	r, err := runSim(96, "shrink", 300, nil)
	require.NoError(t, err)
	assert.Zero(t, r.counts["overlap"], r.report)
}

// TestSimBugExtendShorterTTLSweep: the shrink profile over 200 seeds of 2,000
// operations.
func TestSimBugExtendShorterTTLSweep(t *testing.T) {
	for _, r := range runSeeds(t, 1, 200, 2000, func(int) string { return "shrink" }) {
		assert.Zero(t, r.counts["overlap"], "seed %d: %s\nreplay: %s", r.seed, r.report, replayCmd(r, 2000))
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
// repeat. The simulation tolerates it (simStats.doubleCloses counts it:
// about one per 2,000 operations in the default test). Fix: in Opened, emit
// the ActClose only for a connection id the engine has not closed already,
// or document that CLOSE may name an already closed connection.
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
	e.Opened(conn)
	closes := 0
	for _, a := range drainActions(e) {
		if a.Kind == ActClose && a.Conn == conn {
			closes++
		}
	}
	assert.Equal(t, 1, closes, "ActClose for conn %d", conn)
}
