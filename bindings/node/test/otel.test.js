'use strict';
// Metrics, traces and logs (README "Metrics, traces and logs"): the
// engine's REPORT actions mapped onto @opentelemetry/api, checked with the
// real SDKs (@opentelemetry/sdk-metrics with an in-memory reader,
// @opentelemetry/sdk-trace-base with an in-memory exporter) against what
// the test did on real redis-servers: ten acquires, seven granted (one
// after a wait, one fenced), three refused, one lock lost, one extended, a
// node killed, the rest released.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const Redis = require('ioredis');
const api = require('@opentelemetry/api');
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { Client, NotAcquiredError } = require('..');
const { startNodes, assertNoUnhandled, eventually, withBackend } = require('./helpers');

/** An in-memory reader: collect() on demand (the JS SDK has no ManualReader). */
class TestReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}

async function metrics(reader) {
  const { resourceMetrics } = await reader.collect();
  const out = [];
  for (const sm of resourceMetrics.scopeMetrics) for (const m of sm.metrics) out.push(m);
  const match = (attrs, want) => Object.entries(want).every(([k, v]) => String(attrs[k]) === String(v));
  return {
    sum(name, want = {}) {
      let n = 0;
      for (const m of out) if (m.descriptor.name === name) for (const p of m.dataPoints) if (match(p.attributes, want)) n += p.value;
      return n;
    },
    count(name, want = {}) {
      let n = 0;
      for (const m of out) if (m.descriptor.name === name) for (const p of m.dataPoints) if (match(p.attributes, want)) n += p.value.count;
      return n;
    },
    names: out.map((m) => m.descriptor.name),
  };
}

let nodes;
let ctxManager;
before(async () => {
  nodes = await startNodes(3);
  ctxManager = new AsyncLocalStorageContextManager().enable();
  api.context.setGlobalContextManager(ctxManager);
});
after(async () => {
  api.context.disable();
  await nodes.stop();
  assertNoUnhandled(assert);
});

test('metrics, spans and log records match what was done', async () => {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const logs = [];
  const onLog = (m) => logs.push(m);
  dc.subscribe('liblock:log', onLog);
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 500, telemetry: { meterProvider, tracerProvider } }));
  const other = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 500, telemetry: false }));
  const parent = tracerProvider.getTracer('test').startSpan('parent');
  const tokens = [];
  try {
    await api.context.with(api.trace.setSpan(api.context.active(), parent), async () => {
      // One acquire that waits, counted as a waiter while it does.
      const blocker = await other.acquire('otel:wait', { ttl: 10000 });
      const waited = client.acquire('otel:wait', { ttl: 10000, wait: 10000 });
      await eventually(async () => (await metrics(reader)).sum('liblock.acquire.waiters') === 1, { what: 'a waiter' });
      await blocker.release();
      const w = await waited;
      tokens.push(w.token);
      await w.release(); // at once: it may hold only a quorum, and a node is killed below
      // Telemetry is recorded just after the outcome is delivered, in the
      // same turn of the event loop when no operation is left in flight.
      await new Promise((r) => setImmediate(r));
      assert.equal((await metrics(reader)).sum('liblock.acquire.waiters'), 0);

      const held = [];
      for (const r of ['otel:0', 'otel:1', 'otel:2', 'otel:3', 'otel:4']) held.push(await client.acquire(r, { ttl: 10000 }));
      held.push(await client.acquire('otel:fenced', { ttl: 10000, fence: true }));
      for (const l of held) tokens.push(l.token);

      const busy = [];
      for (const r of ['otel:busy:0', 'otel:busy:1', 'otel:busy:2']) {
        const b = await other.acquire(r, { ttl: 10000 });
        busy.push(b);
        // On every node before the refused attempt: other's acquire returned at a
        // quorum, and a SET still on its way to the third node could lose there to
        // the attempt below, leaving b on two nodes, one of them the node killed
        // below, and its release then UNAVAILABLE.
        await eventually(async () => {
          const got = await Promise.all(nodes.urls.map(async (u) => {
            const c = new Redis(u);
            try { return await c.get(b.key); } finally { c.disconnect(); }
          }));
          return got.every((t) => t === b.token);
        }, { what: `${r} on every node` });
        await assert.rejects(client.acquire(r, { ttl: 10000, wait: 0 }), NotAcquiredError);
      }

      // One lost: its key deleted everywhere, found out by an extension.
      for (const u of nodes.urls) {
        const r = new Redis(u);
        await r.del(held[0].key);
        r.disconnect();
      }
      await assert.rejects(held[0].extend(10000), { code: 'LOST' });
      await held[1].extend(10000);

      // The lost lock's release before the kill: with a node dead, a "not
      // ours" from one node and no answer yet from the other makes the
      // outcome UNAVAILABLE (cannot tell), not LOST, depending on reply order.
      await assert.rejects(held[0].release(), { code: 'LOST' });
      await nodes.kill(2);
      for (const l of held.slice(1)) await l.release();
      for (const b of busy) await b.release();
    });
  } finally {
    parent.end();
    dc.unsubscribe('liblock:log', onLog);
    await client.close();
    await other.close();
  }

  const m = await metrics(reader);
  const ok = { 'liblock.outcome': 'ok' };
  const refused = { 'liblock.outcome': 'not_acquired' };
  const lost = { 'liblock.outcome': 'lost' };
  assert.equal(m.sum('liblock.acquires', ok), 7, 'acquires ok');
  assert.equal(m.sum('liblock.acquires', refused), 3, 'acquires refused');
  assert.equal(m.sum('liblock.acquires'), 10);
  assert.equal(m.count('liblock.acquire.duration', ok), 7);
  assert.equal(m.count('liblock.acquire.duration', refused), 3);
  assert.equal(m.sum('liblock.losses'), 1);
  assert.equal(m.sum('liblock.extends', ok), 1);
  assert.equal(m.sum('liblock.extends', lost), 1);
  assert.equal(m.sum('liblock.releases', ok), 6);
  assert.equal(m.sum('liblock.releases', lost), 1);
  assert.equal(m.count('liblock.hold.duration', ok), 6);
  assert.equal(m.count('liblock.hold.duration', lost), 1);
  assert.equal(m.sum('liblock.fence.rounds', ok), 1);
  assert.equal(m.sum('liblock.acquire.waiters'), 0);
  for (const i of [0, 1]) {
    assert.equal(m.sum('liblock.node.errors', { 'liblock.node': i }), 0, `node ${i} errors`);
    assert.ok(m.count('liblock.node.request.duration', { 'liblock.node': i }) > 0, `node ${i} requests`);
  }
  assert.ok(m.sum('liblock.node.errors', { 'liblock.node': 2, 'error.type': 'connection' }) > 0, 'the killed node\'s errors');

  const spans = exporter.getFinishedSpans();
  const by = (name) => spans.filter((s) => s.name === name);
  assert.equal(by('liblock.acquire').length, 10);
  assert.equal(by('liblock.extend').length, 2);
  assert.equal(by('liblock.release').length, 7, JSON.stringify(by('liblock.release').map((s) => [s.attributes, s.status])));
  for (const s of spans) {
    if (s.name === 'parent') continue;
    const p = s.parentSpanContext ? s.parentSpanContext.spanId : s.parentSpanId;
    assert.equal(p, parent.spanContext().spanId, `${s.name}: the active span is its parent`);
  }
  const acq = by('liblock.acquire');
  assert.equal(acq.filter((s) => s.status.code === api.SpanStatusCode.ERROR).length, 3, 'refused acquires are errors');
  assert.equal(acq.filter((s) => s.events.some((e) => e.name === 'liblock.wait')).length, 1, 'one waited');
  assert.ok(acq.every((s) => s.events.filter((e) => e.name === 'liblock.node.reply').length >= 2), 'node replies (a quorum at least)');

  assert.ok(logs.some((l) => l.level === 'warn' && l.msg === 'liblock: lock lost' && l.resource === 'otel:0'), 'the loss is logged');
  const text = JSON.stringify(logs);
  for (const t of tokens) assert.ok(!text.includes(t), 'a token in the log');
});

test('telemetry: false asks the engine for nothing; a bad telemetry option names itself', async () => {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const off = new Client(withBackend({ nodes: nodes.urls.slice(0, 1), telemetry: false }));
  const l = await off.acquire('otel:off', { ttl: 1000 });
  await l.release();
  await off.close();
  assert.deepEqual((await metrics(reader)).names, []);
  // The negative control: the same with it on sees the acquire.
  const on = new Client(withBackend({ nodes: nodes.urls.slice(0, 1), telemetry: { meterProvider } }));
  await (await on.acquire('otel:off', { ttl: 1000 })).release();
  await on.close();
  assert.equal((await metrics(reader)).sum('liblock.acquires'), 1);
  assert.throws(() => new Client({ nodes: nodes.urls, telemetry: 'yes' }), { code: 'INVALID_ARGUMENT', message: /telemetry/ });
  assert.throws(() => new Client({ nodes: nodes.urls, telemetry: { meter: 1 } }), { message: /telemetry.*meter/ });
  assert.throws(() => new Client({ nodes: nodes.urls, telemetry: { resourceLabel: 3 } }), { message: /telemetry.resourceLabel/ });
});

test('resourceLabel labels the lock metrics with what it returns', async () => {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  const client = new Client(withBackend({ nodes: nodes.urls.slice(0, 1), telemetry: { meterProvider, resourceLabel: (r) => r.split(':')[0] } }));
  for (const r of ['jobs:1', 'jobs:2', 'users:7']) await (await client.acquire(r, { ttl: 1000 })).release();
  await client.close();
  const m = await metrics(reader);
  assert.equal(m.sum('liblock.acquires', { 'liblock.resource': 'jobs' }), 2);
  assert.equal(m.sum('liblock.releases', { 'liblock.resource': 'users' }), 1);
  assert.equal(m.sum('liblock.acquires', { 'liblock.resource': 'jobs:1' }), 0);
});

test('without @opentelemetry/api installed the binding works and asks for no reports', async () => {
  // A child process in which the package cannot be resolved, as in an
  // install without the optional peer dependency.
  const { execFileSync } = require('node:child_process');
  const script = `
    const Module = require('node:module');
    const resolve = Module._resolveFilename;
    Module._resolveFilename = function (request, ...rest) {
      if (request === '@opentelemetry/api') { const e = new Error('Cannot find module'); e.code = 'MODULE_NOT_FOUND'; throw e; }
      return resolve.call(this, request, ...rest);
    };
    const { Client } = require(${JSON.stringify(require.resolve('..'))});
    // no telemetry, so no "report" key for the engine
    if (require(${JSON.stringify(require.resolve('../lib/otel'))}).makeTelemetry(undefined, []) !== null) throw new Error('telemetry without the API');
    (async () => {
      const c = new Client({ nodes: ${JSON.stringify(nodes.urls.slice(0, 1))}, backend: ${JSON.stringify(process.env.LIBLOCK_BACKEND || 'native')} });
      const l = await c.acquire('otel:noapi', { ttl: 1000 });
      await l.release();
      await c.close();
      console.log('ok');
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const out = execFileSync(process.execPath, ['-e', script], { env: process.env, encoding: 'utf8', timeout: 60000 });
  assert.equal(out.trim(), 'ok');
});
