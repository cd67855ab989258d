'use strict';
// Two copies of the package in one process (two packages in node_modules
// each depending on liblock, or a copy under another path): both load, and
// their clients work side by side. koffi's type names are global to the
// process, so the second copy's declarations must not collide with the
// first's ("Duplicate type name").
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startNodes, assertNoUnhandled, withBackend, BACKEND, eventually } = require('./helpers');

const test = nodeTest.test;
const pkg = path.join(__dirname, '..');

let nodes;
let dir;
nodeTest.before(async () => {
  nodes = await startNodes(3);
  // The package's JS files under another path, sharing node_modules.
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-copy-'));
  for (const f of ['index.js', 'index.mjs', 'index.d.ts', 'package.json']) fs.copyFileSync(path.join(pkg, f), path.join(dir, f));
  fs.cpSync(path.join(pkg, 'lib'), path.join(dir, 'lib'), { recursive: true });
  fs.symlinkSync(path.join(pkg, 'node_modules'), path.join(dir, 'node_modules'));
});
nodeTest.after(async () => {
  await nodes.stop();
  fs.rmSync(dir, { recursive: true, force: true });
  assertNoUnhandled(assert);
});

test(`[${BACKEND}] two copies of the binding in one process: both load, lock concurrently, exclude each other, close`, async () => {
  const a = require('..');
  const b = require(dir);
  assert.notEqual(a.Client, b.Client, 'two distinct copies');
  const ca = new a.Client(withBackend({ nodes: nodes.urls, nodeTimeout: 500 }));
  const cb = new b.Client(withBackend({ nodes: nodes.urls, nodeTimeout: 500 }));
  if (BACKEND === 'native') assert.equal(a.library().path, b.library().path, 'one liblock.so for both');

  // Both copies contend for one resource, and each also locks its own: no
  // two holders of the shared one ever overlap.
  let holder = null;
  let overlaps = 0;
  const rounds = 25;
  const worker = async (client, name) => {
    for (let i = 0; i < rounds; i++) {
      const own = await client.acquire(`copies:${name}:${i}`, { ttl: 10000 });
      const lock = await client.acquire('copies:shared', { ttl: 10000, wait: 30000 });
      if (holder !== null) overlaps++;
      holder = name;
      await new Promise((r) => setImmediate(r));
      holder = null;
      await lock.release();
      await own.release();
    }
  };
  await Promise.all([worker(ca, 'a'), worker(cb, 'b'), worker(ca, 'a2'), worker(cb, 'b2')]);
  assert.equal(overlaps, 0, 'two holders of copies:shared at once');

  // A lock of one copy blocks the other copy's acquire.
  const held = await ca.acquire('copies:excl', { ttl: 10000 });
  await assert.rejects(cb.acquire('copies:excl', { ttl: 10000, wait: 100 }), (e) => e.code === 'NOT_ACQUIRED' && e instanceof b.NotAcquiredError);
  await held.release();
  await (await cb.acquire('copies:excl', { ttl: 10000 })).release();

  await Promise.all([ca.close(), cb.close()]);
  assert.deepEqual(await nodes.keys(), [[], [], []]);
  for (const m of [a, b]) {
    await eventually(() => { const d = m._debug(BACKEND); return d.pending === 0 && d.submitting === 0; }, { what: 'calls to settle' });
  }
  const d = a._debug(BACKEND);
  if (d.handles !== null) assert.equal(d.handles, 0, 'handles left (counted by the one library both copies share)');
});
