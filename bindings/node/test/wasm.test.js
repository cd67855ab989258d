'use strict';
// What only the wasm backend has: one instance on the main thread for
// every client (no worker), several clients (different node sets) in it,
// the engine's Redis I/O through the host (error replies for the NOSCRIPT
// fallback, the database in the URL), and the synchronous validation giving
// the very messages of the native backend.
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const Redis = require('ioredis');
const liblock = require('..');
const { Client } = liblock;
const { startNodes, assertNoUnhandled, eventually, BACKEND, ROOT, debug } = require('./helpers');

const wasmOnly = BACKEND === 'wasm' ? {} : { skip: 'wasm backend only (scripts/test-wasm.sh)' };
const test = (name, fn) => nodeTest.test(name, wasmOnly, fn);

let nodes;
let redis;
nodeTest.before(async () => {
  if (BACKEND !== 'wasm') return;
  nodes = await startNodes(3);
  redis = nodes.urls.map((u) => new Redis(u, { maxRetriesPerRequest: 1 }));
});
nodeTest.after(async () => {
  if (BACKEND !== 'wasm') return;
  await Promise.all(redis.map((r) => r.quit()));
  await nodes.stop();
  assertNoUnhandled(assert);
});

const wasmClient = (o) => new Client({ backend: 'wasm', nodeTimeout: 100, ...o });

test('no worker thread: every client is an engine in one instance on the main thread', async () => {
  const before = debug();
  const compiled = liblock.library('wasm');
  const a = wasmClient({ nodes: nodes.urls });
  const b = wasmClient({ nodes: nodes.urls.slice(0, 1) });
  assert.equal(debug().worker, false);
  assert.equal(debug().clients, before.clients + 2);
  const la = await a.acquire('wasm:life', { ttl: 5000 });
  const lb = await b.acquire('wasm:life:b', { ttl: 5000 });
  await la.release();
  await a.close();
  await lb.release();
  await b.close();
  assert.equal(debug().clients, before.clients);
  assert.equal(debug().handles, before.handles);
  const c = wasmClient({ nodes: nodes.urls });
  const lc = await c.acquire('wasm:life', { ttl: 5000 });
  await lc.release();
  await c.close();
  assert.equal(liblock.library('wasm').compileMs, compiled.compileMs, 'compiled once per process');
  assert.deepEqual(await nodes.keys(), [[], [], []]);
});

test('a process with an idle open client (and a held lock) still exits by itself', async () => {
  const code = `
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    (async () => {
      const c = new Client({ nodes: ${JSON.stringify(nodes.urls)}, backend: 'wasm', nodeTimeout: 100 });
      const l = await c.acquire('wasm:exit', { ttl: 2000 });
      await l.release();
      await c.acquire('wasm:exit:held', { ttl: 500, autoExtend: true });
      console.log('done');
    })();`;
  const out = await new Promise((resolve, reject) => {
    execFile(process.execPath, ['-e', code], { timeout: 30000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`the process did not exit cleanly: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
  assert.equal(out.trim(), 'done');
  // The held lock was released as the process ended (test/exit.test.js).
  await eventually(async () => (await nodes.keys()).every((k) => k.length === 0), { what: 'the held key to be released' });
});

test('long keys and long error texts pass through the step buffers', async () => {
  const c = wasmClient({ nodes: nodes.urls, keyPrefix: 'p'.repeat(200) });
  const l = await c.acquire('wasm:big:'.padEnd(1000, 'x'), { ttl: 5000 });
  await eventually(async () => (await redis[0].get(l.key)) === l.token, { what: 'the key on node 0' });
  await l.release();
  const dead = wasmClient({ nodes: ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'] });
  await assert.rejects(dead.acquire('wasm:big', { ttl: 1000, wait: 0 }), (e) => e.code === 'UNAVAILABLE' && /ECONNREFUSED/.test(e.message));
  await dead.close();
  await c.close();
  assert.deepEqual(await nodes.keys(), [[], [], []]);
});

test('clients with different node sets share the instance; each talks to its own nodes', async () => {
  const all = wasmClient({ nodes: nodes.urls });
  const first = wasmClient({ nodes: nodes.urls.slice(0, 1) });
  const dead = wasmClient({ nodes: ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', nodes.urls[2]] });
  const [a, f, d] = await Promise.allSettled([
    all.acquire('wasm:sets:a', { ttl: 5000 }),
    first.acquire('wasm:sets:f', { ttl: 5000 }),
    dead.acquire('wasm:sets:d', { ttl: 5000, wait: 0 }),
  ]);
  assert.equal(a.status, 'fulfilled');
  assert.equal(f.status, 'fulfilled');
  assert.equal(d.status, 'rejected');
  assert.equal(d.reason.code, 'UNAVAILABLE');
  // An acquire returns at a quorum and a failed one cleans up after it
  // returned: wait for the last nodes' commands.
  const want = JSON.stringify([['wasm:sets:a', 'wasm:sets:f'], ['wasm:sets:a'], ['wasm:sets:a']]);
  let keys;
  await eventually(async () => JSON.stringify((keys = await nodes.keys()).map((k) => k.sort())) === want,
    { what: `keys ${want} (last: ${JSON.stringify(keys)})` });
  await a.value.release();
  await f.value.release();
  await Promise.all([all.close(), first.close(), dead.close()]);
  assert.deepEqual(await nodes.keys(), [[], [], []]);
});

test('error replies reach the module verbatim: release falls back from EVALSHA to EVAL after SCRIPT FLUSH', async () => {
  const c = wasmClient({ nodes: nodes.urls });
  const l1 = await c.acquire('wasm:noscript', { ttl: 5000 });
  await l1.release(); // loads the script
  const l2 = await c.acquire('wasm:noscript', { ttl: 5000 });
  await Promise.all(redis.map((r) => r.script('FLUSH')));
  await l2.extend(5000); // NOSCRIPT → EVAL
  await l2.release();
  await c.close(); // waits for the last node's reply (release returned at a quorum)
  assert.deepEqual(await nodes.keys(), [[], [], []]);
});

test('the database number in a node URL is used', async () => {
  const c = wasmClient({ nodes: nodes.urls.map((u) => `${u}/3`) });
  const l = await c.acquire('wasm:db', { ttl: 5000 });
  const db3 = new Redis(`${nodes.urls[0]}/3`);
  await eventually(async () => (await db3.get('wasm:db')) === l.token, { what: 'the token in db 3 of node 0' });
  assert.equal(await redis[0].get('wasm:db'), null, 'not in db 0');
  await l.release();
  await eventually(async () => (await db3.get('wasm:db')) === null, { what: 'the key gone from db 3' });
  await db3.quit();
  await c.close();
});

test('new Client() validates synchronously with the module: the native backend\'s messages', (t) => {
  const bad = [
    { nodes: [] },
    { nodes: ['http://x'] },
    { nodes: ['redis://127.0.0.1:1'], nodeTimeout: 0 },
    { nodes: ['redis://127.0.0.1:1'], nodeTimeout: 60001 },
    { nodes: ['redis://127.0.0.1:1'], driftFactor: 0.5 },
    { nodes: ['redis://127.0.0.1:1'], keyPrefix: 'p'.repeat(257) },
    { nodes: Array(65).fill('redis://127.0.0.1:1') },
    { nodes: ['redis://u:secret@127.0.0.1:notaport'] },
  ];
  const messageOf = (o) => {
    try { new Client(o); } catch (e) { assert.equal(e.code, 'INVALID_ARGUMENT', e.message); return e.message; }
    assert.fail(`accepted ${JSON.stringify(o)}`);
    return null;
  };
  const haveNative = fs.existsSync(process.env.LIBLOCK_PATH || path.join(ROOT, 'build', 'liblock.so'));
  for (const o of bad) {
    const w = messageOf({ ...o, backend: 'wasm' });
    assert.doesNotMatch(w, /secret/, 'no password in messages');
    if (haveNative) assert.equal(w, messageOf({ ...o, backend: 'native' }), JSON.stringify(o));
  }
  if (!haveNative) t.diagnostic('build/liblock.so missing: messages not compared with the native backend');
  assert.equal(debug().clients, 0, 'no client was made');
});

test('a frozen node costs the node timeout, not a hang; the others carry the quorum', async () => {
  const c = wasmClient({ nodes: nodes.urls, nodeTimeout: 150 });
  await nodes.freeze(0);
  try {
    const lock = await c.acquire('wasm:frozen', { ttl: 1000 });
    assert.ok(lock.validity > 0);
    await lock.release();
  } finally {
    await nodes.thaw(0);
  }
  // A SET NX that sat in node 0's socket runs at the thaw; if nothing
  // deleted it after, it expires with its ttl.
  await eventually(async () => (await redis[0].exists('wasm:frozen')) === 0, { timeout: 5000, what: 'a late SET on the thawed node to expire' });
  // The thawed node answers again (a fresh connection: the timed-out one was dropped).
  const lock = await c.acquire('wasm:frozen', { ttl: 5000 });
  // (acquire resolves once a quorum granted: node 0's SET may land just after)
  await eventually(async () => (await redis[0].get('wasm:frozen')) === lock.token, { what: 'the token on node 0' });
  await lock.release();
  await c.close();
});
