package engine

// Leader election in the simulation. Campaigns are
// acquires of an election key (fenced, auto-extended, the value stored
// beside the token and the term written in by the fence round); the
// checker files each leadership under its election key, so its overlap
// check is the invariant "never two valid leaders of one election at one
// instant", and its fence check "terms strictly increasing in leadership
// order" (a leader's term must exceed every earlier leader's).
//
// The model node runs the election scripts in Go (registered below). Two
// negative controls must fail the invariants in every seed: "electhalf" (a
// quorum of N/2: two leaders at once) and "electnoterm" (the fence script
// never raises the counter: every leader gets the same term); their twin
// "electctl" (the same setting, the quorum and script right) must be clean.
//
//	go test -run 'TestSimElect' -v ./core/engine/

import (
	mrand "math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	primitiveScripts["elect_fence.lua"] = electFenceScript
	primitiveScripts["elect_extend.lua"] = electExtendScript
	primitiveScripts["elect_release.lua"] = electReleaseScript
	simScripts = append(simScripts,
		simScript{bit: 1 << 28, src: electFenceSrc, sha: ElectFenceSHA, keys: 2, args: 2, name: "elect_fence", run: simElectFence},
		simScript{bit: 1 << 29, src: electExtendSrc, sha: ElectExtendSHA, keys: 1, args: 2, name: "elect_extend", run: simElectExtend},
		simScript{bit: 1 << 30, src: electReleaseSrc, sha: ElectReleaseSHA, keys: 1, args: 2, name: "elect_release", run: simElectRelease},
	)
}

// electProfile sets up the election profiles; false for any other name.
func electProfile(cfg *simConfig, profile string, rng *mrand.Rand) bool {
	switch profile {
	case "elect":
		// The default workload and faults, a share of the acquires
		// campaigns in the elections of the same names.
		cfg.faultEvery = cfg.pick(rng, cfg.maxTTL/2, 3*cfg.maxTTL)
		cfg.closeUnhealed = rng.IntN(3) == 0
		cfg.features13(rng)
		cfg.electP = []float64{0.3, 0.6, 0.9}[rng.IntN(3)]
		if rng.IntN(2) == 0 {
			cfg.persistP = 1 // no node loses its data
		}
	case "electcalm":
		// No faults: no key may be left behind at all.
		cfg.resources = []string{"r0", "r1"}
		cfg.spikeP = 0
		cfg.strict = true
		cfg.electP = 0.8
	case "electrepeat":
		// Control: the engine reports every inspection of a watch, changed
		// or not: the watchers' check must catch the repeats.
		cfg.resources = []string{"r0"}
		cfg.spikeP = 0
		cfg.electP = 1
		cfg.electFault = "repeat"
	case "electhalf", "electnoterm", "electctl":
		// The controls: contention of 3 clients × 2 tasks on one
		// election, long leaderships, no faults.
		cfg.nodes = 2 + rng.IntN(4)
		if profile != "electhalf" {
			cfg.nodes = 3
		}
		cfg.clients, cfg.tasks = 3, 2
		cfg.resources = []string{"r0"}
		cfg.waitP, cfg.holdMin = 0.9, 0.3
		cfg.maxWait = 2 * cfg.maxTTL
		cfg.electP = 1
		cfg.halfQuorum = profile == "electhalf"
		if profile == "electnoterm" {
			// The counters alone (no clock floor): with the floor, terms
			// would grow with the servers' clocks even when the fence
			// round never raises a counter.
			cfg.electFault, cfg.noFloor = "noterm", true
		}
	default:
		return false
	}
	return true
}

// campaign makes req a campaign in the election of its resource's name.
func (t *simTask) campaign(req *AcquireRequest) {
	s := t.s()
	req.Election, req.Value = true, "c"+strconv.Itoa(t.c.id)+"t"+strconv.Itoa(t.id)
	req.Fence, req.AutoExtend, req.Token, req.Resources = true, true, "", nil
	s.stats.campaigns++
}

// electMatch reports whether the value v of an election key is the
// campaign whose stored value is stored (its token and value), with or
// without its term: the scripts' prefix match.
func electMatch(v, stored string) bool {
	return v == stored || strings.HasPrefix(v, stored+"\xff")
}

// electStored is the value an election key's value v was set with (its
// token and value), without the term the fence round wrote in; any other
// value as it is.
func electStored(v string) string {
	if tok, val, term, ok := splitElected(v); ok && term > 0 {
		return tok + "\xff" + val
	}
	return v
}

// simElectFence: while the key holds the campaign: -1 if the counter is
// above the fence; else raise the counter (not in the control
// "electnoterm"), write the term after the value, announce it (1).
func simElectFence(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	db := n.db(c.db)
	k := n.lookup(db, keys[0])
	if k == nil || k.val != string(args[0]) {
		return appendInt(out, 0)
	}
	fence, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil {
		return append(out, "-ERR Error running script: bad fence\r\n"...)
	}
	cur, ok := n.counter(db, keys[1])
	if !ok {
		return append(out, "-ERR Error running script: attempt to compare nil with number\r\n"...)
	}
	if fence < cur {
		return appendInt(out, -1)
	}
	if fence > cur && n.s.cfg.electFault != "noterm" {
		ck := &simKey{val: string(args[1]), expireMs: -1}
		n.wrote(c, ck)
		db[string(keys[1])] = ck
	}
	if n.pttl(k) > 0 {
		k.val = string(args[0]) + "\xff" + string(args[1])
		n.wrote(c, k)
	}
	n.publish(LeaderChannel(string(keys[0])), string(args[1]))
	return appendInt(out, 1)
}

// simElectExtend: extend.lua with the prefix match.
func simElectExtend(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	ms, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil {
		return append(out, "-ERR Error running script: bad ms\r\n"...)
	}
	if k := n.lookup(n.db(c.db), keys[0]); k != nil && electMatch(k.val, string(args[0])) {
		if n.pttl(k) < ms {
			n.pexpire(c, keys[0], ms)
		}
		return appendInt(out, 1)
	}
	return appendInt(out, 0)
}

// simElectRelease: release.lua with the prefix match, announcing the end
// of a term.
func simElectRelease(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	c.relToks[c.relNext%4] = string(args[0])
	c.relNext++
	db := n.db(c.db)
	k := n.lookup(db, keys[0])
	if k == nil || !electMatch(k.val, string(args[0])) {
		return appendInt(out, 0)
	}
	delete(db, string(keys[0]))
	if k.val != string(args[0]) {
		n.publish(LeaderChannel(string(keys[0])), "0")
	}
	return appendInt(out, 1+n.publish(ReleasedChannel(string(keys[0])), string(args[1])))
}

// Watchers: a client watches an election now and then (Watch), with the
// checks of what it reports (ActLeader): the first report comes at once;
// a reported leader is valid (held, with validity and a term); the terms it
// reports only grow (each change once, in order, a leader never reported
// twice in a row); one term always comes with one value; nothing comes
// after the watch's end (Unwatch, Close: its one ActDone).

type simWatch struct {
	name     string
	reports  int
	lastTerm int64
	last     *Inspection
	ended    bool
}

// maybeWatch starts a watch of the election name by the task's client,
// at most two at a time per client; some are ended later by Unwatch.
func (t *simTask) maybeWatch(name string) {
	c, s := t.c, t.s()
	p := 0.05
	if s.cfg.electFault == "repeat" {
		p = 0.5
	}
	if len(c.watches) >= 2 || !s.chance(p) || c.closing {
		return
	}
	poll := s.dur(5*time.Millisecond, s.cfg.maxTTL)
	c.eng.watchRepeats = s.cfg.electFault == "repeat"
	id, err := c.eng.Watch(WatchRequest{Name: name, Poll: poll})
	if err != nil {
		s.violate("protocol", "c%d: Watch refused: %v", c.id, err)
		return
	}
	if c.watches == nil {
		c.watches = map[OpID]*simWatch{}
	}
	c.watches[id] = &simWatch{name: name}
	s.stats.watches++
	s.tracef("c%d Watch %s poll %v -> op %d", c.id, name, poll, id)
	c.drain()
	if s.chance(0.5) {
		s.after(s.dur(0, 3*s.cfg.maxTTL), func() {
			c.deliver(func() {
				if w := c.watches[id]; w != nil && !w.ended && !c.closed {
					if !c.eng.Unwatch(id) {
						s.violate("protocol", "c%d: Unwatch of live watch %d refused", c.id, id)
					}
					c.drain()
				}
			})
		})
	}
}

func (c *simClient) actLeader(a Action) {
	w := c.watches[a.Op]
	s := c.s
	switch {
	case w == nil:
		s.violate("watch", "c%d: ActLeader for op %d, no watch of this client", c.id, a.Op)
		return
	case w.ended:
		s.violate("watch", "c%d: ActLeader for watch %d after its end", c.id, a.Op)
		return
	case a.Inspection == nil:
		s.violate("watch", "c%d: ActLeader without an inspection", c.id)
		return
	}
	in := a.Inspection
	w.reports++
	s.stats.leaderReports++
	if len(s.chk.losses) == 0 {
		s.stats.leaderChecked++
	}
	if len(s.chk.losses) > 0 {
		// A node restarted at once without its data, or the counters
		// without the clock floor (the losses the checker records, see
		// simNode.crash): terms may start over and repeat, as fences do.
		// After a delayed restart the order is checked like anywhere else.
		w.last = in
		return
	}
	switch {
	case in.Held && (in.Term < 1 || in.Validity <= 0 || in.Value == ""):
		s.violate("watch", "c%d: watch %d reports a leader with term %d validity %v value %q", c.id, a.Op, in.Term, in.Validity, in.Value)
	case in.Held && in.Term < w.lastTerm:
		s.violate("watch", "c%d: watch %d reports term %d after term %d", c.id, a.Op, in.Term, w.lastTerm)
	case in.Held && in.Term == w.lastTerm && w.last != nil && w.last.Held:
		s.violate("watch", "c%d: watch %d reports term %d twice in a row", c.id, a.Op, in.Term)
	case !in.Held && w.last != nil && !w.last.Held:
		s.violate("watch", "c%d: watch %d reports no leader twice in a row", c.id, a.Op)
	}
	if in.Held {
		k := w.name + "/" + strconv.FormatInt(in.Term, 10)
		if v, ok := s.termValues[k]; ok && v != in.Value {
			s.violate("watch", "c%d: election %s term %d reported with value %q and %q", c.id, w.name, in.Term, v, in.Value)
		}
		s.termValues[k] = in.Value
		w.lastTerm = in.Term
	}
	w.last = in
}

// watchDone handles a watch's ActDone; false for any other op.
func (c *simClient) watchDone(a Action) bool {
	w := c.watches[a.Op]
	if w == nil {
		return false
	}
	if w.ended {
		c.s.violate("twice", "c%d: a second ActDone for watch %d", c.id, a.Op)
	}
	w.ended = true
	delete(c.watches, a.Op)
	return true
}

// TestSimElectSafety: campaigns beside mutexes under the default faults,
// every check (one valid leader at a time, terms increasing), no violation
// allowed; a fifth of the seeds without faults (no key left behind).
func TestSimElectSafety(t *testing.T) {
	seeds, ops := simSize()
	seeds = max(seeds/3, 4)
	results := runSeeds(t, 1, seeds, ops, func(i int) string {
		if i%5 == 4 {
			return "electcalm"
		}
		return "elect"
	})
	var total simStats
	pairs := 0
	for _, r := range results {
		total.add(r.stats)
		pairs += r.fencePairs
		assert.Zero(t, r.violations, "seed %d (%s): %s\nreplay: %s", r.seed, r.profile, r.report, replayCmd(r, ops))
	}
	t.Logf("%d watches reported %d leader changes (%d checked for order: no node had lost its data)", total.watches, total.leaderReports, total.leaderChecked)
	assert.Positive(t, total.leaderChecked, "no watch report was checked")
	assert.Positive(t, total.leaderReports, "no watch reported anything")
	t.Logf("%d seeds: %d campaigns, %d led; %d acquires in all, %d acquired, %d lost; %d fenced pairs compared; faults: %d freezes, %d crashes, %d partitions, %d pauses",
		seeds, total.campaigns, total.leaders, total.acquires, total.acquired, total.lost, pairs,
		total.freezes, total.crashes, total.partitions, total.pauses)
	assert.Positive(t, total.leaders, "no campaign ever led: the run proves nothing")
	assert.Positive(t, total.acquired-total.leaders, "no mutex was ever acquired beside the elections")
}

// TestSimElectControlHalfQuorum: a quorum of N/2 elects two leaders at
// once; the checker must catch it in every seed, and the twin must be
// clean.
func TestSimElectControlHalfQuorum(t *testing.T) { controlRun(t, "electhalf", "electctl", 3000) }

// TestSimElectControlTermNotRaised: the fence script never raises the
// counter, so leaders share a term: the fence check must catch it in
// every seed.
func TestSimElectControlTermNotRaised(t *testing.T) {
	seeds, ops := 6, 3000
	if simRace {
		seeds, ops = 2, 1500
	}
	caught := 0
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return "electnoterm" }) {
		caught += r.counts["fence"]
		assert.Positive(t, r.counts["fence"], "seed %d: the checker must catch terms that do not increase", r.seed)
		assert.Positive(t, r.stats.leaders, "seed %d: nobody led", r.seed)
	}
	t.Logf("electnoterm: %d terms out of leadership order in %d seeds", caught, seeds)
}

// TestSimElectControlWatchRepeats: the engine reports every inspection of
// a watch, changed or not; the watchers' check (each change once, in
// order) must catch it in every seed.
func TestSimElectControlWatchRepeats(t *testing.T) {
	seeds, ops := 6, 2000
	if simRace {
		seeds, ops = 2, 1000
	}
	caught := 0
	for _, r := range runSeeds(t, 1, seeds, ops, func(int) string { return "electrepeat" }) {
		caught += r.counts["watch"]
		assert.Positive(t, r.counts["watch"], "seed %d: the watchers' check must catch repeated reports", r.seed)
	}
	t.Logf("electrepeat: %d repeated reports caught in %d seeds", caught, seeds)
}

// TestSimElectModelScripts: the model runs the election scripts as their
// Lua does.
func TestSimElectModelScripts(t *testing.T) {
	s, err := newSim(1, "electctl", 10, nil)
	require.NoError(t, err)
	n := s.nodes[0]
	c := &simConn{client: s.clients[0], node: n}
	run := func(args ...string) string {
		b := make([][]byte, len(args))
		for i, a := range args {
			b[i] = []byte(a)
		}
		return string(n.exec(c, b, nil))
	}
	k := ElectionKey("e")
	fk := FenceKey(k)
	v := "tok\xffleader-1"
	assert.Equal(t, string(appendInt(nil, n.timeUs())), run("EVAL", acquireFenceSrc, "2", k, fk, v, "1000")) // no counter yet: the clock floor
	assert.Equal(t, ":0\r\n", run("EVAL", electFenceSrc, "2", k, fk, "other\xffx", "1"))
	assert.Equal(t, ":1\r\n", run("EVAL", electFenceSrc, "2", k, fk, v, "1"))
	assert.Equal(t, "$14\r\n"+v+"\xff1\r\n", run("GET", k))
	assert.Equal(t, "$1\r\n1\r\n", run("GET", fk))
	assert.Equal(t, ":0\r\n", run("EVAL", electExtendSrc, "1", k, "other\xffleader-1", "5000")) // another token
	assert.Equal(t, ":1\r\n", run("EVAL", electExtendSrc, "1", k, v, "5000"))
	assert.Equal(t, ":0\r\n", run("EVAL", electReleaseSrc, "1", k, "tok\xffleader-", "id"))
	assert.Equal(t, ":1\r\n", run("EVAL", electReleaseSrc, "1", k, v, "id"))
	assert.Equal(t, "$-1\r\n", run("GET", k))
	assert.Zero(t, s.chk.total(), s.chk.report())
}

// TestElectInspectionParsing: the values an election key can hold.
func TestElectInspectionParsing(t *testing.T) {
	tok, val, term, ok := splitElected("o/x\xffv\xff7")
	assert.True(t, ok)
	assert.Equal(t, []any{"o/x", "v", int64(7)}, []any{tok, val, term})
	_, _, term, ok = splitElected("o/x\xffv")
	assert.True(t, ok)
	assert.Zero(t, term)
	_, _, _, ok = splitElected("plain")
	assert.False(t, ok)
	_, _, _, ok = splitElected("o/x\xffv\xffnotanumber")
	assert.False(t, ok)
	_ = time.Second
}
