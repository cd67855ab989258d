'use strict';
// A focused acquire+release pair bench: every
// library called with its own DEFAULTS, liblock's two backends beside the
// JS peers, on 1 node and on 5, alternating pair by pair (one pair of each
// library in turn, in a random order every cycle) so that every library
// sees the same machine; BENCH_REPS runs of BENCH_PAIRS pairs each.
//
// Per library and run: the median latency (µs per pair) and the mean CPU
// per pair (process.cpuUsage, user + system µs, this process only), then
// each liblock row's ratio to the fastest peer of that run; at the end the
// median of the runs' ratios. On a shared machine absolute µs are noise:
// read the ratios (pairs measured side by side), never one number alone.
//
// Defaults: liblock `client.acquire(r, { ttl })` then `lock.release()` on
// `new Client({ nodes })`; redis-semaphore `new Mutex(client, r)` (1 node)
// and `new RedlockMutex(clients, r)`; node-redlock and
// @sesamecare-oss/redlock `new Redlock(clients).acquire([r], ttl)`.
//
//   build/redisnodes -n 5 -- node bench/pair.js     (or with no
//   LIBLOCK_NODES it starts its own five through test/helpers.js)
// BENCH_PAIRS (2000), BENCH_REPS (3), BENCH_BLOCK (1), BENCH_NODES (1,5), BENCH_LIBS (all;
// e.g. "liblock native,redis-semaphore Mutex"). BENCH_BASE=<a directory
// holding another copy of bindings/node> adds its two backends as
// "liblock native (base)" and "liblock wasm (base)": a change measured
// against the code before it, pair by pair in one process.
// BENCH_KIND=semaphore measures a permit of a
// 3-permit semaphore instead: liblock `client.acquire(r, { ttl, permits: 3 })`
// beside redis-semaphore's `new Semaphore(client, r, 3)` (1 node) and
// `new RedlockSemaphore(clients, r, 3)` (5 nodes), each with its defaults,
// the same alternation.
const Redis = require('ioredis');
const NodeRedlock = require('redlock').default;
const { Mutex, RedlockMutex, Semaphore, RedlockSemaphore } = require('redis-semaphore');
const { Redlock: SesameRedlock } = require('@sesamecare-oss/redlock');
const { Client } = require('..');

const PAIRS = Number(process.env.BENCH_PAIRS || 2000);
const REPS = Number(process.env.BENCH_REPS || 3);
const NODES = (process.env.BENCH_NODES || '1,5').split(',').map(Number);
const ONLY = (process.env.BENCH_LIBS || '').split(',').map((s) => s.trim()).filter(Boolean);
const TTL = 10000;
const SEMAPHORE = process.env.BENCH_KIND === 'semaphore';
// liblock's acquire options, a new object per call as a caller's literal
// is: a mutex, or one permit of a 3-permit semaphore.
const opts = SEMAPHORE ? () => ({ ttl: TTL, permits: 3 }) : () => ({ ttl: TTL });
// BENCH_BLOCK=n: n pairs of a library in a row per turn (still in a random
// order of libraries, every cycle) instead of one. Pair by pair measures
// each library with caches its predecessor left cold, which costs a large
// code path (V8's, koffi's and the Go engine's) more than a small one;
// short blocks keep the interleaving but run each library warm, as a loop
// in a program does.
const BLOCK = Number(process.env.BENCH_BLOCK || 1);
// liblock's telemetry is on by default when @opentelemetry/api is installed
// (it is, as a dev dependency, here): BENCH_TELEMETRY=0 measures the
// client of an install without it (telemetry: false).
const TEL = process.env.BENCH_TELEMETRY === '0' ? { telemetry: false } : {};

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[(s.length - 1) >> 1] : NaN; };

/** Every library's default pair over urls: { name: (resource) => Promise }, peers, close(). */
function makeLibs(urls) {
  const clients = urls.map((u) => new Redis(u));
  const native = new Client({ nodes: urls, backend: 'native', ...TEL });
  const wasm = new Client({ nodes: urls, backend: 'wasm', ...TEL });
  const redlock = new NodeRedlock(clients);
  const sesame = new SesameRedlock(clients);
  const closers = [() => native.close(), () => wasm.close()];
  const libs = {
    'liblock native': async (r) => { const l = await native.acquire(r, opts()); await l.release(); },
    'liblock wasm': async (r) => { const l = await wasm.acquire(r, opts()); await l.release(); },
  };
  if (SEMAPHORE) {
    libs['redis-semaphore RedlockSemaphore'] = async (r) => { const s = new RedlockSemaphore(clients, r, 3); await s.acquire(); await s.release(); };
  } else {
    libs['node-redlock'] = async (r) => { const l = await redlock.acquire([r], TTL); await l.release(); };
    libs['@sesamecare-oss/redlock'] = async (r) => { const l = await sesame.acquire([r], TTL); await l.release(); };
    libs['redis-semaphore RedlockMutex'] = async (r) => { const m = new RedlockMutex(clients, r); await m.acquire(); await m.release(); };
  }
  if (process.env.BENCH_BASE) {
    const Base = require(require('node:path').resolve(process.env.BENCH_BASE)).Client;
    const bn = new Base({ nodes: urls, backend: 'native', ...TEL });
    const bw = new Base({ nodes: urls, backend: 'wasm', ...TEL });
    closers.push(() => bn.close(), () => bw.close());
    libs['liblock native (base)'] = async (r) => { const l = await bn.acquire(r, opts()); await l.release(); };
    libs['liblock wasm (base)'] = async (r) => { const l = await bw.acquire(r, opts()); await l.release(); };
  }
  if (urls.length === 1 && SEMAPHORE) {
    libs['redis-semaphore Semaphore'] = async (r) => { const s = new Semaphore(clients[0], r, 3); await s.acquire(); await s.release(); };
  } else if (urls.length === 1) {
    libs['redis-semaphore Mutex'] = async (r) => { const m = new Mutex(clients[0], r); await m.acquire(); await m.release(); };
  }
  for (const name of Object.keys(libs)) if (ONLY.length && !ONLY.includes(name)) delete libs[name];
  return {
    libs,
    ready: Promise.all(clients.map((c) => c.ping())),
    close: async () => {
      await Promise.all(closers.map((f) => f()));
      for (const c of clients) c.disconnect();
    },
  };
}

/**
 * One run: PAIRS cycles, each one pair of every library, in a new random
 * order every cycle. A fixed order would give each library the same
 * predecessor, whose leftovers it pays for: liblock returns at a quorum, and
 * the last nodes' replies (2 of 5) are read during the next pair, in its
 * time and CPU.
 */
async function run(libs, tag) {
  const names = Object.keys(libs);
  const lat = names.map(() => []);
  const cpu = names.map(() => 0);
  const errors = names.map(() => 0);
  const order = names.map((_, k) => k);
  for (let i = 0; i < PAIRS; i += BLOCK) {
    for (let j = order.length - 1; j > 0; j--) {
      const x = Math.floor(Math.random() * (j + 1));
      [order[j], order[x]] = [order[x], order[j]];
    }
    for (let j = 0; j < names.length * BLOCK; j++) {
      const k = order[Math.floor(j / BLOCK)];
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      try {
        // A failed pair (a node stalled past a timeout on a busy machine)
        // is counted, not timed; the next ones use another resource, in
        // case its key was left behind.
        await libs[names[k]](`bench:pairs:${tag}:${k}:${errors[k]}`);
      } catch {
        errors[k]++;
        continue;
      }
      const t = process.hrtime.bigint();
      const c = process.cpuUsage(c0);
      lat[k].push(Number(t - t0) / 1000);
      cpu[k] += c.user + c.system;
    }
  }
  const out = {};
  names.forEach((name, k) => { out[name] = { lat: median(lat[k]), cpu: cpu[k] / lat[k].length, errors: errors[k] }; });
  return out;
}

const col = (s, w = 12) => String(s).padStart(w);

async function main() {
  let urls = (process.env.LIBLOCK_NODES || '').split(',').filter(Boolean);
  let nodes = null;
  if (urls.length < Math.max(...NODES)) {
    nodes = await require('../test/helpers').startNodes(Math.max(...NODES));
    urls = nodes.urls;
  }
  console.log(`liblock Node pair bench (${SEMAPHORE ? 'a permit of a 3-permit semaphore' : 'mutex'}), node ${process.version}: defaults${TEL.telemetry === false ? ' (liblock: telemetry: false)' : ''}, ` +
    `${PAIRS} pairs per library per run, ${REPS} runs, alternating ${BLOCK === 1 ? 'pair by pair' : `in blocks of ${BLOCK} pairs`}`);
  try {
    for (const n of NODES) {
      const { libs, ready, close } = makeLibs(urls.slice(0, n));
      await ready;
      for (const [name, f] of Object.entries(libs)) {
        for (let i = 0; i < 300; i++) await f(`bench:pairs:warm:${n}:${name}:${i}`).catch(() => {});
      }
      const peers = Object.keys(libs).filter((x) => !x.startsWith('liblock'));
      const mine = Object.keys(libs).filter((x) => x.startsWith('liblock'));
      const ratios = {}; // liblock name -> [{ lat, cpu, best }] per run (to the fastest peer by latency)
      const runs = [];
      for (let rep = 0; rep < REPS; rep++) {
        const r = await run(libs, `${n}:${rep}`);
        runs.push(r);
        if (peers.length === 0) continue;
        const best = peers.reduce((a, b) => (r[a].lat <= r[b].lat ? a : b));
        for (const x of mine) (ratios[x] ||= []).push({ lat: r[x].lat / r[best].lat, cpu: r[x].cpu / r[best].cpu, best });
      }
      console.log(`\n${n} node${n > 1 ? 's' : ''}: median µs per pair / mean CPU µs per pair, by run`);
      for (const x of Object.keys(libs)) {
        const errs = runs.reduce((a, r) => a + r[x].errors, 0);
        console.log(x.padEnd(30) + runs.map((r) => col(`${r[x].lat.toFixed(1)} / ${r[x].cpu.toFixed(1)}`, 16)).join('') + (errs ? `   (${errs} failed pairs)` : ''));
      }
      for (const x of mine) {
        if (!ratios[x]) continue;
        const rs = ratios[x];
        console.log(`  ${x} / fastest peer (${[...new Set(rs.map((q) => q.best))].join(', ')}): latency ${rs.map((q) => q.lat.toFixed(2)).join(' ')} ` +
          `(median ${median(rs.map((q) => q.lat)).toFixed(2)}x), CPU ${rs.map((q) => q.cpu.toFixed(2)).join(' ')} (median ${median(rs.map((q) => q.cpu)).toFixed(2)}x)`);
      }
      for (const x of mine.filter((y) => y.endsWith(' (base)'))) {
        const now = x.slice(0, -' (base)'.length);
        if (!libs[now]) continue;
        const lat = runs.map((r) => r[now].lat / r[x].lat);
        const cpu = runs.map((r) => r[now].cpu / r[x].cpu);
        console.log(`  ${now} / its base: latency ${lat.map((q) => q.toFixed(2)).join(' ')} (median ${median(lat).toFixed(2)}x), ` +
          `CPU ${cpu.map((q) => q.toFixed(2)).join(' ')} (median ${median(cpu).toFixed(2)}x)`);
      }
      await close();
    }
  } finally {
    if (nodes) await nodes.stop();
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
