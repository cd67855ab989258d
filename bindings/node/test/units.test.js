'use strict';
// Units, defaults and the names in error messages: every duration
// is milliseconds; a ttl too short for the round trip to the nodes fails
// with an UnavailableError naming the ttl and the node timeout; every message
// names the caller's option (ttl, wait, nodeTimeout, ...), never the C ABI's
// (ttl_ms, wait_ms, node_timeout_ms); acquire() waits DEFAULT_WAIT (10 s) by
// default and wait: 0 is one attempt; releasing twice is LOST, as in Go, C
// and Python.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const liblock = require('..');
const { startNodes, assertNoUnhandled, withBackend } = require('./helpers');

const { Client, InvalidArgumentError, LockLostError } = liblock;
const C_NAMES = /ttl_ms|wait_ms|node_timeout_ms|drift_factor|key_prefix/;

let nodes;
let client;
before(async () => {
  nodes = await startNodes(1);
  client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 100 }));
});
after(async () => {
  await client.close();
  await nodes.stop();
  assertNoUnhandled(assert);
});

// The error is an InvalidArgumentError whose message names `name` (as a whole
// word) and no C ABI name.
const names = (name, also) => (e) => {
  assert.ok(e instanceof InvalidArgumentError, String(e));
  assert.equal(e.code, 'INVALID_ARGUMENT');
  assert.match(e.message, new RegExp(`\\b${name}\\b`), e.message);
  assert.doesNotMatch(e.message, C_NAMES, e.message);
  if (also) assert.match(e.message, also, e.message);
  return true;
};

test('Client options out of range name the option, in ms', () => {
  const u = nodes.urls;
  const cases = [
    [{ nodes: u, nodeTimeout: 0 }, 'nodeTimeout', /milliseconds/],
    [{ nodes: u, nodeTimeout: -5 }, 'nodeTimeout', /milliseconds/],
    [{ nodes: u, nodeTimeout: 60001 }, 'nodeTimeout', /60000 ms/],
    [{ nodes: u, driftFactor: 0.5 }, 'driftFactor'],
    [{ nodes: u, driftFactor: -0.1 }, 'driftFactor'],
    [{ nodes: u, keyPrefix: 'k'.repeat(257) }, 'keyPrefix', /256 bytes/],
    [{ nodes: [] }, 'nodes', /1 to 64/],
    [{ nodes: Array(65).fill(u[0]) }, 'nodes', /1 to 64/],
  ];
  for (const [o, name, also] of cases) assert.throws(() => new Client(withBackend(o)), names(name, also), name);
  const c = new Client(withBackend({ nodes: u }));
  assert.equal(c.nodeTimeout, 50); // the default
  c.close();
});

test('acquire and extend arguments out of range name the option, in ms', async () => {
  const cases = [
    ['r', { ttl: 0 }, 'ttl'],
    ['r', { ttl: 86400001 }, 'ttl', /86400000 ms/],
    ['r', { ttl: 1000, wait: -1 }, 'wait'],
    ['r', { ttl: 1000, wait: 86400001 }, 'wait'],
    ['r', { ttl: 0.5 }, 'ttl', /milliseconds/],
    ['', { ttl: 1000 }, 'resource', /empty/],
    ['r'.repeat(1025), { ttl: 1000 }, 'resource', /1024 bytes/],
    ['é'.repeat(513), { ttl: 1000 }, 'resource', /1026/],
  ];
  for (const [r, o, name, also] of cases) {
    await assert.rejects(client.acquire(r, o), names(name, also), `${name} ${JSON.stringify(o)}`);
    await assert.rejects(client.using(r, o, () => 1), names(name, also), `using ${name}`);
  }
  const lock = await client.acquire('units:extend', { ttl: 5000 });
  await assert.rejects(lock.extend(0), names('ttl'));
  await assert.rejects(lock.extend(86400001), names('ttl'));
  await lock.extend(150); // no minimum in node timeouts
  await lock.release();
});

test('a ttl out of range is the engine\'s refusal, naming ttl in ms (acquire, using, extend, campaign)', async () => {
  const at = (word, limit, got) => `liblock: invalid argument: ttl: must be ${word} ${limit}, got ${got}`;
  const low = at('at least', '1 ms', '0 ms');
  const high = at('at most', '86400000 ms (86400 s)', '86400001 ms');
  for (const [ttl, msg] of [[0, low], [-5, at('at least', '1 ms', '-5 ms')], [86400001, high]]) {
    await assert.rejects(client.acquire('units:range', { ttl }), (e) => names('ttl')(e) && e.message === msg, `acquire ${ttl}`);
    await assert.rejects(client.using('units:range', { ttl }, () => 1), (e) => names('ttl')(e) && e.message === msg, `using ${ttl}`);
    await assert.rejects(client.campaign('units:range', { value: 'v', ttl }), (e) => names('ttl')(e) && e.message === msg, `campaign ${ttl}`);
  }
  const lock = await client.acquire('units:range', { ttl: 5000 });
  await assert.rejects(lock.extend(0), (e) => names('ttl')(e) && e.message === low);
  await assert.rejects(lock.extend(86400001), (e) => names('ttl')(e) && e.message === high);
  await lock.release();
});

test('a ttl too short for the round trip fails naming the ttl and the node timeout; none is refused for its length', async () => {
  const c = new Client(withBackend({ nodes: nodes.urls })); // default nodeTimeout 50
  // 2 ms less its clock-drift allowance (2 ms and 1 %) leaves no validity, however fast the node.
  for (const o of [{ ttl: 2, wait: 0 }, { ttl: 2, wait: 0, fence: true }, { ttl: 2, wait: 0, permits: 2 }]) {
    await assert.rejects(c.acquire('units:short', o), (e) => {
      assert.equal(e.code, 'UNAVAILABLE', e.message);
      assert.match(e.message, /too slowly for the ttl: .*a 2ms ttl.*node timeout \(50ms\): give a longer ttl$/);
      return true;
    }, JSON.stringify(o));
  }
  // A short ttl the round fits in is a lock (the engine decides by the grant's validity).
  const ok = await c.acquire('units:short', { ttl: 60, wait: 0 });
  await ok.release().catch((e) => { if (e.code !== 'LOST') throw e; });
  await c.close();
});

test('default wait: DEFAULT_WAIT (10 s); wait: 0 is one attempt', async () => {
  assert.equal(liblock.DEFAULT_WAIT, 10000);
  // A holder that never releases: its key expires after 1 s.
  const held = await client.acquire('units:wait', { ttl: 1000, wait: 0 });
  await assert.rejects(client.acquire('units:wait', { ttl: 5000, wait: 0 }), { code: 'NOT_ACQUIRED' });
  await assert.rejects(client.using('units:wait', { ttl: 5000, wait: 0 }, () => 1), { code: 'NOT_ACQUIRED' });
  const lock = await client.acquire('units:wait', { ttl: 5000 }); // waits out the holder's ttl
  assert.notEqual(lock.token, held.token);
  await lock.release();
  const v = await client.using('units:wait', { ttl: 5000 }, () => 7); // free: no wait at all
  assert.equal(v, 7);
});

test('release twice (and extend after release) is LOST, as in Go, C and Python', async () => {
  const lock = await client.acquire('units:twice', { ttl: 5000 });
  await lock.release();
  await assert.rejects(lock.release(), (e) => e instanceof LockLostError && e.code === 'LOST' && e.status === 2);
  await assert.rejects(lock.extend(5000), (e) => e instanceof LockLostError && e.code === 'LOST');
});

test('the default export is the module, LoadError and DEFAULT_WAIT included (CJS and ESM)', async () => {
  assert.equal(liblock.default, liblock);
  assert.ok(!Object.keys(liblock).includes('default'));
  assert.equal('_debugPanic' in liblock, false, 'the panic switch is not public');
  const esm = await import('../index.mjs');
  assert.equal(esm.default, liblock);
  assert.equal(esm.LoadError, liblock.LoadError);
  assert.equal(esm.DEFAULT_WAIT, 10000);
  assert.equal(esm.default.LoadError, liblock.LoadError);
});
