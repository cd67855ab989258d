'use strict';
// Auto-extension and loss: lock.signal aborts with LockLostError when the
// lock is lost, and loss never surfaces as an unhandled rejection.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client, LockLostError } = require('..');
const { startNodes, assertNoUnhandled, waitFor, withBackend } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

test('auto-extend keeps a lock well past its ttl', async () => {
  // A ttl that leaves the extension room on a loaded machine (the wasm
  // backend's round trip crosses two threads): loss here would be real.
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 150 }));
  const lock = await client.acquire('lost:keep', { ttl: 600, autoExtend: true });
  assert.equal(lock.autoExtend, true);
  const t0 = Date.now();
  await waitFor(() => Date.now() - t0 > 2400, { what: '4 ttls', timeout: 10000 });
  assert.equal(lock.lost, false);
  assert.equal(lock.signal.aborted, false);
  assert.ok(lock.validity > 0);
  await assert.rejects(client.acquire('lost:keep', { ttl: 600, wait: 0 }), { code: 'NOT_ACQUIRED' });
  await lock.release();
  await client.close();
});

test('without auto-extend, lock.signal aborts when the validity runs out', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls }));
  const lock = await client.acquire('lost:expire', { ttl: 150 });
  const signal = lock.signal;
  let reason = null;
  signal.addEventListener('abort', () => { reason = signal.reason; });
  await waitFor(() => reason !== null, { what: 'signal to abort', timeout: 5000 });
  assert.ok(reason instanceof LockLostError);
  assert.equal(reason.code, 'LOST');
  assert.equal(lock.lost, true);
  assert.equal(lock.validity, 0);
  await assert.rejects(lock.release(), { code: 'LOST' });
  await client.close();
});

test('majority of nodes killed: auto-extension fails, lock.signal aborts, no unhandled rejection', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 50 }));
  const lock = await client.acquire('lost:kill', { ttl: 300, autoExtend: true });
  const aborted = new Promise((resolve) => lock.signal.addEventListener('abort', () => resolve(lock.signal.reason), { once: true }));
  await nodes.kill(0);
  await nodes.kill(1);
  const reason = await Promise.race([aborted, new Promise((_, rej) => setTimeout(() => rej(new Error('signal never aborted')), 5000))]);
  assert.ok(reason instanceof LockLostError, String(reason));
  assert.equal(lock.lost, true);
  // Releasing a lost lock: LOST or UNAVAILABLE (the nodes are down), never a hang.
  await assert.rejects(lock.release(), (e) => ['LOST', 'UNAVAILABLE'].includes(e.code));
  await client.close();
  await nodes.restart(0);
  await nodes.restart(1);
  await new Promise((r) => setImmediate(r));
  assertNoUnhandled(assert);
});

test('using(): the signal passed to fn aborts on loss and using rejects with LockLostError', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 150 }));
  let sawAbort = false;
  const p = client.using('lost:using', { ttl: 600 }, async (signal) => {
    await nodes.freeze(1);
    await nodes.freeze(2);
    await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
    sawAbort = true;
    assert.ok(signal.reason instanceof LockLostError);
    return 'finished anyway';
  });
  await assert.rejects(p, (e) => e instanceof LockLostError && e.code === 'LOST');
  assert.ok(sawAbort);
  await nodes.thaw(1);
  await nodes.thaw(2);
  await client.close();
});

test('one frozen node of three: acquire, extend and release still work, bounded by nodeTimeout', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 50 }));
  await nodes.freeze(2);
  try {
    const t0 = Date.now();
    const lock = await client.acquire('lost:frozen', { ttl: 5000 });
    await lock.extend(5000);
    await lock.release();
    assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
  } finally {
    await nodes.thaw(2);
  }
  await client.close();
});
