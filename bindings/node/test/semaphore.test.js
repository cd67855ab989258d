'use strict';
// Counting semaphores from Node, on the backend under test
// (LIBLOCK_BACKEND: native by default, wasm in scripts/test-wasm.sh): N
// permits acquired, the N+1th refused, a release wakes a waiter of another
// client, inspect with permits, bad permits, nothing left behind.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { NotAcquiredError, InvalidArgumentError } = require('..');
const { settlesTo, nodesFixture } = require('./helpers');

const fx = nodesFixture({ nodeTimeout: 500 });
const { client } = fx;
/** Every key on every node (fence counters are permanent: left out). */
const keys = () => Promise.all(fx.redis.map((r) => r.keys('*'))).then((ks) => ks.flat().filter((k) => !k.endsWith('\ufffdfence') && !k.includes('fence')).sort());

test('semaphore: N permits, the N+1th refused, release wakes a waiter, inspect, nothing left', async () => {
  const a = client({ owner: 'pool-a' });
  const b = client();
  try {
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await a.acquire('sem:pool', { ttl: 10000, permits: 3, wait: 0, fence: true }));
    assert.ok(held[1].fence > held[0].fence && held[2].fence > held[1].fence, 'fences increase');
    await assert.rejects(b.acquire('sem:pool', { ttl: 10000, permits: 3, wait: 0 }), NotAcquiredError);
    // The mutex of the name is another lock.
    const m = await b.acquire('sem:pool', { ttl: 10000, wait: 0 });
    await m.release();

    const seen = await b.inspect('sem:pool', { permits: 3 });
    assert.equal(seen.permits, 3);
    assert.equal(seen.inUse, 3);
    assert.equal(seen.held, true);
    assert.deepEqual(seen.holders.map((h) => [h.slot, h.owner]), [[0, 'pool-a'], [1, 'pool-a'], [2, 'pool-a']]);
    assert.ok(seen.holders.every((h) => h.validity > 9000 && h.validity <= 10000), JSON.stringify(seen.holders));
    const mutex = await b.inspect('sem:pool');
    assert.equal(mutex.held, false);
    assert.equal(mutex.permits, undefined);

    // A waiter of another client is woken by a release.
    const t0 = Date.now();
    const waiting = b.acquire('sem:pool', { ttl: 10000, permits: 3, wait: 20000 });
    await held[1].release();
    const w = await waiting;
    assert.ok(Date.now() - t0 < 10000, 'woken by the release, not by the ttl');
    await w.extend(20000);
    await w.release();
    await held[0].release();
    await held[2].release();
    const after = await a.inspect('sem:pool', { permits: 3 });
    assert.equal(after.inUse, 0);
    assert.equal(after.held, false);
    assert.deepEqual(after.holders, []);
    await settlesTo(keys, [], 'no key left behind');
  } finally {
    await a.close();
    await b.close();
  }
});

test('semaphore: close releases the permits', async () => {
  const a = client();
  await a.acquire('sem:close', { ttl: 10000, permits: 2, wait: 0 });
  await a.acquire('sem:close', { ttl: 10000, permits: 2, wait: 0, autoExtend: true });
  await a.close();
  await settlesTo(keys, [], 'no key left behind');
});

test('semaphore: bad permits are InvalidArgumentError naming permits, nothing sent', async () => {
  const a = client();
  try {
    for (const bad of [0, -1, 1025, 2.5, '3', null, NaN, Infinity, 2 ** 53]) {
      const check = (e) => e instanceof InvalidArgumentError && e.code === 'INVALID_ARGUMENT' && /permits/.test(e.message);
      await assert.rejects(a.acquire('sem:bad', { ttl: 1000, permits: bad }), check, String(bad));
      await assert.rejects(a.inspect('sem:bad', { permits: bad }), check, String(bad));
    }
    // A permit is of one resource, not of a multi-resource lock's set.
    await assert.rejects(a.acquire(['sem:bad', 'sem:bad2'], { ttl: 5000, permits: 2 }),
      (e) => e instanceof InvalidArgumentError && /permits/.test(e.message));
    assert.deepEqual(await keys(), []);
  } finally {
    await a.close();
  }
});
