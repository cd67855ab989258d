'use strict';
// The first call of a fresh client with frozen nodes (SIGSTOP: they accept
// connections and never answer) ends on the engine's connect deadline, one
// node timeout, like every later call: one of three frozen, it is granted
// by the other two; two of three frozen, it is UNAVAILABLE and each frozen
// node's cause is that deadline.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, withBackend, BACKEND } = require('./helpers');

const DEADLINE = 'connect: no answer within the node timeout (500ms)';

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

const fresh = () => new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 500 }));

test(`[${BACKEND}] the first call with one frozen node of three is granted`, async () => {
  await nodes.freeze(2);
  const c = fresh();
  try {
    const lock = await c.acquire('first:one', { ttl: 5000, wait: 0 });
    assert.ok(lock.validity > 0);
    await lock.release();
  } finally {
    await c.close();
    await nodes.thaw(2);
  }
});

test(`[${BACKEND}] the first call with two frozen nodes of three ends on their connect deadline`, async () => {
  await nodes.freeze(1);
  await nodes.freeze(2);
  const c = fresh();
  try {
    await assert.rejects(c.acquire('first:two', { ttl: 5000, wait: 0 }), (e) => {
      assert.equal(e.code, 'UNAVAILABLE', e.message);
      const causes = Object.fromEntries(e.nodes.map((n) => [n.node, n.cause]));
      assert.deepEqual(Object.keys(causes).sort(), ['1', '2'], e.message);
      for (const i of [1, 2]) assert.ok(causes[i].includes(DEADLINE), causes[i]);
      return true;
    });
  } finally {
    await c.close();
    await nodes.thaw(1);
    await nodes.thaw(2);
  }
});
