'use strict';
// Where liblock.so or koffi cannot go (macOS, Windows, musl, sandboxes, a
// failed optional install), the package must still install, load and run
// the wasm backend; the native backend must fail with a LoadError that says
// what is missing and names backend: 'wasm'. Each case runs in a child
// process (koffi and the library load once per process).
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startNodes, assertNoUnhandled, ROOT } = require('./helpers');

const test = nodeTest.test;
const pkg = path.join(__dirname, '..');
const NO_KOFFI = path.join(__dirname, 'fixtures', 'no-koffi.js');
const WASM = process.env.LIBLOCK_WASM_PATH || path.join(ROOT, 'build', 'liblock.wasm');

let nodes;
nodeTest.before(async () => { nodes = await startNodes(1); });
nodeTest.after(async () => {
  await nodes.stop();
  assertNoUnhandled(assert);
});

// Runs `body` (an async function body; `liblock` and `url` are in scope)
// in a child process; resolves with what it printed as JSON.
function child(body, { env = {}, preload = null } = {}) {
  const code = `
const liblock = require(${JSON.stringify(pkg)});
const url = ${JSON.stringify(nodes.urls[0])};
const out = {};
process.on('unhandledRejection', (e) => { out.unhandled = String(e); });
(async () => { ${body} })().then(
  () => { console.log(JSON.stringify(out)); },
  (e) => { console.log(JSON.stringify({ ...out, threw: String(e && e.stack || e) })); process.exitCode = 3; });
`;
  const baseEnv = { ...process.env, LIBLOCK_WASM_PATH: WASM, ...env };
  delete baseEnv.LIBLOCK_BACKEND;
  const args = [...(preload ? ['--require', preload] : []), '-e', code];
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { env: baseEnv, encoding: 'utf8', timeout: 60000 }, (err, stdout, stderr) => {
      if (err) { reject(new Error(`child failed (${err.message}):\n${stdout}\n${stderr}`)); return; }
      try { resolve(JSON.parse(stdout.trim().split('\n').pop())); } catch { reject(new Error(`no result:\n${stdout}\n${stderr}`)); }
    });
  });
}

const nativeAttempt = `
  try { new liblock.Client({ nodes: [url], backend: 'native' }); out.native = 'created'; } catch (e) {
    out.native = { name: e.name, code: e.code, message: e.message, lockError: e instanceof liblock.LockError, loadError: e instanceof liblock.LoadError };
  }
  try { liblock.library('native'); out.library = 'loaded'; } catch (e) { out.library = e.code; }
`;

// A client naming no backend where the native library does not load: the
// wasm backend runs and locks (a second client cannot take the key), the
// warning comes once for the process, library() says which and why, and
// backend: 'native' still throws.
const fallsBack = `
  out.warnings = [];
  process.on('warning', (w) => { out.warnings.push({ name: w.name, code: w.code, message: w.message }); });
  out.held = [];
  for (let i = 0; i < 2; i++) {
    const c = new liblock.Client({ nodes: [url], nodeTimeout: 500 });
    const lock = await c.acquire('port:fallback', { ttl: 10000, wait: 5000 });
    const other = new liblock.Client({ nodes: [url], nodeTimeout: 500, backend: 'wasm' });
    try { await other.acquire('port:fallback', { ttl: 10000, wait: 0 }); out.held.push(false); } catch (e) { out.held.push(e.code); }
    await other.close();
    await lock.release();
    await c.close();
  }
  const info = liblock.library();
  out.library = { backend: info.backend, path: info.path, abiVersion: info.abiVersion, fallbackReason: info.fallbackReason };
  await new Promise((r) => setImmediate(r)); // warnings are emitted on the next tick
  try { new liblock.Client({ nodes: [url], backend: 'native' }); out.native = 'created'; } catch (e) { out.native = e.code; }
`;

function assertFellBack(r) {
  assert.equal(r.threw, undefined, r.threw);
  assert.equal(r.unhandled, undefined);
  assert.deepEqual(r.held, ['NOT_ACQUIRED', 'NOT_ACQUIRED'], 'the fallback client took the lock in Redis');
  assert.equal(r.warnings.length, 1, JSON.stringify(r.warnings)); // once, though two clients were made
  assert.equal(r.warnings[0].code, 'LIBLOCK_NATIVE_UNAVAILABLE');
  assert.equal(r.warnings[0].name, 'LiblockWarning');
  assert.match(r.warnings[0].message, /running the wasm backend/);
  assert.match(r.warnings[0].message, /backend: 'wasm'.*backend: 'native'/);
  assert.equal(r.library.backend, 'wasm');
  assert.equal(r.library.path, WASM);
  assert.equal(r.library.abiVersion, 1);
  assert.equal(r.native, 'LOAD_FAILED');
}


test('without koffi (require throws) and without liblock.so: the wasm backend works; the native one fails with LoadError', async () => {
  const r = await child(`
    out.koffiAtLoad = globalThis.__koffiRequires;
    const esm = await import(${JSON.stringify(path.join(pkg, 'index.mjs'))});
    out.esm = typeof esm.Client === 'function' && esm.LoadError === liblock.LoadError;
    const c = new liblock.Client({ nodes: [url], backend: 'wasm', nodeTimeout: 500 });
    const lock = await c.acquire('port:nokoffi', { ttl: 10000, wait: 5000 });
    out.held = typeof lock.token === 'string' && lock.token.length > 0 && !lock.lost && lock.validity > 0;
    await lock.release();
    await c.close();
    out.wasmPath = liblock.library('wasm').path;
    out.koffiAfterWasm = globalThis.__koffiRequires;
    ${nativeAttempt}
    out.koffiAfterNative = globalThis.__koffiRequires;
    // The wasm backend still works after the native backend failed.
    const d = new liblock.Client({ nodes: [url], backend: 'wasm' });
    await (await d.acquire('port:nokoffi:2', { ttl: 10000 })).release();
    await d.close();
  `, { preload: NO_KOFFI, env: { LIBLOCK_PATH: '/nonexistent/liblock.so' } });
  assert.equal(r.threw, undefined, r.threw);
  assert.equal(r.unhandled, undefined);
  assert.equal(r.koffiAtLoad, 0, 'loading the package must not require koffi');
  assert.equal(r.esm, true, 'the ESM entry loads without koffi');
  assert.equal(r.held, true);
  assert.equal(r.wasmPath, WASM);
  assert.equal(r.koffiAfterWasm, 0, 'the wasm backend must never require koffi');
  assert.equal(r.native.code, 'LOAD_FAILED');
  assert.equal(r.native.name, 'LoadError');
  assert.equal(r.native.lockError, true);
  assert.equal(r.native.loadError, true);
  assert.match(r.native.message, /needs the koffi package, which cannot be loaded \(Cannot find module 'koffi'\)/);
  assert.match(r.native.message, /optional dependency/);
  assert.match(r.native.message, /backend: 'wasm'/);
  assert.equal(r.library, 'LOAD_FAILED');
  assert.ok(r.koffiAfterNative >= 1, 'the native backend did try koffi');
  assert.deepEqual(await nodes.keys(), [[]]);
});

test('koffi present, LIBLOCK_PATH pointing nowhere: LoadError naming the path and backend: \'wasm\'', async () => {
  const r = await child(nativeAttempt, { env: { LIBLOCK_PATH: '/nonexistent/liblock.so' } });
  assert.equal(r.native.code, 'LOAD_FAILED');
  assert.match(r.native.message, /LIBLOCK_PATH=\/nonexistent\/liblock\.so does not exist/);
  assert.match(r.native.message, /backend: 'wasm'/);
  assert.equal(r.library, 'LOAD_FAILED');
});

test('a liblock.so that cannot be loaded (wrong platform, corrupt): LoadError naming the file and backend: \'wasm\'', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-badso-'));
  const bad = path.join(dir, 'liblock.so');
  fs.writeFileSync(bad, 'not an ELF file\n');
  try {
    const r = await child(nativeAttempt, { env: { LIBLOCK_PATH: bad } });
    assert.equal(r.native.code, 'LOAD_FAILED');
    assert.match(r.native.message, new RegExp(`cannot load ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(LIBLOCK_PATH\\)`));
    assert.match(r.native.message, /backend: 'wasm'/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('no backend named, no koffi, no liblock.so: the wasm backend runs, warned once', async () => {
  const r = await child(fallsBack, { preload: NO_KOFFI, env: { LIBLOCK_PATH: '/nonexistent/liblock.so' } });
  assertFellBack(r);
  assert.match(r.library.fallbackReason, /needs the koffi package/);
  assert.deepEqual(await nodes.keys(), [[]]);
});

test('no backend named, a liblock.so that does not load: the wasm backend runs, warned once', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-badso-'));
  const bad = path.join(dir, 'liblock.so');
  fs.writeFileSync(bad, 'not an ELF file\n');
  try {
    const r = await child(fallsBack, { env: { LIBLOCK_PATH: bad } });
    assertFellBack(r);
    assert.match(r.library.fallbackReason, /cannot load .*liblock\.so \(LIBLOCK_PATH\)/);
    assert.match(r.warnings[0].message, /cannot load /);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  assert.deepEqual(await nodes.keys(), [[]]);
});

test('no backend named where the native library loads: native, no warning', async () => {
  const r = await child(`
    out.warnings = [];
    process.on('warning', (w) => { out.warnings.push(w.code); });
    const c = new liblock.Client({ nodes: [url], nodeTimeout: 500 });
    await (await c.acquire('port:native-default', { ttl: 10000 })).release();
    await c.close();
    const info = liblock.library();
    out.backend = info.backend;
    out.same = info.path === liblock.library('native').path;
    out.fallbackReason = info.fallbackReason;
    await new Promise((r) => setImmediate(r));
  `);
  assert.equal(r.threw, undefined, r.threw);
  assert.deepEqual(r.warnings, []);
  assert.equal(r.backend, 'native');
  assert.equal(r.same, true);
  assert.equal(r.fallbackReason, null);
});

test('no backend named and neither backend runs: one LoadError naming both reasons', async () => {
  const r = await child(`
    for (const f of [() => new liblock.Client({ nodes: [url] }), () => liblock.library()]) {
      try { f(); out.created = true; } catch (e) { (out.errors = out.errors || []).push({ code: e.code, message: e.message }); }
    }
  `, { preload: NO_KOFFI, env: { LIBLOCK_PATH: '/nonexistent/liblock.so', LIBLOCK_WASM_PATH: '/nonexistent/liblock.wasm' } });
  assert.equal(r.created, undefined);
  assert.equal(r.errors.length, 2);
  for (const e of r.errors) {
    assert.equal(e.code, 'LOAD_FAILED');
    assert.match(e.message, /no backend runs here: the native library does not load \(.*koffi/);
    assert.match(e.message, /LIBLOCK_WASM_PATH=\/nonexistent\/liblock\.wasm does not exist/);
  }
});

test('package.json: installable on every OS; koffi optional; package-lock.json agrees', () => {
  const p = JSON.parse(fs.readFileSync(path.join(pkg, 'package.json'), 'utf8'));
  const lock = JSON.parse(fs.readFileSync(path.join(pkg, 'package-lock.json'), 'utf8'));
  assert.equal(p.os, undefined, 'no "os" restriction: npm install must work where only the wasm backend runs');
  assert.equal(p.cpu, undefined);
  assert.equal((p.dependencies || {}).koffi, undefined, 'koffi is not a hard dependency');
  assert.equal(p.optionalDependencies.koffi, '3.3.4');
  // No code at runtime: the host does its own I/O with node:net and node:tls.
  // Not even Node's type declarations (2.8 MB): index.d.ts needs none, and
  // @types/node is an optional peer dependency.
  assert.equal(p.dependencies, undefined, 'no runtime dependency');
  // @opentelemetry/api too: an optional peer, loaded only when installed (README, "Metrics, traces and logs").
  assert.deepEqual(p.peerDependencies, { '@types/node': '>=18', '@opentelemetry/api': '>=1.4.0 <2' });
  assert.deepEqual(p.peerDependenciesMeta, { '@types/node': { optional: true }, '@opentelemetry/api': { optional: true } });
  assert.equal(p.devDependencies.ioredis, '5.9.3', 'ioredis only observes Redis in the tests');
  const root = lock.packages[''];
  assert.deepEqual(root.dependencies, p.dependencies);
  assert.deepEqual(root.peerDependencies, p.peerDependencies);
  assert.equal(lock.packages['node_modules/@types/node'].dev, true, '@types/node: dev only');
  assert.deepEqual(root.optionalDependencies, p.optionalDependencies);
  assert.equal(root.os, undefined);
  assert.equal(lock.packages['node_modules/koffi'].version, '3.3.4');
  assert.equal(lock.packages['node_modules/koffi'].optional, true);
});
