package engine

import (
	"strconv"

	sort "github.com/liblock/liblock/core/internal/xsort"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// Counting semaphores: N permits per name, each permit one of N slots, and
// each slot a Redlock mutex of its own.
//
// A semaphore's keys on every node are SemKey(key, n) + ":" + slot for
// slot 0..n-1, where key is KeyPrefix + resource. SemKey puts a 0xFF byte
// (never in UTF-8, so never in a resource) and the permit count in the
// name: no resource's key, and no slot of a semaphore with another count,
// can be one of its slots. Two clients that use one name with different
// counts therefore use two different semaphores, each safe on its own (a
// count is part of a semaphore's identity, as the name is).
//
// Acquire: a first round of SET NX PX on the preferred slot's key (the
// mutex's command; semAttempt), and on a node where that slot is taken a
// script (sem_acquire.lua) that takes the preferred slot if it is free
// there, else the first free slot, and answers which slot it took (or
// that every slot is taken). A permit is
// held once one slot was granted by a quorum within the validity (start +
// ttl − drift, as for the mutex): that is exactly a Redlock mutex on that
// slot's key, so two valid holders of one slot are impossible, and so are
// N+1 valid holders of N slots. Grants of other slots (nodes that did not
// agree) are deleted at once. When no slot can reach a quorum any more,
// every grant is deleted and the next attempt prefers the slot that was
// free on the most nodes. Release, extension, loss and fencing are the
// mutex's, on the slot's key; waiting and wake-up are per semaphore: a
// release of any slot publishes on the semaphore's channel (SemKey), and
// each message wakes one local waiter.
//
// The design that caps a per-node holder set at N and admits a holder that
// a majority admitted is unsafe (README.md, "Semaphore safety"); the
// simulation's negative control semAnySlot runs it.

// SemKey is the common part of the keys of the semaphore with n permits on
// key (KeyPrefix + resource): key + 0xFF + "sem" + n. Its slots are
// SemKey + ":" + slot, and its release channel is ReleasedChannel(SemKey).
func SemKey(key string, n int) string { return key + "\xffsem" + strconv.Itoa(n) }

// SlotKey is the key of one permit slot of a semaphore (base: SemKey).
func SlotKey(base string, slot int) string { return base + ":" + strconv.Itoa(slot) }

// The semaphore scripts' SHA-1 sums (TestScriptHashes).
const (
	// SemAcquireSHA: take the preferred slot, else the first free one
	// (answering up to 16 free slots), or re-enter the slot a caller's
	// token holds; with the fence key, answer the fence counter too.
	SemAcquireSHA = "5b289332488dffe3c5071c434c26eb76c47751c3"
	// SemReleaseSHA: delete the token from one slot, or from every slot
	// but one, and publish on the semaphore's channel. One slot (a
	// permit's release, a stray's deletion) is a GET and DEL of the key
	// ARGV[4] names, as the mutex's release does, without the loop over
	// the slots (that cost a node 0.6 µs more per release).
	SemReleaseSHA = "dc2b20427ac084ed0f77fd0defe5b445339bad3c"
	// SemInspectSHA: every slot's value and PTTL.
	SemInspectSHA = "96733c5a92f31277d5e594d3b1da53af8d9742f6"
)

var (
	semAcquireScript = &script{src: semAcquireSrc, sha: SemAcquireSHA, bit: 1 << 6}
	semReleaseScript = &script{src: semReleaseSrc, sha: SemReleaseSHA, bit: 1 << 7}
	semInspectScript = &script{src: semInspectSrc, sha: SemInspectSHA, bit: 1 << 8}
)

// CheckPermits validates a semaphore's permit count (0 is refused too: a
// mutex is asked for by leaving the count out, never by a count of 0).
func CheckPermits(n int) error {
	if n < 1 || n > MaxPermits {
		return outOfRange("permits", "must be 1 to "+strconv.Itoa(MaxPermits)+", got "+strconv.Itoa(n), n < 1, int64(n), 1, MaxPermits, "count")
	}
	return nil
}

// semSlots is how many slots the scripts of a semaphore of n permits scan:
// n, or n+1 in the simulation's off-by-one negative control.
func (e *Engine) semSlots(n int) int { return n + e.semOffByOne }

// sendSemScript runs a semaphore script: its arguments beyond the second
// go in the command's args.
func (e *Engine) sendSemScript(n *node, h handler, sc *script, key, key2 string, args ...string) {
	c := command{kind: cmdEvalSHA, sc: sc, key: key, key2: key2, nargs: uint8(min(len(args), 2))}
	if len(args) > 0 {
		c.a1 = args[0]
	}
	if len(args) > 1 {
		c.a2 = args[1]
	}
	if len(args) > 2 {
		c.args = args[2:]
	}
	e.send(n, h, c)
}

// semAttempt starts a semaphore attempt's first round on every node.
//
// Without a caller's token or a fence (the usual acquire) the round is a
// plain SET NX PX of the preferred slot's key, exactly the mutex's
// command on that key: a script call costs a Redis node several times a
// SET (EVALSHA's own overhead; see README.md, "Semaphore: N permits per
// name", Cost), and when the preferred slot is free, as it is on an idle
// semaphore, SET NX does all the script would. A node where that slot is
// taken answers nil and gets the script (semScan), which takes another
// free slot there; that costs a second round trip to that node only. A
// grant by SET NX is a grant of slot semWant, the same thing the script's
// answer {semWant, 1, …} says, so the decision below is unchanged. With a
// caller's token (re-entry: the token may already hold some slot) or a
// fence (the script reads the counter) the script runs at once, and so
// it does for a retry: the first attempt failed, so the semaphore is
// contended and its preferred slot likely taken, where SET NX would cost
// a round trip more than the script (under BenchmarkContention the
// retries are what hands permits over).
func (e *Engine) semAttempt(o *acquireOp, a *attempt) {
	a.slots = make([]int32, len(e.nodes))
	a.chosen = -1
	if o.attempts == 1 {
		if s, ok := e.semHint[o.key]; ok && s < o.permits {
			o.slot = s
		}
	}
	a.semWant = o.slot
	if o.token == "" && !o.fence && o.attempts == 1 {
		key := SlotKey(o.key, o.slot)
		px := o.ttl.Milliseconds()
		for i, nd := range e.nodes {
			a.semSET |= 1 << uint(i)
			e.send(nd, a, command{kind: cmdSet, key: key, a1: a.token, px: px})
		}
		return
	}
	for i := range e.nodes {
		e.semScan(a, i)
	}
}

// semScan sends the acquire script to node i: take the preferred slot if
// it is free there, else the first free slot (or re-enter the slot a
// caller's token holds), and answer which.
func (e *Engine) semScan(a *attempt, i int) {
	o := a.op
	fenceKey := ""
	if o.fence {
		fenceKey = FenceKey(e.keyOf(o.resource))
	}
	reenter := "0"
	if o.token != "" {
		reenter = "1"
	}
	e.sendSemScript(e.nodes[i], a, semAcquireScript, o.key, fenceKey, a.token, strconv.FormatInt(o.ttl.Milliseconds(), 10),
		strconv.Itoa(e.semSlots(o.permits)), strconv.Itoa(a.semWant), reenter)
}

// semReply is a semaphore attempt's reply from node i: to the first
// round's SET NX of slot semWant (semSET), or to the acquire script.
func (e *Engine) semReply(a *attempt, i int, r Reply) {
	if a.state[i] != pending {
		return
	}
	o := a.op
	bit := uint64(1) << uint(i)
	set := a.semSET&bit != 0
	a.semSET &^= bit
	if why := acquireShape(o, r, set); why != "" {
		r = misshapen(why) // shape.go
	}
	grant := func(slot int) {
		a.state[i] = granted
		a.granted++
		a.slots[i] = int32(slot)
	}
	switch {
	case r.Err != nil:
		a.state[i] = failed
		a.failed++
		a.causes = append(a.causes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: r.Err})
	case set && r.Nil && !a.decided:
		// The preferred slot is taken on this node: the script looks for
		// another one there. It is queued before anything the decision
		// sends this node (a cleanup or a stray's deletion), so those
		// act on what it took; once decided it is never sent.
		e.semScan(a, i)
		return
	case set && r.Nil:
		a.state[i] = refused
		a.refused++
	case set:
		grant(a.semWant)
	case len(r.Elems) < 3:
		a.state[i] = failed
		a.failed++
		a.causes = append(a.causes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: protocolError("a semaphore acquire answered " + strconv.Itoa(len(r.Elems)) + " values")})
	case r.Elems[0].Int < 0 || r.Elems[0].Int >= int64(e.semSlots(o.permits)):
		a.state[i] = refused
		a.refused++
	default:
		slot := int(r.Elems[0].Int)
		grant(slot)
		if r.Elems[1].Int == 2 {
			a.reFlags |= bit
		}
		if o.fence && !a.decided {
			a.maxFence = max(a.maxFence, r.Elems[2].Int)
		}
		if !a.decided && len(r.Elems) > 3 {
			// The other slots the node saw free (it lists them when the
			// preferred one was taken): after a split the next attempt
			// prefers the slot free on the most nodes (mostFree). Nodes
			// that took the preferred slot list nothing, and an attempt
			// that wins allocates nothing here.
			if a.free == nil {
				a.free = map[int]int{}
			}
			for _, f := range r.Elems[3:] {
				if f.Int >= 0 && f.Int < int64(o.permits) && int(f.Int) != slot {
					a.free[int(f.Int)]++
				}
			}
		}
	}
	if a.decided {
		e.semLate(a, i)
		return
	}
	nodes := len(e.nodes)
	left := nodes - a.granted - a.refused - a.failed
	slot, count := a.bestSlot(e)
	switch {
	case count >= e.quorum:
		a.decided = true
		a.chosen = slot
		e.semHintSet(o.key, slot)
		a.reentered = 0
		for j := range e.nodes {
			if a.holds(j) && a.reFlags&(1<<uint(j)) != 0 {
				a.reentered++
			}
			e.semStray(a, j)
		}
		until := e.validUntil(a.start, o.ttl)
		if e.now < until {
			if o.fence {
				e.startFencing(a)
				return
			}
			e.acquired(o, a, until)
			return
		}
		e.attemptFailed(a, &UnavailableError{Op: "acquire", Reason: e.tooLate("granted", a.start, o.ttl), Nodes: sortCauses(a.causes)})
	case count+left < e.quorum:
		a.decided = true
		if best, ok := a.mostFree(o.permits); ok {
			o.slot = best
		}
		if a.failed > nodes-e.quorum {
			if left > 0 {
				e.cleanup(a)
				a.unavailable = true
				return
			}
			e.attemptFailed(a, e.unavailable("acquire", a.state, a.causes, ""))
			return
		}
		why := "no permit of " + strconv.Itoa(o.permits) + " free on a quorum: "
		if a.granted == 0 {
			why += "all taken on " + strconv.Itoa(a.refused) + " of " + strconv.Itoa(nodes) + " nodes"
		} else {
			why += "the nodes granted different slots (most on one slot: " + strconv.Itoa(count) + " of " + strconv.Itoa(nodes) + "), " + e.quorumText()
		}
		e.attemptFailed(a, errNotAcquired(o.resource, why+causesText(a.causes)))
	}
}

// semHintSet records the slot this engine won on the semaphore key, for
// its next acquire's first attempt to prefer: the permit's own release
// frees it, so when another holder keeps slot 0 for long, this engine's
// next permit is one SET NX round again rather than a nil and a script.
// Slot 0 (the default) is recorded by forgetting the key. The map is a
// hint only (the preferred slot decides how fast a permit is found, never
// whether two can share a slot), so it is bounded by dropping it whole
// when it reaches semHintMax keys.
func (e *Engine) semHintSet(key string, slot int) {
	if slot == 0 {
		delete(e.semHint, key)
		return
	}
	if e.semHint == nil || len(e.semHint) >= semHintMax {
		e.semHint = map[string]int{}
	}
	e.semHint[key] = slot
}

// semHintMax bounds semHint: a few hundred semaphores in use at once by
// one client keep their hints.
const semHintMax = 512

// bestSlot returns the slot granted by the most nodes and their count
// (the lowest such slot on a tie). In the capped-set negative control
// (semAnySlot) every grant counts, whatever its slot: a node admits while
// it has a free slot, and a majority of admissions makes a holder.
func (a *attempt) bestSlot(e *Engine) (int, int) {
	slot, count := -1, 0
	var counts [8]int
	for i, st := range a.state {
		if st != granted {
			continue
		}
		s := int(a.slots[i])
		c := 0
		if s < len(counts) {
			counts[s]++
			c = counts[s]
		} else {
			for j, st2 := range a.state {
				if st2 == granted && int(a.slots[j]) == s {
					c++
				}
			}
		}
		if c > count || c == count && s < slot {
			slot, count = s, c
		}
	}
	if e.semAnySlot {
		count = a.granted
	}
	return slot, count
}

// mostFree returns the slot free on the most nodes in this attempt's
// answers (the lowest on a tie): each granted slot was free there, and
// a.free counts the others the nodes listed.
func (a *attempt) mostFree(permits int) (int, bool) {
	best, count := -1, 0
	for s := range permits {
		c := a.free[s]
		for i, st := range a.state {
			if st == granted && int(a.slots[i]) == s {
				c++
			}
		}
		if c > count {
			best, count = s, c
		}
	}
	return best, best >= 0
}

// holds reports whether node i granted the attempt what it acquires: its
// key (mutex) or its chosen slot (semaphore).
func (a *attempt) holds(i int) bool {
	return a.state[i] == granted && (a.op.permits == 0 || int(a.slots[i]) == a.chosen)
}

// semStray deletes (unannounced, see semCleanup), once the attempt won slot chosen, what node i may
// hold of it elsewhere: the other slot it granted, or (a node that failed
// to answer, which may still have run the script) any slot but the chosen
// one. With a caller's token too: a node holds a token on one slot at
// most (the script re-enters the slot that holds it), so a token holds one
// permit at most, and that is the one won.
func (e *Engine) semStray(a *attempt, i int) {
	o := a.op
	n := strconv.Itoa(e.semSlots(o.permits))
	switch st := a.state[i]; {
	case st == granted && int(a.slots[i]) != a.chosen:
		e.sendSemScript(e.nodes[i], discard{}, semReleaseScript, o.key, "", a.token, "", n, strconv.Itoa(int(a.slots[i])), "1")
	case st == failed:
		e.sendSemScript(e.nodes[i], discard{}, semReleaseScript, o.key, "", a.token, "", n, strconv.Itoa(a.chosen), "0")
	}
}

// semLate handles node i's answer after the attempt was decided.
func (e *Engine) semLate(a *attempt, i int) {
	if a.chosen >= 0 {
		// Won: a late grant of the chosen slot takes the fence while that
		// round runs; anything else it holds is a stray.
		if f := a.fencing; f != nil && !f.decided {
			if a.holds(i) {
				e.sendFence(f, i)
			} else {
				e.fenceDecide(f)
			}
		}
		e.semStray(a, i)
		return
	}
	// Lost: its cleanup is queued behind it on every connection.
	if a.unavailable && a.granted+a.refused+a.failed == len(e.nodes) {
		a.unavailable = false
		e.attemptFailed(a, e.unavailable("acquire", a.state, a.causes, ""))
	}
}

// semCleanup deletes a failed semaphore attempt's grants: the slot each
// node granted, and any slot on a node whose answer is not in.
//
// Neither it nor semStray announces what it deletes (an empty release id:
// the script publishes nothing): under contention every failed attempt
// deletes grants, and a message per deletion woke every waiting client,
// whose attempts failed in turn — a storm that cost a 3-permit semaphore
// with 10 contenders 8x its sections per second (BenchmarkContention).
// Only releases wake waiters; a slot a failed attempt held on a minority
// is found by the oldest waiter's polling.
func (e *Engine) semCleanup(a *attempt) {
	o := a.op
	const id = "" // see above
	n := strconv.Itoa(e.semSlots(o.permits))
	for i, nd := range e.nodes {
		switch a.state[i] {
		case refused:
		case granted:
			e.sendSemScript(nd, discard{}, semReleaseScript, o.key, "", a.token, id, n, strconv.Itoa(int(a.slots[i])), "1")
		default:
			e.sendSemScript(nd, discard{}, semReleaseScript, o.key, "", a.token, id, n, "-1", "0")
		}
	}
}

// lockKey is the key a lock's extension and fence act on: its key, or
// its slot's key for a permit.
func (l *lockState) lockKey() string {
	if l.permits == 0 {
		return l.key
	}
	return SlotKey(l.key, l.slot)
}

// sendRelease deletes a lock's token from its key (a permit: its slot)
// and announces it on the lock's channel with release id id.
func (e *Engine) sendRelease(n *node, h handler, l *lockState, id string) {
	if l.permits == 0 {
		e.sendScript(n, h, releaseScriptFor(l.mode, l.elect), l.key, l.token, id)
		return
	}
	e.sendSemScript(n, h, semReleaseScript, l.key, "", l.token, id, strconv.Itoa(e.semSlots(l.permits)), strconv.Itoa(l.slot), "1")
}

// Holder is one permit of a semaphore held on a quorum (Inspection.Holders).
type Holder struct {
	Slot     int           // the permit's slot, 0..permits-1
	Owner    string        // the holder's label, "" for none
	Validity time.Duration // how long it certainly stays held (NoExpiry: no expiry)
}

// inspectSem is a semaphore Inspect's reply from node i: its slots'
// values and ttls, kept per node.
type semInspect struct {
	values [][]string
	has    [][]bool
	ttls   [][]time.Duration
}

// InspectPermits starts an inspection of the semaphore of permits permits
// on resource: which permits a quorum holds, by whom, and for how long.
// Its outcome is an ActDone whose Inspection has Permits, InUse and
// Holders set.
func (e *Engine) InspectPermits(resource string, permits int) (OpID, error) {
	if err := CheckResource(resource); err != nil {
		return 0, err
	}
	if err := CheckPermits(permits); err != nil {
		return 0, err
	}
	if e.closing {
		return 0, ErrClosed
	}
	e.begin()
	n := len(e.nodes)
	op := &inspectOp{id: OpID(e.newID()), resource: resource, key: SemKey(e.keyOf(resource), permits), start: e.now,
		values: make([]string, n), has: make([]bool, n), ttls: make([]time.Duration, n), errs: make([]error, n),
		permits: permits, sem: &semInspect{values: make([][]string, n), has: make([][]bool, n), ttls: make([][]time.Duration, n)}}
	e.inspecting++
	for _, nd := range e.nodes {
		e.sendSemScript(nd, op, semInspectScript, op.key, "", strconv.Itoa(permits))
	}
	e.end()
	return op.id, nil
}

// semInspectReply records node i's answer to a semaphore inspection.
func (op *inspectOp) semInspectReply(i int, r Reply) {
	s := op.sem
	switch {
	case r.Err != nil:
		op.errs[i] = r.Err
	case len(r.Elems) != 2*op.permits:
		op.errs[i] = protocolError("a semaphore inspection answered " + strconv.Itoa(len(r.Elems)) + " values")
	default:
		op.ttls[i] = NoExpiry // no slot there (as PTTL -2 is for a mutex)
		s.values[i] = make([]string, op.permits)
		s.has[i] = make([]bool, op.permits)
		s.ttls[i] = make([]time.Duration, op.permits)
		for k := range op.permits {
			v, p := r.Elems[2*k], r.Elems[2*k+1].Int
			s.has[i][k], s.values[i][k] = !v.Nil, v.Str
			if v.Nil {
				continue
			}
			first := !op.has[i]
			op.has[i] = true
			t := NoExpiry
			if p >= 0 {
				t = time.Duration(p) * time.Millisecond
			}
			s.ttls[i][k] = t
			// The node's TTL: the longest of its slots' (NoExpiry for
			// a slot without expiry).
			if first || t == NoExpiry || op.ttls[i] != NoExpiry && t > op.ttls[i] {
				op.ttls[i] = t
			}
		}
	}
}

// semInspection is the outcome of a semaphore inspection: per slot, the
// holder a quorum agrees on, with the validity computed as for a mutex.
func (e *Engine) semInspection(op *inspectOp) (*Inspection, error) {
	n := len(e.nodes)
	s := op.sem
	in := &Inspection{Permits: op.permits, Nodes: make([]NodeState, n)}
	var causes []*NodeError
	for i := range n {
		in.Nodes[i] = NodeState{Node: i, Addr: e.nodes[i].name, Locked: op.has[i], TTL: op.ttls[i], Err: op.errs[i]}
		if op.errs[i] != nil {
			causes = append(causes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: op.errs[i]})
		}
	}
	for k := range op.permits {
		count := map[string]int{}
		holder, best := "", 0
		for i := range n {
			if op.errs[i] != nil || !s.has[i][k] {
				continue
			}
			v := s.values[i][k]
			count[v]++
			if c := count[v]; c > best || c == best && v < holder {
				holder, best = v, c
			}
		}
		if best < e.quorum {
			continue
		}
		var ttls []time.Duration
		for i := range n {
			if op.errs[i] == nil && s.has[i][k] && s.values[i][k] == holder {
				t := s.ttls[i][k]
				if t == NoExpiry {
					t = time.Duration(1<<63 - 1)
				}
				ttls = append(ttls, t)
			}
		}
		sort.Slice(ttls, func(i, j int) bool { return ttls[i] > ttls[j] })
		left := ttls[e.quorum-1]
		v := NoExpiry
		if left != time.Duration(1<<63-1) {
			v = left - (e.now - op.start) - (time.Duration(float64(left)*e.drift) + ClockPrecision)
			if v <= 0 {
				continue
			}
		}
		in.Holders = append(in.Holders, Holder{Slot: k, Owner: OwnerOf(holder), Validity: v})
	}
	in.InUse = len(in.Holders)
	if in.InUse > 0 {
		h := in.Holders[0]
		in.Held, in.Validity, in.Owner = true, h.Validity, h.Owner
		return in, nil
	}
	if len(causes) > n-e.quorum {
		return nil, e.unavailable("inspect", nil, causes, ": cannot tell which permits are held")
	}
	return in, nil
}
