'use strict';
// Run by scripts/test-dist.sh from a temp directory outside the repository
// where the npm tarball of `make dist` is installed (node_modules/liblock),
// with no LIBLOCK_PATH / LIBLOCK_WASM_PATH: each backend must load the files
// the tarball carries (prebuilt/) and lock against the redis-servers in
// LIBLOCK_NODES (build/redisnodes). Not a node:test file.
const assert = require('node:assert/strict');
const path = require('node:path');
const net = require('node:net');

for (const v of ['LIBLOCK_PATH', 'LIBLOCK_WASM_PATH', 'NODE_PATH']) assert.equal(process.env[v], undefined, `${v} is set`);
const pkgDir = path.join(process.cwd(), 'node_modules', 'liblock');
assert.equal(require.resolve('liblock'), path.join(pkgDir, 'index.js'));
const liblock = require('liblock');
const nodes = process.env.LIBLOCK_NODES.split(',');

// GET key over a raw socket: what Redis itself holds ('' when none).
function get(url, key) {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(port), hostname, () => s.write(`*2\r\n$3\r\nGET\r\n$${Buffer.byteLength(key)}\r\n${key}\r\n`));
    let buf = '';
    s.on('data', (d) => {
      buf += d;
      if (buf.startsWith('$-1\r\n')) { s.end(); resolve(''); return; }
      const m = /^\$(\d+)\r\n/.exec(buf);
      if (m && buf.length >= m[0].length + Number(m[1]) + 2) { s.end(); resolve(buf.slice(m[0].length, m[0].length + Number(m[1]))); }
    });
    s.on('error', reject);
  });
}

// Polls until cond() holds, for at most 5 s: an operation returns once a
// quorum answered, and the last nodes' commands may still be on their way.
async function eventually(cond, what) {
  const deadline = Date.now() + 5000;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);

(async () => {
  // "auto:EXPECTED": clients naming no backend, which must run EXPECTED (native
  // where the packaged liblock.so loads, else wasm, warning once).
  const warnings = [];
  process.on('warning', (w) => { if (w.code === 'LIBLOCK_NATIVE_UNAVAILABLE') warnings.push(w.message); });
  for (const spec of process.argv.slice(2)) {
    let [backend, expected] = spec.split(':');
    const key = `dist:${backend}`;
    let client;
    if (backend === 'auto') {
      await new liblock.Client({ nodes, nodeTimeout: 500 }).close();
      client = new liblock.Client({ nodes, nodeTimeout: 500 }); // a second one: no second warning
      await new Promise((r) => setImmediate(r));
      assert.equal(warnings.length, expected === 'wasm' ? 1 : 0, warnings.join('\n'));
      const info = liblock.library();
      assert.equal(info.backend, expected);
      assert.equal(info.fallbackReason === null, expected === 'native');
      backend = expected;
    } else {
      client = new liblock.Client({ nodes, nodeTimeout: 500, backend });
    }
    const lock = await client.acquire(key, { ttl: 10000, wait: 0 });
    await eventually(async () => same(await Promise.all(nodes.map((u) => get(u, key))), nodes.map(() => lock.token)), 'the token on every node');
    await assert.rejects(client.acquire(key, { ttl: 10000, wait: 0 }), { code: 'NOT_ACQUIRED' });
    await lock.release();
    await eventually(async () => same(await Promise.all(nodes.map((u) => get(u, key))), nodes.map(() => '')), 'the key gone from every node');
    await client.close();
    const info = liblock.library(backend);
    assert.equal(info.from, 'packaged copy');
    assert.equal(info.path, path.join(pkgDir, 'prebuilt', backend === 'wasm' ? 'liblock.wasm' : path.join(`${process.platform}-${process.arch}`, 'liblock.so')));
    console.log(`${spec}: acquired and released ${key} with ${info.path}${warnings.length ? ` (warned: ${warnings[0]})` : ''}`);
  }
  const esm = await import('liblock');
  assert.equal(esm.default, liblock);
  assert.equal(esm.LoadError, liblock.LoadError);
})().catch((e) => { console.error(e); process.exitCode = 1; });
