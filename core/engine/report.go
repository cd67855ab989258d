package engine

import (
	"errors"

	time "github.com/liblock/liblock/core/internal/xtime"
)

// Reports: what the engine did, for a host's metrics, traces and logs
// (README "Metrics, traces and logs"). Only an engine made with
// Config.Report emits them, as ActReport actions; without it not one
// report is made and every hook below is a predictable branch on a bool.
// The engine says what happened, once, in one form; each host maps that
// onto its language's OpenTelemetry API, so that Go, Node and Python
// count the same things the same way.

// ActReport: a report (Action.Rep; Op and Lock name the operation and the
// lock it is about). Only from an engine made with Config.Report. A host
// that does not want them carries out nothing for it.
const ActReport ActionKind = 16

// ReportKind says what a report tells.
type ReportKind uint8

// The reports. Durations are the engine's own clock (Env.Now).
const (
	// RepAcquireStart: acquire Op started.
	RepAcquireStart ReportKind = 1
	// RepAcquireEnd: acquire Op ended: Outcome (a status), Attempts (the
	// rounds it sent), Duration (from its start), Lock (the new lock, or
	// 0).
	RepAcquireEnd ReportKind = 2
	// RepWaitStart: acquire Op starts waiting: its first attempt was
	// refused or failed with wait left, or it queued behind another
	// acquire of this engine on the same key.
	RepWaitStart ReportKind = 3
	// RepWaitEnd: acquire Op stops waiting (it ended); Duration is how
	// long it waited.
	RepWaitEnd ReportKind = 4
	// RepHandOff: the release of Lock hands its key straight to a waiter
	// of this engine (its SET goes right behind the release).
	RepHandOff ReportKind = 5
	// RepExtendStart: an extension of Lock started (Op 0: an
	// auto-extension).
	RepExtendStart ReportKind = 6
	// RepExtendEnd: that extension ended: Outcome, Duration.
	RepExtendEnd ReportKind = 7
	// RepReleaseStart: a release of Lock started (Op 0: Close's).
	RepReleaseStart ReportKind = 8
	// RepReleaseEnd: that release ended: Outcome, Duration.
	RepReleaseEnd ReportKind = 9
	// RepLost: Lock was lost (Outcome: StatusLost).
	RepLost ReportKind = 10
	// RepHold: Lock's holding ended (released, lost, or forgotten by the
	// host: Outcome OK, StatusLost or StatusCanceled); Duration is how long
	// it was held, from its acquire's success.
	RepHold ReportKind = 11
	// RepNode: a request of Op (0: the engine's own: a handshake, a
	// cleanup, an auto-extension) to node Node ended: Outcome is a
	// NodeOutcome, Duration from its sending.
	RepNode ReportKind = 12
	// RepFence: the fence round of acquire Op ended: Outcome, Duration.
	RepFence ReportKind = 13
)

// Report is what an ActReport tells; which fields mean something depends
// on What.
type Report struct {
	What ReportKind
	// Outcome: a status (StatusOK, StatusNotAcquired, …: the C ABI's
	// LOCK_* codes) or, for RepNode, a NodeOutcome.
	Outcome  uint8
	Node     uint16 // RepNode
	Attempts uint32 // RepAcquireEnd
	Duration time.Duration
}

// The statuses a report's Outcome carries: the C ABI's LOCK_* codes.
const (
	StatusOK              = 0
	StatusNotAcquired     = 1
	StatusLost            = 2
	StatusInvalidArgument = 3
	StatusInvalidHandle   = 4
	StatusUnavailable     = 5
	StatusCanceled        = 6
	StatusInternal        = 7
)

// NodeOutcome is how one node request ended.
type NodeOutcome = uint8

// The node outcomes of RepNode.
const (
	// NodeOK: the node answered (whatever it answered: a refusal is an
	// answer).
	NodeOK NodeOutcome = 0
	// NodeTimeout: no answer (or no connection) within the node timeout.
	NodeTimeout NodeOutcome = 1
	// NodeConnection: the connection failed, was closed, or its handshake
	// was refused.
	NodeConnection NodeOutcome = 2
	// NodeReplyError: the node answered with an error (a Redis error
	// reply: READONLY, NOSCRIPT, OOM, a WAIT shortfall…).
	NodeReplyError NodeOutcome = 3
)

// StatusOf maps an operation's error onto its status (StatusOK for nil).
func StatusOf(err error) uint8 {
	switch {
	case err == nil:
		return StatusOK
	case errors.Is(err, ErrNotAcquired):
		return StatusNotAcquired
	case errors.Is(err, ErrLost):
		return StatusLost
	case errors.Is(err, ErrInvalidArgument):
		return StatusInvalidArgument
	case errors.Is(err, ErrUnknownLock):
		return StatusInvalidHandle
	case errors.Is(err, ErrUnavailable):
		return StatusUnavailable
	case errors.Is(err, ErrCanceled), errors.Is(err, ErrClosed):
		return StatusCanceled
	}
	return StatusInternal
}

// timeoutError is a node failure for want of an answer in time: reported
// as NodeTimeout.
type timeoutError string

func (e timeoutError) Error() string { return string(e) }

// ReportLevel says which reports an engine made with Config.Report emits
// (SetReports).
type ReportLevel uint8

const (
	// ReportNone: none.
	ReportNone ReportLevel = 0
	// ReportWarnings: only what a host logs as a warning: RepLost, and the
	// RepExtendEnd of an auto-extension (op 0) that failed. A host whose
	// metrics and traces record nothing (no SDK) asks for these alone, so
	// that the engine neither builds nor hands it the rest.
	ReportWarnings ReportLevel = 1
	// ReportAll: every report (the level Config.Report starts at).
	ReportAll ReportLevel = 2
)

// SetReports sets which reports the engine emits from now on. An engine
// made without Config.Report emits none whatever the level. An operation
// in flight when the level changes may have only some of its reports (a
// start without an end, or the reverse): a host that switches keeps its
// per-operation state by the operations' DONE, not by their reports.
func (e *Engine) SetReports(level ReportLevel) {
	e.report = e.reportable && level >= ReportAll
	e.warn = e.reportable && level == ReportWarnings
}

// rep emits a report; callers check e.report first, so that an engine
// without reports does not even build one.
func (e *Engine) rep(what ReportKind, op OpID, lock LockID, outcome uint8, d time.Duration) {
	e.emit(Action{Kind: ActReport, Op: op, Lock: lock, Rep: Report{What: what, Outcome: outcome, Duration: d}})
}

// repWaitStart reports that o starts waiting, once.
func (e *Engine) repWaitStart(o *acquireOp) {
	if !e.report || o.waiting || o.finished {
		return
	}
	o.waiting, o.waitStart = true, e.now
	e.rep(RepWaitStart, o.id, 0, 0, 0)
}

// repAcquireEnd reports an acquire's end (and the end of its wait).
func (e *Engine) repAcquireEnd(o *acquireOp, lock LockID, err error) {
	if o.waiting {
		e.rep(RepWaitEnd, o.id, 0, 0, e.now-o.waitStart)
	}
	e.emit(Action{Kind: ActReport, Op: o.id, Lock: lock, Rep: Report{
		What: RepAcquireEnd, Outcome: StatusOf(err), Attempts: o.attempts, Duration: e.now - o.start,
	}})
}

// repLockOpEnd reports the end of an extension or a release, and the end
// of the lock's holding when the release ended it.
func (e *Engine) repLockOpEnd(op *lockOp, err error) {
	l := op.lock
	what := RepReleaseEnd
	if op.extend {
		what = RepExtendEnd
	}
	d := time.Duration(0)
	if op.start != 0 {
		d = e.now - op.start
	}
	st := StatusOf(err)
	e.rep(what, op.id, l.id, st, d)
	if !op.extend && l.released {
		if st == StatusLost && l.lostErr == nil && !l.holdReported {
			// The release found it gone (held on too few nodes): a loss
			// no LOST announced, counted as one all the same.
			e.rep(RepLost, 0, l.id, StatusLost, 0)
		}
		e.repHold(l, st)
	}
}

// repLockOpWarn is repLockOpEnd for an engine asked for warnings only
// (ReportWarnings): an auto-extension that failed, and a release that found
// the lock gone (a loss no RepLost announced).
func (e *Engine) repLockOpWarn(op *lockOp, err error) {
	l := op.lock
	st := StatusOf(err)
	if st == StatusOK {
		return
	}
	if op.extend && op.id == 0 {
		d := time.Duration(0)
		if op.start != 0 {
			d = e.now - op.start
		}
		e.rep(RepExtendEnd, 0, l.id, st, d)
		return
	}
	if !op.extend && l.released && st == StatusLost && l.lostErr == nil && !l.holdReported {
		l.holdReported = true
		e.rep(RepLost, 0, l.id, StatusLost, 0)
	}
}

// repHold reports the end of a lock's holding, once.
func (e *Engine) repHold(l *lockState, outcome uint8) {
	if l.holdReported {
		return
	}
	l.holdReported = true
	e.rep(RepHold, 0, l.id, outcome, e.now-l.since)
}

// repNode reports one node request's end.
func (e *Engine) repNode(req *request, err error) {
	out := NodeOK
	if err != nil {
		var t timeoutError
		switch {
		case errors.As(err, &t):
			out = NodeTimeout
		case isReplyError(err):
			out = NodeReplyError
		default:
			out = NodeConnection
		}
	}
	e.emit(Action{Kind: ActReport, Op: opOf(req.h), Rep: Report{
		What: RepNode, Outcome: out, Node: uint16(req.node.idx), Duration: e.now - req.sent,
	}})
}

// isReplyError tells an error the node answered from a failure of the
// connection.
func isReplyError(err error) bool {
	var re RedisError
	var we *WaitError
	return errors.As(err, &re) || errors.As(err, &we)
}

// opOf is the caller's operation a request belongs to (0: none).
func opOf(h handler) OpID {
	switch h := unwrapWait(h).(type) {
	case *attempt:
		return h.op.id
	case *lockOp:
		return h.id
	case *fenceRound:
		return h.a.op.id
	case *inspectOp:
		return h.id
	}
	return 0
}
