'use strict';
// Loss, Node's way: lock.signal aborts with LockLostError when the lock is
// lost, using()'s signal too, and loss never surfaces as an unhandled
// rejection. Auto-extension outliving the ttl and a frozen node's bound are
// core/testkit/locktest's (AutoExtendOutlivesTTL, MinorityFrozen), run on both
// backends through bindings/interop/children/suite.js (make test-interop).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client, LockLostError } = require('..');
const { startNodes, assertNoUnhandled, eventually, withBackend } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

test('without auto-extend, lock.signal aborts when the validity runs out', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls }));
  const lock = await client.acquire('lost:expire', { ttl: 150 });
  const signal = lock.signal;
  let reason = null;
  signal.addEventListener('abort', () => { reason = signal.reason; });
  await eventually(() => reason !== null, { what: 'signal to abort', timeout: 5000 });
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
