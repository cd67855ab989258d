'use strict';
// The host's codec against core/hostabi/PROTOCOL.md, byte by byte
// (no library, no Redis): events as the engine decodes them, actions as it
// encodes them.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const P = require('../lib/protocol');

const region = () => new P.Bytes(new ArrayBuffer(256));
const hex = (m, n) => m.b.subarray(0, n).toString('hex');
const u32 = (x) => { const b = Buffer.alloc(4); b.writeUInt32LE(x); return b.toString('hex'); };
const i64 = (x) => { const b = Buffer.alloc(8); b.writeBigInt64LE(BigInt(x)); return b.toString('hex'); };
const str = (s) => u32(Buffer.byteLength(s)) + Buffer.from(s).toString('hex');
// RELEASE, CANCEL, FORGET, LOCK_INFO: one u64 each.
const ENC_ID = { [P.EV.RELEASE]: P.encRelease, [P.EV.CANCEL]: P.encCancel, [P.EV.FORGET]: P.encForget, [P.EV.LOCK_INFO]: P.encLockInfo };
const encId = (m, o, kind, id) => ENC_ID[kind](m, o, id);
/**
 * The actions in [o, end) of m, read with the generated decoder as lib/host.js
 * reads them: each as an array, its kind and then its fields in the spec's
 * order (WRITE data as a latin1 string, INSPECTED in the API's shape).
 */
// An error record's fields of protocol 4 when no bound was crossed.
const NO_BOUND = { bound: '', limit: 0, unit: '', got: 0 };
function readAll(m, o, end) {
  const r = new P.Reader();
  r.start(m, o, end);
  const got = [];
  while (r.o < end) {
    const a = P.readAction(r);
    if (a === null) throw new Error(`unknown action ${m.b[r.o - 1]}`);
    if (a.kind === P.ACT.INSPECTED) got.push([a.kind, a.op, P.inspectionOf(a)]);
    else got.push(Object.values(a).map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : v)));
  }
  assert.equal(r.o, end, 'read exactly to the end');
  return got;
}

test('events: ACQUIRE, EXTEND, RELEASE/CANCEL/FORGET/LOCK_INFO, CLOSE/TICK', () => {
  const m = region();
  let n = P.encAcquire(m, 0, 'orders:é', 10000, 2 ** 40 + 3, P.ACQ.AUTO_EXTEND);
  assert.equal(hex(m, n), '01' + str('orders:é') + i64(10000) + i64(2 ** 40 + 3) + '01');
  n = P.encAcquire(m, 0, 'r', 1, -1, 0); // a negative wait goes to the engine as i64 (it rejects it)
  assert.equal(hex(m, n), '01' + str('r') + i64(1) + i64(-1) + '00');
  n = P.encExtend(m, 0, 2 ** 53 - 1, 5000);
  assert.equal(hex(m, n), '02' + i64(2 ** 53 - 1) + i64(5000));
  for (const k of [P.EV.RELEASE, P.EV.CANCEL, P.EV.FORGET, P.EV.LOCK_INFO]) {
    n = encId(m, 0, k, 0x123456789a);
    assert.equal(hex(m, n), k.toString(16).padStart(2, '0') + i64(0x123456789a));
  }
  assert.equal(hex(m, P.encClose(m, 0)), '06');
  assert.equal(hex(m, P.encTick(m, 0)), '0a');
});

test('events: OPENED, RECEIVED (a slice of the data), CONN_FAILED', () => {
  const m = region();
  assert.equal(hex(m, P.encOpened(m, 0, 7)), '07' + u32(7));
  const data = Buffer.from('xx+OK\r\nyy');
  assert.equal(hex(m, P.encReceived(m, 0, 9, data.subarray(2, 7))), '08' + u32(9) + u32(5) + Buffer.from('+OK\r\n').toString('hex'));
  assert.equal(hex(m, P.encConnFailed(m, 0, 3, 'connect ECONNREFUSED')), '09' + u32(3) + str('connect ECONNREFUSED'));
});

test('actions: every kind, with errors and node causes', () => {
  const noErr = '00'.repeat(42); // i32 0, three empty str, u16 0, then (protocol 4) empty bound, i64 0, empty unit, i64 0
  const err = (status, msg, a, b, nodes = [], bound = ['', 0, '', 0]) => {
    const s = Buffer.alloc(4); s.writeInt32LE(status);
    const n = Buffer.alloc(2); n.writeUInt16LE(nodes.length);
    return s.toString('hex') + str(msg) + str(a) + str(b) + n.toString('hex') +
      nodes.map(([i, addr, cause]) => { const x = Buffer.alloc(2); x.writeUInt16LE(i); return x.toString('hex') + str(addr) + str(cause); }).join('') +
      str(bound[0]) + i64(bound[1]) + str(bound[2]) + i64(bound[3]);
  };
  const bytes = Buffer.from([
    '01' + u32(1) + u32(2) + '03' + str('tcp') + str('[::1]:6380') + str('::1'), // OPEN
    '02' + u32(1) + u32(3) + Buffer.from('abc').toString('hex'), // WRITE
    '03' + u32(1), // CLOSE
    '04' + i64(5) + i64(6) + i64(0) + '00' + noErr, // DONE ok (fence 0, not re-entered)
    '04' + i64(7) + i64(0) + i64(0) + '00' + err(5, 'liblock: unavailable', 'acquire', '2 of 3 failed', [[0, 'h:1', 'refused'], [2, 'h:3', 'timeout']]),
    '05' + i64(6) + err(2, 'liblock: lock lost', '', ''), // LOST
    '06' + i64(1500), // TIMER
    '07', // CLOSED
    '08' + i64(9), // STARTED
    '09' + err(3, 'liblock: invalid argument: ttl: must be ...', 'ttl', 'must be ...', [], ['max', 86400000, 'ms', 2 ** 40]), // REJECTED
    '0a' + '01', // CANCELED
    '0b' + str('r') + str('p:r') + str('tok') + i64(1000) + i64(-1) + '01' + noErr, // INFO
  ].join(''), 'hex');
  const m = new P.Bytes(new ArrayBuffer(bytes.length + 3));
  bytes.copy(m.b, 3);
  const got = readAll(m, 3, bytes.length + 3);
  assert.deepEqual(got, [
    [1, 1, 2, 3, 'tcp', '[::1]:6380', '::1'],
    [2, 1, 'abc'],
    [3, 1],
    [4, 5, 6, 0, 0, null],
    [4, 7, 0, 0, 0, { status: 5, message: 'liblock: unavailable', a: 'acquire', b: '2 of 3 failed', nodes: [{ node: 0, addr: 'h:1', cause: 'refused' }, { node: 2, addr: 'h:3', cause: 'timeout' }], ...NO_BOUND }],
    [5, 6, { status: 2, message: 'liblock: lock lost', a: '', b: '', nodes: [], ...NO_BOUND }],
    [6, 1500],
    [7],
    [8, 9],
    [9, { status: 3, message: 'liblock: invalid argument: ttl: must be ...', a: 'ttl', b: 'must be ...', nodes: [], bound: 'max', limit: 86400000, unit: 'ms', got: 2 ** 40 }],
    [10, 1],
    [11, 'r', 'p:r', 'tok', 1000, -1, 1, null],
  ]);
});

test('error records become the error classes, with the caller\'s argument names', () => {
  const E = require('../lib/errors');
  const e = E.errorOf({ status: 3, message: 'liblock: invalid argument: ttl_ms: must be ≥ 1', a: 'ttl_ms', b: 'must be ≥ 1', nodes: null });
  assert.ok(e instanceof E.InvalidArgumentError);
  assert.equal(e.message, 'liblock: invalid argument: ttl: must be ≥ 1');
  assert.equal(E.jsArgNames('liblock: invalid argument: node_timeout_ms: must be > 0'), 'liblock: invalid argument: nodeTimeout: must be > 0');
  assert.equal(E.jsArgNames('liblock: invalid argument: nodes[0]: empty URL'), 'liblock: invalid argument: nodes[0]: empty URL');
  const u = E.errorOf({ status: 5, message: 'liblock: unavailable', a: 'acquire', b: 'x', nodes: [{ node: 1, addr: 'h:2', cause: 'c' }] });
  assert.ok(u instanceof E.UnavailableError);
  assert.deepEqual(u.nodes, [{ node: 1, addr: 'h:2', cause: 'c' }]);
  assert.ok(E.errorOf({ status: 99, message: 'm', a: '', b: '', nodes: null }) instanceof E.InternalError);
});

// ------------------------------------------------------------ INSPECT, FENCE, ACQUIRE's flags bit 1/2, LOCK_INFO
// Hand-written vectors from PROTOCOL.md (field by field, little-endian
// literals, not built with the helpers above), so that a wrong offset or
// width fails; bindings/python/tests/test_proto.py has the same values.

const TOK = Buffer.from('a-token-of-my-own-0001').toString('hex'); // 22 bytes: length 16000000
const HEAD_R_5000_0 = '01' + '01000000' + '72' + '8813000000000000' + '0000000000000000'; // ACQUIRE "r", ttl 5000, wait 0

test('events: ACQUIRE flags bit 1 (fence) and bit 2 (a str token follows the flags), INSPECT, LOCK_INFO, byte for byte', () => {
  const m = region();
  // The caller sets bit 2 (TOKEN) with a token, as lib/host.js does.
  const enc = (res, ttl, wait, flags, token) => hex(m, P.encAcquire(m, 0, res, ttl, wait, token === undefined ? flags : flags | P.ACQ.TOKEN, token));
  assert.equal(P.ACQ.AUTO_EXTEND, 1);
  assert.equal(P.ACQ.FENCE, 2);
  assert.equal(P.ACQ.TOKEN, 4);
  assert.equal(enc('r', 5000, 0, 0), HEAD_R_5000_0 + '00');
  assert.equal(enc('r', 5000, 0, P.ACQ.FENCE), HEAD_R_5000_0 + '02');
  assert.equal(enc('r', 5000, 0, P.ACQ.AUTO_EXTEND | P.ACQ.FENCE), HEAD_R_5000_0 + '03');
  // With bit 2, the token's str comes right after the flags byte.
  assert.equal(enc('r', 5000, 0, 0, 'a-token-of-my-own-0001'), HEAD_R_5000_0 + '04' + '16000000' + TOK);
  assert.equal(enc('r', 5000, 0, P.ACQ.AUTO_EXTEND, 'a-token-of-my-own-0001'), HEAD_R_5000_0 + '05' + '16000000' + TOK);
  // The length is in bytes of UTF-8, not characters: 8 × 'é' is 16 bytes.
  assert.equal(enc('r', 5000, 0, 0, 'é'.repeat(8)), HEAD_R_5000_0 + '04' + '10000000' + 'c3a9'.repeat(8));
  // Fence and token together are encoded as asked: the engine rejects them (a = "fence", below).
  assert.equal(enc('r', 5000, 0, P.ACQ.FENCE, 'a-token-of-my-own-0001'), HEAD_R_5000_0 + '06' + '16000000' + TOK);
  // Wait and ttl are i64 at their own offsets (after the resource's str).
  assert.equal(enc('ab', 0x0102, 2 ** 40 + 3, P.ACQ.FENCE),
    '01' + '02000000' + '6162' + '0201000000000000' + '0300000000010000' + '02');
  // Written at an offset inside the buffer, nothing before it is touched.
  m.b.fill(0xee);
  const n = P.encAcquire(m, 3, 'r', 5000, 0, P.ACQ.TOKEN, 'a-token-of-my-own-0001');
  assert.equal(m.b.subarray(0, 3 + n + 1).toString('hex'), 'eeeeee' + HEAD_R_5000_0 + '04' + '16000000' + TOK + 'ee');

  assert.equal(P.EV.INSPECT, 12);
  assert.equal(hex(m, P.encInspect(m, 0, 'orders:42', 0)), '0c' + '09000000' + '6f72646572733a3432' + '00');
  assert.equal(hex(m, P.encInspect(m, 0, 'é', 0)), '0c' + '02000000' + 'c3a9' + '00');
  assert.equal(P.EV.LOCK_INFO, 11);
  assert.equal(hex(m, P.encLockInfo(m, 0, 12345)), '0b' + '3930000000000000');
  assert.equal(hex(m, P.encLockInfo(m, 0, 2 ** 53 - 1)), '0b' + 'ffffffffffff1f00');
});

/**
 * Decodes the actions in `bytes` the way lib/host.js reads them, with the
 * bytes placed at offset 5 of a larger region and followed by garbage, so
 * that only the `end` given to the Reader keeps it from reading on.
 */
function decode(bytes) {
  const m = new P.Bytes(new ArrayBuffer(bytes.length + 5 + 64));
  m.b.fill(0x7f);
  bytes.copy(m.b, 5);
  return readAll(m, 5, 5 + bytes.length);
}
const H = (s) => Buffer.from(s, 'hex');
const S = (s) => { const b = Buffer.from(s); return Buffer.concat([Buffer.from([b.length, 0, 0, 0]), b]).toString('hex'); };

// Protocol 3's leader election ends INSPECTED with the leader's term (i64)
// and value (str): 0 and '' for a lock.
const NO_LEADER = '0000000000000000' + '00000000';
// INSPECTED (op 9): held, validity 9895 ms, owner "worker-7", 3 nodes:
// 0 locked+holder owner "worker-7" ttl 9998; 1 locked (another value), no
// owner, no expiry (-1); 2 failed (ttl 0, a cause).
const INSPECTED_HELD = '0c' + '0900000000000000' + '01' + 'a726000000000000' + S('worker-7') + '0300' +
  '0000' + S('127.0.0.1:1') + '03' + S('worker-7') + '0e27000000000000' + '00000000' +
  '0100' + S('127.0.0.1:2') + '01' + '00000000' + 'ffffffffffffffff' + '00000000' +
  '0200' + S('[::1]:3') + '00' + '00000000' + '0000000000000000' + S('dial tcp: connection refused') +
  '00000000' + '0000' + NO_LEADER; // protocol 3: permits 0 (a mutex), no held permits
// Engine protocol 2: DONE carries the fence and re-entry (FENCE, kind 13, is retired):
// op 3, lock 4, fence 17, reentered 0; then op 5, lock 2^53-1, fence 2^40+5, reentered 1.
const NO_ERROR = '00'.repeat(42); // status 0 (protocol 4: 42 bytes, the bound's fields included)
const FENCES = '04' + '0300000000000000' + '0400000000000000' + '1100000000000000' + '00' + NO_ERROR +
  '04' + '0500000000000000' + 'ffffffffffff1f00' + '0500000000010000' + '01' + NO_ERROR;
// INFO of a released lock lost (flags bit 1), validity 0, with its LOST error.
const INFO_LOST = '0b' + S('r') + S('p:r') + S('worker-7/tok') + 'e803000000000000' + '0000000000000000' + '02' +
  '02000000' + S('liblock: lock lost') + '00000000' + '00000000' + '0000' + '00'.repeat(24);

test('actions: DONE with a fence and a re-entry, INSPECTED (held, per-node flags, no-expiry ttl, a failed node), INFO with an error, decoded from PROTOCOL.md bytes', () => {
  assert.equal(P.ACT.INSPECTED, 12);
  assert.equal(P.ACT.FENCE, undefined); // retired in engine protocol 2
  assert.equal(P.PROTOCOL_VERSION, 5);
  assert.equal(P.ACT.INFO, 11);
  const got = decode(H(FENCES + INSPECTED_HELD +
    '0c' + '0a00000000000000' + '01' + 'ffffffffffffffff' + '00000000' + '0000' + '00000000' + '0000' + NO_LEADER + // held with no expiry, no node listed
    '0c' + '0b00000000000000' + '00' + '0000000000000000' + '00000000' + '0000' + '00000000' + '0000' + NO_LEADER + // not held
    // a semaphore of 3 permits, slot 2 held by "w" for 900 ms
    '0c' + '0c00000000000000' + '01' + '8403000000000000' + S('w') + '0000' + '03000000' + '0100' + '02000000' + S('w') + '8403000000000000' + '00' + NO_LEADER +
    // a read-write lock's readers (protocol 4: holders of mode 1): "r1" for 800 ms, "" without expiry
    '0c' + '0e00000000000000' + '00' + '0000000000000000' + S('') + '0000' + '00000000' + '0200' +
    '00000000' + S('r1') + '2003000000000000' + '01' + '00000000' + S('') + 'ffffffffffffffff' + '01' + NO_LEADER +
    // an election's leader: term 7, value "v" (held 1, validity 500)
    '0c' + '0d00000000000000' + '01' + 'f401000000000000' + S('') + '0000' + '00000000' + '0000' + '0700000000000000' + S('v') +
    '04' + '0500000000000000' + '0400000000000000' + '0000000000000000' + '00' + NO_ERROR + // a DONE without a fence
    INFO_LOST));
  assert.deepEqual(got, [
    [4, 3, 4, 17, 0, null],
    [4, 5, 2 ** 53 - 1, 2 ** 40 + 5, 1, null],
    [12, 9, {
      held: true, validity: 9895, owner: 'worker-7', nodes: [
        { node: 0, addr: '127.0.0.1:1', locked: true, holder: true, owner: 'worker-7', ttl: 9998, error: null },
        { node: 1, addr: '127.0.0.1:2', locked: true, holder: false, owner: '', ttl: null, error: null },
        { node: 2, addr: '[::1]:3', locked: false, holder: false, owner: '', ttl: 0, error: 'dial tcp: connection refused' },
      ],
    }],
    [12, 10, { held: true, validity: null, owner: '', nodes: [] }],
    [12, 11, { held: false, validity: 0, owner: '', nodes: [] }],
    [12, 12, { held: true, validity: 900, owner: 'w', nodes: [], permits: 3, inUse: 1, holders: [{ slot: 2, owner: 'w', validity: 900 }] }],
    [12, 14, { held: false, validity: 0, owner: '', nodes: [], readers: [{ owner: 'r1', validity: 800 }, { owner: '', validity: null }] }],
    [12, 13, { held: true, validity: 500, owner: '', nodes: [], term: 7, value: 'v' }],
    [4, 5, 4, 0, 0, null],
    [11, 'r', 'p:r', 'worker-7/tok', 1000, 0, 2, { status: 2, message: 'liblock: lock lost', a: '', b: '', nodes: [], ...NO_BOUND }],
  ]);
});

const MALFORMED = /^liblock: malformed engine output: (u8|u16|u32|i32|u64|i64|str|bytes) of \d+ bytes at byte \d+ runs past the end \(byte \d+\)$/;
const rejectsMalformed = (bytes, what) => assert.throws(() => decode(bytes), (e) => {
  assert.equal(e.name, 'InternalError', `${what}: ${e.stack}`);
  assert.equal(e.code, 'INTERNAL');
  assert.match(e.message, MALFORMED, what);
  return true;
}, what);

test('truncated actions are rejected with a clear error at every cut, never decoded from the bytes beyond the end', () => {
  for (const [name, vec] of [['INSPECTED', INSPECTED_HELD], ['DONE', FENCES.slice(0, 2 * (1 + 8 + 8 + 8 + 1 + 42))], ['INFO', INFO_LOST],
    ['WRITE', '02' + '01000000' + '03000000' + '616263']]) {
    const full = H(vec);
    assert.equal(decode(full).length, 1, name);
    for (let cut = 1; cut < full.length; cut++) rejectsMalformed(full.subarray(0, cut), `${name} cut at ${cut} of ${full.length}`);
  }
});

test('malformed lengths are rejected: a str, a bytes field or a node count running past the end', () => {
  // INSPECTED whose owner claims 2^32-1 bytes.
  rejectsMalformed(H('0c' + '0900000000000000' + '01' + 'a726000000000000' + 'ffffffff' + '6162'), 'owner length');
  // INSPECTED announcing 65535 nodes and carrying one.
  rejectsMalformed(H('0c' + '0900000000000000' + '00' + '0000000000000000' + '00000000' + 'ffff' +
    '0000' + S('h:1') + '00' + '00000000' + 'ffffffffffffffff' + '00000000'), 'node count');
  // A node's cause one byte longer than what is left.
  rejectsMalformed(H('0c' + '0900000000000000' + '00' + '0000000000000000' + '00000000' + '0100' +
    '0000' + S('h:1') + '00' + '00000000' + 'ffffffffffffffff' + '05000000' + '61626364'), 'cause length');
  // An error whose node list is cut short.
  rejectsMalformed(H('04' + '0500000000000000' + '0000000000000000' + '0000000000000000' + '00' + '05000000' + S('u') + S('acquire') + S('x') + '0200' +
    '0000' + S('h:1') + S('refused')), 'error nodes');
  // WRITE data longer than what is left.
  rejectsMalformed(H('02' + '01000000' + '09000000' + '616263'), 'WRITE data');
  assert.throws(() => decode(H('63')), /unknown action 99/); // readAction knows no kind 99
});

test('a rejection carries the bound it crossed (protocol 4), and Node words it in ms, bytes and counts, naming its own option', () => {
  const E = require('../lib/errors');
  const word = (a, bound, limit, unit, got) => E.errorOf({ status: 3, message: 'm', a, b: 'engine words', nodes: [], bound, limit, unit, got }).message;
  assert.equal(word('ttl_ms', 'max', 86400000, 'ms', 90000000),
    'liblock: invalid argument: ttl: must be at most 86400000 ms (86400 s), got 90000000 ms (90000 s)');
  assert.equal(word('wait_ms', 'min', 0, 'ms', -1), 'liblock: invalid argument: wait: must be at least 0 ms, got -1 ms');
  assert.equal(word('resource', 'min', 1, 'bytes', 0), 'liblock: invalid argument: resource: must not be empty');
  assert.equal(word('value', 'max', 4096, 'bytes', 4097), 'liblock: invalid argument: value: must be at most 4096 bytes of UTF-8, got 4097 bytes');
  assert.equal(word('permits', 'max', 1024, 'count', 1025), 'liblock: invalid argument: permits: must be at most 1024, got 1025');
  assert.equal(word('wait_replicas', 'max', 100, 'count', 101), 'liblock: invalid argument: waitReplicas: must be at most 100, got 101');
  assert.equal(word('resources[2]', '', 0, '', 0), 'liblock: invalid argument: resources[2]: engine words', 'no bound: the engine\'s reason');

  // From the engine under test: the REJECTED of an ACQUIRE the binding's own checks would have refused.
  const { BACKEND } = require('./helpers');
  const ad = require(BACKEND === 'wasm' ? '../lib/wasm' : '../lib/native').load();
  const { Host, stats } = require('../lib/host');
  const pending = stats.pending;
  const host = new Host(ad, ad.engineNew(JSON.stringify({ nodes: ['redis://127.0.0.1:1'] })), '', null, null, null);
  try {
    const rejects = (fn, re) => assert.throws(fn, (e) => e instanceof E.InvalidArgumentError && re.test(e.message), String(re));
    const acquire = (resource, ttl, wait, req) => host.acquireNow({ resource, resources: null, ttl, wait, autoExtend: false, fence: false,
      token: null, permits: 0, mode: 0, value: null, signal: null, wrap: (st) => st, ...req });
    rejects(() => acquire('r', 86400001, 0), /^liblock: invalid argument: ttl: must be at most 86400000 ms \(86400 s\), got 86400001 ms$/);
    rejects(() => acquire('r', 1000, -5), /^liblock: invalid argument: wait: must be at least 0 ms, got -5 ms$/);
    rejects(() => acquire('r', 1000, 0, { token: 'short' }), /^liblock: invalid argument: token: must be at least 16 bytes of UTF-8, got 5 bytes$/);
    rejects(() => acquire('r', 1000, 0, { permits: 1025 }), /^liblock: invalid argument: permits: must be at most 1024, got 1025$/);
    rejects(() => acquire('', 1000, 0), /^liblock: invalid argument: resource: must not be empty$/);
    assert.equal(stats.pending, pending, 'nothing pending after the rejections');
  } finally {
    host.close();
  }
});

test('the engine (backend under test) answers the new events as decoded: LOCK_INFO of an unknown lock, a short token, fence with token, INSPECT', () => {
  const { BACKEND } = require('./helpers');
  const ad = require(BACKEND === 'wasm' ? '../lib/wasm' : '../lib/native').load();
  const h = ad.engineNew(JSON.stringify({ nodes: ['redis://127.0.0.1:1', 'redis://127.0.0.1:2', 'redis://127.0.0.1:3'] }));
  const step = (encode) => {
    const m = ad.mem();
    const len = encode ? encode(m, ad.inOff) : 0;
    const n = ad.step(h, len);
    assert.ok(n >= 0, `step returned ${n}`);
    return readAll(ad.mem(), ad.outOff, ad.outOff + n);
  };
  const rejected = (got, status, a) => {
    assert.equal(got.length, 1, JSON.stringify(got));
    assert.equal(got[0][0], P.ACT.REJECTED);
    assert.equal(got[0][1].status, status, JSON.stringify(got));
    assert.equal(got[0][1].a, a, JSON.stringify(got));
  };
  try {
    step(null); // whatever it wants at the start (a timer)
    rejected(step((m, o) => P.encLockInfo(m, o, 12345)), 4, ''); // LOCK_INVALID_HANDLE
    rejected(step((m, o) => P.encAcquire(m, o, 'r', 1000, 0, P.ACQ.TOKEN, 'short')), 3, 'token');
    rejected(step((m, o) => P.encAcquire(m, o, 'r', 1000, 0, P.ACQ.FENCE | P.ACQ.TOKEN, 'a-token-of-my-own-0001')), 3, 'fence');
    rejected(step((m, o) => P.encInspect(m, o, '', 0)), 3, 'resource');
    let got = step((m, o) => P.encInspect(m, o, 'r', 0));
    assert.equal(got[0][0], P.ACT.STARTED, JSON.stringify(got));
    assert.deepEqual(got.filter((a) => a[0] === P.ACT.OPEN).map((a) => [a[2], a[4], a[5]]),
      [[0, 'tcp', '127.0.0.1:1'], [1, 'tcp', '127.0.0.1:2'], [2, 'tcp', '127.0.0.1:3']]);
    got = step((m, o) => P.encAcquire(m, o, 'r', 1000, 0, P.ACQ.FENCE));
    assert.equal(got[0][0], P.ACT.STARTED, JSON.stringify(got));
    got = step((m, o) => P.encAcquire(m, o, 'r', 1000, 0, P.ACQ.TOKEN, 'a-token-of-my-own-0001'));
    assert.equal(got[0][0], P.ACT.STARTED, JSON.stringify(got));
    // Flag bits 3..7 make the event malformed: the step itself is refused (-LOCK_INVALID_ARGUMENT).
    const m = ad.mem();
    const len = P.encAcquire(m, ad.inOff, 'r', 1000, 0, 0);
    m.b[ad.inOff + len - 1] = 0x08;
    assert.equal(ad.step(h, len), -3);
  } finally {
    ad.free(h);
  }
});

test('the host settles acquires that got their lock first: the new holder enters before the releaser goes on', () => {
  // One step ends a release and hands its key to waiters of the same client,
  // in the engine's order (the release, then the acquires); failures keep their place.
  const { Host } = require('../lib/host');
  const ok = '00'.repeat(42);
  const fail = (() => { const s = Buffer.alloc(4); s.writeInt32LE(1); return s.toString('hex') + str('liblock: not acquired') + str('') + str('') + '0000' + '00'.repeat(24); })();
  const done = (op, lock, err) => '04' + i64(op) + i64(lock) + i64(0) + '00' + err;
  const out = Buffer.from(done(1, 0, ok) + done(2, 7, ok) + done(3, 0, fail) + done(4, 8, ok) + done(5, 0, ok), 'hex');
  const mem = new P.Bytes(new ArrayBuffer(1 << 20));
  out.copy(mem.b, 0);
  const adapter = { step: () => out.length, mem: () => mem, outOff: 0, outCap: mem.b.length };
  const host = new Host(adapter, 1, 'p:');
  const order = [];
  host.done = (op) => order.push(op);
  host.run(0);
  assert.deepEqual(order, [2, 4, 1, 3, 5]);
});

test('golden vectors (core/hostabi/spec/golden.json): the generated codec encodes every event and decodes every action as the Go codec does', () => {
  const fs = require('node:fs');
  const path = require('node:path');
  const dir = path.join(__dirname, '..', '..', '..', 'core', 'hostabi', 'spec');
  const spec = JSON.parse(fs.readFileSync(path.join(dir, 'protocol.json'), 'utf8'));
  const golden = JSON.parse(fs.readFileSync(path.join(dir, 'golden.json'), 'utf8'));
  const camel = (s) => s.toLowerCase().split('_').map((w) => w[0].toUpperCase() + w.slice(1)).join('');
  const m = new P.Bytes(new ArrayBuffer(1 << 16));
  assert.ok(golden.events.length >= spec.events.length && golden.actions.length >= spec.actions.length);
  for (const c of golden.events) {
    const ev = spec.events.find((e) => e.name === c.kind);
    assert.equal(P.EV[c.kind], ev.kind, c.name);
    const args = ev.fields.map((f) => {
      const v = c.fields[f.name];
      if (f.type === 'bytes') return Buffer.from(v, 'hex');
      if (f.type === 'list') return (v || []).map((item) => item[f.items[0].name]); // one str per item: strings
      return v;
    });
    m.b.fill(0xee);
    const n = P[`enc${camel(c.kind)}`](m, 7, ...args);
    assert.equal(m.b.subarray(7, 7 + n).toString('hex'), c.hex, c.name);
    assert.equal(m.b[7 + n], 0xee, `${c.name}: wrote past its length`);
    assert.equal(m.b[6], 0xee, `${c.name}: wrote before its offset`);
  }
  const plain = (v) => {
    if (Buffer.isBuffer(v)) return v.toString('hex');
    if (Array.isArray(v)) return v.map(plain);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plain(x)]));
    return v;
  };
  const all = Buffer.from(golden.actions.map((c) => c.hex).join(''), 'hex');
  m.b.fill(0x7f);
  all.copy(m.b, 5);
  const r = new P.Reader();
  r.start(m, 5, 5 + all.length);
  for (const c of golden.actions) {
    const start = r.o;
    const a = P.readAction(r);
    assert.equal(m.b.subarray(start, r.o).toString('hex'), c.hex, `${c.name}: read ${r.o - start} bytes`);
    assert.deepStrictEqual(plain(a), { kind: P.ACT[c.kind], ...c.fields }, c.name);
  }
  assert.equal(r.o, 5 + all.length);
});
