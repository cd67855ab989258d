'use strict';
// Multi-resource locks from Node: client.acquire([...])
// takes every resource of the list or none. Run on the native backend
// (scripts/test.sh) and on liblock.wasm (scripts/test-wasm.sh): the engine
// does the work, the host passes the list.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { NotAcquiredError, InvalidArgumentError, MAX_RESOURCES } = require('..');
const { eventually, settlesTo, nodesFixture } = require('./helpers');

const fx = nodesFixture({ nodeTimeout: 500 });
const { client } = fx;
const valuesOf = (key) => Promise.all(fx.redis.map((r) => r.get(key)));
const goneEverywhere = (...keys) => Promise.all(keys.map((k) => settlesTo(() => valuesOf(k), [null, null, null], `${k} deleted on every node`)));

test('a list is taken whole: a member and an overlapping list are refused, nothing partial is left', async () => {
  const a = client();
  const b = client();
  try {
    const lock = await a.acquire(['m:acct1', 'm:acct2'], { ttl: 5000 });
    assert.deepEqual(lock.resources, ['m:acct1', 'm:acct2']);
    assert.equal(lock.resource, 'm:acct1');
    // The acquire returned at a quorum: the third node's script may come a
    // moment later (and must, before b's attempts could take a member there).
    await settlesTo(() => valuesOf('m:acct2'), [lock.token, lock.token, lock.token], 'the list on every node');
    // A plain mutex on a member is refused.
    await assert.rejects(b.acquire('m:acct2', { ttl: 2000, wait: 0 }), NotAcquiredError);
    // An overlapping list in the other order is refused, naming the held
    // resource, and leaves no key of its own.
    await assert.rejects(b.acquire(['m:acct3', 'm:acct1'], { ttl: 2000, wait: 0 }),
      (e) => e instanceof NotAcquiredError && /"m:acct1" is held/.test(e.message));
    assert.deepEqual(await valuesOf('m:acct3'), [null, null, null]);
    await lock.extend(8000);
    // The extension returned at a quorum too: wait for the third node's.
    await eventually(async () => (await Promise.all(fx.redis.map((r) => r.pttl('m:acct2')))).every((p) => p > 5000),
      { what: 'the extended ttl on every node' });
    await lock.release();
    await goneEverywhere('m:acct1', 'm:acct2');
    // Free again, for a list and for a member.
    const again = await b.acquire(['m:acct2', 'm:acct3'], { ttl: 2000, fence: true });
    assert.ok(again.fence >= 1);
    await again.release();
    await goneEverywhere('m:acct2', 'm:acct3');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('a release wakes a waiting list, and a list release wakes a waiting mutex', async () => {
  const a = client();
  const b = client();
  try {
    const held = await a.acquire('w:y', { ttl: 30000 });
    const waiting = b.acquire(['w:x', 'w:y'], { ttl: 5000, wait: 20000 });
    await held.release();
    const set = await waiting;
    assert.deepEqual(set.resources, ['w:x', 'w:y']);
    const mutex = a.acquire('w:x', { ttl: 5000, wait: 20000 });
    await set.release();
    await (await mutex).release();
    await goneEverywhere('w:x', 'w:y');
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
});

test('bad lists are refused naming the element, with nothing sent', async () => {
  const a = client();
  try {
    const bad = async (resource, options, re) => {
      await assert.rejects(a.acquire(resource, { ttl: 2000, wait: 0, ...options }),
        (e) => e instanceof InvalidArgumentError && re.test(e.message), `${JSON.stringify(resource)} ${re}`);
    };
    await bad([], {}, /resources: must name at least one resource/);
    await bad(['b:a', ''], {}, /resources\[1\]: .*1024|resources\[1\]: must/);
    await bad(['b:a', 5], {}, /resources\[1\]: must be a string, got number/);
    await bad(['b:a', 'b:\0'], {}, /resources\[1\]: must not contain a NUL/);
    await bad(['b:a', 'b:b', 'b:a'], {}, /resources\[2\]: duplicates resources\[0\]/);
    await bad(Array.from({ length: MAX_RESOURCES + 1 }, (_, i) => `b:${i}`), {}, /resources: at most 16 resources/);
    await bad(['b:a', 'b:b'], { token: 'a-token-of-my-own-0001' }, /token: not supported with a list/);
    await bad(['b:a', 'x'.repeat(1025)], {}, /resources\[1\]: must be at most 1024 bytes/);
    assert.equal(MAX_RESOURCES, 16);
    await goneEverywhere('b:a', 'b:b');
  } finally {
    await a.close();
  }
});

test('using() takes a list', async () => {
  const a = client();
  try {
    const got = await a.using(['u:a', 'u:b'], { ttl: 5000 }, (signal, lock) => lock.resources);
    assert.deepEqual(got, ['u:a', 'u:b']);
    await goneEverywhere('u:a', 'u:b');
  } finally {
    await a.close();
  }
});
