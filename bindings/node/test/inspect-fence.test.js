'use strict';
// Inspect, re-entry by token, fencing tokens and wake on release across
// processes (issue 13), against real redis-servers, on the backend under
// test. The scenarios of core/testkit/locktest and bindings/python's
// test_inspect_fence.py. Every check of all nodes after an operation polls
// with a deadline: an operation returns once a quorum answered, the last
// node's command may land a moment later.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const Redis = require('ioredis');
const { Client, Lock, NotAcquiredError, UnavailableError, LockLostError, InvalidArgumentError, CanceledError } = require('..');
const { startNodes, waitFor, settlesTo, assertNoUnhandled, withBackend } = require('./helpers');
const { freePort } = require('./servers');

let nodes;
let redis;
before(async () => {
  nodes = await startNodes(3);
  redis = nodes.urls.map((u) => new Redis(u, { maxRetriesPerRequest: 1 }));
});
after(async () => {
  await Promise.all(redis.map((r) => r.quit()));
  await nodes.stop();
  assertNoUnhandled(assert);
});

const client = (o = {}) => new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 500, ...o }));
const all = (f) => Promise.all(redis.map(f));
const valuesOf = (key) => all((r) => r.get(key));
/** Waits until every node holds `value` at `key`. */
const heldEverywhere = (key, value) => settlesTo(() => valuesOf(key), [value, value, value], `${key}=${value} on every node`);
/** Waits until no node has `key` (fence counters live in another key, which never expires). */
const goneEverywhere = (key) => settlesTo(() => valuesOf(key), [null, null, null], `${key} deleted on every node`);

// ------------------------------------------------------------ inspect

test('inspect: free, held with an owner (seen by another client too), another program\'s key, no expiry, a minority\'s value', async () => {
  const res = 'insp:basic';
  const a = client({ owner: 'worker-7' });
  const other = client();
  try {
    assert.equal(a.owner, 'worker-7');
    assert.equal(other.owner, '');
    const free = await a.inspect(res);
    assert.equal(free.held, false);
    assert.equal(free.validity, 0);
    assert.equal(free.owner, '');
    assert.deepEqual(free.nodes.map((n) => n.node), [0, 1, 2]);
    assert.deepEqual(free.nodes.map((n) => n.addr), nodes.urls.map((u) => u.split('//')[1]));
    for (const n of free.nodes) {
      assert.deepEqual([n.locked, n.holder, n.ttl, n.error], [false, false, null, null], JSON.stringify(n));
    }

    const lock = await a.acquire(res, { ttl: 10000 });
    assert.ok(lock.token.startsWith('worker-7/'), lock.token);
    assert.equal(lock.token.length, 'worker-7/'.length + 36);
    assert.equal(lock.fence, 0);
    assert.equal(lock.reentered, false);
    await heldEverywhere(res, lock.token);
    for (const who of [a, other]) {
      const got = await who.inspect(res);
      assert.equal(got.held, true, JSON.stringify(got));
      assert.equal(got.owner, 'worker-7');
      assert.ok(got.validity > 9000 && got.validity <= 10000, `validity ${got.validity}`);
      for (const n of got.nodes) {
        assert.ok(n.locked && n.holder && n.owner === 'worker-7' && n.error === null, JSON.stringify(n));
        assert.ok(n.ttl > 9000 && n.ttl <= 10000, JSON.stringify(n));
      }
    }
    await lock.release();
    await goneEverywhere(res);

    // Another program's plain SET NX: held, no owner.
    await all((r) => r.set(res, 'legacy', 'PX', 60000, 'NX'));
    let got = await a.inspect(res);
    assert.ok(got.held && got.owner === '' && got.validity > 50000, JSON.stringify(got));

    // Without expiry: validity null, every node's ttl null.
    await all((r) => r.set(res, 'forever'));
    got = await a.inspect(res);
    assert.equal(got.held, true);
    assert.equal(got.validity, null);
    assert.ok(got.nodes.every((n) => n.locked && n.holder && n.ttl === null), JSON.stringify(got));

    // A minority's value holds nothing.
    await redis[0].set(res, 'other');
    await redis[1].del(res);
    got = await a.inspect(res);
    assert.equal(got.held, false);
    assert.equal(got.validity, 0);
    assert.ok(got.nodes[0].locked && !got.nodes[0].holder && !got.nodes[1].locked, JSON.stringify(got));
    // Inspecting took nothing.
    assert.deepEqual(await valuesOf(res), ['other', null, 'forever']);
    await all((r) => r.del(res));
  } finally {
    await a.close();
    await other.close();
  }
});

test('inspect with one node of three killed: answered, that node\'s error reported; two killed: UnavailableError', async () => {
  const own = await startNodes(3);
  const c = new Client(withBackend({ nodes: own.urls, nodeTimeout: 500 }));
  const rs = own.urls.map((u) => new Redis(u, { maxRetriesPerRequest: 1, lazyConnect: true }));
  try {
    const lock = await c.acquire('insp:down', { ttl: 10000 });
    await settlesTo(() => Promise.all(rs.map((r) => r.get('insp:down'))), [lock.token, lock.token, lock.token]);
    rs.forEach((r) => r.disconnect());
    await own.kill(2);
    const got = await c.inspect('insp:down');
    assert.ok(got.held && got.validity > 5000, JSON.stringify(got));
    assert.ok(typeof got.nodes[2].error === 'string' && got.nodes[2].error.length > 0 && !got.nodes[2].locked, JSON.stringify(got));
    assert.ok(got.nodes.slice(0, 2).every((n) => n.error === null && n.holder), JSON.stringify(got));
    await own.kill(1);
    await assert.rejects(c.inspect('insp:down'), (e) => {
      assert.ok(e instanceof UnavailableError, String(e));
      assert.equal(e.code, 'UNAVAILABLE');
      assert.ok(Array.isArray(e.nodes) && e.nodes.length >= 2, JSON.stringify(e.nodes));
      assert.deepEqual(e.nodes.map((n) => n.node).sort(), [1, 2]);
      return true;
    });
  } finally {
    await c.close();
    await own.stop();
  }
});

test('inspect: an aborted signal rejects with CanceledError; the late answer is dropped', async () => {
  const a = client();
  try {
    await assert.rejects(a.inspect('insp:abort', { signal: AbortSignal.abort('no') }), (e) => e instanceof CanceledError && e.cause === 'no');
    const ac = new AbortController();
    const p = a.inspect('insp:abort', { signal: ac.signal });
    ac.abort('later');
    await assert.rejects(p, (e) => e instanceof CanceledError && e.code === 'CANCELED' && e.cause === 'later');
    const got = await a.inspect('insp:abort', { signal: new AbortController().signal });
    assert.equal(got.held, false);
  } finally {
    await a.close();
  }
});

// ------------------------------------------------------------ re-entry

test('re-entry by token from a second client: reentered, ttl raised on every node; someone else\'s token NOT_ACQUIRED; one release frees both', async () => {
  const res = 'reenter:basic';
  const a = client();
  const b = client();
  try {
    const first = await a.acquire(res, { ttl: 2000 });
    assert.equal(first.reentered, false);
    assert.equal(first.fence, 0);
    await heldEverywhere(res, first.token);
    const handed = await b.acquire(res, { ttl: 20000, wait: 0, token: first.token });
    assert.ok(handed instanceof Lock);
    assert.equal(handed.reentered, true);
    assert.equal(handed.token, first.token);
    assert.equal(handed.fence, 0);
    assert.ok(handed.validity > 19000, `validity ${handed.validity}`);
    await waitFor(async () => (await all((r) => r.pttl(res))).every((t) => t > 10000 && t <= 20000),
      { what: 'the ttl raised to 20 s on every node', timeout: 3000 });
    await assert.rejects(b.acquire(res, { ttl: 2000, wait: 0, token: 'someone-elses-token-0123' }),
      (e) => e instanceof NotAcquiredError && e.code === 'NOT_ACQUIRED');
    assert.deepEqual(await valuesOf(res), [first.token, first.token, first.token]);
    await handed.release();
    await goneEverywhere(res);
    // The key went with the hand-over's release.
    await assert.rejects(first.release(), (e) => e instanceof LockLostError);

    // A token of one's own on a free resource: an ordinary acquire.
    const fresh = await b.acquire(res, { ttl: 2000, token: 'a-token-of-my-own-0001' });
    assert.equal(fresh.reentered, false);
    assert.equal(fresh.token, 'a-token-of-my-own-0001');
    await heldEverywhere(res, 'a-token-of-my-own-0001');
    await fresh.release();
    await goneEverywhere(res);
  } finally {
    await a.close();
    await b.close();
  }
});

test('using() passes token and fence through', async () => {
  const a = client();
  try {
    const f = await a.using('reenter:using', { ttl: 5000, fence: true }, (signal, lock) => lock.fence);
    assert.ok(f >= 1, String(f));
    const r = await a.using('reenter:using', { ttl: 5000, token: 'a-token-of-my-own-0002' }, (signal, lock) => [lock.token, lock.reentered]);
    assert.deepEqual(r, ['a-token-of-my-own-0002', false]);
    await goneEverywhere('reenter:using');
  } finally {
    await a.close();
  }
});

// ------------------------------------------------------------ fences

/** The first index where `fences` do not strictly increase, or -1. */
function firstRepeat(fences) {
  for (let i = 1; i < fences.length; i++) if (fences[i] <= fences[i - 1]) return i;
  return -1;
}

test('the fence checker catches a repeat (negative control)', () => {
  assert.equal(firstRepeat([1, 2, 2]), 2);
  assert.equal(firstRepeat([3, 1]), 1);
  assert.equal(firstRepeat([5, 6, 6, 7]), 2);
  assert.equal(firstRepeat([1, 5, 9]), -1);
  assert.equal(firstRepeat([]), -1);
});

test('fences strictly increase over six contenders in two clients, in the order the sections ran', async () => {
  const res = 'fence:contend';
  const a = client();
  const b = client();
  const order = [];
  let inside = 0;
  try {
    const contender = async (w) => {
      for (let i = 0; i < 5; i++) {
        const lock = await [a, b][w % 2].acquire(res, { ttl: 5000, wait: 30000, fence: true });
        inside++;
        assert.equal(inside, 1, 'two holders at once');
        order.push(lock.fence);
        assert.equal(lock.reentered, false);
        await new Promise((r) => setImmediate(r)); // the others run while it is held
        inside--;
        await lock.release();
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5].map(contender));
  } finally {
    await a.close();
    await b.close();
  }
  assert.equal(order.length, 30);
  assert.ok(order[0] >= 1, JSON.stringify(order));
  assert.equal(firstRepeat(order), -1, JSON.stringify(order));
  assert.ok(order.every(Number.isSafeInteger));
  await goneEverywhere(res);
});

test('fenced acquires with one node of three frozen: they succeed, and fences increase', async () => {
  const res = 'fence:frozen';
  const a = client();
  try {
    let lock = await a.acquire(res, { ttl: 5000, fence: true });
    const fences = [lock.fence];
    await lock.release();
    await nodes.freeze(0);
    try {
      for (let i = 0; i < 3; i++) {
        lock = await a.acquire(res, { ttl: 5000, fence: true, wait: 0 });
        fences.push(lock.fence);
        await lock.release();
      }
    } finally {
      await nodes.thaw(0);
    }
    assert.ok(fences[0] >= 1);
    assert.equal(firstRepeat(fences), -1, JSON.stringify(fences));
  } finally {
    await a.close();
  }
  // Commands queued at the frozen node run at its thaw; the lock keys they
  // set expire with their ttl, or are deleted by the queued releases.
  await waitFor(async () => (await valuesOf(res)).every((v) => v === null), { what: `${res} gone from every node`, timeout: 15000 });
});

// ------------------------------------------------------------ bad input

test('bad input is rejected before anything is sent, naming the caller\'s option', async () => {
  const dead = `redis://127.0.0.1:${await freePort()}`;
  const c = new Client(withBackend({ nodes: [dead], nodeTimeout: 200 }));
  try {
    const cases = [
      [{ token: 'short' }, 'token'],
      [{ token: 't'.repeat(513) }, 'token'],
      [{ token: 'é'.repeat(257) }, 'token'], // 514 bytes of UTF-8
      [{ token: Buffer.from('0123456789abcdef') }, 'token'],
      [{ token: '0123456789abcdef\0' }, 'token'],
      [{ token: 7 }, 'token'],
      [{ fence: 'yes' }, 'fence'],
      [{ fence: 1 }, 'fence'],
      [{ token: 'a-token-of-my-own-0001', fence: true }, 'fence'],
    ];
    for (const [o, name] of cases) {
      for (const call of [() => c.acquire('bad:r', { ttl: 1000, wait: 0, ...o }), () => c.using('bad:r', { ttl: 1000, wait: 0, ...o }, () => 1)]) {
        await assert.rejects(call(), (e) => {
          assert.ok(e instanceof InvalidArgumentError, `${JSON.stringify(o)}: ${e}`);
          assert.equal(e.code, 'INVALID_ARGUMENT');
          assert.match(e.message, new RegExp(`invalid argument: ${name}: `), JSON.stringify(o));
          return true;
        });
      }
    }
    // token: false is no token; fence: false no fence (on a dead node: UNAVAILABLE, so they were sent)
    for (const bad of ['', 'x'.repeat(1025), null, 7, Buffer.from('r'), 'a\0b']) {
      await assert.rejects(c.inspect(bad), (e) => e instanceof InvalidArgumentError && /invalid argument: resource: /.test(e.message), String(bad));
    }
    await assert.rejects(c.inspect('bad:r', { signal: 'no' }), (e) => e instanceof InvalidArgumentError && /signal/.test(e.message));
    await assert.rejects(c.inspect('bad:r', { ttl: 1 }), (e) => e instanceof InvalidArgumentError && /unknown option "ttl"/.test(e.message));
    // The only node is down: a good request is UNAVAILABLE (so the ones above were not sent).
    await assert.rejects(c.inspect('bad:r'), (e) => e instanceof UnavailableError);
    await assert.rejects(c.acquire('bad:r', { ttl: 1000, wait: 0, token: 'a-token-of-my-own-0001' }), (e) => e instanceof UnavailableError);
  } finally {
    await c.close();
  }
  for (const bad of ['a/b', 'o'.repeat(129), 7, 'nul\0', 'é'.repeat(65)]) {
    assert.throws(() => client({ owner: bad }), (e) => e instanceof InvalidArgumentError && /invalid argument: owner: /.test(e.message), String(bad));
  }
  const longest = client({ owner: 'o'.repeat(128) });
  assert.equal(longest.owner, 'o'.repeat(128));
  await longest.close();
  await assert.rejects(longest.inspect('bad:r'), (e) => e.code === 'CLOSED');
  assert.deepEqual(await all((r) => r.keys('bad:*')), [[], [], []]);
});

// ------------------------------------------------------------ wake on release across processes

const numsub = (key) => all(async (r) => (await r.call('PUBSUB', 'NUMSUB', `liblock:released:${key}`))[1]);

test('wake on release across processes: a waiter in a child process listens on every node and is woken by this process\'s release', async () => {
  const res = 'wake:xproc';
  const a = client();
  const held = await a.acquire(res, { ttl: 30000 });
  await heldEverywhere(res, held.token);
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'waiter.js'), nodes.urls.join(','), res],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  const lines = readline.createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise((resolve) => child.on('exit', resolve));
  const nextLine = async () => {
    const r = await Promise.race([lines.next(), exited.then((code) => ({ done: true, code }))]);
    if (r.done) throw new Error(`the waiter exited (${r.code})`);
    return JSON.parse(r.value);
  };
  try {
    await waitFor(async () => (await numsub(res)).every((n) => n === 1),
      { what: 'the child listening for releases on every node', timeout: 60000 });
    // Its pub/sub connections dropped while it waits: it listens again.
    assert.deepEqual(await all((r) => r.call('CLIENT', 'KILL', 'TYPE', 'pubsub')), [1, 1, 1]);
    await waitFor(async () => (await numsub(res)).every((n) => n === 1),
      { what: 'the child listening again after its pub/sub connections were killed', timeout: 60000 });
    assert.deepEqual(await valuesOf(res), [held.token, held.token, held.token]);
    await held.release();
    const got = await nextLine();
    assert.ok(typeof got.acquired === 'string' && got.acquired !== held.token, JSON.stringify(got));
    // It holds the lock and waits no more: it stops listening on every node.
    await settlesTo(() => numsub(res), [0, 0, 0], 'NUMSUB back to 0 on every node while the child holds the lock');
    // A quorum, not every node: a node may get the child's SET before this
    // process's delete (release returns once a quorum deleted) and refuse it.
    await waitFor(async () => (await valuesOf(res)).filter((v) => v === got.acquired).length >= 2,
      { what: 'the child\'s token on a quorum', timeout: 3000 });
    child.stdin.write('release\n');
    assert.deepEqual(await nextLine(), { released: true });
    assert.equal(await exited, 0);
    await goneEverywhere(res);
  } finally {
    if (child.exitCode === null) child.kill();
    await a.close();
  }
});
