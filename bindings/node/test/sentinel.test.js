'use strict';
// A Sentinel node (a URL with master_name: the engine asks the sentinels for
// the primary) and the replica check (waitReplicas), on both backends,
// against a real deployment from build/redisnodes -sentinel: a primary
// (node 0), two replicas and three sentinels. The failovers themselves are
// tested in Go (core/testkit/sentineltest), on the same engine.
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const { Client, NotAcquiredError, InvalidArgumentError } = require('..');
const { startNodes, withBackend, waitFor, assertNoUnhandled } = require('./helpers');

const test = nodeTest.test;
let dep;
nodeTest.before(async () => { dep = await startNodes(3, ['-sentinel']); });
nodeTest.after(async () => { await dep.stop(); });
assertNoUnhandled(assert);

const noKeys = async () => waitFor(async () => (await dep.keys()).every((k) => k.length === 0), { what: 'no key left' });

test('acquire through a Sentinel node URL: the key on the primary and, WAIT 1 by default, a replica', async () => {
  const c = new Client(withBackend({ nodes: [dep.sentinelUrl], nodeTimeout: 250 }));
  try {
    const l = await c.acquire('node:sent', { ttl: 5000, wait: 0 });
    const keys = await dep.keys();
    assert.deepEqual(keys[0], ['node:sent']);
    assert.ok(keys[1].length + keys[2].length >= 1, `a replica acknowledged the grant: ${JSON.stringify(keys)}`);
    await assert.rejects(c.acquire('node:sent', { ttl: 5000, wait: 0 }), NotAcquiredError);
    await l.release();
    await noKeys();
  } finally {
    await c.close();
  }
});

test('waitReplicas: more replicas than there are fails the grant and deletes its key', async () => {
  const c = new Client(withBackend({ nodes: [dep.sentinelUrl], nodeTimeout: 250, waitReplicas: 3 }));
  try {
    await assert.rejects(c.acquire('node:sent3', { ttl: 5000, wait: 0 }), /WAIT/);
    await noKeys();
  } finally {
    await c.close();
  }
});

test('bad waitReplicas and Sentinel URLs are refused naming the parameter', () => {
  for (const w of [-1, 101, 1.5, '1', null]) {
    assert.throws(() => new Client(withBackend({ nodes: [dep.sentinelUrl], waitReplicas: w })),
      (e) => e instanceof InvalidArgumentError && /waitReplicas/.test(e.message), String(w));
  }
  for (const [url, param] of [[`${dep.sentinelUrl}&replica_only=true`, 'replica_only'],
    ['redis://127.0.0.1:1?master_name=', 'master_name'], ['redis://127.0.0.1:1?master_name=m&addr=x', 'addr']]) {
    assert.throws(() => new Client(withBackend({ nodes: [url] })),
      (e) => e instanceof InvalidArgumentError && e.message.includes(param), url);
  }
});
