'use strict';
// The default wait costs nothing when the lock is free: N
// uncontended acquire+release pairs with the default wait send exactly the
// commands N pairs with `wait: 0` send (INFO commandstats on a real 1-node
// server, CONFIG RESETSTAT between): no SUBSCRIBE, no extra PING.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const Redis = require('ioredis');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, withBackend, settled } = require('./helpers');

const N = 50;
let nodes;
let admin;
before(async () => {
  nodes = await startNodes(1);
  admin = new Redis(nodes.urls[0]);
  await admin.ping();
});
after(async () => {
  admin.disconnect();
  await nodes.stop();
  assertNoUnhandled(assert);
});

/** { command: calls } from INFO commandstats (the INFO that reads them left out). */
async function commandCalls() {
  const text = await admin.info('commandstats');
  const calls = {};
  for (const line of text.split('\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+)/.exec(line.trim());
    if (m && m[1] !== 'info') calls[m[1]] = Number(m[2]);
  }
  return calls;
}

async function pairsSent(client, res, opts) {
  await admin.config('RESETSTAT');
  for (let i = 0; i < N; i++) {
    const lock = await client.acquire(res, { ttl: 10000, ...opts });
    await lock.release();
  }
  await settled(); // nothing in flight
  return commandCalls();
}

test(`${N} uncontended pairs with the default wait send exactly the commands of ${N} pairs with wait: 0`, async () => {
  // A roomy node timeout: one timed out on a loaded machine would fail a pair.
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 2000 }));
  try {
    // Connected first: the handshake belongs to neither count.
    await (await client.acquire('cmds:warm', { ttl: 10000, wait: 0 })).release();
    const single = await pairsSent(client, 'cmds:single', { wait: 0 });
    const waiting = await pairsSent(client, 'cmds:default', {});
    assert.ok(Object.keys(single).length > 0, JSON.stringify(single));
    assert.deepEqual(waiting, single, `default wait ${JSON.stringify(waiting)} vs wait: 0 ${JSON.stringify(single)}`);
    assert.equal(waiting.subscribe, undefined);
  } finally {
    await client.close();
  }
});
