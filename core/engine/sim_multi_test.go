package engine

// Multi-resource locks in the simulation. Tasks take
// sets of 2 to 4 resources, in random orders, beside tasks taking one
// resource (mutexes, with fences, caller tokens and inspections as in the
// default workload), under the default faults. A multi-lock holds each of
// its resources over its validity: the checker files it under every key of
// its set, so the per-resource overlap check is the invariant "every
// resource is held by at most one valid lock or multi-lock at any
// instant"; fences are compared per resource too (a multi-lock's fence
// must exceed every earlier fence on each of its resources).
//
// The model node runs the multi scripts in Go (registered below), and two
// negative controls break the acquire script the way a multi-lock goes
// wrong: "multipartial" sets the free keys even when one is held and
// answers granted (a partial grant); "multiignore" never checks the set's
// last key and overwrites it. The checker must catch both in every seed;
// their twin "multictl" (the same setting, the script right) must be
// clean.
//
//	go test -run 'TestSimMulti' -v ./core/engine/

import (
	mrand "math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func init() {
	primitiveScripts["multi_acquire.lua"] = multiAcquireScript
	primitiveScripts["multi_release.lua"] = multiReleaseScript
	primitiveScripts["multi_extend.lua"] = multiExtendScript
	primitiveScripts["multi_fence.lua"] = multiFenceScript
	simScripts = append(simScripts,
		simScript{bit: multiAcquireScript.bit, src: multiAcquireSrc, sha: MultiAcquireSHA, keys: -1, args: 3, name: "multi_acquire", run: simMultiAcquire},
		simScript{bit: multiReleaseScript.bit, src: multiReleaseSrc, sha: MultiReleaseSHA, keys: -1, args: 2, name: "multi_release", run: simMultiRelease},
		simScript{bit: multiExtendScript.bit, src: multiExtendSrc, sha: MultiExtendSHA, keys: -1, args: 2, name: "multi_extend", run: simMultiExtend},
		simScript{bit: multiFenceScript.bit, src: multiFenceSrc, sha: MultiFenceSHA, keys: -1, args: 2, name: "multi_fence", run: simMultiFence},
	)
}

// multiProfile sets up the multi profiles; false for any other name.
func multiProfile(cfg *simConfig, profile string, rng *mrand.Rand) bool {
	pickDur := func(lo, hi time.Duration) time.Duration { return cfg.pick(rng, lo, hi) }
	switch profile {
	case "multi":
		// The default workload and faults, with 3 or 4 resources and a
		// share of multi-resource acquires.
		cfg.resources = []string{"r0", "r1", "r2", "r3"}[:3+rng.IntN(2)]
		cfg.faultEvery = pickDur(cfg.maxTTL/2, 3*cfg.maxTTL)
		cfg.closeUnhealed = rng.IntN(3) == 0
		cfg.shrinkExtend = rng.IntN(2) == 0
		cfg.features13(rng)
		cfg.multiP = []float64{0.3, 0.5, 0.8}[rng.IntN(3)]
	case "multicalm":
		// No faults: no key may be left behind at all.
		cfg.resources = []string{"r0", "r1", "r2"}
		cfg.spikeP = 0
		cfg.strict = true
		cfg.features13(rng)
		cfg.multiP = 0.5
	case "multipartial", "multiignore", "multictl":
		// The controls: 3 nodes, contention on 3 resources, half the
		// acquires multi, long holds, no faults.
		cfg.nodes, cfg.clients, cfg.tasks = 3, 3, 2
		cfg.resources = []string{"r0", "r1", "r2"}
		cfg.waitP, cfg.holdMin = 0.9, 0.5
		cfg.maxWait = 2 * cfg.maxTTL
		cfg.multiP = 0.5
		cfg.multiFault = map[string]string{"multipartial": "partial", "multiignore": "ignore"}[profile]
	default:
		return false
	}
	return true
}

// multi makes req a multi-resource request: its resource and 1 to 3 more,
// in a random order (so that two tasks ask for overlapping sets in
// different orders).
func (t *simTask) multi(req *AcquireRequest) {
	s := t.s()
	res := append([]string(nil), s.cfg.resources...)
	s.rng.Shuffle(len(res), func(i, j int) { res[i], res[j] = res[j], res[i] })
	k := 2 + s.rng.IntN(min(3, len(res)-1))
	req.Resource, req.Resources = res[0], res[1:k]
	s.stats.multiAcquires++
	if req.Fence {
		s.stats.multiFenced++
	}
}

// allKeys is every key the lock holds: its set's, or its one key.
func (h *heldLock) allKeys() []string {
	if h.keys != nil {
		return h.keys
	}
	return []string{h.key}
}

// The model's multi scripts, as multi_*.lua run them.

// simMultiAcquire: when any of the set's keys exists, -i (the first); else
// SET them all with the token and PX, and answer the highest fence counter
// of the set, at least the clock floor (0 without counters). The controls break it.
func simMultiAcquire(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	ms, err := strconv.ParseInt(string(args[1]), 10, 64)
	cnt, err2 := strconv.Atoi(string(args[2]))
	if err != nil || err2 != nil || ms <= 0 || cnt < 1 || (len(keys) != cnt && len(keys) != 2*cnt) {
		n.s.violate("protocol", "node %d: multi_acquire with %d keys and %q", n.idx, len(keys), args)
		return append(out, "-ERR Error running script: bad arguments\r\n"...)
	}
	db := n.db(c.db)
	lockKeys, counters := keys[:cnt], keys[cnt:]
	fault := n.s.cfg.multiFault
	set := 0
	for i, key := range lockKeys {
		if fault == "ignore" && i == cnt-1 {
			continue // control: the last key is never checked
		}
		if n.lookup(db, key) != nil {
			if fault == "partial" {
				continue // control: set the free ones anyway
			}
			return appendInt(out, int64(-(i + 1)))
		}
	}
	var fence int64
	if len(counters) > 0 {
		fence = n.fenceFloor()
	}
	for i, key := range lockKeys {
		if fault == "partial" && n.lookup(db, key) != nil {
			continue
		}
		k := &simKey{val: string(args[0]), expireMs: n.ms() + ms}
		n.wrote(c, k)
		k.afterRelease = c.releasedHere(args[0])
		db[string(key)] = k
		set++
		if len(counters) > 0 {
			v, ok := n.counter(db, counters[i])
			if !ok {
				return append(out, "-ERR Error running script: bad counter\r\n"...)
			}
			fence = max(fence, v)
		}
	}
	if set == 0 {
		return appendInt(out, -1)
	}
	return appendInt(out, fence)
}

// simMultiRelease: delete every key holding the token and publish each
// one's release; 1 when all held it, else 0.
func simMultiRelease(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	c.relToks[c.relNext%4] = string(args[0])
	c.relNext++
	db := n.db(c.db)
	all := int64(1)
	for _, key := range keys {
		if k := n.lookup(db, key); k != nil && k.val == string(args[0]) {
			delete(db, string(key))
			n.publish(ReleasedChannel(string(key)), string(args[1]))
		} else {
			all = 0
		}
	}
	return appendInt(out, all)
}

// simMultiExtend: while every key holds the token, raise each one's PTTL
// to at least ms (1); else change nothing (0).
func simMultiExtend(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	ms, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil {
		return append(out, "-ERR Error running script: bad ms\r\n"...)
	}
	db := n.db(c.db)
	for _, key := range keys {
		if k := n.lookup(db, key); k == nil || k.val != string(args[0]) {
			return appendInt(out, 0)
		}
	}
	for _, key := range keys {
		if n.pttl(n.lookup(db, key)) < ms {
			n.pexpire(c, key, ms)
		}
	}
	return appendInt(out, 1)
}

// simMultiFence: keys are the set's then their counters. While every key
// holds the token: -1 if a counter is above the fence, else raise every
// counter to it (1); 0 without the token.
func simMultiFence(n *simNode, c *simConn, keys, args [][]byte, out []byte) []byte {
	fence, err := strconv.ParseInt(string(args[1]), 10, 64)
	if err != nil || len(keys)%2 != 0 {
		return append(out, "-ERR Error running script: bad fence\r\n"...)
	}
	db := n.db(c.db)
	half := len(keys) / 2
	for i := range half {
		if k := n.lookup(db, keys[i]); k == nil || k.val != string(args[0]) {
			return appendInt(out, 0)
		}
		cur, ok := n.counter(db, keys[half+i])
		if !ok {
			return append(out, "-ERR Error running script: bad counter\r\n"...)
		}
		if cur > fence {
			return appendInt(out, -1)
		}
	}
	for i := range half {
		if cur, _ := n.counter(db, keys[half+i]); cur < fence {
			k := &simKey{val: string(args[1]), expireMs: -1}
			n.wrote(c, k)
			db[string(keys[half+i])] = k
		}
	}
	return appendInt(out, 1)
}

// TestSimMultiSafety: multi-locks beside mutexes under the default faults,
// every check, no violation allowed; a fifth of the seeds without faults
// (no key may be left behind).
func TestSimMultiSafety(t *testing.T) {
	seeds, ops := simSize()
	seeds = max(seeds/3, 4)
	results := runSeeds(t, 1, seeds, ops, func(i int) string {
		if i%5 == 4 {
			return "multicalm"
		}
		return "multi"
	})
	var total simStats
	pairs := 0
	for _, r := range results {
		total.add(r.stats)
		pairs += r.fencePairs
		assert.Zero(t, r.violations, "seed %d (%s): %s\nreplay: %s", r.seed, r.profile, r.report, replayCmd(r, ops))
	}
	t.Logf("%d seeds: %d acquires (%d multi: %d acquired, %d fenced), %d acquired in all, %d lost; %d fenced pairs compared; faults: %d freezes, %d crashes, %d partitions, %d pauses",
		seeds, total.acquires, total.multiAcquires, total.multiAcquired, total.multiFenced, total.acquired, total.lost, pairs,
		total.freezes, total.crashes, total.partitions, total.pauses)
	assert.Positive(t, total.multiAcquired, "no multi-lock was ever acquired: the run proves nothing")
	assert.Positive(t, total.acquired-total.multiAcquired, "no mutex was ever acquired beside the multi-locks")
}

// TestSimMultiControlPartialGrant (a): the acquire script sets the free
// keys even when one is held and answers granted. The overlap check must
// catch it in every seed; its twin multictl must be clean.
func TestSimMultiControlPartialGrant(t *testing.T) { controlRun(t, "multipartial", "multictl", 3000) }

// TestSimMultiControlIgnoreKey (b): the acquire script never checks the
// set's last key.
func TestSimMultiControlIgnoreKey(t *testing.T) { controlRun(t, "multiignore", "multictl", 3000) }

// TestSimMultiCheckerSelfTest: a multi-lock is filed under each of its
// keys: one overlapping a mutex on any member is caught, two sharing a
// token (one lock) are not.
func TestSimMultiCheckerSelfTest(t *testing.T) {
	ms := time.Millisecond
	k := newChecker()
	multi := &heldLock{c: &simClient{id: 1}, id: 1, key: "a", keys: []string{"a", "b"}, token: "m", segs: []segment{{0, 10 * ms}}, ended: true}
	k.add(multi)
	k.addInterval("c", "x", 5*ms, 15*ms) // another resource: fine
	k.checkOverlaps()
	assert.Zero(t, k.total(), k.report())
	k.addInterval("b", "y", 9*ms, 20*ms) // a mutex on b overlapping the set
	k.checkOverlaps()
	assert.Equal(t, 1, k.count["overlap"], k.report())
}

// TestSimMultiModelScripts: the model runs the multi scripts as their Lua
// does.
func TestSimMultiModelScripts(t *testing.T) {
	s, err := newSim(1, "multictl", 10, nil)
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
	fa, fb := FenceKey("a"), FenceKey("b")
	assert.Equal(t, "-NOSCRIPT No matching script. Please use EVAL.\r\n", run("EVALSHA", MultiAcquireSHA, "2", "a", "b", "t1", "100", "2"))
	assert.Equal(t, ":0\r\n", run("EVAL", multiAcquireSrc, "2", "a", "b", "t1", "100", "2"))
	assert.Equal(t, ":-2\r\n", run("EVALSHA", MultiAcquireSHA, "2", "c", "b", "t2", "100", "2")) // b held: nothing set
	assert.Equal(t, "$-1\r\n", run("GET", "c"))
	assert.Equal(t, ":0\r\n", run("EVAL", multiExtendSrc, "2", "a", "c", "t1", "500")) // c is not ours: nothing
	assert.Equal(t, ":1\r\n", run("EVAL", multiExtendSrc, "2", "a", "b", "t1", "500"))
	assert.Equal(t, "*2\r\n$2\r\nt1\r\n:500\r\n", run("EVAL", inspectSrc, "1", "b"))
	assert.Equal(t, ":0\r\n", run("EVAL", multiReleaseSrc, "2", "a", "c", "t1", "id1")) // a deleted, c not ours
	assert.Equal(t, "$-1\r\n", run("GET", "a"))
	assert.Equal(t, ":1\r\n", run("EVALSHA", MultiReleaseSHA, "1", "b", "t1", "id2"))
	// Fenced: the highest counter of the set, at least the clock floor
	// (TIME in µs), then raised on every counter.
	run("SET", fa, "7")
	// 7 is below the floor.
	assert.Equal(t, string(appendInt(nil, n.timeUs())), run("EVALSHA", MultiAcquireSHA, "4", "a", "b", fa, fb, "t3", "100", "2"))
	assert.Equal(t, ":0\r\n", run("EVAL", multiFenceSrc, "4", "a", "b", fa, fb, "t9", "8")) // not its token
	assert.Equal(t, ":-1\r\n", run("EVALSHA", MultiFenceSHA, "4", "a", "b", fa, fb, "t3", "6"))
	assert.Equal(t, ":1\r\n", run("EVALSHA", MultiFenceSHA, "4", "a", "b", fa, fb, "t3", "8"))
	assert.Equal(t, "$1\r\n8\r\n", run("GET", fb))
	assert.Equal(t, "$1\r\n8\r\n", run("GET", fa))
	assert.Equal(t, ":1\r\n", run("EVALSHA", MultiReleaseSHA, "2", "a", "b", "t3", "id3"))
	above := strconv.FormatInt(n.timeUs()+7, 10)
	run("SET", fa, above)
	// A counter above the floor.
	assert.Equal(t, ":"+above+"\r\n", run("EVALSHA", MultiAcquireSHA, "4", "a", "b", fa, fb, "t4", "100", "2"))
	assert.Zero(t, s.chk.total(), s.chk.report())
}
