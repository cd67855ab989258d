'use strict';
// What of inspect, re-entry by token and fencing tokens is Node's own: an
// AbortSignal on inspect(), using() passing token and fence through, and
// argument checks in Node's names and types. The behaviour itself (inspect's
// answers, with nodes down; re-entry; fences increasing, with a node frozen;
// wake on release across clients) is core/testkit/locktest's, run on both
// backends through bindings/interop/children/suite.js (make test-interop).
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { Client, UnavailableError, InvalidArgumentError, CanceledError } = require('..');
const { settlesTo, withBackend, nodesFixture } = require('./helpers');
const { freePort } = require('./servers');

const fx = nodesFixture({ nodeTimeout: 500 });
const { client } = fx;
const all = (f) => Promise.all(fx.redis.map(f));
const valuesOf = (key) => all((r) => r.get(key));
/** Waits until no node has `key`. */
const goneEverywhere = (key) => settlesTo(() => valuesOf(key), [null, null, null], `${key} deleted on every node`);

test('inspect: an aborted signal rejects with CanceledError; the late answer is dropped', async () => {
  const a = client();
  try {
    await assert.rejects(a.inspect('insp:abort', { signal: AbortSignal.abort('no') }), (e) => e instanceof CanceledError && e.cause === 'no');
    const ac = new AbortController();
    const p = a.inspect('insp:abort', { signal: ac.signal });
    ac.abort('later');
    await assert.rejects(p, (e) => e instanceof CanceledError && e.code === 'CANCELED' && e.cause === 'later');
    const got = await a.inspect('insp:abort', { signal: new AbortController().signal });
    assert.equal(got.held, false);
  } finally {
    await a.close();
  }
});

test('using() passes token and fence through', async () => {
  const a = client();
  try {
    const f = await a.using('reenter:using', { ttl: 5000, fence: true }, (signal, lock) => lock.fence);
    assert.ok(f >= 1, String(f));
    const r = await a.using('reenter:using', { ttl: 5000, token: 'a-token-of-my-own-0002' }, (signal, lock) => [lock.token, lock.reentered]);
    assert.deepEqual(r, ['a-token-of-my-own-0002', false]);
    await goneEverywhere('reenter:using');
  } finally {
    await a.close();
  }
});

// ------------------------------------------------------------ bad input

test('bad input is rejected before anything is sent, naming the caller\'s option', async () => {
  const dead = `redis://127.0.0.1:${await freePort()}`;
  const c = new Client(withBackend({ nodes: [dead], nodeTimeout: 200 }));
  try {
    const cases = [
      [{ token: 'short' }, 'token'],
      [{ token: 't'.repeat(513) }, 'token'],
      [{ token: 'é'.repeat(257) }, 'token'], // 514 bytes of UTF-8
      [{ token: Buffer.from('0123456789abcdef') }, 'token'],
      [{ token: '0123456789abcdef\0' }, 'token'],
      [{ token: 7 }, 'token'],
      [{ fence: 'yes' }, 'fence'],
      [{ fence: 1 }, 'fence'],
      [{ token: 'a-token-of-my-own-0001', fence: true }, 'fence'],
    ];
    for (const [o, name] of cases) {
      for (const call of [() => c.acquire('bad:r', { ttl: 1000, wait: 0, ...o }), () => c.using('bad:r', { ttl: 1000, wait: 0, ...o }, () => 1)]) {
        await assert.rejects(call(), (e) => {
          assert.ok(e instanceof InvalidArgumentError, `${JSON.stringify(o)}: ${e}`);
          assert.equal(e.code, 'INVALID_ARGUMENT');
          assert.match(e.message, new RegExp(`invalid argument: ${name}: `), JSON.stringify(o));
          return true;
        });
      }
    }
    // token: false is no token; fence: false no fence (on a dead node: UNAVAILABLE, so they were sent)
    for (const bad of ['', 'x'.repeat(1025), null, 7, Buffer.from('r'), 'a\0b']) {
      await assert.rejects(c.inspect(bad), (e) => e instanceof InvalidArgumentError && /invalid argument: resource: /.test(e.message), String(bad));
    }
    await assert.rejects(c.inspect('bad:r', { signal: 'no' }), (e) => e instanceof InvalidArgumentError && /signal/.test(e.message));
    await assert.rejects(c.inspect('bad:r', { ttl: 1 }), (e) => e instanceof InvalidArgumentError && /unknown option "ttl"/.test(e.message));
    // The only node is down: a good request is UNAVAILABLE (so the ones above were not sent).
    await assert.rejects(c.inspect('bad:r'), (e) => e instanceof UnavailableError);
    await assert.rejects(c.acquire('bad:r', { ttl: 1000, wait: 0, token: 'a-token-of-my-own-0001' }), (e) => e instanceof UnavailableError);
  } finally {
    await c.close();
  }
  for (const bad of ['a/b', 'o'.repeat(129), 7, 'nul\0', 'é'.repeat(65)]) {
    assert.throws(() => client({ owner: bad }), (e) => e instanceof InvalidArgumentError && /invalid argument: owner: /.test(e.message), String(bad));
  }
  const longest = client({ owner: 'o'.repeat(128) });
  assert.equal(longest.owner, 'o'.repeat(128));
  await longest.close();
  await assert.rejects(longest.inspect('bad:r'), (e) => e.code === 'CLOSED');
  assert.deepEqual(await all((r) => r.keys('bad:*')), [[], [], []]);
});
