'use strict';
// Bad arguments of every kind: rejected on the JS side (wrong types,
// non-integers, NaN, Infinity, BigInt, NUL bytes, lone surrogates, unknown
// options) with InvalidArgumentError before anything reaches the library.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client, InvalidArgumentError } = require('..');
const { startNodes, assertNoUnhandled, withBackend } = require('./helpers');

let nodes;
let client;
before(async () => {
  nodes = await startNodes(1);
  client = new Client(withBackend({ nodes: nodes.urls }));
});
after(async () => {
  await client.close();
  await nodes.stop();
  assertNoUnhandled(assert);
});

const isBadArg = (re) => (e) => e instanceof InvalidArgumentError && e.code === 'INVALID_ARGUMENT' && (!re || re.test(e.message));
const notInts = [1.5, NaN, Infinity, -Infinity, 10n, '1000', null, true, {}, [], () => 1, 2 ** 53, Symbol('x')];

test('one server listed twice, or a URL without a scheme, is refused naming the entries', () => {
  const [url] = nodes.urls;
  assert.throws(() => new Client(withBackend({ nodes: [url, 'redis://127.0.0.1:1', url] })),
    isBadArg(/nodes\[2\]: the same server as nodes\[0\].*fake a quorum/));
  assert.throws(() => new Client(withBackend({ nodes: [url, `${url}/3`] })), isBadArg(/nodes\[1\]: the same server as nodes\[0\]/));
  assert.throws(() => new Client(withBackend({ nodes: ['127.0.0.1:6379'] })), isBadArg(/nodes\[0\]: no scheme: write redis:\/\/127\.0\.0\.1:6379/));
});

test('Client options of the wrong kind', () => {
  for (const o of [undefined, null, 'redis://127.0.0.1:1', 42, [], true]) {
    assert.throws(() => new Client(withBackend(o)), isBadArg(/options/), String(o));
  }
  for (const n of [undefined, null, 'redis://127.0.0.1:1', 1, {}, [1], [null], ['redis://a\0b'], [new String('redis://x')]]) {
    assert.throws(() => new Client(withBackend({ nodes: n })), isBadArg(/nodes/), String(n));
  }
  for (const t of notInts) {
    assert.throws(() => new Client(withBackend({ nodes: nodes.urls, nodeTimeout: t })), isBadArg(/nodeTimeout/), String(t));
  }
  for (const d of [NaN, Infinity, '0.01', 1n, null, {}]) {
    assert.throws(() => new Client(withBackend({ nodes: nodes.urls, driftFactor: d })), isBadArg(/driftFactor/), String(d));
  }
  for (const p of [1, null, {}, 'a\0b', '\uD800x']) {
    assert.throws(() => new Client(withBackend({ nodes: nodes.urls, keyPrefix: p })), isBadArg(/keyPrefix/), String(p));
  }
  assert.throws(() => new Client(withBackend({ nodes: nodes.urls, nodetimeout: 50 })), isBadArg(/unknown option "nodetimeout"/));
});

test('acquire arguments of the wrong kind', async () => {
  for (const r of [undefined, null, 1, 1n, {}, [], Symbol('r'), 'a\0b', 'lone \uD800 surrogate', 'x\uDC00']) {
    await assert.rejects(client.acquire(r, { ttl: 1000 }), isBadArg(/resource/), String(typeof r === 'symbol' ? 'symbol' : r));
  }
  await assert.rejects(client.acquire('r'), isBadArg(/ttl/));
  await assert.rejects(client.acquire('r', null), isBadArg(/ttl/));
  await assert.rejects(client.acquire('r', 1000), isBadArg(/options/));
  await assert.rejects(client.acquire('r', {}), isBadArg(/ttl/));
  for (const t of notInts) {
    await assert.rejects(client.acquire('r', { ttl: t }), isBadArg(/ttl/), String(typeof t === 'symbol' ? 'symbol' : t));
    await assert.rejects(client.acquire('r', { ttl: 1000, wait: t }), isBadArg(/wait/), String(typeof t === 'symbol' ? 'symbol' : t));
  }
  for (const a of [1, 'true', null, {}]) {
    await assert.rejects(client.acquire('r', { ttl: 1000, autoExtend: a }), isBadArg(/autoExtend/));
  }
  for (const s of [null, {}, { aborted: false }, new AbortController(), 'signal']) {
    await assert.rejects(client.acquire('r', { ttl: 1000, signal: s }), isBadArg(/signal/));
  }
  await assert.rejects(client.acquire('r', { ttl: 1000, timeout: 5 }), isBadArg(/unknown option "timeout"/));
  await assert.rejects(client.acquire('r', { ttl: 1000, retryCount: 5 }), isBadArg(/unknown option/));
  // A well-formed surrogate pair is fine.
  const lock = await client.acquire('emoji 🔒', { ttl: 1000 });
  await lock.release();
});

test('extend and using arguments of the wrong kind', async () => {
  const lock = await client.acquire('args:extend', { ttl: 5000 });
  for (const t of [...notInts, undefined]) {
    await assert.rejects(lock.extend(t), isBadArg(/ttl/), String(typeof t === 'symbol' ? 'symbol' : t));
  }
  await lock.release();
  await assert.rejects(client.using('r', { ttl: 1000 }), isBadArg(/fn/));
  await assert.rejects(client.using('r', { ttl: 1000 }, 'not a function'), isBadArg(/fn/));
  await assert.rejects(client.using('r', null, async () => 1), isBadArg(/ttl/));
  await assert.rejects(client.using('r', { ttl: 1.5 }, async () => 1), isBadArg(/ttl/));
  await assert.rejects(client.using('r', { ttl: 1000, bogus: 1 }, async () => 1), isBadArg(/unknown option/));
});

test('nothing was left behind by the rejected calls', async () => {
  const keys = await nodes.keys();
  assert.deepEqual(keys, [[]]);
});
