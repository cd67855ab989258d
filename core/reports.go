package core

import (
	"context"

	"github.com/liblock/liblock/core/engine"
)

// The engine's reports, raw, for a program that maps them onto its own
// metrics, traces and logs: liblock.so hands them to C and JVM programs
// (lock_client_set_report), whose OpenTelemetry the Go inside it cannot
// reach. The reports are the ones otel.go maps for Go and the hosts of
// Node and Python map for theirs (engine.Report), so every language counts
// the same things the same way. They carry no token and no password.

// Report is one of the engine's reports, with what the Client knows of it.
type Report struct {
	engine.Report
	// Lock is the lock it is about, when the Client has it: an extension,
	// a release, a loss, a holding's end, a hand-off. Nil for an acquire's
	// (its lock does not exist yet when it ends) and the engine's own work.
	Lock *Lock
	// Tag is ReportTag's tag of the context of the call whose operation
	// (an acquire, an extension, a release) it is about; nil for an
	// untagged call and for the engine's own work (an auto-extension).
	Tag any
}

type reportTagKey struct{}

// ReportTag returns ctx carrying tag: the reports of the operation of a
// call made with it (Acquire, Extend, Release) carry the tag, so that a
// program tells its calls' reports apart.
func ReportTag(ctx context.Context, tag any) context.Context {
	return context.WithValue(ctx, reportTagKey{}, tag)
}

// SetReports hands every report of the engine to fn from now on, or stops
// (nil). fn runs on the Client's driver with the Client's lock held, in
// the order the engine reported: it must return quickly and must not call
// the Client or its locks. When SetReports returns, no call of the
// function it replaced is running. Only a Client made with
// Config.Reporting (or with telemetry) gets reports from its engine.
func (c *Client) SetReports(fn func(Report)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reports = fn
	if fn == nil {
		c.reportTags = nil
	} else if c.reportTags == nil {
		c.reportTags = map[engine.OpID]any{}
	}
	c.setReportLevel()
}

// levelReports is called before each operation, under c.mu: the engine
// makes no reports while nothing would record them (telemetry.silent) and
// no report function is set, and every report again once something does.
func (c *Client) levelReports() {
	if t := c.tel; t != nil {
		if quiet := t.silent(); quiet != t.quiet {
			t.quiet = quiet
			c.setReportLevel()
		}
	}
}

// setReportLevel tells the engine which reports it is to make now; c.mu
// is held.
func (c *Client) setReportLevel() {
	if e, ok := c.eng.(interface{ SetReports(engine.ReportLevel) }); ok {
		switch {
		case c.reports != nil || (c.tel != nil && !c.tel.quiet):
			e.SetReports(engine.ReportAll)
		default:
			e.SetReports(engine.ReportNone)
		}
	}
}

// tagged wraps begin so that the operation it starts carries ctx's report
// tag (under c.mu, where begin runs, before its first report is carried
// out).
func (c *Client) tagged(ctx context.Context, begin func() (engine.OpID, error)) func() (engine.OpID, error) {
	tag := ctx.Value(reportTagKey{})
	if tag == nil {
		return begin
	}
	return func() (engine.OpID, error) {
		op, err := begin()
		if err == nil && c.reportTags != nil {
			c.reportTags[op] = tag
		}
		return op, err
	}
}

// handReport hands a REPORT action to the report function; c.mu is held.
func (c *Client) handReport(a engine.Action) {
	r := Report{Report: a.Rep}
	if a.Lock != 0 {
		r.Lock = c.locks[a.Lock]
	}
	if a.Op != 0 {
		r.Tag = c.reportTags[a.Op]
	}
	c.reports(r)
}

// quietReports: a Client made with Config.Reporting and no telemetry has
// its engine report nothing until SetReports gives it a function.
func (c *Client) quietReports(cfg Config) {
	if cfg.Reporting && c.tel == nil {
		c.SetReports(nil)
	}
}
