package engine

import (
	"strconv"

	sort "github.com/liblock/liblock/core/internal/xsort"
	time "github.com/liblock/liblock/core/internal/xtime"
)

// lockState is one held lock.
type lockState struct {
	id         LockID
	resource   string
	key        string
	token      string
	ttl        time.Duration
	validUntil time.Duration // the lock is ours strictly before it
	autoExtend bool
	fence      int64
	reentered  bool
	permits    int // a semaphore's permit count (key is then its SemKey), 0 for a mutex
	slot       int // a permit's slot
	mode       LockMode
	released   bool
	lostErr    error
	cur        *lockOp   // the extend or release in flight
	queue      []*lockOp // waiting for cur: one round at a time per lock
	timerGen   uint64
	// firstOp is the memory of the lock's first round (newOp): most locks
	// have one, their release. Used once, never reused.
	firstOp   lockOp
	firstUsed bool

	// A multi-resource lock's set and keys (multi.go), nil for a mutex;
	// resource is then the set's label in errors.
	resources, keys []string
	// since: when it was acquired; holdReported: its RepHold is out
	// (report.go).
	since        time.Duration
	holdReported bool
	// elect: a campaign's leadership (election.go). termShown: the nodes
	// (bit i: node i) known to show its term; an extension writes it
	// where it holds the key without it.
	elect     bool
	termShown uint64
	// unsure: the nodes (bit i: node i) where a release round failed
	// after its command was written: it may have deleted the key there.
	unsure uint64
}

// newOp returns a new lockOp set to op, in the lock's own memory for its
// first round.
func (l *lockState) newOp(op lockOp) *lockOp {
	p := firstOrNew(&l.firstOp, &l.firstUsed)
	*p = op
	return p
}

// firstOrNew returns first the first time (marking it used) and a new T
// after that: an object's first helper lives in the object's own memory
// (one allocation less for the common case), and is never handed out twice,
// so whatever still refers to it finds it as it was.
func firstOrNew[T any](first *T, used *bool) *T {
	if *used {
		return new(T)
	}
	*used = true
	return first
}

// lockOp is one extend or release round.
type lockOp struct {
	id       OpID // 0 for the engine's own (auto-extension, Close)
	lock     *lockState
	extend   bool
	internal bool
	ttl      time.Duration
	start    time.Duration
	until    time.Duration // the lock's validity when the round started
	state    []uint8
	small    [8]uint8 // state's storage for up to 8 nodes
	ok       int      // nodes that answered ≥ 1: the script matched our token
	zero     int
	failed   int
	causes   []*NodeError
	decided  bool
	remote   bool // a release's message reached another client's subscription
}

func (l *lockState) live(gen uint64) bool {
	return gen == l.timerGen && !l.released && l.lostErr == nil
}

func (l *lockState) stopTimer() { l.timerGen++ }

// schedule arms the lock's one timer: the next auto-extension, or the
// moment its validity runs out.
func (e *Engine) schedule(l *lockState) {
	l.timerGen++
	if l.released || l.lostErr != nil {
		return
	}
	if !l.autoExtend {
		e.timers.push(l.validUntil, l, l.timerGen)
		return
	}
	// Extend at a third of the ttl, and never later than halfway through
	// what is left, so that a slow round still lands inside the validity.
	at := min(l.ttl/3, (l.validUntil-e.now)/2)
	e.timers.push(e.now+max(at, 0), l, l.timerGen)
}

func (l *lockState) fire(e *Engine, gen uint64) {
	if !l.live(gen) {
		return
	}
	if e.now >= l.validUntil {
		e.markLost(l, errLost("hold", l.resource, "validity ran out"))
		return
	}
	if l.autoExtend && l.cur == nil {
		e.queueLockOp(l.newOp(lockOp{lock: l, extend: true, internal: true, ttl: l.ttl}))
	}
}

func (e *Engine) queueLockOp(op *lockOp) {
	l := op.lock
	if l.cur != nil {
		l.queue = append(l.queue, op)
		return
	}
	e.runLockOp(op)
}

func (e *Engine) runLockOp(op *lockOp) {
	l := op.lock
	if e.report {
		what := RepReleaseStart
		if op.extend {
			what = RepExtendStart
		}
		e.rep(what, op.id, l.id, 0, 0)
	}
	switch {
	case l.released && !op.internal:
		e.lockOpDone(op, errLost(opName(op), l.resource, "already released"))
		return
	case l.released:
		e.lockOpDone(op, nil)
		return
	case op.extend && l.lostErr != nil:
		e.lockOpDone(op, l.lostErr)
		return
	case op.extend && e.now >= l.validUntil:
		e.lockOpDone(op, e.markLost(l, errLost("extend", l.resource, "validity ran out before the extension")))
		return
	}
	l.cur = op
	if op.extend {
		// From the moment a node runs the round's PEXPIRE, its key lives
		// only until start + ttl: a shorter ttl shortens the lock at once,
		// whatever the round's outcome.
		if until := e.validUntil(e.now, op.ttl); until < l.validUntil {
			l.validUntil = until
			e.schedule(l)
		}
	}
	op.start, op.until = e.now, l.validUntil
	op.state = op.small[:0]
	if len(e.nodes) > len(op.small) {
		op.state = make([]uint8, 0, len(e.nodes))
	}
	op.state = op.state[:len(e.nodes)]
	if op.extend {
		px := strconv.FormatInt(op.ttl.Milliseconds(), 10)
		if l.keys != nil {
			e.extendMulti(op, px)
			return
		}
		for _, n := range e.nodes {
			e.sendScript(n, op, extendScriptFor(l.mode, l.elect), l.lockKey(), l.token, px)
		}
		return
	}
	l.stopTimer()
	if l.lostErr != nil {
		// Known lost: its outcome is certain. Delete whatever is left of
		// it in the background, so that others need not wait.
		e.dropKeys(l)
		op.decided = true
		l.cur = nil
		l.released = true
		e.lockOpDone(op, l.lostErr)
		return
	}
	if l.keys != nil {
		e.releaseMulti(op)
		return
	}
	// A key handed to our own next waiter needs nobody else woken: its
	// release publishes nothing (an empty id) and only counts the
	// subscribers, so that turns between clients still work.
	handOff := e.handOff(l.key)
	if handOff && e.report {
		e.rep(RepHandOff, op.id, l.id, 0, 0)
	}
	id := ""
	if !handOff {
		id = e.releaseID(l.key)
	}
	for _, n := range e.nodes {
		e.sendRelease(n, op, l, id)
	}
	if handOff {
		// The next local waiter's SET goes right behind the release on
		// every connection: each node runs it just after the DEL, and the
		// hand-off costs one round trip instead of two.
		e.wake(l.key)
	} else if len(e.multiWaiting) > 0 {
		// This engine's own message wakes nobody here (lastID): a waiting
		// multi-acquire on the key is woken as a hand-off would be.
		e.wakeMulti(l.key)
	}
}

func opName(op *lockOp) string {
	if op.extend {
		return "extend"
	}
	return "release"
}

func (op *lockOp) reply(e *Engine, i int, r Reply) {
	if op.state[i] != pending {
		return
	}
	released := !op.extend && r.Err == nil && r.Int == 0 && op.lock.unsure&(1<<i) != 0 && op.start < op.until
	switch {
	case r.Err != nil:
		op.state[i] = failed
		op.failed++
		op.causes = append(op.causes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: r.Err})
		if !op.extend {
			op.lock.unsure |= 1 << i
		}
	case released:
		// Not held, within the lock's validity, where an earlier release
		// of it failed after its deletion was written (a WAIT that too few
		// replicas answered, a reply lost with its connection): the key is
		// not on the node, most likely by that deletion. Not a loss.
		op.state[i] = granted
		op.ok++
	case r.Int >= 1:
		op.state[i] = granted
		op.ok++
		if !op.extend && op.lock.keys == nil {
			e.noteReceivers(op, i, r.Int-1)
		}
		if l := op.lock; op.extend && l.elect && l.termShown&(1<<i) == 0 && l.lostErr == nil && !l.released {
			// A leader's key on a node that never took its term (a grant
			// after the fence round, or one whose reply was lost): the
			// term goes there too, so that a quorum of holders shows it
			// whichever node of the fence round's quorum fails
			// (election.go). The script writes only where the key holds
			// this token without a term.
			l.termShown |= 1 << i
			e.sendScript2(e.nodes[i], discard{}, electFenceScript, l.key, FenceKey(l.key), l.token, strconv.FormatInt(l.fence, 10))
		}
	default:
		op.state[i] = refused
		op.zero++
	}
	if op.decided {
		return
	}
	if op.extend {
		e.extendReply(op)
	} else {
		e.releaseReply(op)
	}
}

// extendReply decides an extension as soon as its outcome is certain:
// extended, lost, or unavailable once neither can be proven.
func (e *Engine) extendReply(op *lockOp) {
	l := op.lock
	n := len(e.nodes)
	left := n - op.ok - op.zero - op.failed
	var err error
	switch {
	case op.ok >= e.quorum:
		until := e.validUntil(op.start, op.ttl)
		switch {
		case l.released:
			// Released while extending (Forget): nothing to keep.
		case l.lostErr != nil:
			err = l.lostErr
		case e.now < op.until && e.now < until:
			l.validUntil, l.ttl = until, op.ttl
			e.schedule(l)
		default:
			// Our keys outlived our validity; do not pretend we held the
			// lock throughout. Drop them so others need not wait.
			detail := "validity ran out during the extension"
			if until <= op.until {
				// The new ttl bounded it (op.until is the validity the
				// round started with, shortened by a shorter ttl): too short.
				detail = e.tooLate("extended", op.start, op.ttl)
			}
			e.dropKeys(l)
			err = e.markLost(l, errLost("extend", l.resource, detail))
		}
	case op.zero > n-e.quorum:
		e.dropKeys(l)
		err = e.markLost(l, errLost("extend", l.resource, e.goneText(op.zero)))
	case op.ok+left < e.quorum && op.zero+left <= n-e.quorum:
		// Neither an extension nor a loss can be proven any more. While the
		// nodes still to answer could prove the loss, their answers are
		// waited for (each within the node timeout): an extension decided
		// unavailable tells its caller the lock stays held until its
		// validity ends, which a loss must not be told as.
		err = e.unavailable("extend", op.state, op.causes, "; the lock stays held until its current validity ends")
		if op.internal && l.lostErr == nil && !l.released {
			// Still ours until validUntil: try again soon, and give it up
			// when the validity runs out.
			l.timerGen++
			retry := e.now + min(l.validUntil-e.now, max(e.timeout, minRetryDelay))
			e.timers.push(min(retry, l.validUntil), l, l.timerGen)
		}
	default:
		return
	}
	op.decided = true
	e.lockOpDone(op, err)
}

// releaseReply decides a release as soon as its outcome is certain
// (unavailable once neither a release nor a loss can be proven); the nodes
// that have not answered still get the command.
func (e *Engine) releaseReply(op *lockOp) {
	l := op.lock
	n := len(e.nodes)
	left := n - op.ok - op.zero - op.failed
	var err error
	switch {
	case op.ok >= e.quorum && l.lostErr == nil && op.start < op.until:
	case op.ok >= e.quorum || op.zero > n-e.quorum:
		err = l.lostErr
		switch {
		case err != nil:
		case op.zero > n-e.quorum:
			err = errLost("release", l.resource, e.goneText(op.zero)+" when released")
		default: // a quorum still had the keys, but the validity had run out
			err = errLost("release", l.resource, "its validity had run out when released")
		}
	case op.ok+left < e.quorum && op.zero+left <= n-e.quorum:
		// (As for an extension: unavailable only once the nodes still to
		// answer could not prove the loss either.)
		op.decided = true
		if !op.internal && !e.closing {
			e.schedule(l) // still ours until validUntil: keep watching
		}
		e.lockOpDone(op, e.unavailable("release", op.state, op.causes, "; cannot tell whether it was still held; call Release again"))
		return
	default:
		return
	}
	op.decided = true
	l.released = true
	l.stopTimer()
	e.lockOpDone(op, err)
}

// goneText is the reason of a loss decided because gone nodes answered
// that the lock's keys are gone (or another owner's): "held on at most k of
// n nodes (gone answered it is gone), quorum is q". The engine decides as
// soon as the loss is certain, which is when exactly n-quorum+1 nodes
// answered "gone" whatever order the replies came in; the nodes that had
// not answered yet are counted as holding it, so that the count is the same
// in every host and on every run (a count of the "held" answers so far
// would depend on which replies came first).
func (e *Engine) goneText(gone int) string {
	n := len(e.nodes)
	return "held on at most " + strconv.Itoa(n-gone) + " of " + strconv.Itoa(n) + " nodes (" +
		strconv.Itoa(gone) + " answered it is gone), " + e.quorumText()
}

// lockOpDone reports a round and starts the lock's next one.
func (e *Engine) lockOpDone(op *lockOp, err error) {
	l := op.lock
	if l.cur == op {
		l.cur = nil
	}
	if e.report {
		e.repLockOpEnd(op, err)
	} else if e.warn {
		e.repLockOpWarn(op, err)
	}
	if !op.internal {
		e.emit(Action{Kind: ActDone, Op: op.id, Err: err})
	}
	if l.cur == nil && len(l.queue) > 0 {
		next := l.queue[0]
		l.queue = l.queue[1:]
		e.runLockOp(next)
		return
	}
	if l.released && l.cur == nil && len(l.queue) == 0 {
		delete(e.locks, l.id)
	}
}

// dropKeys deletes our token wherever it still is, so that others need not
// wait for the ttl of a lock found lost.
func (e *Engine) dropKeys(l *lockState) {
	if l.keys != nil {
		e.releaseMultiKeys(l.keys, l.token, nil)
		return
	}
	id := e.releaseID(l.key)
	for _, n := range e.nodes {
		e.sendRelease(n, discard{}, l, id)
	}
}

// markLost records the loss once and reports it. It returns the error that
// is recorded.
func (e *Engine) markLost(l *lockState, err error) error {
	if l.lostErr != nil {
		return l.lostErr
	}
	if l.released {
		return err
	}
	l.lostErr = err
	l.stopTimer()
	if e.report {
		e.rep(RepLost, 0, l.id, StatusLost, 0)
		e.repHold(l, StatusLost)
	} else if e.warn {
		l.holdReported = true // its end is told (a release must not count it again)
		e.rep(RepLost, 0, l.id, StatusLost, 0)
	}
	e.emit(Action{Kind: ActLost, Lock: l.id, Err: err})
	e.wakeKeys(l)
	return err
}

func sortedLocks(m map[LockID]*lockState) []*lockState {
	s := make([]*lockState, 0, len(m))
	for _, l := range m {
		s = append(s, l)
	}
	sort.Slice(s, func(i, j int) bool { return s[i].id < s[j].id })
	return s
}
