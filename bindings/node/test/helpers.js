'use strict';
// Test helpers: real redis-servers through build/redisnodes (mode 1), an
// unhandled-rejection tripwire, and polling with deadlines.
const { spawn, execFileSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');
const readline = require('node:readline');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const REDISNODES = path.join(ROOT, 'build', 'redisnodes');
const FAULTPROXY = path.join(ROOT, 'build', 'faultproxy');

function checkTools() {
  if (!fs.existsSync(REDISNODES)) {
    throw new Error(`${REDISNODES} is missing: run \`make build\` at the repository root`);
  }
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('redis-server is missing: apt-get install -y redis-server');
  }
}

/**
 * Starts n real redis-servers; returns a controller speaking redisnodes' stdin protocol.
 * flags go to redisnodes: ['-sentinel'] makes them a Sentinel deployment (node 0 the
 * primary, the others its replicas, 3 sentinels), whose URL is `sentinelUrl`;
 * ['-cluster'] a Redis Cluster of n primaries with a replica each, whose URL is
 * `clusterUrl`.
 */
async function startNodes(n, flags = []) {
  checkTools();
  const child = spawn(REDISNODES, ['-n', String(n), ...flags], { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const waiting = [];
  const buffered = [];
  lines.on('line', (line) => {
    const w = waiting.shift();
    if (w) w.resolve(JSON.parse(line)); else buffered.push(JSON.parse(line));
  });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.on('exit', () => { for (const w of waiting.splice(0)) w.reject(new Error('redisnodes exited')); });
  const next = () => new Promise((resolve, reject) => {
    if (buffered.length) resolve(buffered.shift()); else waiting.push({ resolve, reject });
  });
  const first = await next();
  let nodes = first.nodes;
  const cmd = async (line) => {
    child.stdin.write(line + '\n');
    const r = await next();
    if (!r.ok) throw new Error(`redisnodes ${line}: ${r.error}`);
    return r;
  };
  return {
    get nodes() { return nodes; },
    sentinelUrl: first.sentinel_url,
    clusterUrl: first.cluster_url,
    clusterTlsUrl: first.cluster_tls_url,
    get urls() { return nodes.map((x) => x.url); },
    kill: (i) => cmd(`kill ${i}`),
    freeze: (i) => cmd(`freeze ${i}`),
    thaw: (i) => cmd(`thaw ${i}`),
    restart: async (i) => { const r = await cmd(`restart ${i}`); nodes = (await cmd('nodes')).nodes; return r; },
    flush: () => cmd('flush'),
    keys: async () => (await cmd('keys')).keys,
    async stop() {
      child.stdin.end();
      await exited;
    },
  };
}

/**
 * Starts build/faultproxy in front of every node of `nodes` (startNodes):
 * it sends `signal` ('STOP' or 'KILL') to the first `faults` nodes that the
 * fence round's command (fence.lua) reaches, just before it does. Returns
 * { urls, fired(), stop() }: the proxies' URLs in node order, the indexes
 * of the nodes signalled so far.
 */
async function startFaultProxy(nodes, { signal, faults = 1 }) {
  if (!fs.existsSync(FAULTPROXY)) throw new Error(`${FAULTPROXY} is missing: run \`make build\` at the repository root`);
  const args = ['-signal', signal, '-faults', String(faults), '-fence'];
  for (const n of nodes.nodes) args.push('-route', `127.0.0.1:${n.port}=${n.pid}`);
  const child = spawn(FAULTPROXY, args, { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const queue = [];
  const waiting = [];
  lines.on('line', (l) => { const w = waiting.shift(); if (w) w.resolve(l); else queue.push(l); });
  child.on('exit', () => { for (const w of waiting.splice(0)) w.reject(new Error('faultproxy exited')); });
  const next = () => new Promise((resolve, reject) => { if (queue.length) resolve(queue.shift()); else waiting.push({ resolve, reject }); });
  const addrs = (await next()).split(' ');
  return {
    urls: addrs.map((a) => `redis://${a}`),
    async fired() {
      child.stdin.write('fired\n');
      const l = await next();
      if (!l.startsWith('fired')) throw new Error(`faultproxy: ${l}`);
      return l.split(' ').slice(1).map(Number);
    },
    async stop() { child.stdin.end(); await exited; },
  };
}

/**
 * The one way these tests wait for a condition: polls cond() (sync or
 * async) every `interval` ms until it returns truthy, and returns that
 * value; throws, naming `what`, once `timeout` ms have passed. cond is
 * checked once more at the deadline, so an oversleeping event loop still
 * sees a condition that came true meanwhile. Never a fixed sleep instead.
 */
async function eventually(cond, { timeout = 10000, interval = 5, what = 'condition' } = {}) {
  const end = Date.now() + timeout;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > end) {
      const last = await cond();
      if (last) return last;
      throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

/**
 * Waits until `read()` deep-equals `want`. Release resolves as soon as a
 * quorum deleted the key (the engine decides early), so the last node's
 * delete may land a moment later: tests that look at every node wait.
 */
/**
 * Resolves once a client waits for `resource` on every node of `nodes`
 * (startNodes): it listens for the key's releases (PUBSUB NUMSUB is 1 on a node),
 * which an acquire does only once an attempt was refused or it queued
 * behind another. Assumes one waiting client and no key prefix.
 */
async function waiting(nodes, resource) {
  const Redis = require('ioredis');
  const admins = nodes.urls.map((u) => new Redis(u, { lazyConnect: false, maxRetriesPerRequest: 1 }));
  try {
    await eventually(async () => {
      const counts = await Promise.all(admins.map((r) => r.call('PUBSUB', 'NUMSUB', `liblock:released:${resource}`)));
      // Subscribed on some node: a waiter subscribes on every node after its first
      // refusal, but a pub/sub connection that failed (a node timeout blown on a busy
      // machine) is made again only at the waiter's next attempt, which for a lock this
      // client holds comes at the lock's release or expiry.
      return counts.some((c) => Number(c[1]) === 1);
    }, { what: `an acquire waits for ${resource}` });
  } finally {
    for (const r of admins) r.disconnect();
  }
}

async function settlesTo(read, want, what = 'nodes to settle') {
  const same = (a) => JSON.stringify(a) === JSON.stringify(want);
  let last;
  try {
    // 10 s: a deadline for a loaded 2-core machine; it costs nothing when
    // the nodes settle at once.
    await eventually(async () => same(last = await read()), { timeout: 10000, what });
  } catch {
    require('node:assert/strict').deepEqual(last, want, what);
  }
}

/** Fails the test run on any unhandled rejection (lock loss must never surface as one). */
const unhandled = [];
process.on('unhandledRejection', (reason) => { unhandled.push(reason); });
function assertNoUnhandled(assert) {
  assert.deepStrictEqual(unhandled.map(String), [], 'unhandled rejections');
}

/** The backend under test: LIBLOCK_BACKEND, 'native' (default) or 'wasm' (scripts/test-wasm.sh). */
const BACKEND = process.env.LIBLOCK_BACKEND || 'native';
if (!['native', 'wasm'].includes(BACKEND)) throw new Error(`LIBLOCK_BACKEND=${BACKEND}: must be native or wasm`);

/**
 * Client options with the backend under test added. Anything that is not a
 * plain options object passes through unchanged (the argument tests).
 */
function withBackend(o) {
  if (o && typeof o === 'object' && !Array.isArray(o) && !('backend' in o)) return { ...o, backend: BACKEND };
  return o;
}

/** The library's debug counters for the backend under test. */
function debug() {
  return require('..')._debug(BACKEND);
}

/**
 * Waits until every call made so far has been answered, so that debug()'s
 * handle count is current (releases of dropped locks settle in the background).
 */
async function settled() {
  await eventually(() => { const d = debug(); return d.pending === 0 && d.submitting === 0; }, { what: 'calls to settle' });
  return debug();
}

/**
 * The set-up most test files share: before their tests, n real redis-servers
 * (`fx.nodes`, startNodes's controller) and an ioredis connection to each
 * (`fx.redis`); after them, both closed and the unhandled-rejection tripwire
 * checked. `fx.client(o)` makes a Client of the backend under test over those
 * nodes, with nodeTimeout (ms) unless o sets one.
 */
function nodesFixture({ n = 3, nodeTimeout = 500 } = {}) {
  const { before, after } = require('node:test');
  const Redis = require('ioredis');
  const fx = {
    nodes: null,
    redis: [],
    client: (o = {}) => new (require('..').Client)(withBackend({ nodes: fx.nodes.urls, nodeTimeout, ...o })),
  };
  before(async () => {
    fx.nodes = await startNodes(n);
    fx.redis = fx.nodes.urls.map((u) => new Redis(u, { maxRetriesPerRequest: 1 }));
  });
  after(async () => {
    await Promise.all(fx.redis.map((r) => r.quit()));
    await fx.nodes.stop();
    assertNoUnhandled(require('node:assert/strict'));
  });
  return fx;
}

// waitFor: the old name of eventually, kept for tests written against it.
module.exports = { startNodes, startFaultProxy, eventually, waitFor: eventually, waiting, settlesTo, assertNoUnhandled, unhandled, ROOT, BACKEND, withBackend, nodesFixture, debug, settled };
