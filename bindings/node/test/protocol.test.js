'use strict';
// The host's codec against core/engine/hostabi/PROTOCOL.md, byte by byte
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

test('events: ACQUIRE, EXTEND, RELEASE/CANCEL/FORGET/LOCK_INFO, CLOSE/TICK', () => {
  const m = region();
  let n = P.encAcquire(m, 0, 'orders:é', 10000, 2 ** 40 + 3, true);
  assert.equal(hex(m, n), '01' + str('orders:é') + i64(10000) + i64(2 ** 40 + 3) + '01');
  n = P.encAcquire(m, 0, 'r', 1, -1, false); // a negative wait goes to the engine as i64 (it rejects it)
  assert.equal(hex(m, n), '01' + str('r') + i64(1) + i64(-1) + '00');
  n = P.encExtend(m, 0, 2 ** 53 - 1, 5000);
  assert.equal(hex(m, n), '02' + i64(2 ** 53 - 1) + i64(5000));
  for (const k of [P.EV.RELEASE, P.EV.CANCEL, P.EV.FORGET, P.EV.LOCK_INFO]) {
    n = P.encId(m, 0, k, 0x123456789a);
    assert.equal(hex(m, n), k.toString(16).padStart(2, '0') + i64(0x123456789a));
  }
  assert.equal(hex(m, P.encBare(m, 0, P.EV.CLOSE)), '06');
  assert.equal(hex(m, P.encBare(m, 0, P.EV.TICK)), '0a');
});

test('events: OPENED, RECEIVED (a slice of the data), CONN_FAILED', () => {
  const m = region();
  assert.equal(hex(m, P.encOpened(m, 0, 7)), '07' + u32(7));
  const data = Buffer.from('xx+OK\r\nyy');
  assert.equal(hex(m, P.encReceived(m, 0, 9, data, 2, 7)), '08' + u32(9) + u32(5) + Buffer.from('+OK\r\n').toString('hex'));
  assert.equal(hex(m, P.encConnFailed(m, 0, 3, 'connect ECONNREFUSED')), '09' + u32(3) + str('connect ECONNREFUSED'));
});

test('actions: every kind, with errors and node causes', () => {
  const noErr = '00'.repeat(18); // i32 0, three empty str, u16 0
  const err = (status, msg, a, b, nodes = []) => {
    const s = Buffer.alloc(4); s.writeInt32LE(status);
    const n = Buffer.alloc(2); n.writeUInt16LE(nodes.length);
    return s.toString('hex') + str(msg) + str(a) + str(b) + n.toString('hex') +
      nodes.map(([i, addr, cause]) => { const x = Buffer.alloc(2); x.writeUInt16LE(i); return x.toString('hex') + str(addr) + str(cause); }).join('');
  };
  const bytes = Buffer.from([
    '01' + u32(1) + u32(2) + '03' + str('tcp') + str('[::1]:6380') + str('::1'), // OPEN
    '02' + u32(1) + u32(3) + Buffer.from('abc').toString('hex'), // WRITE
    '03' + u32(1), // CLOSE
    '04' + i64(5) + i64(6) + noErr, // DONE ok
    '04' + i64(7) + i64(0) + err(5, 'liblock: unavailable', 'acquire', '2 of 3 failed', [[0, 'h:1', 'refused'], [2, 'h:3', 'timeout']]),
    '05' + i64(6) + err(2, 'liblock: lock lost', '', ''), // LOST
    '06' + i64(1500), // TIMER
    '07', // CLOSED
    '08' + i64(9), // STARTED
    '09' + err(3, 'liblock: invalid argument: ttl: must be ...', 'ttl', 'must be ...'), // REJECTED
    '0a' + '01', // CANCELED
    '0b' + str('r') + str('p:r') + str('tok') + i64(1000) + i64(-1) + '01' + noErr, // INFO
  ].join(''), 'hex');
  const m = new P.Bytes(new ArrayBuffer(bytes.length + 3));
  bytes.copy(m.b, 3);
  const r = new P.Reader();
  r.start(m, 3);
  const got = [];
  while (r.o < bytes.length + 3) {
    const k = r.u8();
    switch (k) {
      case P.ACT.OPEN: got.push([k, r.u32(), r.u32(), r.u8(), r.str(), r.str(), r.str()]); break;
      case P.ACT.WRITE: { const c = r.u32(); const [s, e] = r.span(); got.push([k, c, m.b.toString('latin1', s, e)]); break; }
      case P.ACT.CLOSE: got.push([k, r.u32()]); break;
      case P.ACT.DONE: got.push([k, r.u64(), r.u64(), r.error()]); break;
      case P.ACT.LOST: got.push([k, r.u64(), r.error()]); break;
      case P.ACT.TIMER: got.push([k, r.i64()]); break;
      case P.ACT.CLOSED: got.push([k]); break;
      case P.ACT.STARTED: got.push([k, r.u64()]); break;
      case P.ACT.REJECTED: got.push([k, r.error()]); break;
      case P.ACT.CANCELED: got.push([k, r.u8()]); break;
      case P.ACT.INFO: got.push([k, r.str(), r.str(), r.str(), r.i64(), r.i64(), r.u8(), r.error()]); break;
      default: assert.fail(`unknown action ${k}`);
    }
  }
  assert.deepEqual(got, [
    [1, 1, 2, 3, 'tcp', '[::1]:6380', '::1'],
    [2, 1, 'abc'],
    [3, 1],
    [4, 5, 6, null],
    [4, 7, 0, { status: 5, message: 'liblock: unavailable', a: 'acquire', b: '2 of 3 failed', nodes: [{ node: 0, addr: 'h:1', cause: 'refused' }, { node: 2, addr: 'h:3', cause: 'timeout' }] }],
    [5, 6, { status: 2, message: 'liblock: lock lost', a: '', b: '', nodes: null }],
    [6, 1500],
    [7],
    [8, 9],
    [9, { status: 3, message: 'liblock: invalid argument: ttl: must be ...', a: 'ttl', b: 'must be ...', nodes: null }],
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
