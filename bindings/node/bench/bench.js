'use strict';
// Acquire+release pairs through liblock's Node binding beside node-redlock
// and redis-semaphore's RedlockMutex, measured in the same run on the same
// redis-servers (LIBLOCK_NODES, set by build/redisnodes), then a contention
// run: 10 tasks, one resource, 1 ms critical sections.
const { Client } = require('..');
const Redis = require('ioredis');
const Redlock = require('redlock').default;
const { RedlockMutex } = require('redis-semaphore');

const PAIRS = Number(process.env.BENCH_PAIRS || 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const SECTIONS = Number(process.env.BENCH_SECTIONS || 300);
const urls = (process.env.LIBLOCK_NODES || '').split(',').filter(Boolean);
if (urls.length < 5) {
  console.error('bench: LIBLOCK_NODES must list at least 5 nodes (run under build/redisnodes -n 5)');
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

function makeLibs(nodeUrls) {
  const clients = nodeUrls.map((u) => new Redis(u, { lazyConnect: false, maxRetriesPerRequest: 1, enableOfflineQueue: true }));
  const liblock = new Client({ nodes: nodeUrls, nodeTimeout: 1000 });
  const redlock = new Redlock(clients, { retryCount: 0, retryDelay: 1, retryJitter: 1 });
  const redlockWait = new Redlock(clients, { retryCount: 100000, retryDelay: 2, retryJitter: 2 });
  const libs = {
    liblock: {
      pair: async (res) => { const l = await liblock.acquire(res, { ttl: 10000 }); await l.release(); },
      section: async (res, fn) => { const l = await liblock.acquire(res, { ttl: 10000, wait: 60000 }); try { await fn(); } finally { await l.release(); } },
    },
    'node-redlock': {
      pair: async (res) => { const l = await redlock.acquire([res], 10000); await l.release(); },
      section: async (res, fn) => { const l = await redlockWait.acquire([res], 10000); try { await fn(); } finally { await l.release(); } },
    },
    'redis-semaphore RedlockMutex': {
      pair: async (res) => { const m = new RedlockMutex(clients, res, { lockTimeout: 10000, refreshInterval: 0, acquireAttemptsLimit: 1 }); await m.acquire(); await m.release(); },
      section: async (res, fn) => {
        const m = new RedlockMutex(clients, res, { lockTimeout: 10000, refreshInterval: 0, acquireTimeout: 60000, retryInterval: 10 });
        await m.acquire(); try { await fn(); } finally { await m.release(); }
      },
    },
  };
  const close = async () => { await liblock.close(); await Promise.all(clients.map((c) => c.quit())); };
  return { libs, close, ready: Promise.all(clients.map((c) => c.ping())) };
}

// pairs returns the median µs per pair and the process's CPU time (user +
// system, all threads: Node's and, for liblock, the Go runtime's) per pair.
async function pairs(lib, res, n) {
  const t = [];
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await lib.pair(res);
    t.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const cpu = process.cpuUsage(cpu0);
  return { us: median(t), cpu: (cpu.user + cpu.system) / n };
}

async function contention(lib, res) {
  let inside = 0; let overlaps = 0; let done = 0;
  const critical = async () => {
    if (++inside > 1) overlaps++;
    await sleep(1);
    inside--;
    done++;
  };
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: 10 }, async () => {
    while (done < SECTIONS) await lib.section(res, critical);
  }));
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (overlaps) throw new Error(`overlapping critical sections: ${overlaps}`);
  return ms / done;
}

(async () => {
  console.log(`liblock Node bench: ${PAIRS} acquire+release pairs x ${ROUNDS} rounds (median of round medians, µs per pair), node ${process.version}`);
  const results = {};
  const cpuPerPair = {};
  for (const n of [1, 5]) {
    const { libs, close, ready } = makeLibs(urls.slice(0, n));
    await ready;
    for (const name of Object.keys(libs)) await pairs(libs[name], `bench:warm:${name}`, 200);
    const rounds = {};
    const cpus = {};
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of Object.keys(libs)) {
        const { us, cpu } = await pairs(libs[name], `bench:pair:${n}:${name}`, PAIRS);
        (rounds[name] ||= []).push(us);
        (cpus[name] ||= []).push(cpu);
      }
    }
    for (const name of Object.keys(libs)) {
      (results[name] ||= {})[n] = median(rounds[name]);
      (cpuPerPair[name] ||= {})[n] = median(cpus[name]);
    }
    await close();
  }
  const names = Object.keys(results);
  const fastestPeer = (n) => Math.min(...names.filter((x) => x !== 'liblock').map((x) => results[x][n]));
  console.log('');
  console.log('library                        1 node µs   5 nodes µs   CPU µs/pair 1 node, 5 nodes');
  for (const name of names) {
    console.log(`${name.padEnd(30)} ${results[name][1].toFixed(1).padStart(9)}   ${results[name][5].toFixed(1).padStart(10)}` +
      `   ${cpuPerPair[name][1].toFixed(0).padStart(11)}, ${cpuPerPair[name][5].toFixed(0)}`);
  }
  for (const n of [1, 5]) {
    console.log(`liblock / fastest peer, ${n} node${n > 1 ? 's' : ''}: ${(results.liblock[n] / fastestPeer(n)).toFixed(2)}`);
  }
  console.log('');
  console.log(`contention: 10 tasks, one resource, 1 ms critical sections, ${SECTIONS} sections, 3 nodes (ms per section; 1.0 is the floor)`);
  const { libs, close, ready } = makeLibs(urls.slice(0, 3));
  await ready;
  for (const name of Object.keys(libs)) {
    const ms = await contention(libs[name], `bench:contended:${name}`);
    console.log(`${name.padEnd(30)} ${ms.toFixed(2).padStart(6)} ms/section`);
  }
  await close();
  // The wasm backend beside the native one, same nodes (bench/wasm-bench.js).
  await require('./wasm-bench').run(urls);
})().catch((e) => { console.error(e); process.exit(1); });
