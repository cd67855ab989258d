package engine

// The simulation of counting semaphores: the model node's
// semaphore scripts, the workload's profiles, the invariant "never more
// than N valid permits at one instant", the permits' fences, and the
// negative controls that must break the invariant: the capped-set design
// (a node admits while it has fewer than N holders, and a majority of
// admissions makes a holder, whatever slot each node used) and an
// off-by-one admission (nodes admit N+1 holders).

import (
	"fmt"
	mrand "math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	simScripts = append(simScripts,
		simScript{bit: semAcquireScript.bit, src: semAcquireSrc, sha: SemAcquireSHA, keys: -1, args: 5, name: "sem_acquire", run: simSem((*simNode).semAcquire)},
		simScript{bit: semReleaseScript.bit, src: semReleaseSrc, sha: SemReleaseSHA, keys: 1, args: 5, name: "sem_release", run: simSem((*simNode).semRelease)},
		simScript{bit: semInspectScript.bit, src: semInspectSrc, sha: SemInspectSHA, keys: 1, args: 1, name: "sem_inspect", run: simSem((*simNode).semInspect)},
	)
}

// simSem adapts a semaphore script's model, which reads numkeys, the keys
// and the arguments as EVAL passes them, to the model node's run.
func simSem(f func(*simNode, *simConn, [][]byte, []byte) []byte) func(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	return func(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
		all := append([][]byte{[]byte(strconv.Itoa(len(keys)))}, keys...)
		return f(n, c, append(all, args...), out)
	}
}

// isSemKey reports a semaphore's key (SemKey) in the checker's records.
func isSemKey(key string) bool { return strings.Contains(key, "\xffsem") }

// semPermits is the permit count in a SemKey.
func semPermits(key string) int {
	i := strings.LastIndex(key, "\xffsem")
	n, _ := strconv.Atoi(key[i+4:])
	return n
}

// simLockKey is the key the checker records for an acquire of key.
func simLockKey(key string, permits int) string {
	if permits > 0 {
		return SemKey(key, permits)
	}
	return key
}

// semProfile sets up the semaphore profiles; false for an unknown one.
//   - sem: the default profile's faults and features with most acquires
//     and inspections on semaphores of 1 to 4 permits;
//   - semcalm: the same without faults (nothing may be left behind);
//   - semcapped, semcappedscript / semslots: negative control (a), the
//     capped-set design as the engine's admission rule and as the nodes'
//     script, and their twin, the same contention with the slots' rule;
//   - semoffbyone / semexact: negative control (b), nodes admitting N+1,
//     and its twin.
func (c *simConfig) semProfile(profile string, rng *mrand.Rand) bool {
	switch profile {
	case "sem", "semcalm":
		c.features13(rng)
		c.semP, c.semInspectP = 0.8, 0.6
		c.permits = 1 + rng.IntN(4)
		if profile == "semcalm" {
			c.spikeP = 0
			c.strict = true
		} else {
			c.faultEvery = c.pick(rng, c.maxTTL/2, 3*c.maxTTL)
			c.closeUnhealed = rng.IntN(3) == 0
		}
	case "semcapped", "semcappedscript", "semslots", "semoffbyone", "semexact":
		// Heavy contention on one semaphore of 2 or 3 permits over 3
		// nodes with uneven latencies, so that nodes see requests in
		// different orders; no faults.
		c.nodes, c.clients, c.tasks = 3, 5, 3
		c.resources = []string{"r0"}
		c.permits = 2 + rng.IntN(2)
		c.semP = 1
		c.waitP, c.holdMin, c.cancelP, c.overholdP, c.forgetP = 0.9, 0.5, 0, 0, 0
		c.maxWait, c.thinkMax = 2*c.maxTTL, c.minTTL/4
		c.latLo, c.latHi = 20*time.Microsecond, 2*time.Millisecond
		c.semAnySlot = profile == "semcapped"
		c.semCappedScript = profile == "semcappedscript"
		if profile == "semoffbyone" {
			c.semOffByOne = 1
		}
	default:
		return false
	}
	return true
}

// ---- the model node's scripts ----

func semArgErr(n *simNode, name string, args [][]byte, out []byte) []byte {
	n.s.violate("protocol", "node %d: %s script called with numkeys %s and %d arguments", n.idx, name, args[0], len(args)-1)
	return append(out, "-ERR Error running script: wrong keys or arguments\r\n"...)
}

// semAcquire runs sem_acquire.lua: args are numkeys, base [, fence key],
// token, ms, slots, preferred slot, re-enter.
func (n *simNode) semAcquire(c *simConn, args [][]byte, out []byte) []byte {
	nk := string(args[0])
	k := 1
	if nk == "2" {
		k = 2
	}
	if nk != "1" && nk != "2" || len(args) != 1+k+5 {
		return semArgErr(n, "sem_acquire", args, out)
	}
	base := string(args[1])
	a := args[1+k:]
	tok := string(a[0])
	ms, err1 := strconv.ParseInt(string(a[1]), 10, 64)
	slots, err2 := strconv.Atoi(string(a[2]))
	want, err3 := strconv.Atoi(string(a[3]))
	if err1 != nil || err2 != nil || err3 != nil || ms <= 0 || want < 0 || want >= slots {
		return append(out, "-ERR Error running script: bad arguments\r\n"...)
	}
	db := n.db(c.db)
	var fence int64
	if k == 2 {
		cur, ok := n.counter(db, args[2])
		if !ok {
			return append(out, "-ERR Error running script: bad counter\r\n"...)
		}
		fence = max(cur, n.fenceFloor())
	}
	reply := func(vals ...int64) []byte {
		out = append(out, '*')
		out = strconv.AppendInt(out, int64(len(vals)), 10)
		out = append(out, '\r', '\n')
		for _, v := range vals {
			out = appendInt(out, v)
		}
		return out
	}
	if string(a[4]) == "1" {
		for i := range slots {
			key := []byte(SlotKey(base, i))
			if sk := n.lookup(db, key); sk != nil && sk.val == tok {
				if n.pttl(sk) < ms {
					n.pexpire(c, key, ms)
				}
				return reply(int64(i), 2, fence)
			}
		}
	}
	take := -1
	var free []int64
	if n.s.cfg.semCappedScript {
		// The capped-set design's script (redis-semaphore's
		// RedlockSemaphore: ZCARD < limit, then ZADD): admit while the
		// node has fewer than N holders, and answer "admitted" without
		// saying as which permit — here, by naming the slot the client
		// asked for, wherever the holder was stored.
		for i := range slots {
			if n.lookup(db, []byte(SlotKey(base, i))) == nil {
				sk := &simKey{val: tok, expireMs: n.ms() + ms}
				n.wrote(c, sk)
				db[SlotKey(base, i)] = sk
				return reply(int64(want), 1, fence)
			}
		}
		return reply(-1, 0, fence)
	}
	if n.lookup(db, []byte(SlotKey(base, want))) == nil {
		take = want
	} else {
		for i := range slots {
			if n.lookup(db, []byte(SlotKey(base, i))) == nil {
				if take < 0 {
					take = i
				}
				free = append(free, int64(i))
				if len(free) >= 16 {
					break
				}
			}
		}
	}
	if take < 0 {
		return reply(-1, 0, fence)
	}
	sk := &simKey{val: tok, expireMs: n.ms() + ms}
	n.wrote(c, sk)
	sk.afterRelease = c.releasedHere([]byte(tok))
	db[SlotKey(base, take)] = sk
	return reply(append([]int64{int64(take), 1, fence}, free...)...)
}

// semRelease runs sem_release.lua: numkeys, base, token, id, slots, slot,
// only.
func (n *simNode) semRelease(c *simConn, args [][]byte, out []byte) []byte {
	if string(args[0]) != "1" || len(args) != 7 {
		return semArgErr(n, "sem_release", args, out)
	}
	base, tok, id := string(args[1]), string(args[2]), string(args[3])
	slots, err1 := strconv.Atoi(string(args[4]))
	slot, err2 := strconv.Atoi(string(args[5]))
	if err1 != nil || err2 != nil {
		return append(out, "-ERR Error running script: bad arguments\r\n"...)
	}
	only := string(args[6]) == "1"
	c.relToks[c.relNext%4] = tok
	c.relNext++
	db := n.db(c.db)
	found := false
	for i := range slots {
		if only != (i == slot) {
			continue
		}
		key := SlotKey(base, i)
		if sk := n.lookup(db, []byte(key)); sk != nil && sk.val == tok {
			delete(db, key)
			found = true
		}
	}
	if !found {
		return appendInt(out, 0)
	}
	return appendInt(out, 1+n.publish(ReleasedChannel(base), id))
}

// semInspect runs sem_inspect.lua: numkeys, base, slots.
func (n *simNode) semInspect(c *simConn, args [][]byte, out []byte) []byte {
	if string(args[0]) != "1" || len(args) != 3 {
		return semArgErr(n, "sem_inspect", args, out)
	}
	slots, err := strconv.Atoi(string(args[2]))
	if err != nil {
		return append(out, "-ERR Error running script: bad arguments\r\n"...)
	}
	db := n.db(c.db)
	out = append(out, '*')
	out = strconv.AppendInt(out, int64(2*slots), 10)
	out = append(out, '\r', '\n')
	for i := range slots {
		sk := n.lookup(db, []byte(SlotKey(string(args[1]), i)))
		if sk == nil {
			out = append(out, "$-1\r\n"...)
			out = appendInt(out, -2)
			continue
		}
		out = simAppendBulk(out, sk.val)
		out = appendInt(out, n.pttl(sk))
	}
	return out
}

// ---- the workload ----

// inspectSem runs one InspectPermits of resource's semaphore.
func (t *simTask) inspectSem(res string) {
	c, s := t.c, t.s()
	key := SemKey(c.cfg.KeyPrefix+res, s.cfg.permits)
	var snaps []inspSnap
	for _, oc := range s.clients {
		for _, h := range oc.heldL {
			if !h.ended && h.key == key {
				if seg := h.segs[len(h.segs)-1]; seg.start <= s.now && seg.end > s.now {
					snaps = append(snaps, inspSnap{h: h, seg: len(h.segs) - 1, end: seg.end})
				}
			}
		}
	}
	id, err := c.eng.InspectPermits(res, s.cfg.permits)
	if err != nil {
		c.s.violate("protocol", "c%d: InspectPermits refused: %v", c.id, err)
		return
	}
	s.stats.inspects++
	op := c.begin(id, opInspect, t, 0, 2*c.nodeTO+time.Millisecond)
	op.key, op.startT, op.snaps = key, s.now, snaps
	t.acq = op
	s.tracef("c%d t%d InspectPermits %s %d -> op %d", c.id, t.id, res, s.cfg.permits, id)
	c.drain()
}

// ---- the checks ----

// checkPermits: for every semaphore, at no instant of true time are more
// than its N permits valid. The holders of one token (a re-entry, a
// hand-over) are one holder.
func (k *checker) checkPermits() {
	type ev struct {
		at    time.Duration
		start bool
		h     *heldLock
	}
	for _, key := range k.keys {
		if !isSemKey(key) {
			continue
		}
		n := semPermits(key)
		var evs []ev
		for _, h := range k.held[key] {
			for _, s := range h.segs {
				if s.end > s.start {
					evs = append(evs, ev{s.start, true, h}, ev{s.end, false, h})
				}
			}
		}
		// Ends before starts at one instant: intervals are [start, end).
		sort.SliceStable(evs, func(i, j int) bool {
			if evs[i].at != evs[j].at {
				return evs[i].at < evs[j].at
			}
			return !evs[i].start && evs[j].start
		})
		active := map[string]int{}
		holders := map[string]*heldLock{}
		for _, e := range evs {
			if !e.start {
				if active[e.h.token]--; active[e.h.token] == 0 {
					delete(active, e.h.token)
					delete(holders, e.h.token)
				}
				continue
			}
			active[e.h.token]++
			holders[e.h.token] = e.h
			if len(active) > n {
				var who []string
				for _, h := range holders {
					who = append(who, fmt.Sprintf("%s (slot %d)", h.owner(), h.slot))
				}
				sort.Strings(who)
				k.violate("permits", fmt.Sprintf("semaphore %q: %d valid permits of %d at %v: %s", key, len(active), n, e.at, strings.Join(who, ", ")))
			}
		}
	}
}

// checkSemFences: a permit's fence is greater than that of every permit of
// the semaphore acquired before its acquire was asked for (except across
// a node's loss of its data, as for the mutex).
func (k *checker) checkSemFences() {
	for _, key := range k.keys {
		if !isSemKey(key) {
			continue
		}
		var fs []*heldLock
		for _, h := range k.held[key] {
			if h.fenced && len(h.segs) > 0 {
				fs = append(fs, h)
			}
		}
		sort.SliceStable(fs, func(i, j int) bool { return fs[i].segs[0].start < fs[j].segs[0].start })
		for j, b := range fs {
			for _, a := range fs[:j] {
				if a.segs[0].start >= b.opStart {
					break // not acquired before b was asked for
				}
				if k.excuseLoss && k.lostBetween(a.segs[0].start-k.lossSpan, b.segs[0].start) {
					k.fenceSkips++
					continue
				}
				k.fencePairs++
				if b.fence <= a.fence {
					k.violate("fence", fmt.Sprintf("semaphore %q: %s asked at %v got fence %d, not above %s's %d (acquired at %v)",
						key, b.owner(), b.opStart, b.fence, a.owner(), a.fence, a.segs[0].start))
				}
			}
		}
	}
}

// checkSemInspection checks a semaphore inspection over [start, end]:
// never more holders than permits, and every permit valid throughout it
// (well beyond, as for the mutex) is reported at its slot with its owner.
func (k *checker) checkSemInspection(key string, start, end time.Duration, in *Inspection, err error, nodes int, snaps []inspSnap) {
	if err != nil {
		if in != nil {
			k.violate("inspect", fmt.Sprintf("semaphore %q: an inspection failed (%v) and still reported %+v", key, err, *in))
		}
		return
	}
	n := semPermits(key)
	if in == nil || len(in.Nodes) != nodes || in.Permits != n || in.InUse != len(in.Holders) || in.InUse > n || in.Held != (in.InUse > 0) {
		k.violate("inspect", fmt.Sprintf("semaphore %q: a bad inspection: %+v", key, in))
		return
	}
	errs := 0
	for _, nd := range in.Nodes {
		if nd.Err != nil {
			errs++
		}
	}
	for _, sn := range snaps {
		h := sn.h
		if len(h.segs) != sn.seg+1 {
			continue
		}
		seg := h.segs[sn.seg]
		if seg.start > start || seg.end < end {
			continue
		}
		owner := OwnerOf(h.token)
		found := false
		for _, hd := range in.Holders {
			if hd.Slot == h.slot {
				found = true
				if hd.Owner != owner {
					k.violate("inspect", fmt.Sprintf("semaphore %q: an inspection over [%v, %v] says slot %d is held by %q while %s (owner %q) held it throughout",
						key, start, end, hd.Slot, hd.Owner, h.owner(), owner))
				}
			}
		}
		until := min(seg.end, sn.end)
		if !found && errs == 0 && float64(until-end)*0.94 > float64(3500*time.Microsecond)+1.01*float64(end-start) {
			k.violate("inspect", fmt.Sprintf("semaphore %q: an inspection over [%v, %v] with every node answering misses %s's slot %d, held until %v",
				key, start, end, h.owner(), h.slot, until))
		}
	}
}

// ---- the tests ----

// TestSimSemaphore: semaphores under the default faults (and, in a fifth
// of the seeds, without faults, where nothing may be left behind): no
// violation of any kind, in particular never more than N valid permits.
func TestSimSemaphore(t *testing.T) {
	seeds, ops := simSize()
	seeds = max(seeds/2, 4)
	results := runSeeds(t, 2000, seeds, ops, func(i int) string {
		if i%5 == 4 {
			return "semcalm"
		}
		return "sem"
	})
	var total simStats
	pairs := 0
	for _, r := range results {
		total.add(r.stats)
		pairs += r.fencePairs
		assert.Zero(t, r.violations, "seed %d (%s): %s\nreplay: %s", r.seed, r.profile, r.report, replayCmd(r, ops))
	}
	t.Logf("%d seeds: %d acquires (%d acquired, %d not acquired, %d unavailable), %d lost, %d inspections (%d found a permit held), %d fenced; %d fenced pairs compared",
		seeds, total.acquires, total.acquired, total.failedNotAcquired, total.failedUnavailable, total.lost, total.inspected, total.inspectHeld, total.fenced, pairs)
	assert.Positive(t, total.acquired)
	assert.Positive(t, total.inspectHeld)
	assert.Positive(t, pairs)
}

// semControl runs a semaphore negative control: the checker must find
// more than N valid permits in every seed; its twin, the same runs with
// the slots' rule, none.
func semControl(t *testing.T, profile, twin string) {
	t.Helper()
	seeds, ops := 6, 3000
	if simRace {
		seeds, ops = 2, 1500
	}
	caught, permits, acquired := 0, 0, 0
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return profile }) {
		permits += r.counts["permits"]
		acquired += r.stats.acquired
		if r.counts["permits"] > 0 {
			caught++
		}
		assert.Positive(t, r.counts["permits"], "seed %d (%s): the checker must catch more than N valid permits", r.seed, profile)
	}
	t.Logf("%s: %d instants with more than N valid permits among %d acquisitions, in %d of %d seeds", profile, permits, acquired, caught, seeds)
	acquired = 0
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return twin }) {
		acquired += r.stats.acquired
		assert.Zero(t, r.violations, "seed %d (%s): %s\nreplay: %s", r.seed, twin, r.report, replayCmd(r, ops))
	}
	t.Logf("%s (its twin): no violation among %d acquisitions", twin, acquired)
}

// TestSimControlSemCappedSet (a): the capped-set-with-majority design.
func TestSimControlSemCappedSet(t *testing.T) { semControl(t, "semcapped", "semslots") }

// TestSimControlSemCappedScript (a, as the nodes' script): the nodes run
// the capped-set script (admit while fewer than N hold, whichever permit).
func TestSimControlSemCappedScript(t *testing.T) { semControl(t, "semcappedscript", "semslots") }

// TestSimControlSemOffByOne (b): nodes admit N+1 holders.
func TestSimControlSemOffByOne(t *testing.T) { semControl(t, "semoffbyone", "semexact") }

// TestSimSemCheckerSelfTest: the permit counter on intervals given
// directly, and the capped-set counterexample of the README (3 nodes, 2
// permits: {1,2} on A, {2,3} on B, {1,3} on C) run on the model's nodes.
func TestSimSemCheckerSelfTest(t *testing.T) {
	ms := time.Millisecond
	key := SemKey("r", 2)
	k := newChecker()
	k.addInterval(key, "a", 0, 10*ms)
	k.addInterval(key, "b", 5*ms, 15*ms)
	k.addInterval(key, "c", 10*ms, 20*ms) // a ended as c starts: 2 at most
	k.checkPermits()
	assert.Zero(t, k.total(), k.report())
	k.addInterval(key, "d", 12*ms, 13*ms) // b, c, d
	k.checkPermits()
	assert.Equal(t, 1, k.count["permits"], k.report())

	// The counterexample: each node capped at 2 holders; each holder
	// admitted by a majority (2 of 3).
	s, err := newSim(1, "calm", 10, nil)
	require.NoError(t, err)
	admitted := map[string]int{}
	slotsOf := map[string]map[int]int{}
	order := map[int][]string{0: {"h1", "h2", "h3"}, 1: {"h2", "h3", "h1"}, 2: {"h1", "h3", "h2"}}
	for i, who := range order {
		nd := s.nodes[i]
		nd.spec.Password = ""
		c := &simConn{client: s.clients[0], node: nd}
		for _, h := range who {
			args := [][]byte{[]byte("EVAL"), []byte(semAcquireSrc), []byte("1"), []byte("b"), []byte(h), []byte("1000"), []byte("2"), []byte("0"), []byte("0")}
			r := string(nd.exec(c, args, nil))
			if strings.HasPrefix(r, "*3\r\n:-1") {
				continue
			}
			admitted[h]++
			if slotsOf[h] == nil {
				slotsOf[h] = map[int]int{}
			}
			rest := r[strings.Index(r, ":")+1:]
			slot, _ := strconv.Atoi(rest[:strings.Index(rest, "\r\n")])
			slotsOf[h][slot]++
		}
	}
	// Capped sets: every holder has a majority of admissions: 3 holders of 2.
	assert.Equal(t, map[string]int{"h1": 2, "h2": 2, "h3": 2}, admitted)
	// Slots: a holder needs one slot granted by a majority; at most 2 do.
	quorumSlot := 0
	for _, m := range slotsOf {
		for _, c := range m {
			if c >= 2 {
				quorumSlot++
			}
		}
	}
	assert.LessOrEqual(t, quorumSlot, 2, "%v", slotsOf)
}

// TestSimModelSemScripts: the model's semaphore scripts do what the Lua
// does.
func TestSimModelSemScripts(t *testing.T) {
	s, err := newSim(1, "calm", 10, nil)
	require.NoError(t, err)
	n := s.nodes[0]
	n.spec.Password = ""
	c := &simConn{client: s.clients[0], node: n}
	run := func(args ...string) string {
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		return string(n.exec(c, b, nil))
	}
	base, fk := SemKey("k", 2), FenceKey("k")
	floor := string(appendInt(nil, n.timeUs())) // fenced: at least the clock floor, TIME in µs
	assert.Equal(t, "*3\r\n:0\r\n:1\r\n"+floor, run("EVAL", semAcquireSrc, "2", base, fk, "tokA", "100", "2", "0", "0"))
	assert.Equal(t, "*4\r\n:1\r\n:1\r\n:0\r\n:1\r\n", run("EVALSHA", SemAcquireSHA, "1", base, "tokB", "100", "2", "0", "0")) // took 1, listed free 1
	assert.Equal(t, "*3\r\n:-1\r\n:0\r\n:0\r\n", run("EVALSHA", SemAcquireSHA, "1", base, "tokC", "100", "2", "1", "0"))
	assert.Equal(t, "*3\r\n:1\r\n:2\r\n:0\r\n", run("EVALSHA", SemAcquireSHA, "1", base, "tokB", "300", "2", "0", "1")) // re-entry raises
	assert.Equal(t, "*4\r\n$4\r\ntokA\r\n:100\r\n$4\r\ntokB\r\n:300\r\n", run("EVAL", semInspectSrc, "1", base, "2"))
	assert.Equal(t, ":0\r\n", run("EVAL", semReleaseSrc, "1", base, "tokA", "id", "2", "0", "0")) // all but slot 0
	assert.Equal(t, ":1\r\n", run("EVALSHA", SemReleaseSHA, "1", base, "tokA", "id", "2", "0", "1"))
	assert.Equal(t, ":1\r\n", run("EVALSHA", SemReleaseSHA, "1", base, "tokB", "id", "2", "-1", "0"))
	assert.Equal(t, "*4\r\n$-1\r\n:-2\r\n$-1\r\n:-2\r\n", run("EVALSHA", SemInspectSHA, "1", base, "2"))
	assert.Zero(t, s.chk.total(), s.chk.report())
	run("EVALSHA", SemReleaseSHA, "1", base, "tokB", "id", "2")
	assert.Equal(t, 1, s.chk.count["protocol"], s.chk.report())
}
