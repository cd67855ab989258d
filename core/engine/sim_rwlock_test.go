package engine

// The read-write lock in the simulation: the model of its scripts, its
// workload (readers and writers among the mutex's acquires), its invariant
// — never a valid writer together with another valid writer or a valid
// reader — with two negative controls that must break it (the reader check
// removed from the writer's script; a quorum of N/2), and a starvation
// check (a writer waiting behind a continuous stream of readers gets the
// lock within its wait).

import (
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// rwConfig is a profile's read-write workload.
type rwConfig struct {
	p, readP float64 // share of acquires on the read-write lock; of them, readers
	// noReaderCheck: control (a): the model's writer admission ignores the
	// readers.
	noReaderCheck bool
	// starve: one writer (client 0's task 0) among readers that acquire
	// back to back; every wait of the writer must end with the lock.
	starve bool
	// noIntent: the starvation control: the model's reader admission
	// ignores the writers' intents.
	noIntent bool
}

// rwStats counts the read-write workload.
type rwStats struct {
	reads, writes           int // acquired
	readFails, writeFails   int // not acquired or unavailable
	shared                  int // reader intervals that overlapped another reader's
	writerWaits, maxWaitRes time.Duration
	starveWrites            int // the starvation profile's writer acquisitions
}

func (r *rwStats) add(o rwStats) {
	r.reads += o.reads
	r.writes += o.writes
	r.readFails += o.readFails
	r.writeFails += o.writeFails
	r.shared += o.shared
	r.starveWrites += o.starveWrites
	r.maxWaitRes = max(r.maxWaitRes, o.maxWaitRes)
}

// rwProfile sets up the read-write profiles; false for an unknown one.
func (c *simConfig) rwProfile(profile string, rng *mrand.Rand) bool {
	switch profile {
	case "rw":
		// The default profile's faults, with features13's workload (mutex
		// acquires, fences, tokens, inspections) on the same names as the
		// read-write locks: their keys must not meet.
		c.faultEvery = c.pick(rng, c.maxTTL/2, 3*c.maxTTL)
		c.closeUnhealed = rng.IntN(3) == 0
		c.shrinkExtend = rng.IntN(2) == 0
		c.features13(rng)
		c.rw = rwConfig{p: 0.7, readP: []float64{0.5, 0.8}[rng.IntN(2)]}
	case "rwcalm":
		c.spikeP = 0
		c.strict = true
		c.features13(rng)
		c.rw = rwConfig{p: 0.7, readP: 0.7}
	case "rwnoreader", "rwfull":
		// Control (a): the writer's script without its reader check; its
		// twin rwfull keeps it.
		c.nodes, c.clients, c.tasks = 3, 3, 2
		c.resources = []string{"r0"}
		c.waitP, c.holdMin = 0.9, 0.3
		c.maxWait = 2 * c.maxTTL
		c.rw = rwConfig{p: 1, readP: 0.5, noReaderCheck: profile == "rwnoreader"}
	case "rwhalfquorum", "rwfullquorum":
		// Control (b): a quorum of N/2; its twin keeps N/2+1.
		c.nodes = 2 + rng.IntN(4)
		c.clients, c.tasks = 3, 2
		c.resources = []string{"r0"}
		c.waitP, c.holdMin = 0.9, 0.3
		c.maxWait = 2 * c.maxTTL
		c.halfQuorum = profile == "rwhalfquorum"
		c.rw = rwConfig{p: 1, readP: 0.5}
	case "rwwaitconnect", "rwbounded":
		// The time-bound control: readers and writers contending with a
		// wait while nodes freeze, crash and are cut off often; in
		// rwwaitconnect the engine waits for a connection's handshake
		// past the node timeout, so that an acquire with a wait waits for
		// a frozen node to thaw. Its twin rwbounded keeps the deadline.
		c.nodes = 3 + 2*rng.IntN(2)
		c.clients, c.tasks = 3, 2
		c.resources = []string{"r0"}
		c.waitP, c.holdMin = 0.9, 0.3
		c.maxWait = 2 * c.maxTTL
		c.faultEvery = c.pick(rng, c.maxTTL/2, 2*c.maxTTL)
		c.wFreeze, c.wCrash, c.wPartition, c.wReset, c.wPause = 4, 2, 2, 1, 0
		c.noConnectDeadline = profile == "rwwaitconnect"
		c.rw = rwConfig{p: 1, readP: 0.5}
	case "rwstarve", "rwstarvenointent":
		// One writer among readers acquiring back to back (no think time,
		// each holding half its ttl or more, never extending): without
		// the writer's intent the readers' intervals would chain forever.
		c.nodes, c.clients, c.tasks = 3, 3, 3
		c.resources = []string{"r0"}
		c.spikeP, c.splitP = 0, 0
		c.thinkMax = 0
		c.holdMin, c.overholdP, c.autoExtendP, c.extendP, c.cancelP, c.forgetP = 0.5, 0, 0, 0, 0, 0
		c.waitP = 1
		c.maxWait = 2 * c.maxTTL
		c.rw = rwConfig{p: 1, readP: 1, starve: true, noIntent: profile == "rwstarvenointent"}
	default:
		return false
	}
	return true
}

// rwMode makes an acquire one of a read-write lock when the profile says
// so (drawing nothing otherwise, so that the other profiles replay).
func (t *simTask) rwMode(req *AcquireRequest) bool {
	s := t.s()
	cfg := &s.cfg
	if cfg.rw.p == 0 || !s.chance(cfg.rw.p) {
		return false
	}
	req.Mode = ModeWrite
	if s.chance(cfg.rw.readP) {
		req.Mode = ModeRead
	}
	if cfg.rw.starve {
		req.Mode = ModeRead
		if t.c.id == 0 && t.id == 0 {
			req.Mode = ModeWrite
			req.Wait = 2*cfg.maxTTL + 200*time.Millisecond
		}
		return true
	}
	if cfg.fenceP > 0 && s.chance(cfg.fenceP) {
		req.Fence = true
	}
	return true
}

// rwAcquireDone counts an acquire of a read-write lock, and in the
// starvation profile fails the run when the writer's wait ran out.
func (c *simClient) rwAcquireDone(op *simOp, a Action) {
	if op.mode == ModeExclusive {
		return
	}
	st := &c.s.stats.rw
	canceled := errors.Is(a.Err, ErrCanceled) || errors.Is(a.Err, ErrClosed)
	switch {
	case a.Err == nil && op.mode == ModeRead:
		st.reads++
	case a.Err == nil:
		st.writes++
	case canceled:
	case op.mode == ModeRead:
		st.readFails++
	default:
		st.writeFails++
	}
	if !c.s.cfg.rw.starve || op.mode != ModeWrite || canceled || c.s.stopping {
		return
	}
	took := c.clock.at(c.s.now) - op.startC
	st.maxWaitRes = max(st.maxWaitRes, took)
	if a.Err != nil {
		c.s.violate("starved", "c%d: the writer waited %v behind the readers and gave up: %v", c.id, took, a.Err)
		return
	}
	st.starveWrites++
}

// rwIntentTTL is the longest a writer's intent lives in this run (0 without
// read-write locks).
func (s *sim) rwIntentTTL() time.Duration {
	if s.cfg.rw.p == 0 {
		return 0
	}
	return rwIntentTTL(s.cfg.nodeTO[1])
}

// isRWKey reports a read-write lock's key (its writer key) in the checker.
func isRWKey(key string) bool { return strings.HasSuffix(key, rwSuffix) }

// checkRWOverlaps: on a read-write lock, no writer's interval overlaps any
// other interval, and readers' intervals may overlap each other. In start
// order, a segment overlaps an earlier-starting one exactly when it starts
// before the latest end among them: a writer is checked against the latest
// end of all, a reader against the latest end of the writers.
func (k *checker) checkRWOverlaps(key string) {
	type seg struct {
		segment
		h *heldLock
	}
	var segs []seg
	for _, h := range k.held[key] {
		for _, s := range h.segs {
			if s.end > s.start {
				segs = append(segs, seg{s, h})
			}
		}
	}
	sort.SliceStable(segs, func(i, j int) bool { return segs[i].start < segs[j].start })
	var lastAny, lastW, lastR *seg
	for i := range segs {
		s := &segs[i]
		if s.h.mode == ModeWrite {
			if lastAny != nil && s.start < lastAny.end && lastAny.h != s.h {
				k.violate("overlap", fmt.Sprintf("rw %s: writer %s held [%v, %v) while %s %s held [%v, %v)",
					key, s.h.owner(), s.start, s.end, lastAny.h.mode, lastAny.h.owner(), lastAny.start, lastAny.end))
			}
		} else {
			if lastW != nil && s.start < lastW.end && lastW.h != s.h {
				k.violate("overlap", fmt.Sprintf("rw %s: reader %s held [%v, %v) while writer %s held [%v, %v)",
					key, s.h.owner(), s.start, s.end, lastW.h.owner(), lastW.start, lastW.end))
			}
			if lastR != nil && s.start < lastR.end && lastR.h != s.h && s.h.c.s != nil {
				s.h.c.s.stats.rw.shared++
			}
			if lastR == nil || s.end > lastR.end {
				lastR = s
			}
		}
		if s.h.mode == ModeWrite && (lastW == nil || s.end > lastW.end) {
			lastW = s
		}
		if lastAny == nil || s.end > lastAny.end {
			lastAny = s
		}
	}
}

// checkRWFences: on a read-write lock, in lock order (validity starts), a
// writer's fence exceeds every earlier fenced reader's and writer's, and a
// reader's every earlier writer's; readers among themselves are unordered.
// As for the mutex, pairs with a node's data loss between them are excused.
func (k *checker) checkRWFences(key string) {
	var fs []*heldLock
	for _, h := range k.held[key] {
		if h.fenced {
			fs = append(fs, h)
		}
	}
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].segs[0].start < fs[j].segs[0].start })
	for j, b := range fs {
		compared := false
		for i := j - 1; i >= 0; i-- {
			a := fs[i]
			if a.mode == ModeRead && b.mode == ModeRead {
				continue
			}
			if k.excuseLoss && k.lostBetween(a.segs[0].start-k.lossSpan, b.segs[0].start) {
				k.fenceSkips++
				break // and every earlier one
			}
			compared = true
			if b.fence <= a.fence {
				k.violate("fence", fmt.Sprintf("rw %s: %s %s acquired at %v with fence %d, after %s %s acquired at %v with fence %d",
					key, b.mode, b.owner(), b.segs[0].start, b.fence, a.mode, a.owner(), a.segs[0].start, a.fence))
				break
			}
		}
		if compared {
			k.fencePairs++
		}
	}
}

// checkMemberLeftovers is checkLeftovers for a sorted set's live members:
// each is excused as a key would be.
func (s *sim) checkMemberLeftovers(n *simNode, dbi int, key string, k *simKey) {
	now := n.ms()
	for _, m := range sortedKeys(k.members) {
		mk := k.members[m]
		if mk.expireMs < now {
			continue
		}
		owner := s.clients[mk.writer]
		switch {
		case mk.late:
			s.stats.leftoverLate++
		case owner.trouble[n.idx] >= mk.writeAt:
			s.stats.leftoverTrouble++
		case owner.forgotten[m]:
			s.stats.leftoverForgotten++
			continue
		default:
			s.violate("leftover", "n%d db %d: member %s of %q written by c%d at %v is left behind with no fault to excuse it",
				n.idx, dbi, m, key, mk.writer, mk.writeAt)
			continue
		}
		if s.cfg.strict {
			s.violate("leftover", "n%d: member %s of %q left behind in a run without faults", n.idx, m, key)
		}
	}
}

// ---- the model of the scripts (rw_*.lua) ----

func init() {
	simScripts = append(simScripts,
		simScript{bit: rwAcquireScript.bit, src: rwAcquireSrc, sha: RWAcquireSHA, keys: 1, args: 2, name: "rw_acquire", run: rwRun(simRWAcquire)},
		simScript{bit: rwExtendScript.bit, src: rwExtendSrc, sha: RWExtendSHA, keys: 1, args: 2, name: "rw_extend", run: rwRun(simRWExtend)},
		simScript{bit: rwReleaseScript.bit, src: rwReleaseSrc, sha: RWReleaseSHA, keys: 1, args: 2, name: "rw_release", run: rwRun(simRWRelease)},
		simScript{bit: rwFenceScript.bit, src: rwFenceSrc, sha: RWFenceSHA, keys: 1, args: 2, name: "rw_fence", run: rwRun(simRWFence)},
	)
}

// rwRun adapts a model script over its database and KEYS then ARGV (rest).
func rwRun(f func(n *simNode, c *simConn, db map[string]*simKey, rest [][]byte, out []byte) []byte) func(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	return func(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
		rest := make([][]byte, 0, len(keys)+len(args))
		return f(n, c, n.db(c.db), append(append(rest, keys...), args...), out)
	}
}

// rwKeys derives the readers, intents and fence keys from the writer key,
// as the scripts do.
func rwKeys(w []byte) (rk, ik, fk []byte) {
	base := string(w[:len(w)-2])
	return []byte(base + ":r"), []byte(base + ":i"), []byte(base + "\xfffence")
}

// prune removes a sorted set's members whose score has passed (score <=
// now), as ZREMRANGEBYSCORE -inf now; an emptied set is deleted.
func (n *simNode) prune(db map[string]*simKey, key []byte) *simKey {
	k := n.lookup(db, key)
	if k == nil {
		return nil
	}
	now := n.ms()
	for m, mk := range k.members {
		if mk.expireMs <= now {
			delete(k.members, m)
		}
	}
	if len(k.members) == 0 {
		delete(db, string(key))
		return nil
	}
	return k
}

// zadd sets a member's score (creating the set).
func (n *simNode) zadd(c *simConn, db map[string]*simKey, key []byte, member string, score int64) {
	k := n.lookup(db, key)
	if k == nil {
		k = &simKey{expireMs: -1, members: map[string]*simKey{}}
		n.wrote(c, k)
		db[string(key)] = k
	}
	m := &simKey{val: member, expireMs: score}
	n.wrote(c, m)
	k.members[member] = m
}

// fit sets the set's expiry to its latest member's (PEXPIREAT the highest
// score); an empty set is gone.
func (n *simNode) fit(db map[string]*simKey, key []byte) {
	k := n.lookup(db, key)
	if k == nil {
		return
	}
	if len(k.members) == 0 {
		delete(db, string(key))
		return
	}
	last := int64(-1)
	for _, m := range k.members {
		last = max(last, m.expireMs)
	}
	k.expireMs = last
}

func simRWAcquire(n *simNode, c *simConn, db map[string]*simKey, rest [][]byte, out []byte) []byte {
	w, token := rest[0], string(rest[1])
	f := strings.Fields(string(rest[2]))
	if len(f) != 2 && len(f) != 4 || f[0] != "r" && f[0] != "w" || (f[0] == "r") != (len(f) == 2) {
		return append(out, "-ERR Error running script: bad arguments\r\n"...)
	}
	ttl, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil || ttl <= 0 {
		return append(out, "-ERR Error running script: bad ms\r\n"...)
	}
	rk, ik, fk := rwKeys(w)
	now := n.ms()
	readers := n.prune(db, rk)
	intents := n.prune(db, ik)
	if n.lookup(db, w) != nil {
		return appendInt(out, -1)
	}
	if f[0] == "r" {
		if intents != nil && !n.s.cfg.rw.noIntent {
			return appendInt(out, -2)
		}
		n.zadd(c, db, rk, token, now+ttl)
		n.fit(db, rk)
	} else {
		ittl, iid := f[2], f[3]
		if readers != nil && !n.s.cfg.rw.noReaderCheck {
			if iid != "-" {
				ms, err := strconv.ParseInt(ittl, 10, 64)
				if err != nil {
					return append(out, "-ERR Error running script: bad intent ms\r\n"...)
				}
				n.zadd(c, db, ik, iid, now+ms)
				n.fit(db, ik)
				return appendInt(out, -3)
			}
			return appendInt(out, -2)
		}
		k := &simKey{val: token, expireMs: now + ttl}
		n.wrote(c, k)
		k.afterRelease = c.releasedHere(rest[1])
		db[string(w)] = k
		if iid != "-" && intents != nil && intents.members[iid] != nil {
			delete(intents.members, iid)
			n.fit(db, ik)
		}
	}
	cur, ok := n.counter(db, fk)
	if !ok {
		return append(out, "$-1\r\n"...)
	}
	return appendInt(out, max(cur, n.fenceFloor()))
}

func simRWExtend(n *simNode, c *simConn, db map[string]*simKey, rest [][]byte, out []byte) []byte {
	ms, err := strconv.ParseInt(string(rest[2]), 10, 64)
	if err != nil {
		return append(out, "-ERR Error running script: bad ms\r\n"...)
	}
	if k := n.lookup(db, rest[0]); k != nil && k.val == string(rest[1]) {
		if n.pttl(k) < ms {
			n.pexpire(c, rest[0], ms)
		}
		return appendInt(out, 1)
	}
	rk, _, _ := rwKeys(rest[0])
	now := n.ms()
	k := n.lookup(db, rk)
	if k == nil {
		return appendInt(out, 0)
	}
	m := k.members[string(rest[1])]
	if m == nil || m.expireMs <= now {
		return appendInt(out, 0)
	}
	if now+ms > m.expireMs {
		m.expireMs = now + ms
		n.wrote(c, m)
		n.fit(db, rk)
	}
	return appendInt(out, 1)
}

func simRWRelease(n *simNode, c *simConn, db map[string]*simKey, rest [][]byte, out []byte) []byte {
	w, token := rest[0], string(rest[1])
	c.relToks[c.relNext%4] = token
	c.relNext++
	rk, ik, _ := rwKeys(w)
	readers := n.prune(db, rk)
	intents := n.prune(db, ik)
	switch {
	case strings.HasPrefix(token, "i:"):
		if intents == nil || intents.members[token[2:]] == nil {
			return appendInt(out, 1)
		}
		delete(intents.members, token[2:])
		n.fit(db, ik)
	default:
		if k := n.lookup(db, w); k != nil && k.val == token {
			delete(db, string(w))
			break
		}
		if readers == nil || readers.members[token] == nil {
			return appendInt(out, 0)
		}
		delete(readers.members, token)
		n.fit(db, rk)
	}
	return appendInt(out, 1+n.publish(ReleasedChannel(string(w)), string(rest[2])))
}

func simRWFence(n *simNode, c *simConn, db map[string]*simKey, rest [][]byte, out []byte) []byte {
	w, token := rest[0], string(rest[1])
	rk, _, fk := rwKeys(w)
	if k := n.lookup(db, w); k == nil || k.val != token {
		r := n.lookup(db, rk)
		if r == nil || r.members[token] == nil || r.members[token].expireMs <= n.ms() {
			return appendInt(out, 0)
		}
	}
	fence, err := strconv.ParseInt(string(rest[2]), 10, 64)
	if err != nil {
		return append(out, "-ERR Error running script: bad fence\r\n"...)
	}
	cur, ok := n.counter(db, fk)
	if !ok {
		return append(out, "-ERR Error running script: attempt to compare nil with number\r\n"...)
	}
	if fence < cur {
		return appendInt(out, -1)
	}
	if fence > cur {
		k := &simKey{val: string(rest[2]), expireMs: -1}
		n.wrote(c, k)
		db[string(fk)] = k
	}
	return appendInt(out, 1)
}

// ---- the tests ----

// TestSimRWSafety: seeds of the read-write workload (with faults, and a
// fifth without, where nothing may be left behind), every check, no
// violation; readers must have shared the lock.
func TestSimRWSafety(t *testing.T) {
	seeds, ops := 40, 4000
	if simRace {
		seeds, ops = 4, 3000
	}
	if *simLong {
		seeds, ops = 400, 20000
	}
	results := runSeeds(t, 1, seeds, ops, func(i int) string {
		if i%5 == 4 {
			return "rwcalm"
		}
		return "rw"
	})
	var total simStats
	pairs := 0
	for _, r := range results {
		total.add(r.stats)
		pairs += r.fencePairs
		assert.Zero(t, r.violations, "seed %d (%s): %s\nreplay: %s", r.seed, r.profile, r.report, replayCmd(r, ops))
	}
	rw := total.rw
	t.Logf("%d seeds: %d readers and %d writers acquired (%d and %d not), %d reader intervals shared with another reader; %d mutex acquisitions beside them; %d fenced pairs compared; %d faults",
		seeds, rw.reads, rw.writes, rw.readFails, rw.writeFails, rw.shared, total.acquired-rw.reads-rw.writes, pairs, total.faults)
	assert.Positive(t, rw.writes, "no writer ever acquired")
	assert.Positive(t, rw.shared, "readers never held the lock together")
	assert.Positive(t, pairs, "no fences compared")
}

// TestSimRWControlNoReaderCheck (a): the model's writer admission without
// its reader check: writers overlap readers in every seed; the twin with
// the check is clean.
func TestSimRWControlNoReaderCheck(t *testing.T) { controlRun(t, "rwnoreader", "rwfull", 3000) }

// TestSimRWControlHalfQuorum (b): a quorum of N/2: a reader quorum and a
// writer quorum need not meet.
func TestSimRWControlHalfQuorum(t *testing.T) { controlRun(t, "rwhalfquorum", "rwfullquorum", 3000) }

// TestSimRWControlWaitOnConnect: the check that every operation ends
// within its bound (an acquire within its wait + 2 node timeouts) catches
// an engine that lets an acquire wait for a node's connection past the
// node timeout (a frozen node's handshake): rwwaitconnect reports such
// hangs; its twin rwbounded, the same workload with the deadline, none.
func TestSimRWControlWaitOnConnect(t *testing.T) {
	seeds, ops := 4, 2000
	if simRace {
		seeds, ops = 2, 1500
	}
	caught, hangs := 0, 0
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return "rwwaitconnect" }) {
		hangs += r.counts["hang"]
		if strings.Contains(r.report, ": acquire op ") {
			caught++ // an acquire outlived its bound, not only a Close
		}
	}
	t.Logf("rwwaitconnect: %d hangs; an acquire outlived its bound in %d of %d seeds", hangs, caught, seeds)
	assert.GreaterOrEqual(t, caught, (seeds+1)/2, "the bound check must catch acquires waiting for a node's handshake in most seeds")
	acquired := 0
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return "rwbounded" }) {
		acquired += r.stats.acquired
		assert.Zero(t, r.violations, "seed %d (%s): %s\nreplay: %s", r.seed, r.profile, r.report, replayCmd(r, ops))
	}
	t.Logf("rwbounded (its twin with the deadline): no violation among %d acquisitions", acquired)
}

// TestSimRWStarvation: a writer waiting behind readers that acquire back
// to back gets the lock within its wait (2 × the longest ttl + 200 ms),
// every time; without the intent the check fails (its control).
func TestSimRWStarvation(t *testing.T) {
	seeds, ops := 12, 3000
	if simRace {
		seeds, ops = 3, 1500
	}
	writes := 0
	var worst time.Duration
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return "rwstarve" }) {
		writes += r.stats.rw.starveWrites
		worst = max(worst, r.stats.rw.maxWaitRes)
		assert.Zero(t, r.violations, "seed %d (rwstarve): %s\nreplay: %s", r.seed, r.report, replayCmd(r, ops))
		assert.Positive(t, r.stats.rw.starveWrites, "seed %d: the writer never acquired", r.seed)
		assert.Positive(t, r.stats.rw.shared, "seed %d: the readers never overlapped: no stream to starve the writer", r.seed)
	}
	t.Logf("rwstarve: %d writer acquisitions among streaming readers, the longest wait %v", writes, worst)
	starved, caught := 0, 0
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return "rwstarvenointent" }) {
		starved += r.counts["starved"]
		if r.counts["starved"] > 0 {
			caught++
		}
	}
	t.Logf("rwstarvenointent (readers ignore the intents): the writer starved %d times, in %d of %d seeds", starved, caught, seeds)
	assert.Equal(t, seeds, caught, "the starvation check must catch readers that ignore the writer's intent in every seed")
}

// TestSimRWCheckerSelfTest: the read-write checker on intervals given
// directly: readers may overlap, a writer may overlap nothing, including
// a reader that starts inside a writer ending before an earlier reader.
func TestSimRWCheckerSelfTest(t *testing.T) {
	ms := time.Millisecond
	key := RWKey("r")
	add := func(k *checker, mode LockMode, start, end time.Duration, fence int64) {
		c := &simClient{id: len(k.held[key])}
		k.add(&heldLock{c: c, id: LockID(len(k.held[key]) + 1), key: key, token: strconv.Itoa(len(k.held[key])),
			segs: []segment{{start, end}}, ended: true, mode: mode, fenced: fence > 0, fence: fence})
	}
	k := newChecker()
	add(k, ModeRead, 0, 10*ms, 1)
	add(k, ModeRead, 5*ms, 15*ms, 1)
	add(k, ModeWrite, 15*ms, 20*ms, 2)
	add(k, ModeRead, 20*ms, 30*ms, 3)
	k.checkOverlaps()
	k.checkFences()
	assert.Zero(t, k.total(), k.report())

	k = newChecker()
	add(k, ModeRead, 0, 100*ms, 0)
	add(k, ModeWrite, 10*ms, 20*ms, 0) // inside the reader
	add(k, ModeRead, 15*ms, 18*ms, 0)  // inside the writer, which ends before the first reader
	k.checkOverlaps()
	assert.Equal(t, 2, k.count["overlap"], k.report())

	k = newChecker()
	add(k, ModeWrite, 0, 10*ms, 0)
	add(k, ModeWrite, 5*ms, 15*ms, 0)
	k.checkOverlaps()
	assert.Equal(t, 1, k.count["overlap"], k.report())

	k = newChecker()
	add(k, ModeRead, 0, 10*ms, 5)
	add(k, ModeWrite, 10*ms, 20*ms, 5) // not above the reader's
	add(k, ModeRead, 20*ms, 30*ms, 4)  // below the writer's
	k.checkFences()
	assert.Equal(t, 2, k.count["fence"], k.report())
}
