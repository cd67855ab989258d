'use strict';
// Read-write locks from Node (`mode: 'read' | 'write'`), on either backend
// (LIBLOCK_BACKEND=wasm: scripts/test-wasm.sh): the engine does the work;
// these check that the option reaches it, the Lock's `mode`, inspect's
// `mode`, bad input naming `mode` with nothing left behind, and no key left
// after release and close.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { InvalidArgumentError, NotAcquiredError } = require('..');
const { settlesTo, nodesFixture } = require('./helpers');

const fx = nodesFixture({ nodeTimeout: 500 });
const { client } = fx;
/** Every key on the nodes but fence counters (permanent by design). */
const keysLeft = async () => (await Promise.all(fx.redis.map((r) => r.keys('*')))).flat().filter((k) => !/\ufffdfence$/.test(k)).sort(); // ioredis decodes the 0xFF byte as U+FFFD
const noKeysLeft = () => settlesTo(keysLeft, [], 'no key left on any node');

test('readers share, a writer excludes them, a waiting writer is woken', async () => {
  const a = client({ owner: 'alice' });
  const b = client({ owner: 'bob' });
  try {
    const r1 = await a.acquire('rw:doc', { ttl: 10000, mode: 'read' });
    const r2 = await b.acquire('rw:doc', { ttl: 10000, mode: 'read', autoExtend: true });
    assert.equal(r1.mode, 'read');
    assert.ok(r1.validity > 9000, String(r1.validity));
    await assert.rejects(b.acquire('rw:doc', { ttl: 10000, mode: 'write', wait: 0 }), NotAcquiredError);
    // The mutex of the same name is another lock.
    const m = await b.acquire('rw:doc', { ttl: 10000, wait: 0 });
    assert.equal(m.mode, 'exclusive');
    await m.release();
    const pending = a.acquire('rw:doc', { ttl: 10000, mode: 'write', wait: 5000, fence: true });
    await r1.extend(10000);
    await r1.release();
    await r2.release();
    const w = await pending;
    assert.equal(w.mode, 'write');
    assert.ok(w.fence >= 1);
    const seen = await b.inspect('rw:doc', { mode: 'write' });
    assert.equal(seen.held, true);
    assert.equal(seen.owner, 'alice');
    await assert.rejects(b.acquire('rw:doc', { ttl: 10000, mode: 'read', wait: 0 }), NotAcquiredError);
    await w.release();
    await noKeysLeft();
  } finally {
    await a.close();
    await b.close();
  }
});

test('inspect lists the readers (owner, validity); a reader lost on 2 of 3 nodes is not listed', async () => {
  const a = client({ owner: 'alice' });
  const b = client({ owner: 'bob' });
  try {
    const r1 = await a.acquire('rw:readers', { ttl: 10000, mode: 'read' });
    const r2 = await b.acquire('rw:readers', { ttl: 10000, mode: 'read' });
    const seen = await b.inspect('rw:readers', { mode: 'read' });
    assert.equal(seen.held, false, 'no writer');
    assert.deepEqual(seen.readers.map((r) => r.owner).sort(), ['alice', 'bob']);
    for (const r of seen.readers) assert.ok(r.validity > 8000 && r.validity <= 10000, JSON.stringify(r));
    // The mutex's inspection has no readers; a read-write lock without any has [].
    assert.equal((await a.inspect('rw:readers')).readers, undefined);
    assert.deepEqual((await a.inspect('rw:no-readers', { mode: 'write' })).readers, []);

    // bob's reader lost on two nodes (the readers' sorted set: name 0xFF "rw:r"). The
    // acquire returned at a quorum: wait until it is on every node before removing it.
    const rk = Buffer.concat([Buffer.from('rw:readers'), Buffer.from([0xff]), Buffer.from('rw:r')]);
    const everywhere = async () => (await Promise.all(fx.redis.map((r) => r.zscore(rk, r2.token)))).every((x) => x !== null);
    await settlesTo(everywhere, true, "bob's reader on every node");
    await fx.redis[0].zrem(rk, r2.token);
    await fx.redis[1].zrem(rk, r2.token);
    const after = await a.inspect('rw:readers', { mode: 'write' });
    assert.deepEqual(after.readers.map((r) => r.owner), ['alice'], JSON.stringify(after.readers));
    await assert.rejects(r2.release(), (e) => e.code === 'LOST');
    await r1.release();
    await noKeysLeft();
  } finally {
    await a.close();
    await b.close();
  }
});

test('close releases readers and writers: no key left', async () => {
  const a = client();
  await a.acquire('rw:close1', { ttl: 10000, mode: 'read' });
  await a.acquire('rw:close2', { ttl: 10000, mode: 'write' });
  assert.ok((await keysLeft()).length >= 2);
  await a.close();
  await noKeysLeft();
});

test('bad mode: InvalidArgumentError naming mode, nothing sent', async () => {
  const a = client();
  try {
    for (const mode of ['bogus', 'READ', '', 1, true, null, ['read'], {}]) {
      await assert.rejects(a.acquire('rw:bad', { ttl: 1000, mode }), (e) => e instanceof InvalidArgumentError && /: mode: /.test(e.message), String(mode));
      await assert.rejects(a.inspect('rw:bad', { mode }), (e) => e instanceof InvalidArgumentError && /: mode: /.test(e.message), String(mode));
    }
    await assert.rejects(a.acquire('rw:bad', { ttl: 1000, mode: 'read', token: 'a-token-of-my-own-0001' }),
      (e) => e instanceof InvalidArgumentError && /: mode: .*token/.test(e.message));
    assert.deepEqual(await keysLeft(), []);
  } finally {
    await a.close();
  }
});
