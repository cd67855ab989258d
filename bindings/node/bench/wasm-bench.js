'use strict';
// The wasm backend beside the native one, in the same run on the same
// redis-servers (LIBLOCK_NODES, set by build/redisnodes): acquire+release
// pairs on 1 and 5 nodes (rounds alternate between the backends), then what
// loading costs: compiling liblock.wasm, instantiating it on the main thread
// (the validating instance) and starting the worker with its instance, each
// measured in a fresh process. Run alone (node bench/wasm-bench.js) or from
// bench.js.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { Client } = require('..');

const PAIRS = Number(process.env.BENCH_PAIRS || 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const LOADS = Number(process.env.BENCH_LOADS || 5);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const spread = (xs) => `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;

async function pairs(client, res, n) {
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    const l = await client.acquire(res, { ttl: 10000 });
    await l.release();
    t.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return median(t);
}

// Loading, in a fresh process each time: compile + validating instance (new
// Client), then the worker's first answer (its instance is ready).
function loadCosts(url) {
  const code = `
    const l = require(${JSON.stringify(path.join(__dirname, '..'))});
    const t0 = performance.now();
    const c = new l.Client({ nodes: [${JSON.stringify(url)}], backend: 'wasm' });
    const ctor = performance.now() - t0;
    c.acquire('bench:load', { ttl: 1000 }).then(async (lock) => {
      const first = performance.now() - t0;
      await lock.release();
      const d = l._debug('wasm');
      const info = l.library('wasm');
      await c.close();
      console.log(JSON.stringify({ compile: info.compileMs, instantiate: info.instantiateMs, ctor, worker: d.workerReadyMs, first, size: info.size }));
    });`;
  const out = [];
  for (let i = 0; i < LOADS; i++) out.push(JSON.parse(execFileSync(process.execPath, ['-e', code], { encoding: 'utf8' })));
  return out;
}

/** Runs the wasm-vs-native bench on urls (at least 5); prints a table; returns the figures. */
async function run(urls) {
  console.log('');
  console.log(`wasm backend beside native: ${PAIRS} acquire+release pairs x ${ROUNDS} rounds each (median of round medians, µs per pair), node ${process.version}`);
  const results = {};
  for (const n of [1, 5]) {
    const clients = {
      native: new Client({ nodes: urls.slice(0, n), nodeTimeout: 500, backend: 'native' }),
      wasm: new Client({ nodes: urls.slice(0, n), nodeTimeout: 500, backend: 'wasm' }),
    };
    for (const [name, c] of Object.entries(clients)) await pairs(c, `bench:wasm:warm:${name}`, 300);
    const rounds = { native: [], wasm: [] };
    for (let r = 0; r < ROUNDS; r++) {
      for (const [name, c] of Object.entries(clients)) rounds[name].push(await pairs(c, `bench:wasm:${n}:${name}`, PAIRS));
    }
    results[n] = { native: median(rounds.native), wasm: median(rounds.wasm), rounds };
    for (const c of Object.values(clients)) await c.close();
  }
  console.log('backend    1 node µs   5 nodes µs   (round medians: 1 node | 5 nodes)');
  for (const name of ['native', 'wasm']) {
    console.log(`${name.padEnd(8)} ${results[1][name].toFixed(1).padStart(11)} ${results[5][name].toFixed(1).padStart(12)}   (${spread(results[1].rounds[name])} | ${spread(results[5].rounds[name])})`);
  }
  for (const n of [1, 5]) {
    const ratios = results[n].rounds.wasm.map((w, i) => w / results[n].rounds.native[i]);
    console.log(`wasm / native, ${n} node${n > 1 ? 's' : ''}: ${(results[n].wasm / results[n].native).toFixed(2)} (per round ${spread(ratios.map((x) => x * 100)).replace(/(\d+\.\d)/g, (m) => (m / 100).toFixed(2))})`);
  }
  const loads = loadCosts(urls[0]);
  const m = (k) => median(loads.map((x) => x[k]));
  const s = (k) => spread(loads.map((x) => x[k]));
  console.log(`loading liblock.wasm (${loads[0].size} bytes), median of ${LOADS} fresh processes (ms; range):`);
  console.log(`  compile (new WebAssembly.Module)          ${m('compile').toFixed(1).padStart(7)}   (${s('compile')})`);
  console.log(`  instantiate + _initialize, main thread    ${m('instantiate').toFixed(1).padStart(7)}   (${s('instantiate')})`);
  console.log(`  first new Client() (both of the above)    ${m('ctor').toFixed(1).padStart(7)}   (${s('ctor')})`);
  console.log(`  worker started, its instance ready        ${m('worker').toFixed(1).padStart(7)}   (${s('worker')})`);
  console.log(`  new Client() to first lock acquired       ${m('first').toFixed(1).padStart(7)}   (${s('first')})`);
  return { results, loads };
}

module.exports = { run };

if (require.main === module) {
  const urls = (process.env.LIBLOCK_NODES || '').split(',').filter(Boolean);
  if (urls.length < 5) {
    console.error('wasm-bench: LIBLOCK_NODES must list at least 5 nodes (run under build/redisnodes -n 5)');
    process.exit(2);
  }
  run(urls).catch((e) => { console.error(e); process.exit(1); });
}
