//go:build !liblock_nootel

package core

import (
	"context"
	"log/slog"
	"reflect"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/liblock/liblock/core/engine"
)

// Metrics, traces and logs (README "Metrics, traces and logs").
//
// The engine reports what it does (engine.Config.Report: ActReport
// actions); this file maps those reports onto OpenTelemetry's metric and
// trace APIs and onto log/slog, on the driver's goroutine under c.mu, as
// Node's and Python's hosts map the same REPORT actions onto theirs. Only
// the APIs are used here: with no SDK installed they are the global
// defaults, which record nothing, and while they are (and no logger or
// label hook asks for records) an operation gets no span and the engine
// makes no reports (silent), as Python's host does. An SDK is the
// application's choice (Config.MeterProvider, Config.TracerProvider
// or otel's globals). Nothing here ever sees a token or a password: the
// reports carry none, and the node addresses come from the parsed URLs
// (credentials are not part of them).

// Instrument and attribute names, in OpenTelemetry's semantic-convention
// style (a liblock. namespace, dot-separated, units in UCUM, durations in
// seconds). The README's table lists them.
const (
	metricAcquireDuration = "liblock.acquire.duration"
	metricAcquires        = "liblock.acquires"
	metricWaiters         = "liblock.acquire.waiters"
	metricHoldDuration    = "liblock.hold.duration"
	metricExtends         = "liblock.extends"
	metricReleases        = "liblock.releases"
	metricLosses          = "liblock.losses"
	metricHandOffs        = "liblock.handoffs"
	metricNodeDuration    = "liblock.node.request.duration"
	metricNodeErrors      = "liblock.node.errors"
	metricFenceRounds     = "liblock.fence.rounds"

	attrOutcome   = "liblock.outcome"
	attrNode      = "liblock.node"
	attrAddress   = "server.address"
	attrErrorType = "error.type"
	attrResource  = "liblock.resource"
	attrAuto      = "liblock.auto"
	attrAttempts  = "liblock.attempts"

	instrumentationName = "github.com/liblock/liblock/core"
)

// telemetryBuilt: the engine is asked for reports unless Config.NoTelemetry
// (false with -tags liblock_nootel, otel_nootel.go).
const telemetryBuilt = true

// outcomeNames are the values of liblock.outcome, by the engine's status.
var outcomeNames = [...]string{
	engine.StatusOK:              "ok",
	engine.StatusNotAcquired:     "not_acquired",
	engine.StatusLost:            "lost",
	engine.StatusInvalidArgument: "invalid_argument",
	engine.StatusInvalidHandle:   "invalid_handle",
	engine.StatusUnavailable:     "unavailable",
	engine.StatusCanceled:        "canceled",
	engine.StatusInternal:        "internal",
}

// nodeErrorNames are the values of error.type of a node request.
var nodeErrorNames = [...]string{
	engine.NodeTimeout:    "timeout",
	engine.NodeConnection: "connection",
	engine.NodeReplyError: "error_reply",
}

func outcomeName(s uint8) string {
	if int(s) < len(outcomeNames) {
		return outcomeNames[s]
	}
	return "internal"
}

// telemetry is one Client's instruments, its spans in flight and its
// logger. All of it is used under c.mu.
type telemetry struct {
	tracer trace.Tracer
	log    *slog.Logger
	label  func(string) string

	acquireDur, holdDur, nodeDur                                 metric.Float64Histogram
	acquires, extends, releases, losses, handOffs, nodeErr, fenc metric.Int64Counter
	waiters                                                      metric.Int64UpDownCounter

	// Attribute sets made once: recording with a ready set allocates
	// nothing in the SDK's fast path and costs the no-op nothing.
	byOutcome [len(outcomeNames)]metric.MeasurementOption
	autoExt   [len(outcomeNames)]metric.MeasurementOption
	nodeOK    []metric.MeasurementOption
	nodeBad   [][len(nodeErrorNames)]metric.MeasurementOption
	nodeAttrs [][]attribute.KeyValue
	noAttrs   metric.MeasurementOption

	ops   map[engine.OpID]*opTrace
	locks map[engine.LockID]string // the resource of each held lock, when a label hook or a logger needs it

	// otel's global providers as they were when the Client was made, when
	// they were still the API's own defaults (nil otherwise: a provider
	// given in the Config, or an SDK set before): those record nothing
	// until an application sets an SDK, maybe after the Client was made,
	// which silent asks before each operation.
	tpDefault trace.TracerProvider
	mpDefault metric.MeterProvider
	// quiet: the engine was told to report nothing (Client.levelReports).
	quiet bool
}

// noSpan is the span of an operation nothing records: the API's no-op
// span, which costs no allocation.
var noSpan = trace.SpanFromContext(context.Background())

// Type names of the API's global default providers, which delegate to
// an SDK once one is set and record nothing before.
const (
	apiDefaultTracerProvider = "*global.tracerProvider"
	apiDefaultMeterProvider  = "*global.meterProvider"
)

func typeName(v any) string { return reflect.TypeOf(v).String() }

// silent reports whether nothing would record an operation started now:
// both providers are still the API's defaults (no SDK), and no label hook
// or logger needs the operation's record. Then the operation gets no span,
// and the engine builds no reports (Client.levelReports): the telemetry
// that is on by default costs nothing until an SDK is set.
func (t *telemetry) silent() bool {
	return t.tpDefault != nil && t.mpDefault != nil && !t.keeps() &&
		otel.GetTracerProvider() == t.tpDefault && otel.GetMeterProvider() == t.mpDefault
}

// opTrace is what the telemetry keeps of one caller's operation.
type opTrace struct {
	span     trace.Span
	kind     string // "acquire", "extend", "release"
	resource string
	outcome  uint8
	attempts uint32
	dur      time.Duration
}

// newTelemetry makes the instruments of cfg for nodes (their addresses
// label the node instruments); nil when cfg.NoTelemetry.
func newTelemetry(cfg Config, nodes []engine.Node) *telemetry {
	if cfg.NoTelemetry || !defaultTelemetry {
		return nil
	}
	mp, tp := cfg.MeterProvider, cfg.TracerProvider
	var mpDefault metric.MeterProvider
	var tpDefault trace.TracerProvider
	if mp == nil {
		mp = otel.GetMeterProvider()
		if typeName(mp) == apiDefaultMeterProvider {
			mpDefault = mp
		}
	}
	if tp == nil {
		tp = otel.GetTracerProvider()
		if typeName(tp) == apiDefaultTracerProvider {
			tpDefault = tp
		}
	}
	m := mp.Meter(instrumentationName)
	t := &telemetry{
		tracer:    tp.Tracer(instrumentationName),
		log:       cfg.Logger,
		label:     cfg.ResourceLabel,
		ops:       map[engine.OpID]*opTrace{},
		locks:     map[engine.LockID]string{},
		tpDefault: tpDefault,
		mpDefault: mpDefault,
	}
	// Bounds from a millisecond to ten seconds: lock round trips are a
	// few milliseconds, waits up to seconds; the SDK's default (0–10000)
	// assumes milliseconds and would put every acquire in its first bucket.
	secs := metric.WithExplicitBucketBoundaries(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10)
	// The API never fails to make an instrument (an SDK that does returns
	// a working no-op with the error, and reports the error itself).
	t.acquireDur, _ = m.Float64Histogram(metricAcquireDuration, metric.WithUnit("s"), secs,
		metric.WithDescription("Duration of lock acquires, from the request to the outcome, waits included."))
	t.holdDur, _ = m.Float64Histogram(metricHoldDuration, metric.WithUnit("s"),
		metric.WithExplicitBucketBoundaries(.001, .01, .1, 1, 10, 60, 300, 1800, 3600),
		metric.WithDescription("How long locks were held, from the acquire's success to their release or loss."))
	t.nodeDur, _ = m.Float64Histogram(metricNodeDuration, metric.WithUnit("s"), secs,
		metric.WithDescription("Duration of single requests to one Redis node."))
	t.acquires, _ = m.Int64Counter(metricAcquires, metric.WithUnit("{acquire}"),
		metric.WithDescription("Acquires ended, by outcome."))
	t.extends, _ = m.Int64Counter(metricExtends, metric.WithUnit("{extend}"),
		metric.WithDescription("Extensions ended (the caller's and auto-extensions), by outcome."))
	t.releases, _ = m.Int64Counter(metricReleases, metric.WithUnit("{release}"),
		metric.WithDescription("Releases ended, by outcome."))
	t.losses, _ = m.Int64Counter(metricLosses, metric.WithUnit("{lock}"),
		metric.WithDescription("Locks lost while held."))
	t.handOffs, _ = m.Int64Counter(metricHandOffs, metric.WithUnit("{handoff}"),
		metric.WithDescription("Releases that handed the key straight to a waiter of the same client."))
	t.nodeErr, _ = m.Int64Counter(metricNodeErrors, metric.WithUnit("{error}"),
		metric.WithDescription("Failed requests to one Redis node, by node and kind."))
	t.fenc, _ = m.Int64Counter(metricFenceRounds, metric.WithUnit("{round}"),
		metric.WithDescription("Fence rounds (the second round of a fenced acquire), by outcome."))
	t.waiters, _ = m.Int64UpDownCounter(metricWaiters, metric.WithUnit("{acquire}"),
		metric.WithDescription("Acquires waiting now: refused once with wait left, or queued behind another of the same client."))
	for s, name := range outcomeNames {
		t.byOutcome[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String(attrOutcome, name)))
		t.autoExt[s] = metric.WithAttributeSet(attribute.NewSet(attribute.String(attrOutcome, name), attribute.Bool(attrAuto, true)))
	}
	t.noAttrs = metric.WithAttributeSet(attribute.NewSet())
	for i, n := range nodes {
		kv := []attribute.KeyValue{attribute.Int(attrNode, i), attribute.String(attrAddress, n.Addr)}
		t.nodeAttrs = append(t.nodeAttrs, kv)
		t.nodeOK = append(t.nodeOK, metric.WithAttributeSet(attribute.NewSet(kv...)))
		var bad [len(nodeErrorNames)]metric.MeasurementOption
		for k, name := range nodeErrorNames {
			if name != "" {
				bad[k] = metric.WithAttributeSet(attribute.NewSet(append(kv[:2:2], attribute.String(attrErrorType, name))...))
			}
		}
		t.nodeBad = append(t.nodeBad, bad)
	}
	return t
}

// keeps reports whether operations need an opTrace without a span: for
// the resource label, or the logger's lines.
func (t *telemetry) keeps() bool { return t.label != nil || t.log != nil }

// start begins the span of a caller's operation (the caller's ctx its
// parent) and returns the engine call to make under c.mu with it: the
// operation is bound to its span as soon as the engine names it.
func (t *telemetry) start(ctx context.Context, kind, resource string, lock engine.LockID, begin func() (engine.OpID, error)) (func() (engine.OpID, error), trace.Span) {
	if t.silent() {
		return begin, noSpan
	}
	if ctx == nil {
		ctx = context.Background()
	}
	_, span := t.tracer.Start(ctx, "liblock."+kind, trace.WithSpanKind(trace.SpanKindClient))
	rec := span.IsRecording()
	if rec && t.label != nil {
		span.SetAttributes(attribute.String(attrResource, t.label(resource)))
	}
	return func() (engine.OpID, error) {
		op, err := begin()
		if err == nil && (rec || t.keeps()) {
			t.ops[op] = &opTrace{span: span, kind: kind, resource: resource}
		}
		return op, err
	}, span
}

// failedIf ends the span of an operation that never reached the engine's
// DONE (refused at once, or the client was closed): one whose op was bound
// is ended by done. Ending a span twice is harmless (the second is
// ignored), so the caller need not tell which happened.
func failedIf(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// lockAcquired remembers the resource of a new lock, for the lock's later
// metrics and log lines; called on an acquire's DONE.
func (t *telemetry) lockAcquired(id engine.LockID, resource string) {
	if t.keeps() {
		t.locks[id] = resource
	}
}

// measure is the attribute option of a lock metric: by outcome, and by
// the resource's label when the hook is set.
func (t *telemetry) measure(outcome uint8, resource string, auto bool) metric.MeasurementOption {
	if int(outcome) >= len(outcomeNames) {
		outcome = engine.StatusInternal
	}
	if t.label == nil {
		if auto {
			return t.autoExt[outcome]
		}
		return t.byOutcome[outcome]
	}
	kv := []attribute.KeyValue{attribute.String(attrOutcome, outcomeNames[outcome]), attribute.String(attrResource, t.label(resource))}
	if auto {
		kv = append(kv, attribute.Bool(attrAuto, true))
	}
	return metric.WithAttributes(kv...)
}

// report maps one engine report onto the instruments, the span of its
// operation and the log.
// lockResource is the Client's own record of a held lock's resource, for
// a lock acquired by a call the telemetry did not see start (then t.locks
// has no entry).
func (t *telemetry) report(a engine.Action, lockResource func(engine.LockID) string) {
	ctx := context.Background()
	r := a.Rep
	op := t.ops[a.Op]
	resource := ""
	if op != nil {
		resource = op.resource
	} else if a.Lock != 0 {
		resource = t.locks[a.Lock]
		if resource == "" {
			resource = lockResource(a.Lock)
		}
	}
	switch r.What {
	case engine.RepAcquireEnd:
		t.acquireDur.Record(ctx, r.Duration.Seconds(), t.measure(r.Outcome, resource, false))
		t.acquires.Add(ctx, 1, t.measure(r.Outcome, resource, false))
		if op != nil {
			op.outcome, op.attempts, op.dur = r.Outcome, r.Attempts, r.Duration
		}
	case engine.RepWaitStart:
		t.waiters.Add(ctx, 1, t.noAttrs)
		if op != nil && op.span.IsRecording() {
			op.span.AddEvent("liblock.wait")
		}
	case engine.RepWaitEnd:
		t.waiters.Add(ctx, -1, t.noAttrs)
	case engine.RepHandOff:
		t.handOffs.Add(ctx, 1, t.noAttrs)
	case engine.RepExtendEnd:
		t.extends.Add(ctx, 1, t.measure(r.Outcome, resource, a.Op == 0))
		// A failed auto-extension that lost the lock is told by the loss's
		// own warning (Client.warnLost); one that could not tell (nodes
		// failing) is told here: the lock stays valid until its validity ends.
		if a.Op == 0 && r.Outcome != engine.StatusOK && r.Outcome != engine.StatusLost && t.log != nil {
			t.log.Warn("liblock: auto-extension failed", "resource", resource, attrOutcome, outcomeName(r.Outcome))
		}
		if op != nil {
			op.outcome, op.dur = r.Outcome, r.Duration
		}
	case engine.RepReleaseEnd:
		t.releases.Add(ctx, 1, t.measure(r.Outcome, resource, false))
		if op != nil {
			op.outcome, op.dur = r.Outcome, r.Duration
		}
	case engine.RepLost:
		// (Its log line is the Client's, from the engine's LOST: warnLost.)
		t.losses.Add(ctx, 1, t.measure(engine.StatusLost, resource, false))
	case engine.RepHold:
		t.holdDur.Record(ctx, r.Duration.Seconds(), t.measure(r.Outcome, resource, false))
		delete(t.locks, a.Lock)
	case engine.RepNode:
		t.node(ctx, a, op)
	case engine.RepFence:
		t.fenc.Add(ctx, 1, t.measure(r.Outcome, resource, false))
		if op != nil && op.span.IsRecording() {
			op.span.AddEvent("liblock.fence", trace.WithAttributes(attribute.String(attrOutcome, outcomeName(r.Outcome))))
		}
	}
}

// node records one node request.
func (t *telemetry) node(ctx context.Context, a engine.Action, op *opTrace) {
	r := a.Rep
	i := int(r.Node)
	if i >= len(t.nodeOK) {
		return
	}
	opt := t.nodeOK[i]
	if int(r.Outcome) < len(nodeErrorNames) && r.Outcome != engine.NodeOK {
		opt = t.nodeBad[i][r.Outcome]
		t.nodeErr.Add(ctx, 1, opt)
		if t.log != nil {
			t.log.Debug("liblock: node request failed", attrNode, i, attrAddress, t.nodeAttrs[i][1].Value.AsString(), attrErrorType, nodeErrorNames[r.Outcome])
		}
	}
	t.nodeDur.Record(ctx, r.Duration.Seconds(), opt)
	if op != nil && op.span.IsRecording() {
		kv := append(t.nodeAttrs[i][:2:2], attribute.Float64("liblock.duration_ms", float64(r.Duration.Microseconds())/1000))
		if r.Outcome != engine.NodeOK && int(r.Outcome) < len(nodeErrorNames) {
			kv = append(kv, attribute.String(attrErrorType, nodeErrorNames[r.Outcome]))
		}
		op.span.AddEvent("liblock.node.reply", trace.WithAttributes(kv...))
	}
}

// done ends the span of a caller's operation at its DONE (err: its
// outcome as the caller gets it), and writes its log line.
func (t *telemetry) done(a engine.Action) {
	op := t.ops[a.Op]
	if op == nil {
		return
	}
	delete(t.ops, a.Op)
	if op.kind == "acquire" && a.Lock != 0 {
		t.lockAcquired(a.Lock, op.resource)
	}
	outcome := engine.StatusOf(a.Err)
	if t.log != nil {
		t.log.Debug("liblock: "+op.kind, "resource", op.resource, attrOutcome, outcomeName(outcome),
			"attempts", op.attempts, "duration", op.dur)
	}
	s := op.span
	if !s.IsRecording() {
		s.End()
		return
	}
	s.SetAttributes(attribute.String(attrOutcome, outcomeName(outcome)))
	if op.kind == "acquire" {
		s.SetAttributes(attribute.Int(attrAttempts, int(op.attempts)))
	}
	if a.Err != nil {
		s.RecordError(a.Err)
		s.SetStatus(codes.Error, a.Err.Error())
	}
	s.End()
}
