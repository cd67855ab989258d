'use strict';
// lib/spin.js: a request's replies read at once (non-blocking recv on the
// plain TCP sockets it wrote to, stepped as onread would), against real
// redis-servers, on the backend under test (scripts/test.sh: native;
// scripts/test-wasm.sh: wasm, whose spin is opt-in, LIBLOCK_SPIN_WASM=1, and
// turned on here).
const nodeTest = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Client, UnavailableError } = require('..');
const S = require('../lib/spin');
const { startNodes, assertNoUnhandled, BACKEND, ROOT } = require('./helpers');
const { startServer } = require('./servers');

const test = nodeTest.test;
S.config({ wasm: true }); // (this file only: the wasm backend's spin is opt-in)
const nativeOnly = S.available() ? {} : { skip: 'no spin here (it needs koffi and glibc\'s recv: Linux)' };

const delta = (s0) => Object.fromEntries(Object.keys(S.stats).map((k) => [k, S.stats[k] - s0[k]]));
const turn = () => new Promise((resolve) => setImmediate(resolve));

let nodes; // five redis-servers
nodeTest.before(async () => { nodes = await startNodes(5); });
nodeTest.after(async () => {
  if (nodes) await nodes.stop();
  assertNoUnhandled(assert);
});
nodeTest.afterEach(() => { S.config({ polls: 64, creditRule: true, aloneRule: true, connGuard: true, onSpin: null }); });

test('a spin settles its request before acquire() returns, and stops at the DONE (2 of 5 nodes frozen, a budget never reached)', nativeOnly, async () => {
  const c = new Client({ nodes: nodes.urls, backend: BACKEND, nodeTimeout: 200 });
  try {
    for (let i = 0; i < 3; i++) await (await c.acquire(`spin:done:warm:${i}`, { ttl: 10000 })).release();
    await nodes.freeze(3);
    await nodes.freeze(4);
    // With 10^7 polls, a spin that went on past the DONE would end empty,
    // seconds later: each must end settled (the two frozen nodes never answer).
    S.config({ creditRule: false, polls: 1e7 });
    let settledAtOnce = 0;
    for (let i = 0; i < 20; i++) {
      const s0 = { ...S.stats };
      const p = c.acquire(`spin:done:${i}`, { ttl: 10000, wait: 0 });
      const d = delta(s0); // synchronously: what the spin did inside acquire()
      assert.equal(d.settled, d.spins, `every spin ends at its DONE (${JSON.stringify(d)})`);
      assert.equal(d.empty, 0);
      assert.equal(d.stopped, 0);
      settledAtOnce += d.settled;
      const lock = await p;
      await lock.release();
      await turn(); // (at most 16 settled spins per turn of the loop)
    }
    assert.ok(settledAtOnce > 0, 'requests settled inside their spin');
  } finally {
    S.config({ creditRule: true, polls: 64 });
    await nodes.thaw(3);
    await nodes.thaw(4);
    await c.close();
  }
});

/** A TCP proxy in this process: its replies can only move when the event loop turns, never during a spin. */
async function inProcessProxy(port) {
  const socks = new Set();
  const server = net.createServer((a) => {
    const b = net.connect(port, '127.0.0.1');
    socks.add(a); socks.add(b);
    a.pipe(b); b.pipe(a);
    const end = () => { a.destroy(); b.destroy(); };
    a.on('error', end); b.on('error', end); a.on('close', end); b.on('close', end);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `redis://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => { for (const s of socks) s.destroy(); server.close(resolve); }),
  };
}

async function pairs(url, n, tag) {
  const c = new Client({ nodes: [url], backend: BACKEND, nodeTimeout: 2000 });
  try {
    await (await c.acquire(`spin:${tag}:warm`, { ttl: 10000 })).release(); // (connects: no spin)
    const s0 = { ...S.stats };
    for (let i = 0; i < n; i++) await (await c.acquire(`spin:${tag}:${i}`, { ttl: 10000 })).release();
    return delta(s0);
  } finally {
    await c.close();
  }
}

test('a spin that never pays switches itself off; control: without the credit rule every request spins', nativeOnly, async () => {
  const proxy = await inProcessProxy(nodes.nodes[0].port);
  try {
    const N = 150; // pairs: 2N requests, none of which a spin can settle (the proxy waits for the loop)
    const on = await pairs(proxy.url, N, 'credit');
    assert.equal(on.settled, 0);
    // 32 spins use the credit up, then one request in 64 probes.
    assert.ok(on.spins <= 32 + Math.ceil((2 * N) / 64) + 1, `spins with the credit rule: ${JSON.stringify(on)}`);
    assert.ok(on.skipped >= 2 * N - on.spins - 2, `skipped: ${JSON.stringify(on)}`);
    S.config({ creditRule: false });
    const off = await pairs(proxy.url, N, 'nocredit');
    assert.equal(off.settled, 0);
    assert.equal(off.spins, 2 * N, `control: every request spins without the rule (${JSON.stringify(off)})`);
  } finally {
    await proxy.close();
  }
});

test('a node killed during a spin: the operation fails with the usual error through the normal path, no hang', nativeOnly, async () => {
  const one = await startNodes(1);
  const c = new Client({ nodes: one.urls, backend: BACKEND, nodeTimeout: 5000 });
  try {
    await (await c.acquire('spin:kill:warm', { ttl: 20000 })).release();
    await one.freeze(0); // the request will sit unanswered in the node's socket
    const pid = one.nodes[0].pid;
    let killed = false;
    // 10^7 polls: only EOF or a reset ends this spin early (the stop counted below).
    S.config({ creditRule: false, polls: 1e7, onSpin: () => { if (!killed) { killed = true; process.kill(pid, 'SIGKILL'); } } });
    const s0 = { ...S.stats };
    const p = c.acquire('spin:kill', { ttl: 20000, wait: 0 });
    const d = delta(s0);
    assert.ok(killed, 'the spin ran');
    assert.equal(d.stopped, 1, `the spin stopped at the EOF/reset and left it to libuv (${JSON.stringify(d)})`);
    const e = await p.then(() => null, (x) => x);
    assert.ok(e instanceof UnavailableError && e.code === 'UNAVAILABLE', `the usual error: ${e}`);
    // From the connection's close (libuv's read saw it), not the 5 s node timeout.
    assert.match(e.message, /connection closed by the node|ECONNRESET/);
  } finally {
    S.config({ creditRule: true, polls: 64, onSpin: null });
    await c.close();
    await one.stop().catch(() => {});
  }
});

test('a reply larger than the input buffer: its first bytes read by a spin, the rest by onread, in order', nativeOnly, async () => {
  const owner = 'o'.repeat(128);
  const c = new Client({ nodes: [nodes.urls[0]], backend: BACKEND, nodeTimeout: 2000, owner });
  try {
    const held = 600; // 600 holders × (owner + token) ≫ 64 KiB
    const locks = []; // (referenced: a dropped Lock is released by the FinalizationRegistry)
    for (let i = 0; i < held; i++) locks.push(await c.acquire('spin:big', { ttl: 60000, permits: 1024 }));
    S.config({ creditRule: false, polls: 1e7 });
    const s0 = { ...S.stats };
    const p = c.inspect('spin:big', { permits: 1024 });
    const d = delta(s0);
    assert.equal(d.spins, 1);
    assert.equal(d.reads, 1, 'the spin read the reply\'s first bytes');
    assert.ok(d.bytes > 0 && d.bytes <= 64 * 1024 - 9, `at most an input buffer's worth (${d.bytes})`);
    assert.equal(d.settled, 0, 'the rest came through onread');
    const r = await p;
    assert.equal(r.holders.length, held, JSON.stringify({ d, inUse: r.inUse, held: r.held, nodes: r.nodes }));
    assert.deepEqual([...new Set(r.holders.map((h) => h.owner))], [owner]);
    assert.equal(new Set(r.holders.map((h) => h.slot)).size, held);
    assert.equal(locks.length, held);
  } finally {
    await c.close(); // (releases the permits)
  }
});

test('TLS connections never spin', nativeOnly, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-spin-certs-'));
  let server = null;
  try {
    execFileSync('sh', [path.join(ROOT, 'core/testkit/tlstest/mkcerts.sh'), dir], { stdio: ['ignore', 'ignore', 'inherit'] });
    server = await startServer((port) => ['--port', '0', '--tls-port', String(port),
      '--tls-cert-file', path.join(dir, 'server.pem'), '--tls-key-file', path.join(dir, 'server.key'),
      '--tls-ca-cert-file', path.join(dir, 'ca.pem'), '--tls-auth-clients', 'no']);
    S.config({ creditRule: false });
    const c = new Client({ nodes: [`rediss://127.0.0.1:${server.port}`], backend: BACKEND, nodeTimeout: 2000,
      tls: { ca: fs.readFileSync(path.join(dir, 'ca.pem')) } });
    try {
      const s0 = { ...S.stats };
      for (let i = 0; i < 20; i++) await (await c.acquire(`spin:tls:${i}`, { ttl: 10000 })).release();
      assert.equal(delta(s0).spins, 0);
    } finally {
      await c.close();
    }
    // Control: the same pairs on a plain TCP node do spin.
    assert.ok((await pairs(nodes.urls[0], 20, 'tls-control')).spins > 0);
  } finally {
    if (server) await server.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a request spins only when it is alone in flight on its host (a waiter pending: no spin; control: without the rule it spins)', nativeOnly, async () => {
  const c = new Client({ nodes: nodes.urls, backend: BACKEND });
  const other = new Client({ nodes: nodes.urls, backend: BACKEND });
  try {
    for (let i = 0; i < 3; i++) await (await c.acquire(`spin:alone:warm:${i}`, { ttl: 10000 })).release();
    S.config({ creditRule: false });
    const held = await other.acquire('spin:alone:held', { ttl: 30000 });
    const waiting = c.acquire('spin:alone:held', { ttl: 10000, wait: 20000 }); // stays in flight
    for (const alone of [true, false]) {
      S.config({ aloneRule: alone });
      const s0 = { ...S.stats };
      for (let i = 0; i < 5; i++) {
        const p = c.acquire(`spin:alone:${alone}:${i}`, { ttl: 10000, wait: 0 });
        await (await p).release();
        await turn();
      }
      const d = delta(s0);
      if (alone) {
        assert.equal(d.spins, 0, `no spin beside a pending waiter (${JSON.stringify(d)})`);
        assert.ok(d.crowded >= 10, `each request was turned away (${JSON.stringify(d)})`);
      } else {
        assert.ok(d.spins >= 10, `the control spins (${JSON.stringify(d)})`);
      }
    }
    await held.release();
    await (await waiting).release();
  } finally {
    await c.close();
    await other.close();
  }
});

// Two real loopback connections, each with a reply waiting, behind a stand-in
// host: the first one's step (receivedRx) drops the second from the host's
// connections, as an engine CLOSE does (whose fd number an OPEN in the same
// step may then reuse for another node's socket). The spin must not read the
// dropped socket: its bytes stay for whoever owns that fd now.
async function guardRun(connGuard) {
  const server = net.createServer();
  const peers = [];
  server.on('connection', (p) => peers.push(p));
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  const connect = () => new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => resolve(s));
    s.on('error', reject);
  });
  const a = await connect();
  const b = await connect();
  try {
    a.pause(); // (libuv must not read them itself meanwhile)
    b.pause();
    a.llFd = true; a.llConn = 1;
    b.llFd = true; b.llConn = 2;
    const conns = new Map([[1, a], [2, b]]);
    const op = 7;
    const read = []; // the connections the spin handed bytes from
    const h = {
      ad: { backend: 'native' },
      ops: new Map([[op, {}]]),
      spin: S.state(),
      conns,
      dead: false,
      rx: () => ({ buffer: Buffer.alloc(4096) }),
      receivedRx(conn) {
        read.push(conn);
        if (conn === 1) conns.delete(2); // the engine closed connection 2 in this step
      },
    };
    await new Promise((resolve) => { if (peers.length === 2) resolve(); else server.on('connection', () => { if (peers.length === 2) resolve(); }); });
    // both replies handed to the kernel (loopback: in the sockets' buffers) before the spin
    await Promise.all(peers.map((p) => new Promise((resolve) => p.write('+OK\r\n', resolve))));
    S.config({ connGuard, creditRule: false, polls: 1000 });
    S.spin(h, op, [a, b], 2);
    return read;
  } finally {
    a.destroy();
    b.destroy();
    for (const p of peers) p.destroy();
    await new Promise((resolve) => server.close(resolve));
  }
}

test('a socket the step dropped from the host is not read by the spin (its fd may be another socket\'s now); control: without the guard it is', nativeOnly, async () => {
  assert.deepEqual(await guardRun(true), [1]);
  assert.deepEqual(await guardRun(false), [1, 2], 'the control reads the dropped socket: the check can fail');
});
