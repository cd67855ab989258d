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
  const backends = process.argv.slice(2);
  for (const backend of backends) {
    const key = `dist:${backend}`;
    const client = new liblock.Client({ nodes, nodeTimeout: 500, backend });
    const lock = await client.acquire(key, { ttl: 10000, wait: 0 });
    await eventually(async () => same(await Promise.all(nodes.map((u) => get(u, key))), nodes.map(() => lock.token)), 'the token on every node');
    await assert.rejects(client.acquire(key, { ttl: 10000, wait: 0 }), { code: 'NOT_ACQUIRED' });
    await lock.release();
    await eventually(async () => same(await Promise.all(nodes.map((u) => get(u, key))), nodes.map(() => '')), 'the key gone from every node');
    await client.close();
    const info = liblock.library(backend);
    assert.equal(info.from, 'packaged copy');
    assert.equal(info.path, path.join(pkgDir, 'prebuilt', backend === 'wasm' ? 'liblock.wasm' : 'liblock.so'));
    console.log(`${backend}: acquired and released ${key} with ${info.path}`);
  }
  const esm = await import('liblock');
  assert.equal(esm.default, liblock);
  assert.equal(esm.LoadError, liblock.LoadError);
})().catch((e) => { console.error(e); process.exitCode = 1; });
