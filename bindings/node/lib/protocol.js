'use strict';
// The engine's byte protocol (core/hostabi/PROTOCOL.md), written
// with Buffer and DataView directly: events are encoded into the engine's
// input buffer, actions are read from its output buffer. Little-endian;
// `str`/`bytes` = u32 length + bytes; handles are u64 below 2^53 (read and
// written as Numbers, never BigInt); i64 durations are safe integers.

const { InternalError } = require('./errors');

const EV = Object.freeze({
  ACQUIRE: 1, EXTEND: 2, RELEASE: 3, CANCEL: 4, FORGET: 5, CLOSE: 6,
  OPENED: 7, RECEIVED: 8, CONN_FAILED: 9, TICK: 10, LOCK_INFO: 11, INSPECT: 12,
});
const ACT = Object.freeze({
  OPEN: 1, WRITE: 2, CLOSE: 3, DONE: 4, LOST: 5, TIMER: 6,
  CLOSED: 7, STARTED: 8, REJECTED: 9, CANCELED: 10, INFO: 11, INSPECTED: 12, FENCE: 13,
});

// ACQUIRE's flags.
const ACQ = Object.freeze({ AUTO_EXTEND: 1, FENCE: 2, TOKEN: 4 });

const TWO32 = 4294967296;

/**
 * A view of one region of bytes (the engine's buffers): `b` a Buffer, `v` a
 * DataView over the same memory. Wasm memory can grow (its ArrayBuffer is
 * then replaced): the owner calls `reset` with the new one.
 */
class Bytes {
  constructor(ab) { this.reset(ab); }
  reset(ab) {
    this.ab = ab;
    this.b = Buffer.from(ab);
    this.v = new DataView(ab);
  }
}

// ---------------------------------------------------------------- events

// Each encoder writes one event at `o` in `m` (a Bytes) and returns its
// length. The caller has checked that it fits (see maxEventSize).

function putU64(v, o, x) {
  const hi = Math.floor(x / TWO32);
  v.setUint32(o, x - hi * TWO32, true);
  v.setInt32(o + 4, hi, true); // i64 and u64 alike for safe integers
}

function putStr(m, o, s) {
  const n = m.b.write(s, o + 4, 'utf8');
  m.v.setUint32(o, n, true);
  return 4 + n;
}

/** The most bytes `s` takes as a protocol `str`. */
function strMax(s) { return 4 + s.length * 3; }

/**
 * ACQUIRE (resource, ttl, wait, flags[, token]): `flags` is ACQ's bits;
 * `token` (a string) is written, and ACQ.TOKEN set, when it is not null.
 */
function encAcquire(m, o, resource, ttl, wait, flags, token = null) {
  m.b[o] = EV.ACQUIRE;
  let p = o + 1 + putStr(m, o + 1, resource);
  putU64(m.v, p, ttl);
  putU64(m.v, p + 8, wait);
  m.b[p + 16] = token === null ? flags : flags | ACQ.TOKEN;
  p += 17;
  if (token !== null) p += putStr(m, p, token);
  return p - o;
}

/** INSPECT (resource). */
function encInspect(m, o, resource) {
  m.b[o] = EV.INSPECT;
  return 1 + putStr(m, o + 1, resource);
}

/** EXTEND (lock, ttl). */
function encExtend(m, o, lock, ttl) {
  m.b[o] = EV.EXTEND;
  putU64(m.v, o + 1, lock);
  putU64(m.v, o + 9, ttl);
  return 17;
}

/** An event of a kind and one u64 (RELEASE, CANCEL, FORGET, LOCK_INFO). */
function encId(m, o, kind, id) {
  m.b[o] = kind;
  putU64(m.v, o + 1, id);
  return 9;
}

/** An event with no fields (CLOSE, TICK). */
function encBare(m, o, kind) {
  m.b[o] = kind;
  return 1;
}

function encOpened(m, o, conn) {
  m.b[o] = EV.OPENED;
  m.v.setUint32(o + 1, conn, true);
  return 5;
}

/** RECEIVED (conn, data[from, to)). */
function encReceived(m, o, conn, data, from, to) {
  m.b[o] = EV.RECEIVED;
  m.v.setUint32(o + 1, conn, true);
  m.v.setUint32(o + 5, to - from, true);
  data.copy(m.b, o + 9, from, to);
  return 9 + to - from;
}

function encConnFailed(m, o, conn, message) {
  m.b[o] = EV.CONN_FAILED;
  m.v.setUint32(o + 1, conn, true);
  return 5 + putStr(m, o + 5, message);
}

// ---------------------------------------------------------------- actions

/**
 * Reads actions from `m` in [o, end). Strings and byte fields are decoded
 * as they are met; WRITE data is handed over as a view into `m.b` (valid
 * only until the next step: the handler copies it). A field that would
 * run past `end` throws an InternalError naming it and the offset
 * (malformed or truncated output: a bug on one side of the protocol), so
 * that nothing is ever decoded from bytes beyond the engine's output.
 */
class Reader {
  constructor() {
    this.m = null;
    this.o = 0;
    this.end = 0;
  }
  start(m, o, end = m.b.length) { this.m = m; this.o = o; this.end = end; }
  /** Throws unless `n` more bytes of `what` are there. */
  need(n, what) {
    if (this.o + n > this.end) {
      throw new InternalError(`liblock: malformed engine output: ${what} of ${n} bytes at byte ${this.o} runs past the end (byte ${this.end})`);
    }
  }
  u8() { this.need(1, 'u8'); return this.m.b[this.o++]; }
  u16() { this.need(2, 'u16'); const x = this.m.v.getUint16(this.o, true); this.o += 2; return x; }
  u32() { this.need(4, 'u32'); const x = this.m.v.getUint32(this.o, true); this.o += 4; return x; }
  i32() { this.need(4, 'i32'); const x = this.m.v.getInt32(this.o, true); this.o += 4; return x; }
  u64() {
    this.need(8, 'u64');
    const v = this.m.v;
    const x = v.getUint32(this.o, true) + v.getUint32(this.o + 4, true) * TWO32;
    this.o += 8;
    return x;
  }
  i64() {
    this.need(8, 'i64');
    const v = this.m.v;
    const x = v.getUint32(this.o, true) + v.getInt32(this.o + 4, true) * TWO32;
    this.o += 8;
    return x;
  }
  str() {
    const n = this.u32();
    this.need(n, 'str');
    const s = n === 0 ? '' : this.m.b.toString('utf8', this.o, this.o + n);
    this.o += n;
    return s;
  }
  /** `bytes` as a view [start, end) of m.b. */
  span() {
    const n = this.u32();
    this.need(n, 'bytes');
    const s = this.o;
    this.o += n;
    return [s, s + n];
  }
  /** `error`: null when status is 0, else { status, message, a, b, nodes }. */
  error() {
    const status = this.i32();
    const message = this.str();
    const a = this.str();
    const b = this.str();
    const n = this.u16();
    let nodes = null;
    if (n > 0) {
      nodes = new Array(n);
      for (let i = 0; i < n; i++) nodes[i] = { node: this.u16(), addr: this.str(), cause: this.str() };
    }
    return status === 0 ? null : { status, message, a, b, nodes };
  }
  /**
   * INSPECTED's fields after `op`: { held, validity, owner, nodes }, in the
   * API's shape (validity and a node's ttl null for "no expiry", a node's
   * error null when it answered).
   */
  inspection() {
    const held = this.u8() !== 0;
    const v = this.i64();
    const owner = this.str();
    const n = this.u16();
    const nodes = new Array(n);
    for (let i = 0; i < n; i++) {
      const node = this.u16();
      const addr = this.str();
      const flags = this.u8();
      const nodeOwner = this.str();
      const ttl = this.i64();
      const cause = this.str();
      nodes[i] = {
        node, addr, locked: (flags & 1) !== 0, holder: (flags & 2) !== 0, owner: nodeOwner,
        ttl: ttl < 0 ? null : ttl, error: cause === '' ? null : cause,
      };
    }
    return { held, validity: v < 0 ? null : v, owner, nodes };
  }
}

module.exports = {
  EV, ACT, ACQ, Bytes, Reader, strMax,
  encAcquire, encInspect, encExtend, encId, encBare, encOpened, encReceived, encConnFailed,
};
