'use strict';
// UnavailableError names EVERY node that neither granted nor refused, each
// with its cause, in err.nodes (issue 23.2): three nodes all stopped
// (connection refused) → `all 3 nodes failed, quorum is 2` and nodes 0, 1, 2;
// two of three stopped → `2 of 3 nodes failed` and nodes 0, 1.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client, UnavailableError } = require('..');
const { startNodes, assertNoUnhandled, withBackend } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => {
  await nodes.stop();
  assertNoUnhandled(assert);
});

const failure = (p) => p.then((l) => assert.fail(`acquired ${l.key}`), (e) => e);

test('UNAVAILABLE lists every node that failed with its cause: all 3 stopped, then 2 of 3', async () => {
  const urls = nodes.urls;
  const addrs = nodes.nodes.map((n) => `127.0.0.1:${n.port}`);
  const c = new Client(withBackend({ nodes: urls }));
  try {
    await nodes.kill(0);
    await nodes.kill(1);
    const two = await failure(c.acquire('unavail:two', { ttl: 1000, wait: 0 }));
    assert.ok(two instanceof UnavailableError, String(two));
    assert.equal(two.code, 'UNAVAILABLE');
    assert.match(two.message, /2 of 3 nodes failed, quorum is 2/);
    assert.deepEqual(two.nodes.map((n) => [n.node, n.addr]), [[0, addrs[0]], [1, addrs[1]]], JSON.stringify(two.nodes));

    await nodes.kill(2);
    // A fresh client: every node is a new dial, refused (c's connection to
    // node 2 may fail otherwise, "ended by the other party", by the time it writes).
    const fresh = new Client(withBackend({ nodes: urls }));
    const all = await failure(fresh.acquire('unavail:all', { ttl: 1000, wait: 0 })).finally(() => fresh.close());
    assert.ok(all instanceof UnavailableError, String(all));
    assert.equal(all.code, 'UNAVAILABLE');
    assert.match(all.message, /all 3 nodes failed, quorum is 2/);
    assert.equal(all.nodes.length, 3, JSON.stringify(all.nodes));
    assert.deepEqual(all.nodes.map((n) => [n.node, n.addr]), [[0, addrs[0]], [1, addrs[1]], [2, addrs[2]]]);
    for (const n of all.nodes) assert.match(n.cause, /ECONNREFUSED/, JSON.stringify(n));
  } finally {
    await c.close();
  }
});
