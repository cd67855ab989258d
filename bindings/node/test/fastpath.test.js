'use strict';
// The host's hot path (lib/fastpath.js): its in-place decoding of
// WRITE, STARTED, TIMER and error-free DONE against the generated codec on
// the protocol's golden vectors (and a deliberately broken decoder, which
// the same check must catch), never a byte past the step's output, and the
// sockets' `onread` path on real redis-servers: replies stepped where they
// were read, and a node closing the connection still seen.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const Redis = require('ioredis');
const P = require('../lib/protocol');
const F = require('../lib/fastpath');
const { Host } = require('../lib/host');
const { startNodes, eventually, assertNoUnhandled, BACKEND } = require('./helpers');

const golden = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'core', 'hostabi', 'spec', 'golden.json'), 'utf8'));

/** What the host takes from an action: the fields the hot path fills, by kind. */
function fieldsOf(a) {
  switch (a.kind) {
    case P.ACT.WRITE: return { kind: a.kind, conn: a.conn, data: a.data.toString('hex') };
    case P.ACT.STARTED: return { kind: a.kind, op: a.op };
    case P.ACT.TIMER: return { kind: a.kind, delayUs: a.delay_us };
    case P.ACT.DONE: return { kind: a.kind, op: a.op, lock: a.lock, fence: a.fence, reentered: a.reentered, error: a.error };
    default: return null;
  }
}

/**
 * Decodes every golden action at an odd offset with `readHot` and with the
 * generated decoder; returns the differences (as text) and how many actions
 * each kind had taken by the hot path.
 */
function compare(readHot) {
  const m = new P.Bytes(new ArrayBuffer(1 << 16));
  const bad = [];
  const taken = {};
  for (const c of golden.actions) {
    const bytes = Buffer.from(c.hex, 'hex');
    m.b.fill(0x7f);
    bytes.copy(m.b, 5);
    const end = 5 + bytes.length;
    const r = new P.Reader();
    r.start(m, 5, end);
    const want = fieldsOf(P.readAction(r));
    const a = F.scratch();
    const next = readHot(m, 5, end, a, true);
    if (next === -1) {
      // Declined: fine for any kind but the four it is for (a DONE with an error included).
      if (want && !(want.kind === P.ACT.DONE && want.error !== null)) bad.push(`${c.name}: declined`);
      continue;
    }
    taken[c.kind] = (taken[c.kind] || 0) + 1;
    if (next !== r.o) { bad.push(`${c.name}: ended at ${next}, the codec at ${r.o}`); continue; }
    const got = a.kind === P.ACT.WRITE ? { kind: a.kind, conn: a.conn, data: m.b.subarray(a.from, a.to).toString('hex') }
      : a.kind === P.ACT.STARTED ? { kind: a.kind, op: a.op }
        : a.kind === P.ACT.TIMER ? { kind: a.kind, delayUs: a.delayUs }
          : { kind: a.kind, op: a.op, lock: a.lock, fence: a.fence, reentered: a.reentered, error: null };
    try {
      assert.deepStrictEqual(got, want);
    } catch {
      bad.push(`${c.name}: ${JSON.stringify(got)} != ${JSON.stringify(want)}`);
    }
  }
  return { bad, taken };
}

test('the hot path is on for the protocol this binding speaks (a new protocol version turns it off until fastpath.js is checked)', () => {
  assert.equal(F.FOR_PROTOCOL, P.PROTOCOL_VERSION, 'a new protocol version turned the hot path off: when the layouts test below passes, ' +
    'set FOR_PROTOCOL in lib/fastpath.js to the new version (else update its layouts first)');
  assert.equal(F.enabled, true);
  assert.equal(F.RECEIVED_HEADER, P.EV_OVERHEAD.RECEIVED);
});

test('the layouts lib/fastpath.js reads are the spec\'s (core/hostabi/spec/protocol.json): on a protocol bump, this says whether FOR_PROTOCOL may follow as is', () => {
  const spec = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'core', 'hostabi', 'spec', 'protocol.json'), 'utf8'));
  const shape = (fields) => fields.map((f) => (f.items ? [f.name, f.type, shape(f.items)] : [f.name, f.type]));
  const act = (name) => { const a = spec.actions.find((x) => x.name === name); return [a.kind, shape(a.fields)]; };
  assert.deepStrictEqual(act('WRITE'), [P.ACT.WRITE, [['conn', 'u32'], ['data', 'bytes']]]);
  assert.deepStrictEqual(act('STARTED'), [P.ACT.STARTED, [['op', 'u64']]]);
  assert.deepStrictEqual(act('TIMER'), [P.ACT.TIMER, [['delay_us', 'i64']]]);
  assert.deepStrictEqual(act('DONE'), [P.ACT.DONE, [['op', 'u64'], ['lock', 'u64'], ['fence', 'i64'], ['reentered', 'u8'], ['error', 'error']]]);
  assert.deepStrictEqual(shape(spec.error.fields), [['status', 'i32'], ['message', 'str'], ['a', 'str'], ['b', 'str'],
    ['nodes', 'list', [['node', 'u16'], ['addr', 'str'], ['cause', 'str']]], ['bound', 'str'], ['limit', 'i64'], ['unit', 'str'], ['got', 'i64']]);
  // REPORT is skipped by its length when nothing observes telemetry (F.skipReport).
  assert.deepStrictEqual(act('REPORT'), [P.ACT.REPORT, [['what', 'u8'], ['outcome', 'u8'], ['op', 'u64'], ['lock', 'u64'],
    ['node', 'u16'], ['attempts', 'u32'], ['duration_us', 'i64']]]);
  assert.equal(F.REPORT_BYTES, 1 + 1 + 1 + 8 + 8 + 2 + 4 + 8);
  const rec = spec.events.find((x) => x.name === 'RECEIVED');
  assert.deepStrictEqual([rec.kind, shape(rec.fields)], [P.EV.RECEIVED, [['conn', 'u32'], ['data', 'bytes']]]);
});

test('golden vectors: the hot path decodes WRITE, STARTED, TIMER and error-free DONE as the generated codec does, and declines the rest', () => {
  const { bad, taken } = compare(F.readHot);
  assert.deepStrictEqual(bad, []);
  // Not vacuous: each of the four kinds was taken (golden.json may grow).
  for (const k of ['WRITE', 'STARTED', 'TIMER', 'DONE']) assert.ok(taken[k] >= 1, `no ${k} taken by the hot path`);
  assert.deepStrictEqual(Object.keys(taken).sort(), ['DONE', 'STARTED', 'TIMER', 'WRITE']);
});

test('negative control: the same check catches a decoder off by one field or one byte', () => {
  const wrongFence = (m, o, end, a, d) => {
    const n = F.readHot(m, o, end, a, d);
    if (n > 0 && a.kind === P.ACT.DONE) a.fence += 1;
    return n;
  };
  const shortWrite = (m, o, end, a, d) => {
    const n = F.readHot(m, o, end, a, d);
    if (n > 0 && a.kind === P.ACT.WRITE && a.to > a.from) a.to -= 1;
    return n;
  };
  const wrongLength = (m, o, end, a, d) => {
    const n = F.readHot(m, o, end, a, d);
    return n > 0 && a.kind === P.ACT.DONE ? n - 1 : n;
  };
  for (const broken of [wrongFence, shortWrite, wrongLength]) {
    assert.notDeepStrictEqual(compare(broken).bad, [], broken.name);
  }
});

test('the hot path never reads past the step\'s output: every truncated action is declined (the codec then names the fault)', () => {
  const m = new P.Bytes(new ArrayBuffer(1 << 16));
  for (const c of golden.actions) {
    const bytes = Buffer.from(c.hex, 'hex');
    m.b.fill(0);
    bytes.copy(m.b, 3);
    for (let n = 1; n < bytes.length; n++) {
      const next = F.readHot(m, 3, 3 + n, F.scratch(), true);
      assert.equal(next, -1, `${c.name} cut to ${n} of ${bytes.length} bytes`);
      const r = new P.Reader();
      r.start(m, 3, 3 + n);
      assert.throws(() => P.readAction(r), /malformed engine output/, `${c.name} cut to ${n} bytes`);
    }
  }
});

test('a DONE is left to the codec when the host asks so (telemetry on) and whenever it carries an error', () => {
  const m = new P.Bytes(new ArrayBuffer(4096));
  for (const c of golden.actions.filter((x) => x.kind === 'DONE')) {
    const bytes = Buffer.from(c.hex, 'hex');
    bytes.copy(m.b, 0);
    assert.equal(F.readHot(m, 0, bytes.length, F.scratch(), false), -1, c.name);
    assert.equal(F.readHot(m, 0, bytes.length, F.scratch(), true) === -1, c.fields.error !== null, c.name);
  }
});

test('RECEIVED: a header put in front of data already in place is the event the codec encodes', () => {
  const a = new P.Bytes(new ArrayBuffer(64));
  const b = new P.Bytes(new ArrayBuffer(64));
  const data = Buffer.from('+OK\r\n:1\r\n');
  const n = P.encReceived(a, 2, 0x01020304, data);
  data.copy(b.b, 2 + F.RECEIVED_HEADER);
  assert.equal(F.putReceivedHeader(b, 2, 0x01020304, data.length), n);
  assert.equal(b.b.subarray(2, 2 + n).toString('hex'), a.b.subarray(2, 2 + n).toString('hex'));
});

// ---------------------------------------------------------------- onread, on real nodes

let nodes;
before(async () => { nodes = await startNodes(1); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

/** A Host over the backend under test, as index.js makes one (telemetry off). */
function host(backend) {
  const ad = require(`../lib/${backend}`).load();
  return new Host(ad, ad.engineNew(JSON.stringify({ nodes: nodes.urls, node_timeout_ms: 1000 })), '', null, null, null);
}

for (const backend of new Set([BACKEND, 'wasm'])) {
  test(`${backend}: plain TCP replies come through onread; a node closing the connection is still seen and the next acquire reconnects`, async () => {
    const h = host(backend);
    const admin = new Redis(nodes.urls[0]);
    try {
      for (let i = 0; i < 20; i++) {
        const st = await h.acquire({ resource: 'fastpath:onread', resources: null, ttl: 10000, wait: 0, autoExtend: false, fence: false, token: null, permits: 0, mode: 0, value: null, signal: null, wrap: (x) => x });
        await h.release(st);
      }
      assert.equal(h.conns.size, 1);
      const [s] = h.conns.values();
      assert.equal(s.listenerCount('data'), 0, 'no data listener: replies go to onread');
      // The node drops every client connection but the admin's: 'end'
      // must still reach the host without a 'data' listener.
      await admin.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
      await eventually(() => ![...h.conns.values()].includes(s), { what: 'the host to drop the killed connection' });
      const st = await h.acquire({ resource: 'fastpath:onread', resources: null, ttl: 10000, wait: 0, autoExtend: false, fence: false, token: null, permits: 0, mode: 0, value: null, signal: null, wrap: (x) => x });
      assert.equal((await admin.get('fastpath:onread')) !== null, true);
      await h.release(st);
      assert.equal(await admin.exists('fastpath:onread'), 0);
    } finally {
      admin.disconnect();
      await h.close();
    }
  });
}

test('acquire skips re-checking only the resource name it just found valid: anything else is checked, and leaves no key', async () => {
  const { Client, InvalidArgumentError } = require('..');
  const client = new Client({ nodes: nodes.urls, backend: BACKEND, telemetry: false });
  const admin = new Redis(nodes.urls[0]);
  try {
    await (await client.acquire('fastpath:name', { ttl: 10000 })).release();
    for (const bad of ['fastpath:name\0', '\uD800fastpath:name', new String('fastpath:name'), '', 'x'.repeat(1025)]) {
      await assert.rejects(client.acquire(bad, { ttl: 10000 }), (e) => e instanceof InvalidArgumentError && /resource/.test(e.message), String(bad).slice(0, 20));
    }
    await (await client.acquire('fastpath:name', { ttl: 10000 })).release();
    assert.deepStrictEqual((await admin.keys('*fastpath:name*')).sort(), []);
  } finally {
    admin.disconnect();
    await client.close();
  }
});
