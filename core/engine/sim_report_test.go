package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// The reports of Config.Report, checked in every simulated run: the odd
// clients report (newSim), and each report is checked against what the
// client saw happen. A report that disagrees with an outcome would make a
// host's metrics lie (a refused acquire counted as a success, a loss never
// counted).

// reportCheck is one client's record of its reports.
type reportCheck struct {
	started  map[OpID]bool  // acquires started, not yet ended
	ended    map[OpID]uint8 // acquires whose end was reported: the outcome, until their DONE
	waiting  map[OpID]bool
	lost     map[LockID]bool
	held     map[LockID]bool // holdings ended
	lockOps  int             // extend/release starts minus ends
	violated func(format string, args ...any)
}

func newReportCheck(violated func(string, ...any)) *reportCheck {
	return &reportCheck{started: map[OpID]bool{}, ended: map[OpID]uint8{}, waiting: map[OpID]bool{},
		lost: map[LockID]bool{}, held: map[LockID]bool{}, violated: violated}
}

func (c *simClient) checker() *reportCheck {
	if c.reports == nil {
		c.reports = newReportCheck(func(f string, args ...any) {
			c.s.violate("report", "c%d: "+f, append([]any{c.id}, args...)...)
		})
	}
	return c.reports
}

func (c *simClient) actReport(a Action) {
	if !c.cfg.Report {
		c.s.violate("report", "c%d: a report from an engine without Config.Report: %+v", c.id, a.Rep)
		return
	}
	c.checker().report(a)
}

func (c *simClient) checkDoneReport(a Action) {
	if c.cfg.Report {
		c.checker().done(a)
	}
}

func (c *simClient) checkLostReport(a Action) {
	if c.cfg.Report {
		c.checker().lostAction(a)
	}
}

// report checks one report against the ones before it.
func (r *reportCheck) report(a Action) {
	switch a.Rep.What {
	case RepAcquireStart:
		if r.started[a.Op] {
			r.violated("acquire %d started twice", a.Op)
		}
		r.started[a.Op] = true
	case RepWaitStart:
		if !r.started[a.Op] || r.waiting[a.Op] {
			r.violated("acquire %d: wait start out of place", a.Op)
		}
		r.waiting[a.Op] = true
	case RepWaitEnd:
		if !r.waiting[a.Op] {
			r.violated("acquire %d: wait end without its start", a.Op)
		}
		delete(r.waiting, a.Op)
	case RepAcquireEnd:
		if !r.started[a.Op] {
			r.violated("acquire %d ended without a start (or twice)", a.Op)
		}
		if r.waiting[a.Op] {
			r.violated("acquire %d ended while still waiting", a.Op)
		}
		if a.Rep.Attempts == 0 && a.Rep.Outcome == StatusOK {
			r.violated("acquire %d succeeded in 0 attempts", a.Op)
		}
		if (a.Lock != 0) != (a.Rep.Outcome == StatusOK) {
			r.violated("acquire %d: lock %d with outcome %d", a.Op, a.Lock, a.Rep.Outcome)
		}
		if a.Rep.Duration < 0 {
			r.violated("acquire %d: negative duration", a.Op)
		}
		delete(r.started, a.Op)
		r.ended[a.Op] = a.Rep.Outcome
	case RepExtendStart, RepReleaseStart:
		r.lockOps++
	case RepExtendEnd, RepReleaseEnd:
		r.lockOps--
		if r.lockOps < 0 {
			r.violated("a lock round ended without a start")
		}
	case RepLost:
		if r.lost[a.Lock] {
			r.violated("lock %d lost twice", a.Lock)
		}
		r.lost[a.Lock] = true
	case RepHold:
		if r.held[a.Lock] {
			r.violated("lock %d: holding ended twice", a.Lock)
		}
		r.held[a.Lock] = true
		if (a.Rep.Outcome == StatusLost) != r.lost[a.Lock] {
			r.violated("lock %d: holding ended with %d, lost %v", a.Lock, a.Rep.Outcome, r.lost[a.Lock])
		}
	case RepNode:
		if a.Rep.Outcome > NodeReplyError || a.Rep.Duration < 0 {
			r.violated("bad node report %+v", a.Rep)
		}
	case RepHandOff, RepFence:
	default:
		r.violated("unknown report %d", a.Rep.What)
	}
}

// done checks an operation's DONE against its reported end: an acquire's
// end comes right before its DONE, with the DONE's outcome.
func (r *reportCheck) done(a Action) {
	if a.Inspection != nil {
		return
	}
	out, ok := r.ended[a.Op]
	if r.started[a.Op] {
		r.violated("acquire %d: DONE before its end report", a.Op)
		return
	}
	if !ok {
		return // an extend or a release
	}
	delete(r.ended, a.Op)
	if want := StatusOf(a.Err); out != want {
		r.violated("acquire %d: reported outcome %d, DONE says %d (%v)", a.Op, out, want, a.Err)
	}
}

// lostAction checks that a LOST was reported first.
func (r *reportCheck) lostAction(a Action) {
	if !r.lost[a.Lock] {
		r.violated("lock %d: LOST without its report", a.Lock)
	}
}

// TestReportCheckCatches is the negative control of the report checks: a
// report stream with each kind of fault is caught.
func TestReportCheckCatches(t *testing.T) {
	faults := map[string]func(r *reportCheck){
		"end without start": func(r *reportCheck) {
			r.report(Action{Kind: ActReport, Op: 1, Lock: 1, Rep: Report{What: RepAcquireEnd, Attempts: 1}})
		},
		"wrong outcome": func(r *reportCheck) {
			r.report(Action{Kind: ActReport, Op: 1, Rep: Report{What: RepAcquireStart}})
			r.report(Action{Kind: ActReport, Op: 1, Lock: 1, Rep: Report{What: RepAcquireEnd, Attempts: 1}})
			r.done(Action{Kind: ActDone, Op: 1, Err: ErrNotAcquired})
		},
		"lost unreported": func(r *reportCheck) {
			r.lostAction(Action{Kind: ActLost, Lock: 3, Err: ErrLost})
		},
		"hold twice": func(r *reportCheck) {
			r.report(Action{Kind: ActReport, Lock: 3, Rep: Report{What: RepHold}})
			r.report(Action{Kind: ActReport, Lock: 3, Rep: Report{What: RepHold}})
		},
	}
	for name, fault := range faults {
		var got []string
		r := newReportCheck(func(f string, args ...any) { got = append(got, fmt.Sprintf(f, args...)) })
		fault(r)
		require.NotEmpty(t, got, name)
	}
	var got []string
	r := newReportCheck(func(f string, args ...any) { got = append(got, fmt.Sprintf(f, args...)) })
	r.report(Action{Kind: ActReport, Op: 1, Rep: Report{What: RepAcquireStart}})
	r.report(Action{Kind: ActReport, Op: 1, Rep: Report{What: RepAcquireEnd, Outcome: StatusNotAcquired, Attempts: 1}})
	r.done(Action{Kind: ActDone, Op: 1, Err: ErrNotAcquired})
	require.Empty(t, got, "a right stream")
}
