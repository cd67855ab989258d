'use strict';
// Telemetry recorded after the outcome is delivered (lib/otel.js, README
// "Cost"): the spans carry the times of what they describe, not of when
// they were made; the caller's context is their parent; what waits for an
// operation in flight is recorded when it ends, or LATE_MS later; a tracer
// provider registered after the client was made is used from then on; an
// SDK that throws loses its own record only. Real redis-servers.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const api = require('@opentelemetry/api');
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, eventually, withBackend } = require('./helpers');

class TestReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

async function sum(reader, name) {
  const { resourceMetrics } = await reader.collect();
  let n = 0;
  for (const sm of resourceMetrics.scopeMetrics) {
    for (const m of sm.metrics) if (m.descriptor.name === name) for (const p of m.dataPoints) n += typeof p.value === 'number' ? p.value : p.value.count;
  }
  return n;
}

// Wall-clock milliseconds, as precise as the SDK's span times (performance.now() on timeOrigin).
const wallMs = () => performance.timeOrigin + performance.now();
const hrMs = (t) => t[0] * 1e3 + t[1] / 1e6;
const turn = () => new Promise((r) => setImmediate(r));
// The SDK turns performance.now() into wall time with Date.now() (1 ms steps) as its anchor.
const SLACK_MS = 2;

let nodes;
before(async () => {
  nodes = await startNodes(3);
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});
after(async () => {
  api.context.disable();
  await nodes.stop();
  assertNoUnhandled(assert);
});

function sdk() {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  return { reader, meterProvider, exporter, tracerProvider };
}

test('spans keep the times of the operation although they are made after its delivery', async () => {
  const { reader, meterProvider, exporter, tracerProvider } = sdk();
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 2000, telemetry: { meterProvider, tracerProvider } }));
  const parent = tracerProvider.getTracer('test').startSpan('parent');
  try {
    await api.context.with(api.trace.setSpan(api.context.active(), parent), async () => {
      const t0 = wallMs();
      const lock = await client.acquire('otel:defer', { ttl: 10000 });
      const t1 = wallMs();
      // Delivered first: nothing is recorded yet (the control that the
      // checks below are about deferred records, not immediate ones).
      assert.equal(exporter.getFinishedSpans().length, 0, 'the acquire span is made after its delivery');
      assert.equal(await sum(reader, 'liblock.acquires'), 0, 'the acquire is counted after its delivery');
      // Hold the event loop: the records are made at least this late.
      const spin = wallMs() + 30;
      while (wallMs() < spin) { /* busy on purpose: delays the deferred records */ }
      await turn();
      assert.equal(await sum(reader, 'liblock.acquires'), 1);
      const [acq] = exporter.getFinishedSpans().filter((s) => s.name === 'liblock.acquire');
      assert.ok(acq, 'the acquire span, made in the turn after delivery');
      assert.ok(hrMs(acq.startTime) >= t0 - SLACK_MS, `start ${hrMs(acq.startTime)} before the call ${t0}`);
      assert.ok(hrMs(acq.endTime) <= t1 + SLACK_MS, `end ${hrMs(acq.endTime)} after the delivery ${t1} (the time it was made?)`);
      const replies = acq.events.filter((e) => e.name === 'liblock.node.reply');
      assert.ok(replies.length >= 2, 'a quorum of node replies');
      for (const e of acq.events) {
        assert.ok(hrMs(e.time) >= hrMs(acq.startTime) && hrMs(e.time) <= hrMs(acq.endTime), `${e.name} inside its span`);
      }
      for (const e of replies) assert.equal(typeof e.attributes['liblock.duration_ms'], 'number');
      assert.equal(acq.attributes['liblock.outcome'], 'ok');
      assert.equal(acq.attributes['liblock.attempts'], 1);
      assert.equal(acq.parentSpanContext.spanId, parent.spanContext().spanId, 'the caller\'s span is its parent');

      const t2 = wallMs();
      await lock.release();
      const t3 = wallMs();
      await turn();
      const [rel] = exporter.getFinishedSpans().filter((s) => s.name === 'liblock.release');
      assert.ok(hrMs(rel.startTime) >= t2 - SLACK_MS && hrMs(rel.endTime) <= t3 + SLACK_MS, 'the release span inside the call');
      assert.equal(rel.parentSpanContext.spanId, parent.spanContext().spanId);
    });
  } finally {
    parent.end();
    await client.close();
  }
});

test('a refused request and a failed acquire end their spans as errors, at their times', async () => {
  const { exporter, tracerProvider } = sdk();
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 2000, telemetry: { tracerProvider } }));
  const other = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 2000, telemetry: false }));
  try {
    const held = await other.acquire('otel:busy', { ttl: 10000 });
    const t0 = wallMs();
    await assert.rejects(client.acquire('otel:busy', { ttl: 10000, wait: 0 }), { code: 'NOT_ACQUIRED' });
    const t1 = wallMs();
    await held.release();
    await turn();
    const [s] = exporter.getFinishedSpans();
    assert.equal(s.name, 'liblock.acquire');
    assert.equal(s.status.code, api.SpanStatusCode.ERROR);
    assert.equal(s.attributes['liblock.outcome'], 'not_acquired');
    const ex = s.events.find((e) => e.name === 'exception');
    assert.ok(ex, 'the exception event');
    assert.ok(hrMs(ex.time) <= t1 + SLACK_MS && hrMs(s.startTime) >= t0 - SLACK_MS && hrMs(s.endTime) <= t1 + SLACK_MS);
  } finally {
    await client.close();
    await other.close();
  }
});

test('what waits for an operation in flight is recorded when it ends, or soon after', async () => {
  const { reader, meterProvider } = sdk();
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 2000, telemetry: { meterProvider } }));
  const other = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 2000, telemetry: false }));
  try {
    const blocker = await other.acquire('otel:late', { ttl: 10000 });
    const waiting = client.acquire('otel:late', { ttl: 10000, wait: 10000 });
    // The acquire is in flight (waiting): its first refusal is recorded
    // without waiting for its end (LATE_MS).
    await eventually(async () => (await sum(reader, 'liblock.acquire.waiters')) === 1, { what: 'the waiter recorded' });
    assert.equal(await sum(reader, 'liblock.acquires'), 0);
    const l = await (async () => { await blocker.release(); return waiting; })();
    await turn();
    assert.equal(await sum(reader, 'liblock.acquire.waiters'), 0);
    assert.equal(await sum(reader, 'liblock.acquires'), 1);
    await l.release();
  } finally {
    await client.close(); // records what is left before it resolves
    await other.close();
  }
  assert.equal(await sum(reader, 'liblock.releases'), 1, 'close() recorded the last release');
});

test('a tracer provider registered after the client was made is used from then on', async () => {
  const { exporter, tracerProvider } = sdk();
  const client = new Client(withBackend({ nodes: nodes.urls.slice(0, 1), nodeTimeout: 2000, telemetry: true }));
  try {
    await (await client.acquire('otel:global', { ttl: 10000 })).release();
    await turn();
    assert.equal(exporter.getFinishedSpans().length, 0, 'no SDK yet: no span');
    assert.ok(api.trace.setGlobalTracerProvider(tracerProvider), 'registered');
    await (await client.acquire('otel:global', { ttl: 10000 })).release();
    await turn();
    assert.deepEqual(exporter.getFinishedSpans().map((s) => s.name), ['liblock.acquire', 'liblock.release']);
  } finally {
    api.trace.disable();
    await client.close();
  }
});

test('an SDK that throws loses its own record, not the others', async () => {
  const { reader, meterProvider, exporter, tracerProvider } = sdk();
  const errors = [];
  api.diag.setLogger({ error: (...a) => errors.push(a), warn() {}, info() {}, debug() {}, verbose() {} }, api.DiagLogLevel.ERROR);
  const client = new Client(withBackend({ nodeTimeout: 2000,
    nodes: nodes.urls.slice(0, 1),
    telemetry: { meterProvider, tracerProvider, resourceLabel: (r) => { if (r === 'otel:throw') throw new Error('label bug'); return 'x'; } },
  }));
  try {
    await (await client.acquire('otel:throw', { ttl: 10000 })).release();
    await (await client.acquire('otel:fine', { ttl: 10000 })).release();
  } finally {
    await client.close();
    api.diag.disable();
  }
  assert.ok(errors.some((a) => String(a[1] && a[1].message).includes('label bug')), 'reported through diag');
  // The label is asked when the records are made: the throwing resource's
  // metric records are lost (and its spans' liblock.resource), the rest is there.
  assert.equal(await sum(reader, 'liblock.acquires'), 1);
  assert.equal(await sum(reader, 'liblock.releases'), 1);
  const acq = exporter.getFinishedSpans().filter((s) => s.name === 'liblock.acquire');
  assert.deepEqual(acq.map((s) => s.attributes['liblock.resource']), [undefined, 'x']);
  assert.ok(acq.every((s) => s.attributes['liblock.outcome'] === 'ok' && s.ended));
});
