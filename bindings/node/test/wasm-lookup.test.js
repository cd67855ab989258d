'use strict';
// liblock.wasm lookup (backend: 'wasm' only): LIBLOCK_WASM_PATH, else the
// repository's build/liblock.wasm, else the packaged copy; clear errors for
// a missing file, a file that is not WebAssembly, a module that is not
// liblock and an ABI mismatch. Each case runs in a fresh process.
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, BACKEND } = require('./helpers');

const test = BACKEND === 'wasm' ? nodeTest.test
  : (name, fn) => nodeTest.test(name, { skip: 'liblock.wasm lookup: wasm backend only (scripts/test-wasm.sh)' }, fn);

const pkg = path.join(__dirname, '..');
const WASM = path.join(ROOT, 'build', 'liblock.wasm');

function run(code, env, cwd) {
  const e = { ...process.env, ...env };
  for (const k of Object.keys(e)) if (e[k] === undefined) delete e[k];
  try {
    return { ok: true, out: execFileSync(process.execPath, ['-e', code], { env: e, cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) };
  } catch (err) {
    return { ok: false, out: String(err.stdout) + String(err.stderr) };
  }
}
const probe = (from) => `const l = require(${JSON.stringify(from)}); console.log(JSON.stringify(l.library('wasm')));`;
const newClient = `const { Client } = require(${JSON.stringify(pkg)}); new Client({ nodes: ['redis://127.0.0.1:1'], backend: 'wasm' });`;

// A minimal module: the exports given by name, each () -> i32 returning the value.
function tinyModule(exports) {
  const names = Object.keys(exports);
  const u8 = (...b) => b;
  const vec = (items) => [items.length, ...items.flat()];
  const section = (id, bytes) => [id, bytes.length, ...bytes];
  const str = (s) => [s.length, ...Buffer.from(s)];
  const types = section(1, vec([u8(0x60, 0, 1, 0x7f)]));
  const funcs = section(3, vec(names.map(() => [0])));
  const exps = section(7, vec(names.map((n, i) => [...str(n), 0, i])));
  const code = section(10, vec(names.map((n) => { const body = [0, 0x41, exports[n], 0x0b]; return [body.length, ...body]; })));
  return Buffer.from([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, ...types, ...funcs, ...exps, ...code]);
}

test('LIBLOCK_WASM_PATH is used when set', () => {
  const r = run(probe(pkg), { LIBLOCK_WASM_PATH: WASM });
  assert.ok(r.ok, r.out);
  const info = JSON.parse(r.out);
  assert.equal(info.from, 'LIBLOCK_WASM_PATH');
  assert.equal(info.abiVersion, 1);
  assert.ok(info.compileMs > 0 && info.instantiateMs > 0);
});

test('without LIBLOCK_WASM_PATH, the repository build is found', () => {
  const r = run(probe(pkg), { LIBLOCK_WASM_PATH: undefined });
  assert.ok(r.ok, r.out);
  const info = JSON.parse(r.out);
  assert.equal(info.from, 'repository build');
  assert.equal(info.path, WASM);
});

test('a packaged copy is used outside the repository', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-wasm-pkg-'));
  const copy = path.join(dir, 'node_modules', 'liblock');
  fs.mkdirSync(path.join(copy, 'prebuilt'), { recursive: true });
  for (const f of ['index.js', 'package.json']) fs.copyFileSync(path.join(pkg, f), path.join(copy, f));
  fs.cpSync(path.join(pkg, 'lib'), path.join(copy, 'lib'), { recursive: true });
  fs.copyFileSync(WASM, path.join(copy, 'prebuilt', 'liblock.wasm'));
  fs.symlinkSync(path.join(pkg, 'node_modules'), path.join(copy, 'node_modules'));
  const r = run(probe('liblock'), { LIBLOCK_WASM_PATH: undefined }, dir);
  fs.rmSync(dir, { recursive: true, force: true });
  assert.ok(r.ok, r.out);
  assert.equal(JSON.parse(r.out).from, 'packaged copy');
});

test('a LIBLOCK_WASM_PATH that does not exist fails clearly', () => {
  const r = run(newClient, { LIBLOCK_WASM_PATH: '/nonexistent/liblock.wasm' });
  assert.equal(r.ok, false);
  assert.match(r.out, /LIBLOCK_WASM_PATH=\/nonexistent\/liblock\.wasm does not exist/);
});

test('a file that is not WebAssembly, or a module that is not liblock, fails clearly', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-wasm-bad-'));
  const text = path.join(dir, 'text.wasm');
  fs.writeFileSync(text, 'not wasm\n');
  let r = run(newClient, { LIBLOCK_WASM_PATH: text });
  assert.equal(r.ok, false);
  assert.match(r.out, /is not a WebAssembly module/);
  const other = path.join(dir, 'other.wasm');
  fs.writeFileSync(other, tinyModule({ something_else: 1 }));
  r = run(newClient, { LIBLOCK_WASM_PATH: other });
  assert.equal(r.ok, false);
  assert.match(r.out, /is not liblock\.wasm \(no lock_abi_version\)/);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('an ABI version mismatch fails clearly', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-wasm-abi-'));
  const file = path.join(dir, 'liblock.wasm');
  // _initialize is () -> i32 here; JS ignores the result.
  fs.writeFileSync(file, tinyModule({ _initialize: 0, lock_abi_version: 2 }));
  const r = run(newClient, { LIBLOCK_WASM_PATH: file });
  assert.equal(r.ok, false);
  assert.match(r.out, /ABI version mismatch: .* has ABI 2, this binding needs ABI 1/);
  fs.rmSync(dir, { recursive: true, force: true });
});
