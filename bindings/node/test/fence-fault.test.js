'use strict';
// A node frozen (SIGSTOP) or killed (SIGKILL) during the second round of a
// fenced acquire, on the backend under test: the client reaches the nodes
// through build/faultproxy, which signals the first nodes the fence round's
// command (fence.lua) reaches, just before it does. The scenarios of
// core/testkit/locktest's FenceRound* and bindings/python's test_fence_fault.py.
//
// The second round goes to the nodes whose grants made the first round's
// quorum (2 of 3) and to the third as its grant comes in: losing one still
// leaves a quorum to take the fence, so the acquire succeeds with a higher
// fence; losing two leaves the fence on fewer than a quorum, so the acquire
// fails with UnavailableError (never a lock). Either way the lock key goes
// (the release or the cleanup, at the latest its ttl), and the next fenced
// acquire's fence is above every fence before.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const Redis = require('ioredis');
const { Client, UnavailableError, NotAcquiredError } = require('..');
const { startNodes, startFaultProxy, waitFor, assertNoUnhandled, withBackend } = require('./helpers');

const NODE_TIMEOUT = 500;
let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => {
  await nodes.stop();
  assertNoUnhandled(assert);
});

/** Every node's value of key, each read on a fresh connection (nodes restart). */
async function valuesOf(key) {
  return Promise.all(nodes.urls.map(async (u) => {
    const r = new Redis(u, { maxRetriesPerRequest: 1, lazyConnect: true });
    try { await r.connect(); return await r.get(key); } finally { r.disconnect(); }
  }));
}

async function fenceFault(res, signal, faults) {
  const direct = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: NODE_TIMEOUT }));
  const ttl = 3000; // a key the cleanup cannot reach expires soon
  try {
    let lock = await direct.acquire(res, { ttl: 5000, fence: true });
    let first = lock.fence;
    await lock.release();

    const proxy = await startFaultProxy(nodes, { signal, faults });
    try {
      const c = new Client(withBackend({ nodes: proxy.urls, nodeTimeout: NODE_TIMEOUT }));
      try {
        if (faults === 1) {
          const l = await c.acquire(res, { ttl, fence: true, wait: 0 });
          assert.ok(l.fence > first, `fence ${l.fence} after ${first}`);
          first = l.fence;
          await l.release();
        } else {
          const err = await c.acquire(res, { ttl, fence: true, wait: 0 }).then(
            (l) => assert.fail(`acquired fence ${l.fence} with ${faults} of the fence round's nodes signalled`),
            (e) => e);
          assert.ok(err instanceof UnavailableError && !(err instanceof NotAcquiredError), String(err));
          assert.match(err.message, /fence/);
        }
        const fired = await proxy.fired();
        assert.equal(fired.length, faults, `signalled nodes ${fired}`);
      } finally {
        await c.close();
      }
    } finally {
      // Even after a failed assertion: no node stays stopped or dead.
      const fired = await proxy.fired();
      await proxy.stop();
      for (const i of fired) {
        if (signal === 'KILL') await nodes.restart(i); else await nodes.thaw(i);
      }
    }
    await waitFor(async () => (await valuesOf(res)).every((v) => v === null), { what: `${res} gone from every node`, timeout: ttl + 10000 });

    lock = await direct.acquire(res, { ttl: 5000, fence: true });
    assert.ok(lock.fence > first, `fence ${lock.fence} after ${first}`);
    await lock.release();
    await waitFor(async () => (await valuesOf(res)).every((v) => v === null), { what: `${res} released` });
  } finally {
    await direct.close();
  }
}

test('one node frozen as the fence round reaches it: acquired with a higher fence, no lock left after release', async () => {
  await fenceFault('ff:frozen1', 'STOP', 1);
});

test('one node killed as the fence round reaches it: acquired with a higher fence, no lock left after release', async () => {
  await fenceFault('ff:killed1', 'KILL', 1);
});

test('two nodes frozen as the fence round reaches them: UnavailableError, no lock left, the next fence is higher', async () => {
  await fenceFault('ff:frozen2', 'STOP', 2);
});
