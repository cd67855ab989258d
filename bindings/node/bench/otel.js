'use strict';
// The cost of metrics and traces (README "Metrics, traces and logs"): three
// clients on the same nodes take turns pair by pair (acquire + release), so
// that all see the same machine: off (telemetry: false: the engine reports
// nothing), api (the default with @opentelemetry/api installed and no SDK:
// the API's no-op) and sdk (sdk-metrics with an in-memory reader and
// sdk-trace-base recording every span into a no-op processor).
//
// Per pair: the caller's latency (from the acquire call to the release's
// promise resolved) and the process's CPU time (process.cpuUsage) from the
// acquire call until the event loop has been through its check phase once
// after the release resolved. Telemetry is recorded just after the outcome
// is delivered (lib/otel.js), so the latency leaves that work out but the
// CPU figure counts it, and no side's telemetry runs inside the next side's
// pair (each pair ends with that setImmediate, whatever the side).
// Prints medians and the ratios to off; asserts nothing.
// Run: node bench/otel.js [pairs] (starts its own redis-servers);
// BENCH_SIDES=sdk runs one side only (for a profile).
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
const { BasicTracerProvider, NoopSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { Client } = require('..');
const { startNodes } = require('../test/helpers');

class Reader extends MetricReader { async onForceFlush() {} async onShutdown() {} }

const settle = () => new Promise((resolve) => setImmediate(resolve));
const med = (a) => a.slice().sort((x, y) => x - y)[a.length >> 1];

async function main() {
  const pairs = Number(process.argv[2] || 3000);
  const only = process.env.BENCH_SIDES ? process.env.BENCH_SIDES.split(',') : null;
  for (const n of [1, 3]) {
    const nodes = await startNodes(n);
    const reader = new Reader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] });
    // nodeTimeout well above a loaded machine's stalls: a timed-out release
    // would leave its key and fail the next pair with NotAcquired.
    const nodeTimeout = 2000;
    const sides = [
      ['off', new Client({ nodes: nodes.urls, nodeTimeout, telemetry: false })],
      ['api', new Client({ nodes: nodes.urls, nodeTimeout })],
      ['sdk', new Client({ nodes: nodes.urls, nodeTimeout, telemetry: { meterProvider, tracerProvider } })],
    ].filter(([name]) => !only || only.includes(name));
    const lat = sides.map(() => []);
    const cpu = sides.map(() => []);
    const warm = 300 * sides.length;
    for (let i = 0; i < warm + pairs * sides.length; i++) {
      // The order of the sides turns round by round, so that none always
      // follows the same one (the caches it leaves, the work it leaves).
      const s = (i + Math.floor(i / sides.length)) % sides.length;
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      const l = await sides[s][1].acquire(`bench:${sides[s][0]}`, { ttl: 10000 });
      await l.release();
      const t1 = process.hrtime.bigint();
      await settle();
      const c = process.cpuUsage(c0);
      if (i >= warm) {
        lat[s].push(Number(t1 - t0) / 1e3);
        cpu[s].push(c.user + c.system);
      }
    }
    const p50 = lat.map(med);
    const cpu50 = cpu.map((a) => a.reduce((x, y) => x + y, 0) / a.length);
    const ix = (name) => sides.findIndex(([k]) => k === name);
    const ratio = (name, arr) => (ix(name) >= 0 && ix('off') >= 0 ? (arr[ix(name)] / arr[ix('off')]).toFixed(3) : '-');
    console.log(`nodes=${n} pairs=${pairs} ` + sides.map(([name], i) => `${name}-p50-µs=${p50[i].toFixed(1)}`).join(' ') +
      ` api-x=${ratio('api', p50)} sdk-x=${ratio('sdk', p50)} | cpu-µs/pair (mean) ` +
      sides.map(([name], i) => `${name}=${cpu50[i].toFixed(1)}`).join(' ') +
      ` api-cpu-x=${ratio('api', cpu50)} sdk-cpu-x=${ratio('sdk', cpu50)}`);
    if (ix('sdk') >= 0) {
      const { resourceMetrics } = await reader.collect();
      if (!resourceMetrics.scopeMetrics.length) throw new Error('the sdk side recorded nothing');
    }
    for (const [, c] of sides) await c.close();
    await nodes.stop();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
