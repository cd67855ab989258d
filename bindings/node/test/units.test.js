'use strict';
// Units, defaults and the names in error messages: every duration
// is milliseconds; a ttl shorter than 3 × the client's nodeTimeout (ttl: 60
// meaning sixty seconds) is refused naming both and the unit; every message
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
  await assert.rejects(lock.extend(299), names('ttl', /shorter than 300 ms, 3 × nodeTimeout \(100 ms\)/));
  await lock.extend(300); // 3 × nodeTimeout: fine
  await lock.release();
});

test('a ttl shorter than 3 × nodeTimeout is refused (acquire, using, extend), naming both, the reason and the unit', async () => {
  const c = new Client(withBackend({ nodes: nodes.urls })); // default nodeTimeout 50
  const msg = 'liblock: invalid argument: ttl: 60 ms is shorter than 150 ms, 3 × nodeTimeout (50 ms): a lock must outlast ' +
    'an acquire round and, auto-extended, an extension round every ttl/3; write ttl: 60000 for 60 s';
  // ttl: 60 meant as sixty seconds is sixty milliseconds here.
  await assert.rejects(c.acquire('report', { ttl: 60 }), (e) => names('ttl')(e) && e.message === msg);
  await assert.rejects(c.using('report', { ttl: 60 }, () => 1), (e) => names('ttl')(e) && e.message === msg);
  await assert.rejects(c.acquire('report', { ttl: 149, autoExtend: true }), names('ttl', /shorter than 150 ms/));
  await assert.rejects(c.acquire('report', { ttl: 50 }), names('ttl', /shorter than 150 ms/)); // once enough: one node request
  const ok = await c.acquire('report', { ttl: 150, wait: 0 }); // exactly 3 × nodeTimeout: fine
  await assert.rejects(ok.extend(60), (e) => names('ttl')(e) && e.message === msg);
  await ok.release().catch((e) => { if (e.code !== 'LOST') throw e; });
  await c.close();
  // The minimum follows the client's nodeTimeout; a ttl whose seconds reading is out of range gets no hint.
  await assert.rejects(client.acquire('report', { ttl: 10 }),
    names('ttl', /ttl: 10 ms is shorter than 300 ms, 3 × nodeTimeout \(100 ms\).*write ttl: 10000 for 10 s$/));
  const slow = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 60000 }));
  await assert.rejects(slow.acquire('report', { ttl: 100000 }), names('ttl', /shorter than 180000 ms.*durations are milliseconds$/));
  await slow.close();
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
