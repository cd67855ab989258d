'use strict';
// Names that say what the other languages say: client.backend names the
// engine (as Python's client.backend does), and an observe() item's leader
// is a Leader, as Client#leader gives it (as Go's and Python's observe give
// theirs), not its value string.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, withBackend, BACKEND } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

test(`[${BACKEND}] client.backend names the engine`, async () => {
  const c = new Client(withBackend({ nodes: nodes.urls }));
  assert.equal(c.backend, BACKEND);
  await c.close();
  assert.equal(c.backend, BACKEND, 'still said after close()');
});

test(`[${BACKEND}] an observe() item's leader is the Leader that leader() gives`, async () => {
  const a = new Client(withBackend({ nodes: nodes.urls }));
  const o = new Client(withBackend({ nodes: nodes.urls }));
  try {
    const it = o.observe('names:el');
    assert.equal((await it.next()).value.leader, null, 'nobody leads yet');
    await a.campaign('names:el', { value: 'host-a', ttl: 3000 });
    let item;
    do { item = (await it.next()).value; } while (item.leader === null);
    const now = await o.leader('names:el');
    assert.equal(typeof item.leader, 'object');
    assert.deepEqual(Object.keys(item.leader).sort(), Object.keys(now).sort());
    assert.equal(item.leader.value, 'host-a');
    assert.equal(item.leader.term, now.term);
    assert.equal(item.leader.name, 'names:el');
    await it.return();
  } finally {
    await Promise.all([a.close(), o.close()]);
  }
});
