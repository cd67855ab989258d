'use strict';
// Every primitive's wait budget with one node of three that refuses
// connections or holds a connect open (it accepts and never answers), and
// the resource held by another owner on one of the two good nodes, so that
// no attempt decides before the bad node's answer: the call retries for its
// wait, then rejects with its outcome (NOT_ACQUIRED or UNAVAILABLE) naming
// the bad node's cause. The bad node never comes back here: a call that
// waited for it would hang the test.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, withBackend, BACKEND } = require('./helpers');
const { freePort } = require('./servers');

let nodes;
let holder;
let silent;
const held = [];
before(async () => {
  nodes = await startNodes(3);
  holder = new Client(withBackend({ nodes: [nodes.urls[0]], nodeTimeout: 1000 }));
  silent = net.createServer((s) => { held.push(s); s.on('error', () => {}); });
  await new Promise((r) => silent.listen(0, '127.0.0.1', r));
});
after(async () => {
  await holder.close();
  for (const s of held) s.destroy();
  await new Promise((r) => silent.close(r));
  await nodes.stop();
  assertNoUnhandled(assert);
});

const NODE_TIMEOUT = 200;
const WAIT = 4 * NODE_TIMEOUT;
const PRIMS = [
  ['mutex', (c, r) => c.acquire(r, { ttl: 60000 }), (c, r) => c.acquire(r, { ttl: 10000, wait: WAIT })],
  ['semaphore', (c, r) => c.acquire(r, { ttl: 60000, permits: 1 }), (c, r) => c.acquire(r, { ttl: 10000, permits: 1, wait: WAIT })],
  ['read behind a writer', (c, r) => c.acquire(r, { ttl: 60000, mode: 'write' }), (c, r) => c.acquire(r, { ttl: 10000, mode: 'read', wait: WAIT })],
  ['write behind a writer', (c, r) => c.acquire(r, { ttl: 60000, mode: 'write' }), (c, r) => c.acquire(r, { ttl: 10000, mode: 'write', wait: WAIT })],
  ['multi', (c, r) => c.acquire([`${r}:a`, `${r}:b`], { ttl: 60000 }), (c, r) => c.acquire([`${r}:a`, `${r}:b`], { ttl: 10000, wait: WAIT })],
  ['election', (c, r) => c.campaign(r, { value: 'holder' }), (c, r) => c.campaign(r, { value: 'waiter', wait: WAIT })],
];

for (const [bad, url, cause] of [
  ['refusing', async () => `redis://127.0.0.1:${await freePort()}`, /ECONNREFUSED|connection refused/],
  ['holding a connect open', async () => `redis://127.0.0.1:${silent.address().port}`, /connect: no answer within the node timeout \(200ms\)/],
]) {
  test(`[${BACKEND}] every primitive's wait budget with a node ${bad}`, { timeout: 60000 }, async () => {
    const c = new Client(withBackend({ nodes: [nodes.urls[0], nodes.urls[1], await url()], nodeTimeout: NODE_TIMEOUT }));
    const kept = []; // a dropped Lock is released (FinalizationRegistry): the holder keeps its own
    try {
      for (const [name, hold, attempt] of PRIMS) {
        const r = `budget:${name}:${bad}`;
        kept.push(await hold(holder, r));
        await assert.rejects(attempt(c, r), (e) => {
          assert.ok(['NOT_ACQUIRED', 'UNAVAILABLE'].includes(e.code), `${name}: ${e.code} ${e.message}`);
          assert.match(e.message, /node 2 /, `${name}: the bad node is named: ${e.message}`);
          assert.match(e.message, cause, `${name}: its cause: ${e.message}`);
          return true;
        });
      }
    } finally {
      await c.close();
    }
  });
}
