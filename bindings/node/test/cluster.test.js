'use strict';
// A Redis Cluster node (a URL with cluster=yes: the engine routes by slot),
// on both backends, against a real cluster from build/redisnodes -cluster:
// 3 primaries (nodes 0-2) with a replica each. Migrations and failovers are
// tested in Go (core/cluster_test.go), on the same engine.
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const { Client, NotAcquiredError, InvalidArgumentError } = require('..');
const { startNodes, withBackend, waitFor, assertNoUnhandled } = require('./helpers');

const test = nodeTest.test;
let dep;
nodeTest.before(async () => { dep = await startNodes(3, ['-cluster']); });
nodeTest.after(async () => { await dep.stop(); });
assertNoUnhandled(assert);

const noKeys = async () => waitFor(async () => (await dep.keys()).every((k) => k.length === 0), { what: 'no key left' });

test('acquire and release on a cluster node: the key wrapped in a hash tag, on one primary and its replica', async () => {
  const c = new Client(withBackend({ nodes: [dep.clusterUrl], nodeTimeout: 3000 }));
  try {
    const l = await c.acquire('node:clu', { ttl: 10000, wait: 0 });
    assert.equal(l.key, '{node:clu}');
    const keys = await dep.keys();
    const holding = keys.filter((k) => k.includes('{node:clu}')).length;
    assert.equal(holding, 2, `the primary and, WAIT 1 by default, its replica: ${JSON.stringify(keys)}`);
    await assert.rejects(c.acquire('node:clu', { ttl: 10000, wait: 0 }), NotAcquiredError);
    await l.release();
    await noKeys();
  } finally {
    await c.close();
  }
});

test('bad cluster URLs are refused naming the parameter', () => {
  for (const [url, param] of [[`${dep.clusterUrl}&master_name=m`, 'master_name'],
    [`${dep.clusterUrl}&db=1`, 'db'], ['redis://127.0.0.1:1?cluster=maybe', 'cluster']]) {
    assert.throws(() => new Client(withBackend({ nodes: [url] })),
      (e) => e instanceof InvalidArgumentError && e.message.includes(param), url);
  }
});

test('a cluster client asks the engine for a mutex key once per resource; other locks and other resources still get theirs', async () => {
  const { Host } = require('../lib/host');
  const c = new Client(withBackend({ nodes: [dep.clusterUrl], nodeTimeout: 3000, keyPrefix: 'p:', waitReplicas: 0 }));
  const info = Host.prototype.info;
  let asked = 0;
  Host.prototype.info = function (st) { asked++; return info.call(this, st); };
  try {
    const keyOf = async (resource, opts = {}) => {
      const l = await c.acquire(resource, { ttl: 10000, wait: 0, ...opts });
      const k = l.key;
      await l.release();
      return k;
    };
    assert.equal(await keyOf('a'), '{p:a}');
    assert.equal(asked, 1, 'the first mutex of a resource asks the engine');
    assert.equal(await keyOf('a'), '{p:a}');
    assert.equal(asked, 1, 'the second one of the same resource does not');
    assert.equal(await keyOf('x{t}y'), 'p:x{t}y', 'a resource with its own hash tag keeps it');
    assert.equal(asked, 2);
    // A semaphore's key is derived further by the engine: never the mutex's.
    const sem = await keyOf('a', { permits: 2 });
    assert.ok(sem.startsWith('{p:a}') && sem !== '{p:a}', `semaphore key ${JSON.stringify(sem)}`);
    assert.equal(asked, 3, 'a semaphore asks each time');
    await keyOf('a', { permits: 2 });
    assert.equal(asked, 4);
    await noKeys();
  } finally {
    Host.prototype.info = info;
    await c.close();
  }
});
