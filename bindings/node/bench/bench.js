'use strict';
// make bench (Node part). liblock's two backends beside the JS Redlock
// peers (node-redlock, redis-semaphore's RedlockMutex,
// @sesamecare-oss/redlock), in the same run on the same redis-servers
// (LIBLOCK_NODES, set by build/redisnodes; at least 5):
//   1. acquire+release pairs on 1 and 5 nodes (rounds alternate between the
//      libraries; median of round medians, µs per pair): single attempts
//      (wait: 0, retryCount: 0, acquireAttemptsLimit: 1), then every library
//      called with its own defaults (liblock: { ttl } and no wait, i.e. 10 s;
//      node-redlock and sesame: new Redlock(clients), acquire([r], ttl), i.e.
//      10 retries 200 ms apart; redis-semaphore: new RedlockMutex(clients, r),
//      i.e. a 10 s acquireTimeout, polled every 10 ms, and a refresh timer);
//      and liblock's unused wait alone: one client alternating default and
//      wait: 0 pairs pair by pair (latency medians, mean CPU per pair);
//   2. contention: 10 tasks, one resource, 3 nodes, 1 ms critical sections,
//      in one process and split over two processes (ms per section, hand-offs
//      between the processes, least-served task's share, wait p99 in each;
//      the median of BENCH_REPS rounds);
//   3. 32 concurrent independent resources, 3 nodes, single attempts
//      (locks/s and errors);
//   4. one of five nodes frozen (SIGSTOP): pair latency (own nodes, started
//      through test/helpers.js so that one can be frozen);
//   5. the wasm backend's cold start: new Client() to the first lock, in
//      fresh processes;
//   6. release in one process to acquire in another: a child process waits
//      for the lock this one holds (ms from the release to its acquire).
//   7. the new primitives (bench/primitives.js): a 3-permit semaphore's pair
//      beside redis-semaphore's Semaphore (1 node) and RedlockSemaphore (5
//      nodes), a two-resource lock beside node-redlock's acquire([a, b]), a
//      read-write lock's reader, and liblock's own mutex pair; defaults and
//      single attempts.
// BENCH_PAIRS, BENCH_ROUNDS, BENCH_SECTIONS, BENCH_SECONDS, BENCH_LOADS,
// BENCH_WAKES, BENCH_REPS shorten or lengthen it; BENCH_ONLY picks parts (e.g. 2,6), BENCH_LIBS
// libraries (e.g. liblock native,liblock wasm);
// BENCH_DEBUG=1 prints part 2's longest gaps between sections.
const { execFile } = require('node:child_process');
const path = require('node:path');
const Redis = require('ioredis');
const NodeRedlock = require('redlock').default;
const { RedlockMutex } = require('redis-semaphore');
const { Redlock: SesameRedlock } = require('@sesamecare-oss/redlock');
const { Client } = require('..');
const results = require('./results');

const PAIRS = Number(process.env.BENCH_PAIRS || 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const SECTIONS = Number(process.env.BENCH_SECTIONS || 300);
const SECONDS = Number(process.env.BENCH_SECONDS || 3);
const LOADS = Number(process.env.BENCH_LOADS || 5);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const PEERS = ['node-redlock', 'redis-semaphore', '@sesamecare-oss/redlock'];
const WAKES = Number(process.env.BENCH_WAKES || 50);
const ONLY = (process.env.BENCH_ONLY || '1,2,3,4,6,7,5').split(',').map(Number); // which parts to run
const REPS = Number(process.env.BENCH_REPS || 3); // rounds of part 2 (contention); its rows are the median round
const ONLY_LIBS = (process.env.BENCH_LIBS || '').split(',').map((s) => s.trim()).filter(Boolean); // which libraries (all when empty)

/** Every library over nodeUrls: { name: { pair, section, attempt } }, and close(). */
function makeLibs(nodeUrls, nodeTimeout = 1000) {
  const clients = nodeUrls.map((u) => new Redis(u, { maxRetriesPerRequest: 1, enableOfflineQueue: true }));
  const native = new Client({ nodes: nodeUrls, nodeTimeout, backend: 'native' });
  const wasm = new Client({ nodes: nodeUrls, nodeTimeout, backend: 'wasm' });
  const redlock = new NodeRedlock(clients, { retryCount: 0, retryDelay: 1, retryJitter: 1 });
  const redlockWait = new NodeRedlock(clients, { retryCount: 100000, retryDelay: 2, retryJitter: 2 });
  const sesame = new SesameRedlock(clients, { retryCount: 0, retryDelay: 1, retryJitter: 1 });
  const sesameWait = new SesameRedlock(clients, { retryCount: 100000, retryDelay: 2, retryJitter: 2 });
  const ll = (c) => ({
    client: c,
    pair: async (res) => { const l = await c.acquire(res, { ttl: 10000, wait: 0 }); await l.release(); },
    section: async (res, fn) => { const l = await c.acquire(res, { ttl: 10000, wait: 60000 }); try { await fn(); } finally { await l.release(); } },
    hold: (res, wait = 0) => c.acquire(res, { ttl: 10000, wait }),
  });
  const rl = (one, wait) => ({
    pair: async (res) => { const l = await one.acquire([res], 10000); await l.release(); },
    section: async (res, fn) => { const l = await wait.acquire([res], 10000); try { await fn(); } finally { await l.release(); } },
    hold: (res, w = 0) => (w ? wait : one).acquire([res], 10000),
  });
  const libs = {
    'liblock native': ll(native),
    'liblock wasm': ll(wasm),
    'node-redlock': rl(redlock, redlockWait),
    'redis-semaphore': {
      pair: async (res) => { const m = new RedlockMutex(clients, res, { lockTimeout: 10000, refreshInterval: 0, acquireAttemptsLimit: 1 }); await m.acquire(); await m.release(); },
      section: async (res, fn) => {
        const m = new RedlockMutex(clients, res, { lockTimeout: 10000, refreshInterval: 0, acquireTimeout: 60000, retryInterval: 10 });
        await m.acquire(); try { await fn(); } finally { await m.release(); }
      },
      hold: async (res, wait = 0) => {
        const m = new RedlockMutex(clients, res, wait
          ? { lockTimeout: 10000, refreshInterval: 0, acquireTimeout: wait, retryInterval: 10 }
          : { lockTimeout: 10000, refreshInterval: 0, acquireAttemptsLimit: 1 });
        await m.acquire();
        return { release: () => m.release() };
      },
    },
    '@sesamecare-oss/redlock': rl(sesame, sesameWait),
  };
  for (const name of Object.keys(libs)) if (ONLY_LIBS.length && !ONLY_LIBS.includes(name)) delete libs[name];
  // The same pair with each library's defaults (part 1's "defaults" rows).
  const redlockDefault = new NodeRedlock(clients);
  const sesameDefault = new SesameRedlock(clients);
  const defaults = {
    'liblock native': async (res) => { const l = await native.acquire(res, { ttl: 10000 }); await l.release(); },
    'liblock wasm': async (res) => { const l = await wasm.acquire(res, { ttl: 10000 }); await l.release(); },
    'node-redlock': async (res) => { const l = await redlockDefault.acquire([res], 10000); await l.release(); },
    'redis-semaphore': async (res) => { const m = new RedlockMutex(clients, res); await m.acquire(); await m.release(); },
    '@sesamecare-oss/redlock': async (res) => { const l = await sesameDefault.acquire([res], 10000); await l.release(); },
  };
  for (const name of Object.keys(defaults)) if (!libs[name]) delete defaults[name];
  const close = async () => {
    await Promise.all([native.close(), wasm.close()]);
    for (const c of clients) c.disconnect();
  };
  return { libs, defaults, close, ready: Promise.all(clients.map((c) => c.ping())) };
}

async function pairs(lib, res, n) {
  const t = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await lib.pair(res);
    t.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  return median(t);
}

// Sections until `sections` are done, `stop.now` is set (the other process
// of a two-process run finished its share) or 20 s have passed (a peer that
// polls across processes can take seconds per section). Each section is
// logged as [mono() ms at entry, task]: the parent merges the logs of
// both processes to count hand-offs between them and each task's share.
// mono is CLOCK_MONOTONIC in ms: one clock for every process on the machine
// (performance.timeOrigin + now is not: each process fixes its origin from
// the wall clock at start, and two processes' origins disagree by up to a
// millisecond or so, which made part 6 print negative hand-over times).
function mono() { return Number(process.hrtime.bigint()) / 1e6; }

async function contention(lib, res, tasks, sections, stop = { now: false }) {
  let inside = 0; let overlaps = 0; let done = 0;
  const log = [];
  const waits = []; // ms from asking for the lock to entering the section
  const asked = new Array(tasks).fill(0);
  const critical = (task) => async () => {
    if (++inside > 1) overlaps++;
    const now = performance.now();
    waits.push(now - asked[task]);
    log.push([mono(), task]);
    await sleep(1);
    inside--;
    done++;
  };
  // Returns when the sections are done, when told to stop, or after 20 s,
  // even with tasks still waiting to acquire (a peer's retry loop may not
  // end for minutes: node-redlock and sesame livelock across processes).
  let halt;
  const halted = new Promise((r) => { halt = r; });
  stop.halt = halt;
  const cap = setTimeout(halt, 20000);
  const t0 = process.hrtime.bigint();
  await Promise.race([halted, Promise.all(Array.from({ length: tasks }, async (_, task) => {
    const fn = critical(task);
    while (done < sections && !stop.now) {
      asked[task] = performance.now();
      await lib.section(res, fn);
    }
  }))]);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  clearTimeout(cap);
  stop.now = true;
  if (overlaps) throw new Error(`overlapping critical sections: ${overlaps}`);
  return { ms, done, log: log.slice(), p99: quantile(waits, 0.99) };
}

function quantile(xs, q) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** Of logs [[t, task], ...] tagged by process: hand-offs between processes and the least-served task's share. */
function fairness(logs) {
  const all = logs.flatMap((log, p) => log.map(([t, task]) => [t, p, `${p}:${task}`])).sort((a, b) => a[0] - b[0]);
  let cross = 0;
  for (let i = 1; i < all.length; i++) if (all[i][1] !== all[i - 1][1]) cross++;
  const per = new Map();
  for (const [, , who] of all) per.set(who, (per.get(who) || 0) + 1);
  const least = per.size < 10 ? 0 : Math.min(...per.values()); // 10 contenders in both setups
  return { cross, least: all.length ? least / all.length : 0 };
}

// 32 tasks, each on its own resource, single attempts, for SECONDS.
async function throughput(lib, tag) {
  let ok = 0; let errors = 0; let firstError = null;
  const end = Date.now() + SECONDS * 1000;
  await Promise.all(Array.from({ length: 32 }, async (_, i) => {
    while (Date.now() < end) {
      try { await lib.pair(`bench:32:${tag}:${i}`); ok++; } catch (e) { errors++; firstError ||= e; }
    }
  }));
  return { perSec: ok / SECONDS, errors, firstError };
}

function row(name, ...cols) { return `${name.padEnd(34)}${cols.map((c) => String(c).padStart(14)).join('')}`; }

// The child of the two-process contention run (argv: 'contend', lib, urls, sections).
async function contendChild([libName, csv, sections]) {
  const { libs, close, ready } = makeLibs(csv.split(','));
  await ready;
  process.send({ ready: true });
  await new Promise((r) => process.once('message', r));
  const stop = { now: false, halt: null };
  process.once('message', () => { stop.now = true; if (stop.halt) stop.halt(); });
  const r = await contention(libs[libName], `bench:contended2:${libName}`, 5, Number(sections), stop);
  await new Promise((resolve) => process.send(r, resolve));
  await Promise.race([close(), sleep(3000)]);
  process.exit(0);
}

// Part 6: this process holds the lock while a child waits for it, then
// releases; the child reports when its acquire returned. Times come from
// mono(), which the two processes share.
async function wakes(libs, name, nodeUrls) {
  const res = `bench:wake:${name}`;
  const k = child(['wake', name, nodeUrls.join(','), res], 'wait');
  await k.next();
  const lat = [];
  let note = '';
  for (let i = 0; i < WAKES; i++) {
    const hold = await libs[name].hold(res);
    k.c.send('go');
    await k.next(); // the child asked for the lock
    await sleep(20); // long enough for it to be waiting (subscribed, or between polls)
    const tRel = mono();
    await hold.release();
    const r = await Promise.race([k.next(), sleep(5000).then(() => null)]);
    if (!r) { note = `a hand-over took over 5 s (after ${i})`; break; }
    lat.push(r.t - tRel);
  }
  k.c.send('stop');
  await k.exited;
  return { median: median(lat), p90: quantile(lat, 0.9), note };
}

// The child of part 6 (argv: 'wake', lib, urls, resource): on each 'go',
// asks for the lock (says so), reports the time it got it, releases.
async function wakeChild([libName, csv, res]) {
  const { libs, close, ready } = makeLibs(csv.split(','));
  await ready;
  process.on('message', async (m) => {
    if (m === 'stop') {
      await Promise.race([close(), sleep(3000)]);
      process.exit(0);
    }
    const got = libs[libName].hold(res, 60000);
    process.send({ asked: true });
    const l = await got;
    const t = mono();
    await l.release();
    process.send({ t });
  });
  process.send({ ready: true });
}

function child(args) {
  const { fork } = require('node:child_process');
  const c = fork(__filename, args[0] === 'wake' ? args : ['contend', ...args], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const msgs = [];
  const waiting = [];
  c.on('message', (m) => { const w = waiting.shift(); if (w) w(m); else msgs.push(m); });
  const exited = new Promise((r) => c.once('exit', r));
  return { c, exited, next: () => new Promise((r) => { if (msgs.length) r(msgs.shift()); else waiting.push(r); }) };
}

async function main() {
  const urls = (process.env.LIBLOCK_NODES || '').split(',').filter(Boolean);
  if (urls.length < 5) {
    console.error('bench: LIBLOCK_NODES must list at least 5 nodes (run under build/redisnodes -n 5)');
    process.exit(2);
  }
  console.log(`liblock Node bench, node ${process.version}: ${PAIRS} pairs x ${ROUNDS} rounds (median of round medians)`);

  // 1. Pairs: single attempts, and each library with its defaults ("name,
  // defaults" rows), in the same rounds (the rounds alternate between all of
  // them).
  const pairUs = {};
  const abUs = {};
  const DEF = ', defaults';
  for (const n of ONLY.includes(1) ? [1, 5] : []) {
    const { libs, defaults, close, ready } = makeLibs(urls.slice(0, n));
    await ready;
    const runs = {};
    for (const name of Object.keys(libs)) runs[name] = libs[name];
    for (const name of Object.keys(defaults)) runs[name + DEF] = { pair: defaults[name] };
    for (const name of Object.keys(runs)) await pairs(runs[name], `bench:warm:${name}`, Math.min(300, PAIRS));
    const rounds = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of Object.keys(runs)) (rounds[name] ||= []).push(await pairs(runs[name], `bench:pair:${n}:${name}`, PAIRS));
    }
    for (const name of Object.keys(runs)) (pairUs[name] ||= {})[n] = median(rounds[name]);
    // The unused wait alone: one client alternates default and wait: 0
    // pairs pair by pair, so both see the same machine (sequential rows
    // move by more than the difference on this VM).
    for (const backend of ['native', 'wasm']) {
      const name = `liblock ${backend}`;
      if (!libs[name]) continue;
      const forms = [{ ttl: 10000 }, { ttl: 10000, wait: 0 }];
      const lat = [[], []]; const cpu = [[], []];
      const client = libs[name].client;
      for (let i = 0; i < 2 * PAIRS; i++) {
        const side = i % 2;
        const c0 = process.cpuUsage(); const t0 = process.hrtime.bigint();
        const l = await client.acquire(`bench:ab:${n}:${backend}`, forms[side]);
        await l.release();
        lat[side].push(Number(process.hrtime.bigint() - t0) / 1000);
        const c = process.cpuUsage(c0); cpu[side].push(c.user + c.system);
      }
      (abUs[backend] ||= {})[n] = { lat: median(lat[0]) / median(lat[1]), cpu: mean(cpu[0]) / mean(cpu[1]) };
    }
    await close();
  }
  if (ONLY.includes(1)) {
    console.log('\n1. acquire+release pair, µs: single attempts (wait: 0), then each library with its defaults');
    console.log(row('library', '1 node', '5 nodes'));
    const names = Object.keys(pairUs);
    for (const name of [...names.filter((x) => !x.endsWith(DEF)), ...names.filter((x) => x.endsWith(DEF))]) {
      console.log(row(name, pairUs[name][1].toFixed(1), pairUs[name][5].toFixed(1)));
      for (const n of [1, 5]) results.record(`pair, ${n} node${n > 1 ? 's' : ''}`, 'µs per acquire+release pair (median)', name, pairUs[name][n]);
    }
  }
  // Ratios of the same run; a library left out by BENCH_LIBS has none.
  const ratio = (a, b, n) => (pairUs[a] && pairUs[b] ? (pairUs[a][n] / pairUs[b][n]).toFixed(2) : 'n/a');
  const fastest = (n, suffix) => {
    const have = PEERS.map((p) => p + suffix).filter((p) => pairUs[p]);
    return have.length ? have.reduce((a, b) => (pairUs[a][n] <= pairUs[b][n] ? a : b)) : null;
  };
  for (const n of ONLY.includes(1) ? [1, 5] : []) {
    const peer = fastest(n, '');
    const peerDef = fastest(n, DEF);
    const nodesText = `${n} node${n > 1 ? 's' : ' '}`;
    console.log(`   native / fastest JS peer, ${nodesText}: ${peer ? ratio('liblock native', peer, n) : 'n/a'}` +
      `   wasm / native: ${ratio('liblock wasm', 'liblock native', n)}`);
    console.log(`   defaults, ${nodesText}: native default / native wait: 0: ${ratio('liblock native' + DEF, 'liblock native', n)}` +
      `   wasm default / wasm wait: 0: ${ratio('liblock wasm' + DEF, 'liblock wasm', n)}` +
      `   native default / fastest peer default (${peerDef ? peerDef.slice(0, -DEF.length) : 'none'}): ${peerDef ? ratio('liblock native' + DEF, peerDef, n) : 'n/a'}` +
      `   wasm default / it: ${peerDef ? ratio('liblock wasm' + DEF, peerDef, n) : 'n/a'}`);
  }

  for (const backend of Object.keys(abUs)) {
    const r = abUs[backend];
    console.log(`   unused wait, alternating pair by pair on one ${backend} client (default / wait: 0): ` +
      `1 node ${r[1].lat.toFixed(2)} latency, ${r[1].cpu.toFixed(2)} CPU; 5 nodes ${r[5].lat.toFixed(2)} latency, ${r[5].cpu.toFixed(2)} CPU`);
  }

  // 2. Contention, one process and two.
  if (ONLY.includes(2)) {
  console.log(`\n2. contention: 10 tasks, one resource, 3 nodes, 1 ms sections, ${SECTIONS} sections, the median of ${REPS} rounds (ms per section);`);
  console.log('   two processes: 5 tasks in each, both contend until one has done its half; hand-offs between the processes');
  console.log('   (of all sections), the least-served task\'s share of the sections (fair: 0.10) and the p99 of the wait');
  console.log('   from asking for the lock to entering the section, in each process (ms)');
  {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < 200; i++) await sleep(1);
    const floor = Number(process.hrtime.bigint() - t0) / 1e6 / 200;
    // A hand-off is at least one round trip to a quorum, made right after a
    // 1 ms section during which this process and the nodes slept: measured
    // as a ping to 3 nodes after sleep(1), beside the same pings back to back.
    const rs = urls.slice(0, 3).map((u) => new Redis(u));
    await Promise.all(rs.map((r) => r.ping()));
    const ping = async (n, pause) => {
      const t = [];
      for (let i = 0; i < n; i++) {
        if (pause) await sleep(1);
        const a = performance.now();
        await Promise.all(rs.map((r) => r.ping()));
        t.push((performance.now() - a) * 1000);
      }
      return median(t);
    };
    const hot = await ping(500, false);
    const cold = await ping(200, true);
    rs.forEach((r) => r.disconnect());
    console.log(`   (the floor: sleep(1) took ${floor.toFixed(2)} ms here; a ping to 3 nodes took ${cold.toFixed(0)} µs right after it,`);
    console.log(`   ${hot.toFixed(0)} µs back to back: a section and one hand-off cannot take less than ${(floor + cold / 1000).toFixed(2)} ms)`);
  }
  console.log(row('library', 'one process', 'least share', 'two processes', 'hand-offs', 'least share', 'wait p99 A', 'wait p99 B'));
  {
    const { libs, close, ready } = makeLibs(urls.slice(0, 3));
    await ready;
    // REPS rounds, the libraries alternating within each; a library's row is
    // the median round (by the two-process figure), as this machine's speed
    // drifts from one second to the next. A peer whose first two-process run
    // livelocked (over 10 s) is not run again.
    const runs = {};
    for (let rep = 0; rep < REPS; rep++) {
      for (const name of Object.keys(libs)) {
        if (rep > 0 && runs[name][0].ms > 10000) continue;
        const one = await contention(libs[name], `bench:contended:${name}`, 10, SECTIONS);
        const kids = [child([name, urls.slice(0, 3).join(','), String(SECTIONS / 2)]), child([name, urls.slice(0, 3).join(','), String(SECTIONS / 2)])];
        await Promise.all(kids.map((k) => k.next()));
        const t0 = process.hrtime.bigint();
        kids.forEach((k) => k.c.send('go'));
        // The first to finish its half stops the other: both contend all along.
        const rs = await Promise.all(kids.map((k, i) => k.next().then((r) => { const other = kids[1 - i].c; if (other.connected) other.send('stop', () => {}); return r; })));
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        await Promise.all(kids.map((k) => k.exited));
        (runs[name] ||= []).push({ one, rs, ms, done: rs.reduce((a, r) => a + r.done, 0) });
      }
    }
    for (const name of Object.keys(libs)) {
      const byTwo = runs[name].slice().sort((a, b) => a.ms / a.done - b.ms / b.done);
      const { rs, ms, done } = byTwo[(byTwo.length - 1) >> 1];
      const one = runs[name].map((r) => r.one).sort((a, b) => a.ms / a.done - b.ms / b.done)[(runs[name].length - 1) >> 1];
      const f1 = fairness([one.log]);
      const f2 = fairness(rs.map((r) => r.log));
      if (process.env.BENCH_DEBUG) {
        const all = rs.flatMap((r, p) => r.log.map(([t]) => [t, p])).sort((a, b) => a[0] - b[0]);
        const gaps = [];
        for (let i = 1; i < all.length; i++) gaps.push([all[i][0] - all[i - 1][0], all[i - 1][1], all[i][1]]);
        gaps.sort((a, b) => b[0] - a[0]);
        console.log('   gaps', JSON.stringify(gaps.slice(0, 12).map(([g, a, b]) => `${g.toFixed(1)}:${a}${b}`)));
      }
      results.record('contention, one process', 'ms per section (10 tasks, 1 ms sections)', name, one.ms / one.done);
      results.record('contention, two processes', 'ms per section (5 tasks in each, 1 ms sections)', name, ms / done);
      console.log(row(name, (one.ms / one.done).toFixed(2), f1.least.toFixed(3), (ms / done).toFixed(2), `${f2.cross}/${done}`, f2.least.toFixed(3),
        // null: that process never entered (a livelocked peer)
        ...rs.map((r) => (r.p99 == null ? 'none' : r.p99.toFixed(1)))) +
        (runs[name].length > 1 ? `   (median of ${runs[name].length}: ${runs[name].map((r) => (r.ms / r.done).toFixed(2)).join(' ')})` : '   (1 run)'));
    }
    await close();
  }
  }

  // 3. 32 concurrent independent resources.
  if (ONLY.includes(3)) {
  console.log(`\n3. 32 concurrent independent resources, 3 nodes, single attempts, ${SECONDS} s`);
  console.log(row('library', 'locks/s', 'errors'));
  {
    const { libs, close, ready } = makeLibs(urls.slice(0, 3));
    await ready;
    for (const name of Object.keys(libs)) {
      const r = await throughput(libs[name], name);
      if (!r.errors) results.record('32 concurrent resources', 'locks/s (3 nodes, single attempts)', name, r.perSec, true);
      console.log(row(name, r.perSec.toFixed(0), r.errors) + (r.firstError ? `   first: ${r.firstError.message.slice(0, 80)}` : ''));
    }
    await close();
  }
  }

  // 4. One of five nodes frozen.
  if (ONLY.includes(4)) {
  console.log('\n4. one of five nodes frozen (SIGSTOP), nodeTimeout 50 ms: acquire+release pair, median µs of 200');
  console.log(row('library', 'healthy', 'one frozen', 'ratio'));
  {
    const { startNodes } = require('../test/helpers');
    const nodes = await startNodes(5);
    const { libs, close, ready } = makeLibs(nodes.urls, 50);
    await ready;
    const healthy = {};
    for (const name of Object.keys(libs)) { await pairs(libs[name], `bench:frz:${name}`, 50); healthy[name] = await pairs(libs[name], `bench:frz:${name}`, 200); }
    await nodes.freeze(4);
    for (const name of Object.keys(libs)) {
      let us;
      const r = await Promise.race([pairs(libs[name], `bench:frz:${name}`, 200).then((x) => { us = x; return 'ok'; }, (e) => `fails: ${e.message.slice(0, 60)}`), sleep(5000).then(() => 'stalls > 5 s')]);
      if (r === 'ok') results.record('pair, 5 nodes, one frozen', 'µs per acquire+release pair (median of 200)', name, us);
      console.log(row(name, healthy[name].toFixed(1), r === 'ok' ? us.toFixed(1) : r, r === 'ok' ? (us / healthy[name]).toFixed(2) : ''));
    }
    await nodes.thaw(4);
    await Promise.race([close(), sleep(5000)]);
    await nodes.stop();
  }
  }

  // 6. Release in one process to acquire in another.
  if (ONLY.includes(6)) {
  console.log(`\n6. release in one process to acquire in another (a waiting acquire), 3 nodes, ms over ${WAKES} hand-overs`);
  console.log(row('library', 'median', 'p90'));
  {
    const { libs, close, ready } = makeLibs(urls.slice(0, 3));
    await ready;
    for (const name of Object.keys(libs)) {
      const r = await wakes(libs, name, urls.slice(0, 3));
      results.record('release to acquire across processes', 'ms (median hand-over)', name, r.median);
      console.log(row(name, r.median.toFixed(2), r.p90.toFixed(2)) + (r.note ? `   ${r.note}` : ''));
    }
    await close();
  }
  }

  // 7. The primitives beyond the mutex, beside their peers.
  if (ONLY.includes(7)) {
    const keep = (lib) => !ONLY_LIBS.length || ONLY_LIBS.includes(lib);
    await require('./primitives').primitives({ urls, pairs: PAIRS, rounds: ROUNDS, keep, median, row });
  }

  // 5. wasm cold start, fresh processes.
  if (!ONLY.includes(5)) return;
  const code = `
    const t0 = performance.now();
    const l = require(${JSON.stringify(path.join(__dirname, '..'))});
    const t1 = performance.now();
    const c = new l.Client({ nodes: ${JSON.stringify(urls.slice(0, 3))}, backend: 'wasm' });
    const t2 = performance.now();
    c.acquire('bench:cold', { ttl: 1000 }).catch((e) => { console.log(JSON.stringify({ error: e.message })); process.exit(0); }).then(async (lock) => {
      const t3 = performance.now();
      await lock.release();
      await c.close();
      const info = l.library('wasm');
      console.log(JSON.stringify({ require: t1 - t0, ctor: t2 - t1, first: t3 - t1, compile: info.compileMs, instantiate: info.instantiateMs, size: info.size }));
    });`;
  const loads = [];
  for (let i = 0; i < LOADS; i++) {
    loads.push(await new Promise((resolve, reject) => execFile(process.execPath, ['-e', code], (e, out) => (e ? reject(e) : resolve(JSON.parse(out))))));
  }
  const failed = loads.filter((x) => x.error);
  if (failed.length) console.log(`\n5. wasm cold start: ${failed.length} of ${LOADS} first acquires failed: ${failed[0].error}`);
  loads.splice(0, loads.length, ...loads.filter((x) => !x.error));
  if (!loads.length) return;
  const m = (k) => median(loads.map((x) => x[k])).toFixed(1);
  console.log(`\n5. wasm cold start (liblock.wasm ${loads[0].size} bytes), median of ${LOADS} fresh processes, ms`);
  console.log(`   new Client() to first lock: ${m('first')}   (new Client ${m('ctor')}: compile ${m('compile')}, instantiate + _initialize ${m('instantiate')}; require ${m('require')})`);
}

if (process.argv[2] === 'contend') {
  contendChild(process.argv.slice(3)).catch((e) => { console.error(e); process.exit(1); });
} else if (process.argv[2] === 'wake') {
  wakeChild(process.argv.slice(3)).catch((e) => { console.error(e); process.exit(1); });
} else {
  main().then(() => { results.write('node'); process.exit(0); }, (e) => { console.error(e); process.exit(1); });
}
