'use strict';
// The cost of metrics and traces (README "Metrics, traces and logs"): three
// clients on the same nodes take turns pair by pair (acquire + release), so
// that all see the same machine: off (telemetry: false: the engine reports
// nothing), api (the default with @opentelemetry/api installed and no SDK:
// the API's no-op) and sdk (sdk-metrics with an in-memory reader and
// sdk-trace-base recording every span into a no-op processor). Prints the
// median pair latency of each and the ratios to off; asserts nothing.
// Run: node bench/otel.js [pairs] (starts its own redis-servers).
const { MeterProvider, MetricReader } = require('@opentelemetry/sdk-metrics');
const { BasicTracerProvider, NoopSpanProcessor } = require('@opentelemetry/sdk-trace-base');
const { Client } = require('..');
const { startNodes } = require('../test/helpers');

class Reader extends MetricReader { async onForceFlush() {} async onShutdown() {} }

async function main() {
  const pairs = Number(process.argv[2] || 3000);
  for (const n of [1, 3]) {
    const nodes = await startNodes(n);
    const reader = new Reader();
    const meterProvider = new MeterProvider({ readers: [reader] });
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new NoopSpanProcessor()] });
    const sides = [
      ['off', new Client({ nodes: nodes.urls, telemetry: false })],
      ['api', new Client({ nodes: nodes.urls })],
      ['sdk', new Client({ nodes: nodes.urls, telemetry: { meterProvider, tracerProvider } })],
    ];
    const lat = sides.map(() => []);
    for (let i = 0; i < 300 * sides.length + pairs * sides.length; i++) {
      const s = i % sides.length;
      const t0 = process.hrtime.bigint();
      const l = await sides[s][1].acquire('bench', { ttl: 10000, wait: 0 });
      await l.release();
      if (i >= 300 * sides.length) lat[s].push(Number(process.hrtime.bigint() - t0) / 1e3);
    }
    const med = (a) => a.sort((x, y) => x - y)[a.length >> 1];
    const p50 = lat.map(med);
    console.log(`nodes=${n} pairs=${pairs} ` + sides.map(([name], i) => `${name}-p50-µs=${p50[i].toFixed(1)}`).join(' ') +
      ` api-x=${(p50[1] / p50[0]).toFixed(3)} sdk-x=${(p50[2] / p50[0]).toFixed(3)}`);
    const { resourceMetrics } = await reader.collect();
    if (!resourceMetrics.scopeMetrics.length) throw new Error('the sdk side recorded nothing');
    for (const [, c] of sides) await c.close();
    await nodes.stop();
  }
}
main().catch((e) => { console.error(e); process.exit(1); });
