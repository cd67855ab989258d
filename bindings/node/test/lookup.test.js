'use strict';
// Library lookup: LIBLOCK_PATH, else the repository's build/liblock.so, else
// the packaged copy; clear errors for a missing file or a library that is
// not liblock. Each case runs in a fresh process (the library loads once).
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ROOT, assertNoUnhandled, BACKEND } = require('./helpers');

// liblock.so lookup: native backend only (wasm-lookup.test.js covers liblock.wasm).
const test = BACKEND === 'native' ? nodeTest.test
  : (name, fn) => nodeTest.test(name, { skip: 'liblock.so lookup: native backend only' }, fn);

const pkg = path.join(__dirname, '..');
function run(code, env) {
  try {
    const out = execFileSync(process.execPath, ['-e', code], { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return { ok: true, out };
  } catch (e) {
    return { ok: false, out: String(e.stdout) + String(e.stderr) };
  }
}
const probe = `const l = require(${JSON.stringify(pkg)}); console.log(JSON.stringify(l.library('native')));`;

test('LIBLOCK_PATH is used when set', () => {
  const r = run(probe, { LIBLOCK_PATH: path.join(ROOT, 'build', 'liblock.so') });
  assert.ok(r.ok, r.out);
  const info = JSON.parse(r.out);
  assert.equal(info.from, 'LIBLOCK_PATH');
  assert.equal(info.abiVersion, 1);
});

test('without LIBLOCK_PATH, the repository build is found', () => {
  const env = { ...process.env };
  delete env.LIBLOCK_PATH;
  const r = (() => {
    try {
      return { ok: true, out: execFileSync(process.execPath, ['-e', probe], { env, encoding: 'utf8' }) };
    } catch (e) { return { ok: false, out: String(e.stderr) }; }
  })();
  assert.ok(r.ok, r.out);
  const info = JSON.parse(r.out);
  assert.equal(info.from, 'repository build');
  assert.equal(info.path, path.join(ROOT, 'build', 'liblock.so'));
});

test('a packaged copy is used outside the repository', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-pkg-'));
  const copy = path.join(dir, 'node_modules', 'liblock');
  const platformDir = path.join(copy, 'prebuilt', `${process.platform}-${process.arch}`);
  fs.mkdirSync(platformDir, { recursive: true });
  for (const f of ['index.js', 'package.json']) fs.copyFileSync(path.join(pkg, f), path.join(copy, f));
  fs.cpSync(path.join(pkg, 'lib'), path.join(copy, 'lib'), { recursive: true }); // shipped ("files")
  fs.copyFileSync(path.join(ROOT, 'build', 'liblock.so'), path.join(platformDir, 'liblock.so'));
  fs.symlinkSync(path.join(pkg, 'node_modules'), path.join(dir, 'node_modules', 'liblock', 'node_modules'));
  const env = { ...process.env };
  delete env.LIBLOCK_PATH;
  const out = execFileSync(process.execPath, ['-e', `console.log(JSON.stringify(require('liblock').library('native')))`], { env, cwd: dir, encoding: 'utf8' });
  const info = JSON.parse(out);
  assert.equal(info.from, 'packaged copy');
  assert.equal(info.path, path.join(fs.realpathSync(platformDir), 'liblock.so'));
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a LIBLOCK_PATH that does not exist fails clearly', () => {
  const r = run(`const { Client } = require(${JSON.stringify(pkg)}); new Client({ nodes: ['redis://127.0.0.1:1'], backend: 'native' });`, { LIBLOCK_PATH: '/nonexistent/liblock.so' });
  assert.equal(r.ok, false);
  assert.match(r.out, /LIBLOCK_PATH=\/nonexistent\/liblock\.so does not exist/);
});

test('a library that is not liblock fails clearly', () => {
  const other = ['/lib/x86_64-linux-gnu/libz.so.1', '/usr/lib/x86_64-linux-gnu/libz.so.1', '/lib/x86_64-linux-gnu/libm.so.6'].find((f) => fs.existsSync(f));
  if (!other) return;
  const r = run(probe, { LIBLOCK_PATH: other });
  assert.equal(r.ok, false);
  assert.match(r.out, /is not liblock \(no lock_abi_version\)/);
  assertNoUnhandled(assert);
});

test('an ABI version mismatch fails clearly', () => {
  // A stand-in library that reports ABI 2 (cc is needed by `make build` anyway).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-abi-'));
  fs.writeFileSync(path.join(dir, 'fake.c'), 'int lock_abi_version(void) { return 2; }\n');
  execFileSync(process.env.CC || 'cc', ['-shared', '-fPIC', '-o', path.join(dir, 'liblock.so'), path.join(dir, 'fake.c')]);
  const r = run(probe, { LIBLOCK_PATH: path.join(dir, 'liblock.so') });
  assert.equal(r.ok, false);
  assert.match(r.out, /ABI version mismatch: .* has ABI 2, this binding needs ABI 1/);
  fs.rmSync(dir, { recursive: true, force: true });
});
