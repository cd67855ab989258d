'use strict';
// Telemetry that nothing observes costs nothing (lib/otel.js quiet()): with
// @opentelemetry/api installed (this package's dev dependency) and no SDK
// registered and nobody on the log channel, the host binds no operation and
// skips the engine's REPORT actions undecoded (lib/fastpath.js skipReport).
// Each check counts calls of the Telemetry's report(); the counts going up
// once a log subscriber or an SDK appears are what shows the count can fail.
// Node's test runner runs this file in a process of its own, so the API's
// global providers start unset here.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const api = require('@opentelemetry/api');
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { Client } = require('..');
const { makeTelemetry } = require('../lib/otel');
const { startNodes, assertNoUnhandled, withBackend } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(1); });
after(async () => { await nodes.stop(); });
assertNoUnhandled(assert);

// Every Telemetry's report(), counted; `seen` is the last one called.
const proto = Object.getPrototypeOf(makeTelemetry(true, []));
const original = proto.report;
let reports = 0;
let seen = null;
proto.report = function report(a) { reports++; seen = this; return original.call(this, a); };
after(() => { proto.report = original; });

async function pair(c, name) {
  const l = await c.acquire(name, { ttl: 10000 });
  await l.release();
}

test('a quiet client asks the engine for the warnings alone (REPORTS): a pair hands over no REPORT action, a loss still does', async () => {
  // Every REPORT action that reaches a quiet host is stepped over by
  // lib/fastpath.js skipReport (host.js calls it through the module object).
  const F = require('../lib/fastpath');
  const skip = F.skipReport;
  let skipped = 0;
  F.skipReport = function counted(m, o, end, a) {
    const next = skip(m, o, end, a);
    if (next > 0) skipped++;
    return next;
  };
  const c = new Client(withBackend({ nodes: nodes.urls }));
  try {
    for (let i = 0; i < 5; i++) await pair(c, 'otel:warnings');
    assert.equal(skipped, 0, 'REPORT actions were built and handed to a quiet host');
    // A release that finds its key gone is a loss: a warning, still reported
    // (for a log subscriber that may attach while a lock is held).
    const l = await c.acquire('otel:gone', { ttl: 10000 });
    await nodes.flush();
    await assert.rejects(l.release(), (e) => e.code === 'LOST');
    assert.equal(skipped, 1, 'the loss report');
    assert.equal(reports, 0, 'and none decoded');
  } finally {
    F.skipReport = skip;
    await c.close();
  }
});

test('API installed, no SDK, no log subscriber: no REPORT decoded; a subscriber or an SDK turns them on from the next operation', async () => {
  const c = new Client(withBackend({ nodes: nodes.urls }));
  try {
    reports = 0;
    for (let i = 0; i < 5; i++) await pair(c, 'otel:quiet');
    assert.equal(reports, 0, 'a quiet client decoded REPORT actions');

    // A log subscriber: the next operations are reported (and logged).
    const logs = [];
    const onLog = (m) => logs.push(m);
    dc.subscribe('liblock:log', onLog);
    let held;
    try {
      await pair(c, 'otel:heard');
      assert.ok(reports > 0, 'reports with a log subscriber');
      assert.ok(logs.some((m) => m.msg === 'liblock: acquire' && m.resource === 'otel:heard'), JSON.stringify(logs));
      held = await c.acquire('otel:held', { ttl: 10000 }); // its resource noted for log lines
      assert.equal(seen.locks.size, 1);
    } finally {
      dc.unsubscribe('liblock:log', onLog);
    }
    // Quiet again: the engine sends no HOLD (REPORTS: the warnings alone),
    // and the release's DONE forgets the lock's resource (lib/host.js dropLock).
    reports = 0;
    await held.release();
    assert.equal(reports, 0);
    assert.equal(seen.locks.size, 0, 'a quiet release still drops its lock from the resource map');

    // An SDK registered now is used from the next operation.
    const exporter = new InMemorySpanExporter();
    api.trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    await pair(c, 'otel:sdk');
    assert.ok(reports > 0, 'reports once an SDK is registered');
    await c.close(); // records what is queued
    assert.deepEqual(exporter.getFinishedSpans().map((s) => s.name).sort(), ['liblock.acquire', 'liblock.release']);
  } finally {
    await c.close();
  }
});
