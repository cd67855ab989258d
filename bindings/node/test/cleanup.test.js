'use strict';
// Handle cleanup: released locks free their handles; dropped locks and
// clients are freed (and their locks released) by FinalizationRegistry.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('node:v8');
const vm = require('node:vm');
const liblock = require('..');
const { Client } = liblock;
const { startNodes, assertNoUnhandled, eventually, withBackend, debug, settled } = require('./helpers');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

const handles = () => debug().handles;

test('acquire/release/extend cycles leave no handle, pending operation or watch behind', async () => {
  const base = handles();
  assert.equal(typeof base, 'number', 'the backend reports its live handles');
  const client = new Client(withBackend({ nodes: nodes.urls }));
  for (let i = 0; i < 200; i++) {
    const lock = await client.acquire('clean:cycle', { ttl: 5000, autoExtend: i % 2 === 0 });
    void lock.signal;
    if (i % 3 === 0) await lock.extend(5000);
    await lock.release();
  }
  await eventually(() => handles() === base + 1, { what: `handles back to ${base + 1}, at ${handles()}` });
  const d = await settled();
  assert.equal(d.pending, 0);
  assert.equal(d.lostWatch, 0);
  await client.close();
  await eventually(() => handles() === base, { what: 'client handle freed' });
});

test('a dropped lock is freed by the FinalizationRegistry, which releases it', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls }));
  const base = (await settled()).handles;
  await (async () => {
    for (let i = 0; i < 5; i++) await client.acquire(`clean:dropped:${i}`, { ttl: 60000, autoExtend: true });
  })();
  assert.equal(handles(), base + 5);
  // acquire returns at a quorum: node 0's last SET may still be on its way.
  await eventually(async () => (await nodes.keys())[0].length === 5, { what: '5 keys on node 0' });
  // Finalizers run in a later task than gc(): the next poll sees them.
  await eventually(() => {
    gc();
    return handles() === base;
  }, { what: 'dropped locks to be freed', timeout: 20000, interval: 20 });
  await eventually(async () => (await nodes.keys()).every((k) => k.length === 0), { what: 'dropped locks released' });
  await client.close();
});

test('a dropped client is freed, its locks released', async () => {
  const base = handles();
  let lockHeld;
  await (async () => {
    const client = new Client(withBackend({ nodes: nodes.urls }));
    lockHeld = await client.acquire('clean:client', { ttl: 60000 });
    lockHeld = null; // drop the lock and the client
  })();
  assert.ok(handles() >= base + 1);
  // Finalizers run in a later task than gc(): the next poll sees them.
  await eventually(() => {
    gc();
    return handles() === base;
  }, { what: 'dropped client to be freed', timeout: 20000, interval: 20 });
  await eventually(async () => (await nodes.keys()).every((k) => k.length === 0), { what: 'its lock released' });
});

test('after close, nothing of the client stays', async () => {
  const base = handles();
  const client = new Client(withBackend({ nodes: nodes.urls }));
  const a = await client.acquire('clean:close:a', { ttl: 60000, autoExtend: true });
  void a.signal;
  await client.acquire('clean:close:b', { ttl: 60000 });
  await client.close();
  assert.equal(handles(), base);
  assert.equal(debug().lostWatch, 0);
  assert.deepEqual(await nodes.keys(), [[], [], []]);
});

test('a lock keeps its client alive: dropping only the client releases nothing', async () => {
  const lock = await (async () => {
    const client = new Client(withBackend({ nodes: nodes.urls }));
    return client.acquire('clean:orphan', { ttl: 60000 });
  })();
  const alive = handles();
  // Deliberate: the test proves the lock's client is NOT collected, so it
  // gives the collector the chances in which it would be (five collections,
  // each followed by a task in which finalizers run), then checks.
  for (let i = 0; i < 5; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(handles(), alive, 'the client or the lock was freed while the lock is reachable');
  // Held on every node: the acquire returned at a quorum, so the third
  // node's SET may land a moment later; a release would take it away.
  await eventually(async () => (await nodes.keys()).filter((k) => k.includes('clean:orphan')).length === 3,
    { what: 'still held on every node' });
  await lock.extend(60000);
  await lock.release();
});
