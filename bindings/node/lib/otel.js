'use strict';
// Metrics, traces and logs (docs/node.md "Metrics, traces and logs"): the
// engine's REPORT actions mapped onto OpenTelemetry's API (the instruments,
// attributes and spans of core/otel.go; @opentelemetry/api is an optional
// peer dependency, required lazily) and onto node:diagnostics_channel.
// The reports carry no token and no password.

const dc = require('node:diagnostics_channel');
const { DEFAULTS } = require('./protocol.gen'); // telemetry: the spec's default for Node

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

// The OpenTelemetry calls are not made while the engine is stepped: they go
// into a queue (flat entries of ENTRY slots: a tag and its fields), emptied
// in a setImmediate after the outcome was delivered: at once when none of
// the client's operations is in flight any more, else when the last one
// ends, when LATE entries are queued, or LATE_MS later. Spans get explicit
// times taken when the engine reported and the caller's context captured at
// call time, so they are the same as if made at once. Logs stay synchronous.
const ENTRY = 6;
const Q_RECORD = 1; // instrument, value, attributes: histogram.record
const Q_ADD = 2; // instrument, value, attributes: counter.add
const Q_SPAN = 3; // span record: the span starts
const Q_EVENT = 4; // span record, name, attributes (or null), time
const Q_NODE = 5; // span record, node index, error type (or false), duration in µs, time
const Q_END = 6; // span record, outcome, error (or null), time
const Q_REFUSED = 7; // span record, error, time
// With a resourceLabel, the attributes are made by the flush (the label is
// the caller's code: off the critical path, and its exception is reported
// like an SDK's): the tag + Q_LABELED, then outcome, resource, auto.
const Q_LABELED = 8;

const LATE = 256; // entries
const LATE_MS = 20;
// What empties the queue next (Telemetry.sched).
const S_NONE = 0;
const S_IMMEDIATE = 1;
const S_TIMER = 2;

const now = () => performance.now();

/**
 * A caller's span before it exists: what starting it needs (its name, the
 * caller's context, its start time), then the span itself once the queue
 * got to it. attempts: filled in by the acquire's end report.
 */
class SpanRecord {
  constructor(name, ctx, start, resource) {
    this.name = name;
    this.ctx = ctx;
    this.start = start;
    this.resource = resource;
    this.span = null;
    this.attempts = 0;
  }
}

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
    this.ops = new Map(); // op -> { span, kind, resource, outcome, attempts, dur } (span: a SpanRecord or null)
    this.locks = new Map(); // lock -> resource (for labels and log lines)
    this.pending = null; // the request being stepped: { span, kind, resource } (host.traced)
    this.nodes = nodes;
    this.q = []; // the deferred OpenTelemetry calls (see ENTRY)
    this.sched = S_NONE; // what empties q next
    this.timer = null; // the setImmediate or the setTimeout, while one is queued
    this.onImmediate = () => this.soon();
    this.onTimer = () => { this.timer = null; this.sched = S_NONE; this.flush(); };
    this.metered = false; // a meter that is not the API's no-op
    this.tracer = null;
    if (!a) return;
    const mp = opts.meterProvider || a.metrics.getMeterProvider();
    const tp = opts.tracerProvider || a.trace.getTracerProvider();
    const m = mp.getMeter('liblock');
    this.tracer = tp.getTracer('liblock');
    // The API's global tracer provider is a proxy that delegates once an SDK
    // registers: until then its spans are no-ops, which spanning() checks
    // per operation (one property read) so that an SDK registered later is
    // used. The API's no-op meter provider, the global one when no SDK was
    // registered before the client was made, stays a no-op for the client.
    this.tp = tp instanceof a.ProxyTracerProvider ? tp : null;
    this.noopTP = new a.ProxyTracerProvider().getDelegate(); // the API's NOOP_TRACER_PROVIDER
    this.traceable = tp !== this.noopTP;
    this.metered = !(m instanceof a.createNoopMeter().constructor);
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
    this.fenceEv = OUTCOMES.map((o) => Object.freeze({ 'liblock.outcome': o }));
  }

  attrs(outcome, resource, auto) {
    if (!this.label) return (auto ? this.autoExt : this.byOutcome)[outcome] || this.byOutcome[7];
    const a = { 'liblock.outcome': outcomeName(outcome), 'liblock.resource': String(this.label(resource)) };
    if (auto) a['liblock.auto'] = true;
    return a;
  }

  /** Queues one deferred call (see ENTRY); the flush is queued with the first. */
  put(tag, a, b, c, d, e) {
    const q = this.q;
    q.push(tag, a, b, c, d, e);
    if (this.sched === S_NONE || (this.sched === S_TIMER && q.length >= LATE * ENTRY)) this.immediate();
  }

  immediate() {
    if (this.sched === S_TIMER) clearTimeout(this.timer);
    this.sched = S_IMMEDIATE;
    this.timer = setImmediate(this.onImmediate);
  }

  /** The setImmediate: empties the queue, or waits for the operations in flight (see LATE). */
  soon() {
    this.timer = null;
    this.sched = S_NONE;
    if (this.ops.size > 0 && this.q.length < LATE * ENTRY) {
      this.sched = S_TIMER;
      this.timer = setTimeout(this.onTimer, LATE_MS);
      this.timer.unref(); // an operation in flight keeps the process alive, and its end flushes
      return;
    }
    this.flush();
  }

  /** A metric without attributes: a record (histogram) or add (counter), when a meter records. */
  add(inst, value) { if (this.metered) this.put(Q_ADD, inst, value, undefined, null, null); }

  /** A metric labelled by outcome (and resource, with a resourceLabel); tag: Q_RECORD or Q_ADD. */
  metric(tag, inst, value, outcome, resource, auto) {
    if (this.label) this.put(tag + Q_LABELED, inst, value, outcome, resource, auto);
    else this.put(tag, inst, value, (auto ? this.autoExt : this.byOutcome)[outcome] || this.byOutcome[7], null, null);
  }

  /**
   * Whether nothing observes this client's telemetry now (no meter that
   * records, no span that would, nobody on the log channel, no operation
   * bound to a span or being started): then the host skips REPORT actions
   * undecoded and asks the engine for the warnings alone, so a pair costs
   * what it costs with `telemetry: false`. Checked per operation and per
   * step: an SDK registered later is used from the next operation on.
   */
  quiet() {
    return !this.metered && this.ops.size === 0 && this.pending === null && !logChannel.hasSubscribers &&
      (this.tracer === null || !this.spanning());
  }

  /** A lock is gone (released, dropped, or a skipped HOLD), and so is its resource. */
  forgetLock(lock) {
    if (this.locks.size !== 0) this.locks.delete(lock);
  }

  /** Whether spans are made now: a tracer that is not (or no longer) the API's no-op. */
  spanning() {
    if (this.tp !== null) return this.tp.getDelegate() !== this.noopTP;
    return this.traceable;
  }

  /**
   * Starts the span of a caller's operation, a child of the active context:
   * returns its SpanRecord (the span is made by the flush), or null when no
   * span would record.
   */
  start(kind, resource) {
    if (this.tracer === null || !this.spanning()) return null;
    const rec = new SpanRecord(`liblock.${kind}`, this.api.context.active(), now(), resource);
    this.put(Q_SPAN, rec, null, null, null, null);
    return rec;
  }

  /** Binds a started operation (its op id) to its span. */
  bind(op, kind, resource, span) {
    this.ops.set(op, { span, kind, resource, outcome: 0, attempts: 0, dur: 0 });
  }

  /** Ends the span of an operation the engine refused at once. */
  refused(span, err) {
    if (span) this.put(Q_REFUSED, span, err, now(), null, null);
  }

  log(level, msg, fields) {
    if (logChannel.hasSubscribers) logChannel.publish({ level, msg, ...fields });
  }

  /** One REPORT action. */
  report(a) {
    const op = a.op !== 0 ? this.ops.get(a.op) : undefined;
    const resource = op ? op.resource : this.locks.get(a.lock);
    const secs = a.duration_us / 1e6;
    const m = this.metered;
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
          this.metric(Q_RECORD, this.acquireDur, secs, a.outcome, resource, false);
          this.metric(Q_ADD, this.acquires, 1, a.outcome, resource, false);
        }
        if (op) { op.outcome = a.outcome; op.attempts = a.attempts; op.dur = secs; }
        if (a.lock !== 0 && resource !== undefined) this.locks.set(a.lock, resource);
        break;
      case R.WAIT_START:
        this.add(this.waiters, 1);
        if (op && op.span) this.put(Q_EVENT, op.span, 'liblock.wait', null, now(), null);
        break;
      case R.WAIT_END:
        this.add(this.waiters, -1);
        break;
      case R.HAND_OFF:
        this.add(this.handOffs, 1);
        break;
      case R.EXTEND_END:
        if (m) this.metric(Q_ADD, this.extends, 1, a.outcome, resource, a.op === 0);
        // A failed auto-extension that lost the lock is told by the loss's
        // own warning (host.js warnLost); one that could not tell (nodes
        // failing) here: the lock stays valid until its validity ends.
        if (a.op === 0 && a.outcome !== 0 && a.outcome !== 2) this.log('warn', 'liblock: auto-extension failed', { resource, outcome: outcomeName(a.outcome) });
        if (op) { op.outcome = a.outcome; op.dur = secs; }
        break;
      case R.RELEASE_END:
        if (m) this.metric(Q_ADD, this.releases, 1, a.outcome, resource, false);
        if (op) { op.outcome = a.outcome; op.dur = secs; }
        break;
      case R.LOST:
        // (Its log record is the host's, from the engine's LOST: host.js warnLost.)
        if (m) this.metric(Q_ADD, this.losses, 1, 2, resource, false);
        break;
      case R.HOLD:
        if (m) this.metric(Q_RECORD, this.holdDur, secs, a.outcome, resource, false);
        this.locks.delete(a.lock);
        break;
      case R.NODE: {
        const i = a.node;
        if (i >= this.nodes.length) break;
        const bad = a.outcome !== 0 && NODE_ERRORS[a.outcome];
        if (m) {
          const at = bad ? this.nodeBad[i][a.outcome] : this.nodeOK[i];
          if (bad) this.put(Q_ADD, this.nodeErrors, 1, at, null, null);
          this.put(Q_RECORD, this.nodeDur, secs, at, null, null);
        }
        if (bad) this.log('debug', 'liblock: node request failed', { node: i, address: this.nodes[i], errorType: bad });
        if (op && op.span) this.put(Q_NODE, op.span, i, bad, a.duration_us, now());
        break;
      }
      case R.FENCE:
        if (m) this.metric(Q_ADD, this.fenceRounds, 1, a.outcome, resource, false);
        if (op && op.span) this.put(Q_EVENT, op.span, 'liblock.fence', this.fenceEv[a.outcome] || this.fenceEv[7], now(), null);
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
    if (s) {
      if (op.kind === 'acquire') s.attempts = op.attempts;
      this.put(Q_END, s, outcome, err || null, now(), null);
    }
    // The last operation in flight ended: what waited for it goes after its delivery.
    if (this.sched === S_TIMER && this.ops.size === 0) this.immediate();
  }

  /**
   * Makes the queued OpenTelemetry calls, in the order the engine reported.
   * Also called by the host when it closes, so that nothing is left queued.
   */
  flush() {
    const q = this.q;
    if (this.sched === S_IMMEDIATE) clearImmediate(this.timer);
    else if (this.sched === S_TIMER) clearTimeout(this.timer);
    this.sched = S_NONE;
    this.timer = null;
    if (q.length === 0) return;
    this.q = [];
    for (let i = 0; i < q.length; i += ENTRY) {
      try {
        this.apply(q[i], q[i + 1], q[i + 2], q[i + 3], q[i + 4], q[i + 5]);
      } catch (e) {
        // An SDK's (or resourceLabel's) exception: the OpenTelemetry way is
        // to report it through diag, and go on with the other records.
        this.api.diag.error('liblock: telemetry', e);
      }
    }
  }

  apply(tag, a, b, c, d, e) {
    switch (tag) {
      case Q_RECORD: a.record(b, c); break;
      case Q_ADD: a.add(b, c); break;
      case Q_RECORD + Q_LABELED: a.record(b, this.attrs(c, d, e)); break;
      case Q_ADD + Q_LABELED: a.add(b, this.attrs(c, d, e)); break;
      case Q_SPAN: {
        const span = this.tracer.startSpan(a.name, { kind: this.api.SpanKind.CLIENT, startTime: a.start }, a.ctx);
        a.ctx = null;
        a.span = span;
        if (this.label && span.isRecording()) span.setAttribute('liblock.resource', String(this.label(a.resource)));
        break;
      }
      case Q_EVENT:
        if (a.span.isRecording()) {
          if (c) a.span.addEvent(b, c, d);
          else a.span.addEvent(b, d);
        }
        break;
      case Q_NODE:
        if (a.span.isRecording()) {
          const ev = { 'liblock.node': b, 'server.address': this.nodes[b], 'liblock.duration_ms': d / 1000 };
          if (c) ev['error.type'] = c;
          a.span.addEvent('liblock.node.reply', ev, e);
        }
        break;
      case Q_END: {
        const s = a.span;
        if (s.isRecording()) {
          s.setAttribute('liblock.outcome', outcomeName(b));
          if (a.name === 'liblock.acquire') s.setAttribute('liblock.attempts', a.attempts);
          if (c) {
            s.recordException(c, d);
            s.setStatus({ code: this.api.SpanStatusCode.ERROR, message: c.message });
          }
        }
        s.end(d);
        break;
      }
      case Q_REFUSED: {
        const s = a.span;
        s.recordException(b, c);
        s.setStatus({ code: this.api.SpanStatusCode.ERROR, message: b.message });
        s.end(c);
        break;
      }
      default:
    }
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
  if (opt === undefined && DEFAULTS.telemetry !== 'installed') opt = DEFAULTS.telemetry === 'on';
  if (opt === false) return null;
  const a = otelApi();
  if (opt === undefined && !a && !logChannel.hasSubscribers) return null;
  return new Telemetry(a, opt && typeof opt === 'object' ? opt : {}, nodes);
}

module.exports = { makeTelemetry, logChannel, R };
