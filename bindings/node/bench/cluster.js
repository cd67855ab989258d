'use strict';
// make bench (Node part, Redis Cluster): liblock on a cluster node
// (cluster=yes URL) beside the JS peers over ioredis `Cluster`, on clusters
// this script starts itself through build/redisnodes -cluster (and stops):
//   1. acquire+release pairs on one cluster of 3 primaries without replicas,
//      liblock's WAIT off (waitReplicas: 0) since the peers send no WAIT:
//      like with like. liblock native and wasm, defaults ({ ttl }: a 10 s
//      wait budget that an uncontended pair never uses) and single attempts
//      (wait: 0); node-redlock over one ioredis Cluster, defaults (10
//      retries) and retryCount: 0; redis-semaphore's Mutex over the same
//      Cluster, defaults (10 s acquireTimeout, a refresh timer) and tuned
//      (acquireAttemptsLimit: 1, refreshInterval: 0). Rounds alternate
//      between the implementations; median of round medians, and each
//      one's ratio to the fastest peer.
//   2. the same on 3 primaries with a replica each, liblock with its
//      default (WAIT 1 after each grant on a cluster node: what users get)
//      and with WAIT off, beside the same peers (still no WAIT).
//   3. the spread over the shards: 256 independent resources, single
//      attempts, 32 concurrent loops of native liblock pairs on clusters of
//      1 and 3 primaries; each primary's share of the lock commands (INFO
//      commandstats: SET, EVAL, EVALSHA calls, after CONFIG RESETSTAT), and
//      the locks/s (on this 2-core machine the servers share the cores with
//      the client: the shares, not the rate, show the scaling).
// BENCH_PAIRS, BENCH_ROUNDS, BENCH_SECONDS shorten or lengthen it;
// BENCH_CLUSTER_ONLY picks parts (e.g. 3; 0 none); BENCH_IMPLS keeps the
// pair implementations whose names start with one of its |-separated
// prefixes (e.g. "liblock native|redis-semaphore"); BENCH_ALTERNATE=1 runs
// each round pair by pair instead (one pair of every implementation in
// turn, in a new random order every cycle, as bench/pair.js), so that a
// change of load on a shared machine hits every one alike; BENCH_BASE=<a directory
// holding another copy of bindings/node> adds its native backend, with
// defaults, as "liblock native (base)": a change measured against the code
// before it, in the same rounds. Parts 1 and 2 also give the mean CPU per
// pair (process.cpuUsage, this process) and its ratio to the fastest peer's.
const BASE = process.env.BENCH_BASE;
const IMPLS = (process.env.BENCH_IMPLS || '').split('|').map((x) => x.trim()).filter(Boolean);
const ALTERNATE = process.env.BENCH_ALTERNATE === '1';
const Redis = require('ioredis');
const NodeRedlock = require('redlock').default;
const { Mutex } = require('redis-semaphore');
const { Client } = require('..');
const { startNodes } = require('../test/helpers');
const results = require('./results');

const PAIRS = Number(process.env.BENCH_PAIRS || 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS || 5);
const SECONDS = Number(process.env.BENCH_SECONDS || 3);
const ONLY = (process.env.BENCH_CLUSTER_ONLY || '1,2,3').split(',').map(Number);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const row = (name, ...cols) => `${name.padEnd(40)}${cols.map((c) => String(c).padStart(12)).join('')}`;
const PAIR_UNIT = 'µs per acquire+release pair (median)';

/** An ioredis Cluster over the deployment's primaries (every one a seed). */
function ioCluster(dep, primaries) {
  const seeds = dep.nodes.slice(0, primaries).map((n) => ({ host: '127.0.0.1', port: n.port }));
  return new Redis.Cluster(seeds, { redisOptions: { maxRetriesPerRequest: 1 } });
}

/** The implementations of a pair on dep's cluster: { name: async pair(res) }, and close(). */
function makeImpls(dep, { replicas }) {
  const cluster = ioCluster(dep, 3);
  const clients = [];
  const liblock = (backend, waitReplicas, Impl = Client) => {
    const c = new Impl({ nodes: [dep.clusterUrl], nodeTimeout: 1000, backend, ...(waitReplicas === undefined ? {} : { waitReplicas }) });
    clients.push(c);
    return c;
  };
  const impls = {};
  const ll = (c, opts) => async (res) => { const l = await c.acquire(res, { ttl: 10000, ...opts }); await l.release(); };
  if (replicas === 0) {
    for (const backend of ['native', 'wasm']) {
      const c = liblock(backend, 0);
      impls[`liblock ${backend}, defaults`] = ll(c, {});
      impls[`liblock ${backend}, wait: 0`] = ll(c, { wait: 0 });
    }
  } else {
    for (const backend of ['native', 'wasm']) {
      impls[`liblock ${backend}, defaults (WAIT 1)`] = ll(liblock(backend), {});
      impls[`liblock ${backend}, waitReplicas: 0`] = ll(liblock(backend, 0), {});
    }
  }
  if (BASE) {
    const Base = require(require('node:path').resolve(BASE)).Client;
    impls[`liblock native (base), defaults${replicas ? ' (WAIT 1)' : ''}`] = ll(liblock('native', replicas ? undefined : 0, Base), {});
  }
  const redlock = new NodeRedlock([cluster]);
  const redlockOne = new NodeRedlock([cluster], { retryCount: 0 });
  impls['node-redlock, defaults'] = async (res) => { const l = await redlock.acquire([res], 10000); await l.release(); };
  impls['node-redlock, retryCount: 0'] = async (res) => { const l = await redlockOne.acquire([res], 10000); await l.release(); };
  impls['redis-semaphore Mutex, defaults'] = async (res) => {
    const m = new Mutex(cluster, res, { lockTimeout: 10000 });
    await m.acquire();
    await m.release();
  };
  impls['redis-semaphore Mutex, one attempt'] = async (res) => {
    const m = new Mutex(cluster, res, { lockTimeout: 10000, acquireAttemptsLimit: 1, refreshInterval: 0 });
    await m.acquire();
    await m.release();
  };
  if (IMPLS.length) for (const name of Object.keys(impls)) if (!IMPLS.some((x) => name.startsWith(x))) delete impls[name];
  return {
    impls,
    async close() {
      for (const c of clients) await c.close();
      cluster.disconnect();
    },
  };
}

/** n pairs of one implementation, over 16 resources (spread over the slots): { lat: median µs, cpu: mean CPU µs per pair }. */
async function pairs(pair, tag, n) {
  const t = [];
  const c0 = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const res = `bench:${tag}:${i % 16}`;
    const t0 = process.hrtime.bigint();
    await pair(res);
    t.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  const c = process.cpuUsage(c0);
  return { lat: median(t), cpu: (c.user + c.system) / n };
}

/** One round pair by pair (BENCH_ALTERNATE): PAIRS cycles, every implementation once per cycle in a random order. */
async function alternating(impls, names, tag) {
  const lat = names.map(() => []);
  const cpu = names.map(() => 0);
  const order = names.map((_, k) => k);
  for (let i = 0; i < PAIRS; i++) {
    for (let j = order.length - 1; j > 0; j--) {
      const x = Math.floor(Math.random() * (j + 1));
      [order[j], order[x]] = [order[x], order[j]];
    }
    for (const k of order) {
      const res = `bench:${tag(names[k])}:${i % 16}`;
      const c0 = process.cpuUsage();
      const t0 = process.hrtime.bigint();
      await impls[names[k]](res);
      lat[k].push(Number(process.hrtime.bigint() - t0) / 1000);
      const c = process.cpuUsage(c0);
      cpu[k] += c.user + c.system;
    }
  }
  return Object.fromEntries(names.map((n, k) => [n, { lat: median(lat[k]), cpu: cpu[k] / PAIRS }]));
}

async function pairPart(replicas) {
  const dep = await startNodes(3, ['-cluster', '-replicas', String(replicas)]);
  const { impls, close } = makeImpls(dep, { replicas });
  try {
    const names = Object.keys(impls);
    // Each implementation its own resources: liblock's keys are hash-tagged,
    // the peers' are not, and node-redlock and redis-semaphore would meet on
    // one key name.
    const tag = (name) => names.indexOf(name);
    for (const name of names) await pairs(impls[name], tag(name), Math.min(300, PAIRS));
    const rounds = {};
    for (let r = 0; r < ROUNDS && ALTERNATE; r++) {
      const round = await alternating(impls, names, tag);
      for (const name of names) (rounds[name] ||= []).push(round[name]);
    }
    for (let r = 0; r < ROUNDS && !ALTERNATE; r++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(r + k) % names.length]; // rotate who goes first
        (rounds[name] ||= []).push(await pairs(impls[name], tag(name), PAIRS));
      }
    }
    const med = Object.fromEntries(names.map((n) => [n, median(rounds[n].map((r) => r.lat))]));
    const cpu = Object.fromEntries(names.map((n) => [n, median(rounds[n].map((r) => r.cpu))]));
    const peers = names.filter((n) => !n.startsWith('liblock'));
    const best = peers.length ? peers.reduce((a, b) => (med[a] <= med[b] ? a : b)) : null;
    const scenario = `Redis Cluster pair, 3 primaries, ${replicas ? 'a replica each' : 'no replicas'}`;
    console.log(`\n${scenario}: ${PAIRS} pairs x ${ROUNDS} rounds${ALTERNATE ? ', pair by pair' : ''}, median of round medians (CPU: median of round means)`);
    console.log(row('', 'µs', '/ best peer', 'CPU µs', '/ its CPU'));
    for (const n of names) {
      console.log(row(n, med[n].toFixed(1), best ? `${(med[n] / med[best]).toFixed(2)}x` : '', cpu[n].toFixed(1), best ? `${(cpu[n] / cpu[best]).toFixed(2)}x` : ''));
      results.record(scenario, PAIR_UNIT, n, med[n]);
    }
  } finally {
    await close();
    await dep.stop();
  }
}

/** INFO commandstats' calls of the lock commands on one server. */
async function lockCalls(redis) {
  const info = await redis.info('commandstats');
  let calls = 0;
  for (const line of info.split('\n')) {
    const m = /^cmdstat_(set|eval|evalsha):calls=(\d+)/.exec(line.trim());
    if (m) calls += Number(m[2]);
  }
  return calls;
}

async function shardPart(primaries) {
  const dep = await startNodes(primaries, ['-cluster', '-replicas', '0']);
  const c = new Client({ nodes: [dep.clusterUrl], nodeTimeout: 1000, backend: 'native', waitReplicas: 0 });
  const servers = dep.nodes.slice(0, primaries).map((n) => new Redis({ host: '127.0.0.1', port: n.port }));
  try {
    const res = (i) => `r${i}`;
    for (let i = 0; i < 256; i++) { const l = await c.acquire(res(i), { ttl: 10000, wait: 0 }); await l.release(); }
    for (const s of servers) await s.config('RESETSTAT');
    let next = 0; let ok = 0; let refused = 0;
    const end = Date.now() + SECONDS * 1000;
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (Date.now() < end) {
        const i = next++ % 256;
        try { const l = await c.acquire(res(i), { ttl: 10000, wait: 0 }); await l.release(); ok++; } catch { refused++; }
      }
    }));
    const calls = [];
    for (const s of servers) calls.push(await lockCalls(s));
    const total = calls.reduce((a, b) => a + b, 0) || 1;
    const scenario = 'Redis Cluster, 256 resources, single attempts';
    const shares = calls.map((k) => (100 * k) / total);
    console.log(row(`${primaries} primar${primaries === 1 ? 'y' : 'ies'}`, (ok / SECONDS).toFixed(0), refused) + `   ${shares.map((s) => s.toFixed(1)).join(' / ')}`);
    results.record(scenario, 'locks/s (native, 32 loops)', `liblock native, ${primaries} primaries`, ok / SECONDS, true);
    shares.forEach((s, i) => results.record('Redis Cluster, 256 resources: shard shares', '% of the lock commands',
      `liblock native, ${primaries} primaries, shard ${i}`, s, true));
  } finally {
    for (const s of servers) s.disconnect();
    await c.close();
    await dep.stop();
  }
}

async function main() {
  console.log(`liblock Node Redis Cluster bench, node ${process.version}`);
  if (ONLY.includes(1)) await pairPart(0);
  if (ONLY.includes(2)) await pairPart(1);
  if (ONLY.includes(3)) {
    console.log(`\nRedis Cluster, 256 independent resources, single attempts, 32 loops, ${SECONDS} s`);
    console.log(row('', 'locks/s', 'refused') + '   shard shares %');
    for (const p of [1, 3]) await shardPart(p);
  }
  results.write('Node, Redis Cluster');
}

main().catch((e) => { console.error(e); process.exit(1); });
