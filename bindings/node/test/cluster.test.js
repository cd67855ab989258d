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
