'use strict';
// Re-entry by token across runtimes (make test-interop): a lock acquired in
// one runtime (Node, Python or Go, on the native or the wasm backend) is
// re-entered by its token in another runtime's process, against real
// redis-servers (build/redisnodes). What is checked, for every pair:
//
//  - the re-entering process gets reentered: true, the same token, fence 0
//    and a validity of about its (longer) ttl; every node's ttl is raised;
//  - inspect, from this process and from both children, shows the resource
//    held under the acquirer's owner label (the label lives in the token,
//    and re-entry keeps the token, whatever the re-enterer's own owner);
//  - releasing the lock from EITHER side frees the key for both: the holders
//    of one token share one key and re-entries are not counted (README:
//    "releasing either deletes it for every holder of the token"), so the
//    other side's release then reports LOST.
//
// Someone else's token, from another runtime, is NOT_ACQUIRED and changes
// nothing. Every child speaks the line protocol of bindings/interop/children/node.js.
// Every wait is a poll with a deadline, never a sleep.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');

const ROOT = path.resolve(__dirname, '..', '..');
const NODE_PKG = path.join(ROOT, 'bindings', 'node');
const { startNodes, eventually, settlesTo } = require(path.join(NODE_PKG, 'test', 'helpers'));
const { Client } = require(NODE_PKG);

const PY = path.join(ROOT, 'build', 'venv-python', 'bin', 'python');
const GO_CHILD = path.join(ROOT, 'build', 'interop-child-go');
// The Java child runs from source (java's single-file mode) on the binding's jar and JNA's,
// whose classpath run.sh writes here.
const JAVA_CP = path.join(ROOT, 'build', 'java-classpath.txt');
const IOREDIS = path.join(NODE_PKG, 'node_modules', 'ioredis');

// What the children need; make test-interop (bindings/interop/run.sh) provides all of
// it and sets LIBLOCK_INTEROP_REQUIRED, which turns a missing piece into a
// failure instead of a skip.
const missing = [];
if (!fs.existsSync(PY)) missing.push(`${PY} (the Python test venv: make test-python or make test-interop creates it)`);
if (!fs.existsSync(GO_CHILD)) missing.push(`${GO_CHILD} (make test-interop builds it from bindings/interop/children/go)`);
if (!fs.existsSync(JAVA_CP)) missing.push(`${JAVA_CP} (make test-interop builds the Java binding's jar and writes it)`);
if (!fs.existsSync(IOREDIS)) missing.push(`${IOREDIS} (npm ci in bindings/node)`);
for (const f of ['liblock.so', 'liblock.wasm', 'redisnodes']) {
  if (!fs.existsSync(path.join(ROOT, 'build', f))) missing.push(`build/${f} (make build)`);
}
const SKIP = missing.length === 0 ? false : `cross-runtime re-entry needs ${missing.join(', ')}; run \`make test-interop\``;
if (SKIP && process.env.LIBLOCK_INTEROP_REQUIRED) throw new Error(SKIP);

let nodes;
let redis;
let observer; // this process's own client, for inspect
before(async () => {
  if (SKIP) return;
  const Redis = require(IOREDIS);
  nodes = await startNodes(3);
  redis = nodes.urls.map((u) => new Redis(u, { maxRetriesPerRequest: 1 }));
  observer = new Client({ nodes: nodes.urls, nodeTimeout: 500, backend: process.env.LIBLOCK_BACKEND || 'native' });
});
after(async () => {
  if (SKIP) return;
  await observer.close();
  await Promise.all(redis.map((r) => r.quit()));
  await nodes.stop();
});

const all = (f) => Promise.all(redis.map(f));
const valuesOf = (key) => all((r) => r.get(key));
const heldEverywhere = (key, value) => settlesTo(() => valuesOf(key), [value, value, value], `${key}=${value} on every node`);
const goneEverywhere = (key) => settlesTo(() => valuesOf(key), [null, null, null], `${key} deleted on every node`);

/** The command line of one child: runtime 'node' | 'python' | 'go' | 'java'. */
function argv(runtime, cfg) {
  const json = JSON.stringify(cfg);
  switch (runtime) {
    case 'node': return [process.execPath, [path.join(__dirname, 'children', 'node.js'), json]];
    case 'python': return [PY, [path.join(__dirname, 'children', 'python.py'), json]];
    case 'go': return [GO_CHILD, [json]];
    case 'java': return ['java', ['-cp', fs.readFileSync(JAVA_CP, 'utf8').trim(), path.join(__dirname, 'children', 'Suite.java'), 'reenter', json]];
    default: throw new Error(`unknown runtime ${runtime}`);
  }
}

/**
 * Starts a child that acquires (with cfg.token: re-enters) and resolves with
 * { first, send(cmd), close() }: first is its acquire's JSON line; send
 * writes a command and resolves with its answer line. A line not coming
 * within `timeout` ms, or the child exiting, fails the test.
 */
async function child(side, cfg, timeout = 60000) {
  const [cmd, args] = argv(side.runtime, { urls: nodes.urls, backend: side.backend, ...cfg });
  const env = { ...process.env, PYTHONPATH: path.join(ROOT, 'bindings', 'python'), PYTHONDONTWRITEBYTECODE: '1' };
  const proc = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'inherit'], env });
  const name = `${side.runtime}/${side.backend}`;
  const lines = readline.createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const next = async (what) => {
    let timer;
    const deadline = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${name}: no answer to ${what} within ${timeout} ms`)), timeout);
    });
    try {
      const r = await Promise.race([lines.next(), exited.then((e) => ({ done: true, e })), deadline]);
      if (r.done) throw new Error(`${name} exited (${JSON.stringify(r.e)}) before answering ${what}`);
      try {
        return JSON.parse(r.value);
      } catch {
        throw new Error(`${name}: not JSON in answer to ${what}: ${r.value}`);
      }
    } finally {
      clearTimeout(timer);
    }
  };
  try {
    const first = await next('the acquire');
    return {
      name,
      first,
      proc,
      async send(line) {
        proc.stdin.write(line + '\n');
        return next(line);
      },
      async close() {
        assert.deepEqual(await this.send('close'), { closed: true }, `${name} close`);
        proc.stdin.end();
        const e = await exited;
        assert.deepEqual(e, { code: 0, signal: null }, `${name} exit`);
      },
    };
  } catch (e) {
    proc.kill();
    throw e;
  }
}

const NODE = { runtime: 'node', backend: 'native' };
const NODE_WASM = { runtime: 'node', backend: 'wasm' };
const PYTHON = { runtime: 'python', backend: 'native' };
const PYTHON_WASM = { runtime: 'python', backend: 'wasm' };
const GO = { runtime: 'go', backend: 'go' };
const JAVA = { runtime: 'java', backend: 'native' };
const label = (s) => (s.runtime === 'go' || s.runtime === 'java' ? s.runtime : `${s.runtime}-${s.backend}`);

// [acquirer, re-enterer, who releases]. Each runtime re-enters another's
// lock, on each backend, and both sides' release is exercised.
const PAIRS = [
  [NODE, PYTHON, 're-enterer'],
  [NODE_WASM, PYTHON_WASM, 'acquirer'],
  [PYTHON, NODE, 'acquirer'],
  [PYTHON_WASM, NODE_WASM, 're-enterer'],
  [NODE, GO, 're-enterer'],
  [GO, NODE_WASM, 'acquirer'],
  [PYTHON, GO, 'acquirer'],
  [GO, PYTHON_WASM, 're-enterer'],
  [JAVA, GO, 're-enterer'],
  [PYTHON, JAVA, 'acquirer'],
  [JAVA, NODE_WASM, 'acquirer'],
  [NODE, JAVA, 're-enterer'],
];

for (const [acq, ree, releaser] of PAIRS) {
  test(`${label(acq)} acquires, ${label(ree)} re-enters by token, the ${releaser} releases it for both`, { skip: SKIP }, async () => {
    const res = `xreenter:${label(acq)}:${label(ree)}`;
    const owner = `holder-${label(acq)}`;
    // A ttl far longer than a child's start (the wasm backends compile a
    // module first), so the lock is certainly held when the other re-enters.
    const a = await child(acq, { resource: res, ttl: 60000, owner });
    let b;
    try {
      assert.equal(a.first.ok, true, JSON.stringify(a.first));
      assert.equal(a.first.reentered, false);
      assert.equal(a.first.fence, 0);
      const token = a.first.token;
      assert.ok(token.startsWith(`${owner}/`) && token.length === owner.length + 1 + 36, token);
      await heldEverywhere(res, token);

      b = await child(ree, { resource: res, ttl: 120000, token, owner: `other-${label(ree)}` });
      assert.equal(b.first.ok, true, JSON.stringify(b.first));
      assert.equal(b.first.runtime, ree.runtime);
      assert.equal(b.first.reentered, true, JSON.stringify(b.first));
      assert.equal(b.first.token, token);
      assert.equal(b.first.fence, 0);
      assert.ok(b.first.validity > 100000 && b.first.validity <= 120000, JSON.stringify(b.first));
      // The ttl raised from 60 s to 120 s on every node, the value unchanged.
      await eventually(async () => (await all((r) => r.pttl(res))).every((t) => t > 60000 && t <= 120000),
        { what: `${res}: the ttl raised above 60 s on every node`, timeout: 10000 });
      assert.deepEqual(await valuesOf(res), [token, token, token]);

      // Everyone sees one holder, labelled with the acquirer's owner.
      const seen = await observer.inspect(res);
      assert.equal(seen.held, true, JSON.stringify(seen));
      assert.equal(seen.owner, owner);
      assert.ok(seen.validity > 60000, JSON.stringify(seen));
      for (const c of [a, b]) {
        const got = await c.send('inspect');
        assert.equal(got.held, true, `${c.name}: ${JSON.stringify(got)}`);
        assert.equal(got.owner, owner, `${c.name}: ${JSON.stringify(got)}`);
        assert.ok(got.validity > 60000, `${c.name}: ${JSON.stringify(got)}`);
      }

      // One release frees the shared key for every holder of the token.
      const [first, second] = releaser === 'acquirer' ? [a, b] : [b, a];
      assert.deepEqual(await first.send('release'), { released: true }, `${first.name} release`);
      await goneEverywhere(res);
      assert.equal((await observer.inspect(res)).held, false);
      assert.deepEqual(await second.send('inspect'), { held: false, owner: '', validity: 0 }, `${second.name} inspect after the release`);
      assert.deepEqual(await second.send('release'), { released: false, code: 'LOST' }, `${second.name} release after the other's`);
      await goneEverywhere(res);
      await a.close();
      await b.close();
    } finally {
      for (const c of [a, b]) if (c && c.proc.exitCode === null) c.proc.kill();
    }
  });
}

test('someone else\'s token, from another runtime, is NOT_ACQUIRED and leaves the lock alone; its own token on a free resource is an ordinary acquire', { skip: SKIP }, async () => {
  const res = 'xreenter:foreign';
  const holder = await child(NODE, { resource: res, ttl: 60000 });
  const others = [];
  try {
    assert.equal(holder.first.ok, true, JSON.stringify(holder.first));
    await heldEverywhere(res, holder.first.token);
    for (const side of [PYTHON, GO, PYTHON_WASM, JAVA]) {
      const c = await child(side, { resource: res, ttl: 2000, token: 'someone-elses-token-0123' });
      others.push(c);
      assert.equal(c.first.ok, false, `${c.name}: ${JSON.stringify(c.first)}`);
      assert.equal(c.first.code, 'NOT_ACQUIRED', `${c.name}: ${JSON.stringify(c.first)}`);
      await c.close();
    }
    // The minority it may have set expires with its 2 s ttl (a failed
    // attempt with a caller's token deletes nothing): the holder is still
    // the holder on a quorum, and keeps the resource.
    const seen = await observer.inspect(res);
    assert.equal(seen.held, true, JSON.stringify(seen));
    assert.equal((await holder.send('release')).released, true);
    await goneEverywhere(res);
    await holder.close();

    // On the free resource a token of one's own is an ordinary acquire, in any runtime.
    const own = await child(PYTHON, { resource: res, ttl: 5000, token: 'a-token-of-my-own-0003' });
    others.push(own);
    assert.deepEqual([own.first.ok, own.first.reentered, own.first.token], [true, false, 'a-token-of-my-own-0003']);
    await heldEverywhere(res, 'a-token-of-my-own-0003');
    assert.deepEqual(await own.send('release'), { released: true });
    await goneEverywhere(res);
    await own.close();
  } finally {
    for (const c of [holder, ...others]) if (c.proc.exitCode === null) c.proc.kill();
  }
});

test('a holder in one runtime excludes the others: Java holds, Node, Python and Go are refused; Go holds, Java is refused', { skip: SKIP }, async () => {
  const res = 'xexclude:java';
  const started = [];
  try {
    for (const [holderSide, refused] of [[JAVA, [NODE, PYTHON, GO, NODE_WASM]], [GO, [JAVA]]]) {
      const holder = await child(holderSide, { resource: res, ttl: 60000 });
      started.push(holder);
      assert.equal(holder.first.ok, true, JSON.stringify(holder.first));
      await heldEverywhere(res, holder.first.token);
      for (const side of refused) {
        const c = await child(side, { resource: res, ttl: 5000 });
        started.push(c);
        assert.equal(c.first.ok, false, `${c.name}: ${JSON.stringify(c.first)}`);
        assert.equal(c.first.code, 'NOT_ACQUIRED', `${c.name}: ${JSON.stringify(c.first)}`);
        await c.close();
      }
      assert.deepEqual(await valuesOf(res), [holder.first.token, holder.first.token, holder.first.token], 'the refused left the holder alone');
      assert.deepEqual(await holder.send('release'), { released: true });
      await goneEverywhere(res);
      await holder.close();
    }
  } finally {
    for (const c of started) if (c.proc.exitCode === null) c.proc.kill();
  }
});
