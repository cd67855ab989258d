'use strict';
// make bench (Node part) 7: the primitives beyond the mutex, acquire+release pairs on
// 1 and 5 nodes beside their peers and liblock's own mutex pair, in the same
// rounds (the variants alternate within each round; each row is the median
// of the round medians, µs per pair):
//   - a permit of a 3-permit semaphore ({ ttl, permits: 3 }) with liblock's
//     defaults (a 10 s wait budget, unused here) and tuned (wait: 0), beside
//     redis-semaphore's Semaphore (1 node) and RedlockSemaphore (5 nodes)
//     with their defaults (new Semaphore(client, key, 3): a 10 s
//     acquireTimeout polled every 10 ms, a refresh timer) and with one
//     attempt and no refresh (acquireAttemptsLimit: 1, refreshInterval: 0,
//     as part 1 calls its RedlockMutex);
//   - a multi-resource lock on two resources (acquire([a, b], { ttl })),
//     defaults and wait: 0, beside node-redlock's acquire([a, b], ttl) with
//     its defaults (new Redlock(clients): 10 retries 200 ms apart) and with
//     retryCount: 0;
//   - a reader of a read-write lock ({ ttl, mode: 'read' }), defaults;
//   - liblock's mutex pair ({ ttl }, defaults), the reference for the
//     primitives' own ratios (the aim: at most 1.2× it in Go and Python).
// Every variant runs on its own resource names, uncontended; liblock's
// clients use nodeTimeout 1000, as part 1's do.
const Redis = require('ioredis');
const NodeRedlock = require('redlock').default;
const { Semaphore, RedlockSemaphore } = require('redis-semaphore');
const { Client } = require('..');

const NOWAIT = { lockTimeout: 10000, refreshInterval: 0, acquireAttemptsLimit: 1 };

/** The variants over nodeUrls: { name: pair(res) }, close(), ready. */
function variants(nodeUrls, keep) {
  const clients = nodeUrls.map((u) => new Redis(u, { maxRetriesPerRequest: 1, enableOfflineQueue: true }));
  const backends = { native: new Client({ nodes: nodeUrls, nodeTimeout: 1000, backend: 'native' }), wasm: new Client({ nodes: nodeUrls, nodeTimeout: 1000, backend: 'wasm' }) };
  const v = {};
  for (const [backend, c] of Object.entries(backends)) {
    if (!keep(`liblock ${backend}`)) continue;
    const ll = (opts) => async (res) => { const l = await c.acquire(res, { ttl: 10000, ...opts }); await l.release(); };
    const multi = (opts) => async (res) => { const l = await c.acquire([`${res}:a`, `${res}:b`], { ttl: 10000, ...opts }); await l.release(); };
    v[`${backend} mutex, defaults`] = ll({});
    v[`${backend} semaphore3, defaults`] = ll({ permits: 3 });
    v[`${backend} semaphore3, wait: 0`] = ll({ permits: 3, wait: 0 });
    v[`${backend} reader, defaults`] = ll({ mode: 'read' });
    v[`${backend} multi2, defaults`] = multi({});
    v[`${backend} multi2, wait: 0`] = multi({ wait: 0 });
  }
  if (keep('redis-semaphore')) {
    // Semaphore is its one-node semaphore, RedlockSemaphore its quorum one.
    const make = nodeUrls.length === 1
      ? (res, opts) => new Semaphore(clients[0], res, 3, opts)
      : (res, opts) => new RedlockSemaphore(clients, res, 3, opts);
    v['redis-semaphore, defaults'] = async (res) => { const s = make(res); await s.acquire(); await s.release(); };
    v['redis-semaphore, one attempt'] = async (res) => { const s = make(res, NOWAIT); await s.acquire(); await s.release(); };
  }
  if (keep('node-redlock')) {
    const def = new NodeRedlock(clients);
    const one = new NodeRedlock(clients, { retryCount: 0, retryDelay: 1, retryJitter: 1 });
    v['node-redlock multi2, defaults'] = async (res) => { const l = await def.acquire([`${res}:a`, `${res}:b`], 10000); await l.release(); };
    v['node-redlock multi2, retryCount: 0'] = async (res) => { const l = await one.acquire([`${res}:a`, `${res}:b`], 10000); await l.release(); };
  }
  const close = async () => {
    await Promise.all(Object.values(backends).map((c) => c.close()));
    for (const c of clients) c.disconnect();
  };
  return { v, close, ready: Promise.all(clients.map((c) => c.ping())) };
}

/** Part 7: prints the table and the ratios; returns { name: { 1: µs, 5: µs } }. */
async function primitives({ urls, pairs, rounds, keep, median, row }) {
  const us = {};
  for (const n of [1, 5]) {
    const { v, close, ready } = variants(urls.slice(0, n), keep);
    await ready;
    const time = async (pair, res, count) => {
      const t = [];
      for (let i = 0; i < count; i++) {
        const t0 = process.hrtime.bigint();
        await pair(res);
        t.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
      return median(t);
    };
    for (const name of Object.keys(v)) await time(v[name], `bench:p7warm:${n}:${name}`, Math.min(300, pairs));
    const per = {};
    for (let r = 0; r < rounds; r++) {
      for (const name of Object.keys(v)) (per[name] ||= []).push(await time(v[name], `bench:p7:${n}:${name}`, pairs));
    }
    for (const name of Object.keys(v)) (us[name] ||= {})[n] = median(per[name]);
    await close();
  }
  console.log('\n7. new primitives: acquire+release pairs, µs (1 node: redis-semaphore\'s Semaphore; 5 nodes: its RedlockSemaphore; 3 permits)');
  console.log(row('variant', '1 node', '5 nodes'));
  for (const name of Object.keys(us)) console.log(row(name, us[name][1].toFixed(1), us[name][5].toFixed(1)));
  // The plots' rows (results.js): liblock's variants are named by backend.
  for (const name of Object.keys(us)) {
    const impl = /^(native|wasm) /.test(name) ? `liblock ${name}` : name;
    for (const n of [1, 5]) require('./results').record(`primitives, ${n} node${n > 1 ? 's' : ''}`, 'µs per acquire+release pair (median)', impl, us[name][n]);
  }
  const r = (a, b, n) => (us[a] && us[b] ? `${(us[a][n] / us[b][n]).toFixed(2)}×` : 'n/a');
  const both = (a, b) => `${r(a, b, 1)} / ${r(a, b, 5)}`;
  console.log('   ratios, 1 node / 5 nodes (same run):');
  for (const be of ['native', 'wasm']) {
    if (!us[`${be} mutex, defaults`]) continue;
    console.log(`   ${be}: semaphore3 defaults / redis-semaphore defaults ${both(`${be} semaphore3, defaults`, 'redis-semaphore, defaults')};` +
      ` semaphore3 wait: 0 / redis-semaphore one attempt ${both(`${be} semaphore3, wait: 0`, 'redis-semaphore, one attempt')} (target ≤ 1.0×)`);
    console.log(`   ${be}: multi2 defaults / node-redlock multi2 defaults ${both(`${be} multi2, defaults`, 'node-redlock multi2, defaults')};` +
      ` multi2 wait: 0 / node-redlock retryCount: 0 ${both(`${be} multi2, wait: 0`, 'node-redlock multi2, retryCount: 0')}`);
    console.log(`   ${be}: to its own mutex pair (defaults): semaphore3 ${both(`${be} semaphore3, defaults`, `${be} mutex, defaults`)};` +
      ` reader ${both(`${be} reader, defaults`, `${be} mutex, defaults`)}; multi2 ${both(`${be} multi2, defaults`, `${be} mutex, defaults`)}`);
  }
  return us;
}

module.exports = { primitives };
