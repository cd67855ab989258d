'use strict';
// Leader election from Node: client.campaign(name,
// { value }), client.leader(name), client.observe(name) (an async
// iterator). Run on the native backend (scripts/test.sh) and on
// liblock.wasm (scripts/test-wasm.sh): the engine does the work, the host
// passes the ELECTION flag and the WATCH/LEADER messages.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const path = require('node:path');
const { Leadership, NotAcquiredError, InvalidArgumentError, CanceledError } = require('..');
const { eventually, BACKEND, nodesFixture } = require('./helpers');

const fx = nodesFixture({ nodeTimeout: 200 });
const { client } = fx;

/** No key on any node but fence counters (an election's term counter is permanent, as a fenced lock's). */
async function onlyCounters() {
  await eventually(async () => {
    const keys = (await Promise.all(fx.redis.map((r) => r.keys('*')))).flat();
    return keys.every((k) => k.endsWith('fence'));
  }, { timeout: 10000, what: 'no election key left' });
}

/** Collects an observe() stream. */
function collect(c, name, signal) {
  const seen = [];
  const done = (async () => {
    for await (const change of c.observe(name, { signal, poll: 100 })) seen.push(change);
  })();
  return { seen, done };
}

test('campaign, leader, observe: resign hands over with a higher term, every change observed in order', async () => {
  const a = client();
  const b = client();
  const o = client();
  const ac = new AbortController();
  try {
    const obs = collect(o, 'el:svc', ac.signal);
    await eventually(() => obs.seen.length >= 1, { what: 'the first report' });
    assert.equal(obs.seen[0].leader, null, 'a late observer first gets the state now: no leader');
    assert.equal(await b.leader('el:svc'), null);

    const la = await a.campaign('el:svc', { value: 'replica-a', ttl: 2000 });
    assert.ok(la instanceof Leadership);
    assert.equal(la.name, 'el:svc');
    assert.equal(la.value, 'replica-a');
    assert.ok(la.term >= 1);
    assert.ok(la.validity > 0);
    const l = await b.leader('el:svc');
    assert.equal(l.value, 'replica-a');
    assert.equal(l.term, la.term);
    assert.ok(l.validity > 0);
    // The lock of the same name is another key.
    const m = await b.acquire('el:svc', { ttl: 1000, wait: 0 });
    await m.release();
    // A bounded campaign is refused; an unbounded one waits and takes over.
    await assert.rejects(b.campaign('el:svc', { value: 'b', wait: 0 }), NotAcquiredError);
    const pending = b.campaign('el:svc', { value: 'replica-b' });
    await eventually(() => obs.seen.some((c) => c.term === la.term), { what: 'the observer sees a' });
    await la.resign();
    const lb = await pending;
    assert.ok(lb.term > la.term, `${lb.term} > ${la.term}`);
    await eventually(() => obs.seen.some((c) => c.term === lb.term), { what: 'the observer sees b' });
    await lb.resign();
    await eventually(() => obs.seen.at(-1).leader === null, { what: 'the observer sees nobody' });
    ac.abort();
    await obs.done;
    let last = 0;
    for (const c of obs.seen) {
      assert.equal(c.name, 'el:svc');
      if (c.leader === null) continue;
      assert.ok(c.term > last, `in order: ${JSON.stringify(obs.seen)}`);
      last = c.term;
    }
    assert.deepEqual(obs.seen.filter((c) => c.leader !== null).map((c) => c.leader.value), ['replica-a', 'replica-b']);
    // Each item's leader is a Leader, as Client#leader gives it (and as Go's and Python's observe give theirs).
    for (const c of obs.seen.filter((x) => x.leader !== null)) {
      assert.deepEqual(Object.keys(c.leader).sort(), ['name', 'owner', 'term', 'validity', 'value']);
      assert.equal(c.leader.term, c.term);
    }
  } finally {
    await Promise.all([a.close(), b.close(), o.close()]);
  }
  await onlyCounters();
});

test('the leader\'s process killed: another campaigner takes over with a higher term', async () => {
  const o = client();
  const script = `
    const { Client } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const c = new Client({ nodes: ${JSON.stringify(fx.nodes.urls)}, nodeTimeout: 200, backend: ${JSON.stringify(BACKEND)} });
    c.campaign('el:kill', { value: process.argv[1], ttl: 800 }).then((l) => console.log('LEADER ' + l.term));
    setInterval(() => {}, 1000);`;
  const procs = [0, 1, 2].map((i) => {
    const p = spawn(process.execPath, ['-e', script, `p${i}`], { stdio: ['ignore', 'pipe', 'inherit'], env: process.env });
    p.out = '';
    p.stdout.on('data', (d) => { p.out += d; });
    return p;
  });
  const ac = new AbortController();
  const obs = collect(o, 'el:kill', ac.signal);
  try {
    let last = 0;
    for (let round = 0; round < 2; round++) {
      const l = await eventually(async () => {
        const x = await o.leader('el:kill');
        return x && x.term > last ? x : null;
      }, { timeout: 15000, what: `leader ${round}` });
      const p = procs[Number(l.value.slice(1))];
      await eventually(() => /LEADER (\d+)/.test(p.out), { what: 'the leader says so' });
      assert.equal(Number(/LEADER (\d+)/.exec(p.out)[1]), l.term);
      assert.ok(l.term > last);
      last = l.term;
      await eventually(() => obs.seen.some((c) => c.term === l.term), { what: 'observed' });
      p.kill('SIGKILL');
    }
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    ac.abort();
    await obs.done;
    await o.close();
  }
  const terms = obs.seen.filter((c) => c.leader !== null).map((c) => c.term);
  assert.deepEqual(terms, [...terms].sort((x, y) => x - y), 'in order');
  assert.equal(new Set(terms).size, terms.length, 'each once');
});

test('bad input is refused naming the parameter, and leaves nothing', async () => {
  const c = client();
  try {
    const bad = async (p, name) => assert.rejects(p, (e) => e instanceof InvalidArgumentError && e.message.includes(`invalid argument: ${name}:`), name);
    await bad(c.campaign('', { value: 'v' }), 'name');
    await bad(c.campaign(5, { value: 'v' }), 'name');
    await bad(c.campaign('e', {}), 'value');
    await bad(c.campaign('e', { value: '' }), 'value');
    await bad(c.campaign('e', { value: 7 }), 'value');
    await bad(c.campaign('e', { value: 'x'.repeat(4097) }), 'value');
    await bad(c.campaign('e', { value: 'v', ttl: 0 }), 'ttl');
    await bad(c.campaign('e', { value: 'v', wait: -1 }), 'wait');
    await bad(c.campaign('e', { value: 'v', signal: 'no' }), 'signal');
    await bad(c.campaign('e', { value: 'v', bogus: 1 }), 'options');
    await bad(c.campaign('e'), 'options');
    await bad(c.leader(''), 'name');
    await bad(c.leader('e', { signal: 1 }), 'signal');
    assert.throws(() => c.observe(''), (e) => e instanceof InvalidArgumentError && /name:/.test(e.message));
    assert.throws(() => c.observe('e', { poll: -5 }), (e) => e instanceof InvalidArgumentError && /poll:/.test(e.message));
    // An aborted signal cancels a waiting campaign.
    const leader = await c.campaign('el:bad', { value: 'v', ttl: 2000 });
    const other = client();
    const ac = new AbortController();
    const waiting = other.campaign('el:bad', { value: 'w', signal: ac.signal });
    ac.abort();
    await assert.rejects(waiting, CanceledError);
    await other.close();
    await leader.resign();
  } finally {
    await c.close();
  }
  await onlyCounters();
});

test('close ends an observer and resigns', async () => {
  const c = client();
  const o = client();
  await c.campaign('el:close', { value: 'v', ttl: 2000 });
  const it = o.observe('el:close');
  const first = await it.next();
  assert.equal(first.value.leader.value, 'v');
  assert.equal(first.value.leader.name, 'el:close');
  await c.close();
  const next = await it.next();
  assert.equal(next.value.leader, null, 'the resignation is observed');
  await o.close();
  assert.equal((await it.next()).done, true, 'closing the client ends the stream');
  await onlyCounters();
});

test('a node frozen under a leader: it keeps leading past its lease; a bounded campaign is refused', async () => {
  const a = client();
  const b = client();
  try {
    // A 1.5 s lease, not less: an extension is due every third of it, and
    // a loaded machine can stall the event loop for a few hundred ms (the
    // test is about a frozen node, not about stalls).
    const la = await a.campaign('el:frozen', { value: 'A', ttl: 1500 });
    await fx.nodes.freeze(0);
    try {
      const until = Date.now() + 3100; // past two leases: it was extended on the two nodes left
      await eventually(() => Date.now() > until, { what: 'two leases pass' });
      assert.equal(la.lost, false);
      await assert.rejects(b.campaign('el:frozen', { value: 'B', wait: 100 }), NotAcquiredError);
      const now = await b.leader('el:frozen');
      assert.equal(now.term, la.term);
    } finally {
      await fx.nodes.thaw(0);
    }
    await la.resign();
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
  await onlyCounters();
});
