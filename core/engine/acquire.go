package engine

import (
	"strconv"
	"strings"

	sort "github.com/liblock/liblock/core/internal/xsort"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// acquireOp is one Acquire: attempts, retries and waiting until it ends.
type acquireOp struct {
	id         OpID
	resource   string
	key        string
	ttl        time.Duration
	wait       bool
	waitUntil  time.Duration
	autoExtend bool
	att        *attempt      // the attempt in flight, or nil
	delay      time.Duration // the next backoff's scale
	woken      bool          // a release was seen during the attempt in flight
	queued     bool          // in e.waiters[key]
	finished   bool
	timerGen   uint64
	token      string // the caller's token, or "" for a random one per attempt
	fence      bool
	permits    int // a semaphore's permit count, 0 for a mutex (key is then SemKey)
	slot       int // the slot a semaphore's next attempt prefers
	// mode: a read-write lock's reader or writer (rwlock.go); intentID: a
	// waiting writer's; intentLeft: an attempt was sent, which may leave it
	// on a node; intentSeen: a node answered that it did.
	mode       LockMode
	intentID   string
	intentLeft bool
	intentSeen bool
	// A multi-resource acquire's set (multi.go), nil for a mutex; resource
	// is then the set's label in errors.
	resources, keys, fenceKeys []string
	// A campaign (election.go): its value, after the token in the key.
	elect bool
	value string
	// The first attempt and the lock live in the acquire's own memory:
	// most acquires make one attempt, and one lock when it succeeds, and
	// each allocation costs (far more in liblock.wasm than natively).
	// Each is used at most once and never reused, so whatever still
	// refers to one (a late reply, the lock's holder) finds it as it was.
	first     attempt
	firstUsed bool
	lockMem   lockState
	lockUsed  bool
	// For reports (Config.Report): when it started, its rounds, and
	// whether and since when it waits.
	start     time.Duration
	waitStart time.Duration
	attempts  uint32
	waiting   bool
}

// Attempt states per node.
const (
	pending = iota
	granted
	refused // a nil reply: the key exists, our token is not there
	failed
)

// attempt is one round of SET NX PX to every node, with its own token: a
// late cleanup of one attempt can then never delete a later attempt's key.
type attempt struct {
	op       *acquireOp
	token    string
	start    time.Duration
	state    []uint8
	small    [8]uint8 // state's storage for up to 8 nodes
	granted  int
	refused  int
	failed   int
	causes   []*NodeError
	decided  bool
	canceled bool
	// unavailable: decided unavailable while nodes had not answered; it
	// fails once they all have (see reply).
	unavailable bool
	// cleanedUp: its cleanup is written (behind it, on every connection).
	cleanedUp bool
	// reentered counts the nodes where the caller's token already held the
	// key (a re-entry when they are a quorum: a token left on a minority is
	// an ordinary acquire); maxFence is the highest fence counter the granting nodes hold.
	reentered int
	maxFence  int64
	// fencing is the second round of a fenced acquire, once a quorum
	// granted: the fence written to the nodes that granted.
	fencing *fenceRound
	// A semaphore's attempt (semaphore.go): the slot each node granted,
	// the one won (-1 until then), the nodes whose grant was a re-entry,
	// and how many nodes saw each slot free.
	slots   []int32
	chosen  int
	reFlags uint64
	free    map[int]int
	// semSET: the nodes whose answer due is the first round's SET NX of
	// the slot semWant (semaphore.go, semAttempt), not the script's.
	semSET  uint64
	semWant int
	// heldBy: the index of the resource a node named held (a multi-lock's
	// refusal), -1 if none did.
	heldBy int
}

func (o *acquireOp) live(gen uint64) bool { return !o.finished && gen == o.timerGen }

// fire is the end of a backoff or of a waiter's sleep: one more attempt.
func (o *acquireOp) fire(e *Engine, gen uint64) {
	if o.live(gen) && o.att == nil {
		e.startAttempt(o)
	}
}

func (e *Engine) startAttempt(o *acquireOp) {
	if e.misconfig != nil && o.attempts > 0 {
		// Found at connect during an earlier attempt (identity.go).
		e.finishAcquire(o, 0, e.misconfig)
		return
	}
	o.timerGen++
	o.woken = false
	o.attempts++
	token := o.token
	if token == "" {
		token = e.newToken()
	}
	if o.elect {
		token += "\xff" + o.value
	}
	a := firstOrNew(&o.first, &o.firstUsed)
	*a = attempt{op: o, token: token, start: e.now, heldBy: -1}
	a.state = a.small[:0]
	if len(e.nodes) > len(a.small) {
		a.state = make([]uint8, 0, len(e.nodes))
	}
	a.state = a.state[:len(e.nodes)]
	o.att = a
	if o.permits > 0 {
		e.semAttempt(o, a)
		return
	}
	px := o.ttl.Milliseconds()
	for _, n := range e.nodes {
		switch {
		case o.mode != ModeExclusive:
			e.sendScript(n, a, rwAcquireScript, o.key, a.token, e.rwArgs(o, px))
		case o.keys != nil:
			e.sendAcquireMulti(n, a)
		case o.token != "":
			e.sendScript(n, a, acquireTokenScript, o.key, a.token, strconv.FormatInt(px, 10))
		case o.fence:
			e.sendScript2(n, a, acquireFenceScript, o.key, FenceKey(o.key), a.token, strconv.FormatInt(px, 10))
		default:
			e.send(n, a, command{kind: cmdSet, key: o.key, a1: a.token, px: px})
		}
	}
}

func (a *attempt) reply(e *Engine, i int, r Reply) {
	if a.op.permits > 0 {
		e.semReply(a, i, r)
		return
	}
	if a.state[i] != pending {
		return
	}
	o := a.op
	if why := acquireShape(o, r, false); why != "" {
		r = misshapen(why) // shape.go
	}
	switch {
	case r.Err != nil:
		a.state[i] = failed
		a.failed++
		a.causes = append(a.causes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: r.Err})
	case r.Nil, o.token != "" && r.Int == 0, (o.fence || o.keys != nil || o.mode != ModeExclusive) && r.Int < 0:
		a.state[i] = refused
		a.refused++
		o.rwRefused(r)
		if o.keys != nil {
			a.multiRefused(r.Int)
		}
	default:
		a.state[i] = granted
		a.granted++
		if o.token != "" && r.Int == 2 {
			a.reentered++
		}
		if o.fence && !a.decided {
			a.maxFence = max(a.maxFence, r.Int)
		}
	}
	if a.decided {
		if f := a.fencing; f != nil && !f.decided {
			// A late answer while the fence round runs: a grant gets the
			// fence too, so that one node of the early quorum failing in
			// the second round does not fail the acquire; anything else
			// may make the round's failure certain.
			if a.state[i] == granted {
				e.sendFence(f, i)
			} else {
				e.fenceDecide(f)
			}
		} else if f != nil && o.elect && a.state[i] == granted && f.accepted >= e.quorum {
			// A leader's grant later than its fence round takes the
			// term too: leader() counts a term only where a quorum of
			// holders shows it (election.go), and this holder may be one
			// of the quorum that outlives a node of the round's. On a
			// key released or cleaned up meanwhile the script writes
			// nothing.
			e.sendFence(f, i)
		}
		if a.unavailable && a.granted+a.refused+a.failed == len(e.nodes) {
			a.unavailable = false
			e.attemptFailed(a, e.unavailable("acquire", a.state, a.causes, ""))
		}
		return // late: a failed attempt's cleanup is already queued behind it
	}
	n := len(e.nodes)
	left := n - a.granted - a.refused - a.failed
	switch {
	case a.granted >= e.quorum && o.token != "" && a.reentered < e.quorum && a.reentered+left >= e.quorum:
		// Granted, but whether as a re-entry is not certain yet: a node
		// where the token's key had already gone (or never got it) grants
		// afresh, and the nodes still to answer may hold the token on a
		// quorum. Their answers, due within the node timeout, decide.
		return
	case a.granted >= e.quorum:
		a.decided = true
		// Decided as soon as a quorum granted: the others' late grants hold
		// only our own token, which the lock's release deletes everywhere.
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
	case a.granted+left < e.quorum:
		a.decided = true
		if a.failed > n-e.quorum {
			if left > 0 {
				// Unavailable whatever the others answer. Their answers,
				// due within the node timeout, name every node's cause
				// ("all 3 nodes failed" rather than "2 of 3"): clean up
				// now, report once they are in.
				e.cleanup(a)
				a.unavailable = true
				return
			}
			e.attemptFailed(a, e.unavailable("acquire", a.state, a.causes, ""))
			return
		}
		detail := "granted by " + strconv.Itoa(a.granted) + " of " + strconv.Itoa(n) + " nodes, " + e.quorumText() + causesText(a.causes)
		if o.keys != nil {
			e.attemptFailed(a, e.multiNotAcquired(a, detail))
			return
		}
		e.attemptFailed(a, errNotAcquired(o.resource, detail))
	}
}

// causesText is the failed nodes' causes for a refusal's message, in node
// order ("; node 2 (127.0.0.1:7003): connection refused"): a refusal that
// counted a node as failed says which and why, as an unavailable one does.
func causesText(causes []*NodeError) string {
	var b strings.Builder
	for _, c := range sortCauses(append([]*NodeError(nil), causes...)) {
		b.WriteString("; ")
		b.WriteString(c.Error())
	}
	return b.String()
}

func sortCauses(c []*NodeError) []*NodeError {
	sort.Slice(c, func(i, j int) bool { return c[i].Node < c[j].Node })
	return c
}

// cleanup deletes the attempt's token from every node that may hold it:
// all but those that answered nil. A command queued behind the attempt's
// SET on the same connection runs after it.
func (e *Engine) cleanup(a *attempt) {
	if a.cleanedUp {
		return
	}
	a.cleanedUp = true
	if a.op.token != "" {
		// With a caller's token the attempt cannot tell the keys it set
		// from those of the lock it may have re-entered, which another
		// holder of the token relies on: it deletes nothing, and what it
		// set expires with its ttl.
		return
	}
	if a.op.permits > 0 {
		e.semCleanup(a)
		return
	}
	if a.op.keys != nil {
		e.releaseMultiKeys(a.op.keys, a.token, a.state)
		return
	}
	id := e.releaseID(a.op.key)
	for i, n := range e.nodes {
		if a.state[i] != refused {
			e.sendScript(n, discard{}, releaseScriptFor(a.op.mode, a.op.elect), a.op.key, a.token, id)
		}
	}
}

// discard is the handler of requests whose replies do not matter.
type discard struct{}

func (discard) reply(*Engine, int, Reply) {}

func (e *Engine) attemptFailed(a *attempt, err error) {
	o := a.op
	e.cleanup(a)
	if o.att == a {
		o.att = nil
	}
	if o.finished {
		return
	}
	if e.report && !e.closing && o.wait && e.now < o.waitUntil {
		e.repWaitStart(o)
	}
	switch {
	case e.closing:
		e.finishAcquire(o, 0, ErrClosed)
	case !o.wait || e.now >= o.waitUntil:
		e.finishAcquire(o, 0, err)
	case o.keys != nil:
		e.multiRetry(o)
	case o.woken:
		e.subscribe(o.key)
		e.startAttempt(o)
	case e.oldest(o):
		// The key's channel from the first refusal on; a release that
		// came before the subscription took is found by the first poll,
		// minRetryDelay away. Again after a pub/sub connection was lost.
		e.subscribe(o.key)
		if until := e.heldFor(o); until > 0 && o.permits == 0 {
			// This engine holds the key: the lock's release, loss or
			// expiry wakes the oldest waiter, and a poll before then
			// could only fail.
			o.timerGen++
			e.timers.push(min(max(until, e.now+o.delay/2), o.waitUntil), o, o.timerGen)
		} else {
			e.backoff(o)
		}
	default:
		e.subscribe(o.key)
		o.timerGen++
		e.timers.push(o.waitUntil, o, o.timerGen)
	}
	e.rwWaiting(o)
}

// backoff arms the oldest waiter's next poll. Only the oldest local waiter
// polls the nodes; the others sleep until a release wakes them or their
// wait runs out, so a thousand waiters on one key cost one poller.
func (e *Engine) backoff(o *acquireOp) {
	d := min(o.delay/2+time.Duration(e.rng.Int64N(int64(o.delay/2)+1)), o.waitUntil-e.now)
	o.delay = min(2*o.delay, maxRetryDelay)
	o.timerGen++
	e.timers.push(e.now+d, o, o.timerGen)
}

// heldHere returns when the validity of this engine's lock on key ends,
// or 0 when it holds none.
func (e *Engine) heldHere(key string) time.Duration {
	var until time.Duration
	for _, l := range e.locks {
		if l.holds(key) && !l.released && l.lostErr == nil && l.validUntil > e.now {
			until = max(until, l.validUntil)
		}
	}
	return until
}

func (e *Engine) oldest(o *acquireOp) bool {
	q := e.waiters[o.key]
	return len(q) > 0 && q[0] == o
}

func (e *Engine) acquired(o *acquireOp, a *attempt, until time.Duration) {
	if o.att == a {
		o.att = nil
	}
	l := firstOrNew(&o.lockMem, &o.lockUsed)
	*l = lockState{
		id: LockID(e.newID()), resource: o.resource, key: o.key, token: a.token,
		ttl: o.ttl, validUntil: until, autoExtend: o.autoExtend, reentered: a.reentered >= e.quorum,
		resources: o.resources, keys: o.keys, mode: o.mode, elect: o.elect, since: e.now,
	}
	if a.fencing != nil {
		l.fence = a.fencing.fence
		for i, st := range a.fencing.state {
			if st == granted {
				l.termShown |= 1 << i
			}
		}
	}
	if o.permits > 0 {
		l.permits, l.slot = o.permits, a.chosen
	}
	e.locks[l.id] = l
	e.schedule(l)
	e.finishAcquire(o, l.id, nil)
}

// finishAcquire ends an acquire and reports it. Ending one in flight
// (canceled, closed) cleans up its attempt.
func (e *Engine) finishAcquire(o *acquireOp, lock LockID, err error) {
	if o.finished {
		return
	}
	o.finished = true
	err = e.misconfigured(err) // identity.go
	o.timerGen++
	delete(e.ops, o.id)
	if a := o.att; a != nil && (!a.decided || a.fencing != nil && !a.fencing.decided) {
		// In flight: its first round, or the fence round after it.
		a.decided = true
		if a.fencing != nil {
			a.fencing.decided = true
		}
		e.cleanup(a)
	}
	o.att = nil
	e.rwFinished(o)
	if o.keys != nil {
		e.multiDone(o)
	}
	if o.queued {
		var heldUntil time.Duration
		if l := e.locks[lock]; l != nil {
			heldUntil = l.validUntil
		}
		e.unqueue(o, heldUntil)
	}
	if e.report {
		e.repAcquireEnd(o, lock, err)
	}
	e.emit(Action{Kind: ActDone, Op: o.id, Lock: lock, Err: err})
}

// unqueue removes a waiter; when it was the oldest, the next oldest takes
// over polling: at once when it gave up. When it took the key (heldUntil:
// the new lock's validity end), the key is held by this engine, and every
// way that lock can end — its release, a hand-off, its loss, its validity
// running out — wakes the next waiter; polling before then could only fail
// (and under contention would cost a SET round per section). So the next
// oldest polls only once that validity has ended without a wake-up (the
// lock was extended, or a wake-up was missed), as a fallback.
func (e *Engine) unqueue(o *acquireOp, heldUntil time.Duration) {
	o.queued = false
	q := e.waiters[o.key]
	if len(q) == 1 && q[0] == o {
		// The only waiter, as every uncontended acquire with a wait is:
		// its queue's memory serves the next one (Acquire).
		q[0] = nil
		e.spareQueue = q[:0]
		delete(e.waiters, o.key)
		e.unsubscribe(o.key)
		return
	}
	wasOldest := len(q) > 0 && q[0] == o
	for i, x := range q {
		if x == o {
			q = append(q[:i:i], q[i+1:]...)
			break
		}
	}
	if len(q) == 0 {
		delete(e.waiters, o.key)
		e.unsubscribe(o.key)
		return
	}
	e.waiters[o.key] = q
	switch next := q[0]; {
	case !wasOldest:
	case heldUntil > 0 && rwShares(o, next):
		e.wakeOne(next) // a reader took it: the next reader may too
	case heldUntil > 0 && next.att == nil && !next.woken && o.permits == 0:
		// (A semaphore's other permits may be free: the next waiter tries
		// at once.)
		next.timerGen++
		e.timers.push(min(max(heldUntil, e.now+next.delay/2), next.waitUntil), next, next.timerGen)
	default:
		e.wakeOne(next)
	}
}

// wake tells the oldest local waiter on key not yet woken that the key may
// be free. Waking them all would make them split the vote and all back off.
func (e *Engine) wake(key string) {
	if len(e.multiWaiting) > 0 {
		e.wakeMulti(key)
	}
	for _, o := range e.waiters[key] {
		if !o.woken {
			e.wakeOne(o)
			return
		}
	}
}

func (e *Engine) wakeOne(o *acquireOp) {
	if e.closing {
		return // every acquire ends with ErrClosed: an attempt now is wasted
	}
	if o.att != nil {
		o.woken = true // retry as soon as the attempt in flight fails
		return
	}
	e.startAttempt(o)
}

func sortedOps(m map[OpID]*acquireOp) []*acquireOp {
	s := make([]*acquireOp, 0, len(m))
	for _, o := range m {
		s = append(s, o)
	}
	sort.Slice(s, func(i, j int) bool { return s[i].id < s[j].id })
	return s
}
