'use strict';
// Metrics, traces and logs (README "Metrics, traces and logs").
//
// The engine reports what it does as REPORT actions (only to a host whose
// configuration says "report": true); this file maps them onto
// OpenTelemetry's API — the same instruments, attributes and spans as the
// Go core (core/otel.go) — and onto node:diagnostics_channel for logs.
//
// @opentelemetry/api is an optional peer dependency: it is required here
// lazily, and without it the binding runs as before (no reports asked of
// the engine unless a logger channel is wanted). Only the API is used; with
// no SDK registered it is a no-op. Nothing here sees a token or a password:
// the reports carry none.

const dc = require('node:diagnostics_channel');

/**
 * The diagnostics channel of liblock's log records: { level, msg, ...fields }
 * (level 'debug' for operations and node failures, 'warn' for losses and
 * failed auto-extensions). Never a token or a password.
 */
const logChannel = dc.channel('liblock:log');

let api; // undefined: not looked for yet; null: not installed
function otelApi() {
  if (api === undefined) {
    try {
      api = require('@opentelemetry/api');
    } catch {
      api = null;
    }
  }
  return api;
}

const OUTCOMES = ['ok', 'not_acquired', 'lost', 'invalid_argument', 'invalid_handle', 'unavailable', 'canceled', 'internal'];
const NODE_ERRORS = [null, 'timeout', 'connection', 'error_reply'];
const outcomeName = (s) => OUTCOMES[s] || 'internal';

// The report kinds (core/engine/report.go).
const R = Object.freeze({
  ACQUIRE_START: 1, ACQUIRE_END: 2, WAIT_START: 3, WAIT_END: 4, HAND_OFF: 5,
  EXTEND_START: 6, EXTEND_END: 7, RELEASE_START: 8, RELEASE_END: 9,
  LOST: 10, HOLD: 11, NODE: 12, FENCE: 13,
});

const SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One client's instruments and spans in flight. */
class Telemetry {
  /**
   * @param opts the client's `telemetry` option: true, or
   *   { meterProvider, tracerProvider, resourceLabel }
   * @param nodes the node addresses (the server.address attribute)
   */
  constructor(a, opts, nodes) {
    this.api = a;
    this.label = typeof opts.resourceLabel === 'function' ? opts.resourceLabel : null;
    this.ops = new Map(); // op -> { span, kind, resource, outcome, attempts }
    this.locks = new Map(); // lock -> resource (for labels and log lines)
    this.pending = null; // the request being stepped: { span, kind, resource } (host.traced)
    this.nodes = nodes;
    if (!a) return;
    const mp = opts.meterProvider || a.metrics.getMeterProvider();
    const tp = opts.tracerProvider || a.trace.getTracerProvider();
    const m = mp.getMeter('liblock');
    this.tracer = tp.getTracer('liblock');
    const hist = (name, unit, description, bounds) => m.createHistogram(name, { unit, description, advice: { explicitBucketBoundaries: bounds } });
    this.acquireDur = hist('liblock.acquire.duration', 's', 'Duration of lock acquires, from the request to the outcome, waits included.', SECONDS);
    this.holdDur = hist('liblock.hold.duration', 's', 'How long locks were held, from the acquire\'s success to their release or loss.', [0.001, 0.01, 0.1, 1, 10, 60, 300, 1800, 3600]);
    this.nodeDur = hist('liblock.node.request.duration', 's', 'Duration of single requests to one Redis node.', SECONDS);
    const counter = (name, unit, description) => m.createCounter(name, { unit, description });
    this.acquires = counter('liblock.acquires', '{acquire}', 'Acquires ended, by outcome.');
    this.extends = counter('liblock.extends', '{extend}', 'Extensions ended (the caller\'s and auto-extensions), by outcome.');
    this.releases = counter('liblock.releases', '{release}', 'Releases ended, by outcome.');
    this.losses = counter('liblock.losses', '{lock}', 'Locks lost while held.');
    this.handOffs = counter('liblock.handoffs', '{handoff}', 'Releases that handed the key straight to a waiter of the same client.');
    this.nodeErrors = counter('liblock.node.errors', '{error}', 'Failed requests to one Redis node, by node and kind.');
    this.fenceRounds = counter('liblock.fence.rounds', '{round}', 'Fence rounds (the second round of a fenced acquire), by outcome.');
    this.waiters = m.createUpDownCounter('liblock.acquire.waiters', { unit: '{acquire}', description: 'Acquires waiting now.' });
    // Attribute objects made once: recording allocates nothing for them.
    this.byOutcome = OUTCOMES.map((o) => Object.freeze({ 'liblock.outcome': o }));
    this.autoExt = OUTCOMES.map((o) => Object.freeze({ 'liblock.outcome': o, 'liblock.auto': true }));
    this.nodeOK = nodes.map((addr, i) => Object.freeze({ 'liblock.node': i, 'server.address': addr }));
    this.nodeBad = nodes.map((addr, i) => NODE_ERRORS.map((e) => e && Object.freeze({ 'liblock.node': i, 'server.address': addr, 'error.type': e })));
  }

  attrs(outcome, resource, auto) {
    if (!this.label) return (auto ? this.autoExt : this.byOutcome)[outcome] || this.byOutcome[7];
    const a = { 'liblock.outcome': outcomeName(outcome), 'liblock.resource': String(this.label(resource)) };
    if (auto) a['liblock.auto'] = true;
    return a;
  }

  /** Starts the span of a caller's operation, a child of the active context. */
  start(kind, resource) {
    if (!this.tracer) return null;
    const span = this.tracer.startSpan(`liblock.${kind}`, { kind: this.api.SpanKind.CLIENT });
    if (this.label && span.isRecording()) span.setAttribute('liblock.resource', String(this.label(resource)));
    return span;
  }

  /** Binds a started operation (its op id) to its span. */
  bind(op, kind, resource, span) {
    this.ops.set(op, { span, kind, resource, outcome: 0, attempts: 0, dur: 0 });
  }

  /** Ends the span of an operation the engine refused at once. */
  refused(span, err) {
    if (!span) return;
    span.recordException(err);
    span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: err.message });
    span.end();
  }

  log(level, msg, fields) {
    if (logChannel.hasSubscribers) logChannel.publish({ level, msg, ...fields });
  }

  /** One REPORT action. */
  report(a) {
    const op = a.op !== 0 ? this.ops.get(a.op) : undefined;
    const resource = op ? op.resource : this.locks.get(a.lock);
    const secs = a.duration_us / 1e6;
    const m = this.acquires !== undefined;
    switch (a.what) {
      case R.ACQUIRE_START:
      case R.EXTEND_START:
      case R.RELEASE_START: {
        const p = this.pending;
        if (p && a.op !== 0) {
          this.pending = null;
          this.bind(a.op, p.kind, p.resource, p.span);
        }
        break;
      }
      case R.ACQUIRE_END:
        if (m) {
          const at = this.attrs(a.outcome, resource, false);
          this.acquireDur.record(secs, at);
          this.acquires.add(1, at);
        }
        if (op) { op.outcome = a.outcome; op.attempts = a.attempts; op.dur = secs; }
        if (a.lock !== 0 && resource !== undefined) this.locks.set(a.lock, resource);
        break;
      case R.WAIT_START:
        if (m) this.waiters.add(1);
        if (op && op.span) op.span.addEvent('liblock.wait');
        break;
      case R.WAIT_END:
        if (m) this.waiters.add(-1);
        break;
      case R.HAND_OFF:
        if (m) this.handOffs.add(1);
        break;
      case R.EXTEND_END:
        if (m) this.extends.add(1, this.attrs(a.outcome, resource, a.op === 0));
        if (a.op === 0 && a.outcome !== 0) this.log('warn', 'liblock: auto-extension failed', { resource, outcome: outcomeName(a.outcome) });
        if (op) { op.outcome = a.outcome; op.dur = secs; }
        break;
      case R.RELEASE_END:
        if (m) this.releases.add(1, this.attrs(a.outcome, resource, false));
        if (op) { op.outcome = a.outcome; op.dur = secs; }
        break;
      case R.LOST:
        if (m) this.losses.add(1, this.attrs(2, resource, false));
        this.log('warn', 'liblock: lock lost', { resource });
        break;
      case R.HOLD:
        if (m) this.holdDur.record(secs, this.attrs(a.outcome, resource, false));
        this.locks.delete(a.lock);
        break;
      case R.NODE: {
        const i = a.node;
        if (i >= this.nodes.length) break;
        const bad = a.outcome !== 0 && NODE_ERRORS[a.outcome];
        if (m) {
          const at = bad ? this.nodeBad[i][a.outcome] : this.nodeOK[i];
          if (bad) this.nodeErrors.add(1, at);
          this.nodeDur.record(secs, at);
        }
        if (bad) this.log('debug', 'liblock: node request failed', { node: i, address: this.nodes[i], errorType: bad });
        if (op && op.span && op.span.isRecording()) {
          const ev = { 'liblock.node': i, 'server.address': this.nodes[i], 'liblock.duration_ms': a.duration_us / 1000 };
          if (bad) ev['error.type'] = bad;
          op.span.addEvent('liblock.node.reply', ev);
        }
        break;
      }
      case R.FENCE:
        if (m) this.fenceRounds.add(1, this.attrs(a.outcome, resource, false));
        if (op && op.span) op.span.addEvent('liblock.fence', { 'liblock.outcome': outcomeName(a.outcome) });
        break;
      default: // a start, or a report this binding does not know yet
    }
  }

  /** An operation's DONE: ends its span (err: the error the caller gets, or null). */
  done(opId, err) {
    const op = this.ops.get(opId);
    if (!op) return;
    this.ops.delete(opId);
    const outcome = err ? (err.status || 7) : 0;
    this.log('debug', `liblock: ${op.kind}`, { resource: op.resource, outcome: outcomeName(outcome), attempts: op.attempts, duration: op.dur });
    const s = op.span;
    if (!s) return;
    if (s.isRecording()) {
      s.setAttribute('liblock.outcome', outcomeName(outcome));
      if (op.kind === 'acquire') s.setAttribute('liblock.attempts', op.attempts);
      if (err) {
        s.recordException(err);
        s.setStatus({ code: this.api.SpanStatusCode.ERROR, message: err.message });
      }
    }
    s.end();
  }
}

/**
 * The telemetry of a client from its `telemetry` option, or null (then the
 * engine is not asked for reports). undefined: on when @opentelemetry/api
 * is installed or something listens on the log channel; false: off; true or
 * an object: on (an object may give meterProvider, tracerProvider and
 * resourceLabel).
 */
function makeTelemetry(opt, nodes) {
  if (opt === false) return null;
  const a = otelApi();
  if (opt === undefined && !a && !logChannel.hasSubscribers) return null;
  return new Telemetry(a, opt && typeof opt === 'object' ? opt : {}, nodes);
}

module.exports = { makeTelemetry, logChannel, OUTCOMES };
