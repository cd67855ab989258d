'use strict';
// One of five nodes frozen (SIGSTOP: it accepts connections and never
// answers): every operation still succeeds on the other four, on both
// backends. The engine decides as soon as a quorum answered; the frozen
// node's requests time out in the background (bench.js shows the latency).
// The node timeout is generous: what is tested is success, not speed, on a
// machine that may be busy.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, withBackend, eventually } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(5); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

test('one frozen node of five: acquire, extend and release succeed, again and again', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 250 }));
  // Connected before the freeze, then frozen: requests sit in its socket.
  await (await client.acquire('frozen:warm', { ttl: 5000 })).release();
  await nodes.freeze(3);
  try {
    for (let i = 0; i < 20; i++) {
      const lock = await client.acquire('frozen:r', { ttl: 5000, autoExtend: i % 2 === 0 });
      assert.ok(lock.validity > 0);
      await lock.extend(5000);
      await lock.release();
    }
    // A second client connects while the node is frozen.
    const fresh = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 250 }));
    const lock = await fresh.acquire('frozen:fresh', { ttl: 5000 });
    await lock.release();
    await fresh.close();
  } finally {
    await nodes.thaw(3);
  }
  await client.close();
  // Late SETs that reached the frozen node at its thaw expire by their ttl.
  await eventually(async () => (await nodes.keys()).every((k) => k.length === 0), { what: 'no keys left', timeout: 15000 });
});
