'use strict';
// AbortSignal on acquire: cancels the pending acquire promptly, leaves no key.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client, CanceledError } = require('..');
const { startNodes, assertNoUnhandled, eventually, waiting, settlesTo, withBackend } = require('./helpers');

let nodes;
let client;
before(async () => {
  nodes = await startNodes(3);
  // A 1 s node timeout: waiting() below sees the acquire wait by its pub/sub
  // subscriptions, whose connections (connect and handshake) must open within the
  // node timeout; on a busy machine 100 ms is not always enough, and a waiter behind
  // its own client's lock tries again only when that lock ends.
  client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 1000 }));
});
after(async () => {
  await client.close();
  await nodes.stop();
  assertNoUnhandled(assert);
});

test('abort while waiting: CanceledError promptly, cause is the signal reason, no key left', async () => {
  const holder = await client.acquire('abort:r', { ttl: 30000 });
  const ac = new AbortController();
  const p = client.acquire('abort:r', { ttl: 30000, wait: 60000, signal: ac.signal });
  await waiting(nodes, 'abort:r');
  const t0 = Date.now();
  const reason = new Error('user gave up');
  ac.abort(reason);
  await assert.rejects(p, (e) => e instanceof CanceledError && e.code === 'CANCELED' && e.cause === reason);
  // Promptly: far below the 60 s wait, with room for a loaded machine.
  assert.ok(Date.now() - t0 < 5000, `canceled in ${Date.now() - t0} ms`);
  await holder.release();
  await settlesTo(() => nodes.keys(), [[], [], []], 'no key left behind');
});

test('an already-aborted signal rejects at once, without touching Redis', async () => {
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(client.acquire('abort:pre', { ttl: 1000, signal: ac.signal }), { code: 'CANCELED' });
  await assert.rejects(client.acquire('abort:pre', { ttl: 1000, signal: AbortSignal.abort() }), { code: 'CANCELED' });
  assert.deepEqual(await nodes.keys(), [[], [], []]);
});

test('abort right after starting (before the library accepted it) still cancels', async () => {
  const holder = await client.acquire('abort:early', { ttl: 30000 });
  for (let i = 0; i < 20; i++) {
    const ac = new AbortController();
    const p = client.acquire('abort:early', { ttl: 30000, wait: 60000, signal: ac.signal });
    ac.abort();
    await assert.rejects(p, { code: 'CANCELED' });
  }
  await holder.release();
  await settlesTo(() => nodes.keys(), [[], [], []]);
});

test('many aborts racing the hand-over: every outcome is a lock or CANCELED, no key leaks', async () => {
  const holder = await client.acquire('abort:race', { ttl: 30000 });
  const acs = Array.from({ length: 50 }, () => new AbortController());
  const ps = Promise.allSettled(acs.map((ac) => client.acquire('abort:race', { ttl: 30000, wait: 60000, signal: ac.signal })));
  const released = holder.release();
  // Deliberate delays: the aborts are spread over the first few ms of the
  // hand-over (0-4 ms), so some land before, some during and some after it.
  acs.forEach((ac, i) => setTimeout(() => ac.abort(), i % 5));
  await released;
  const results = await ps;
  let got = 0;
  for (const r of results) {
    if (r.status === 'fulfilled') {
      got++;
      await r.value.release();
    } else {
      assert.equal(r.reason.code, 'CANCELED', r.reason.message);
    }
  }
  assert.ok(got <= 50);
  await eventually(async () => (await nodes.keys()).every((k) => k.length === 0), { what: 'no keys' });
});

test('a signal aborted after the lock was acquired does nothing to the lock', async () => {
  const ac = new AbortController();
  const lock = await client.acquire('abort:after', { ttl: 5000, signal: ac.signal });
  ac.abort();
  assert.equal(lock.lost, false);
  assert.ok(lock.validity > 0);
  await lock.release();
});
