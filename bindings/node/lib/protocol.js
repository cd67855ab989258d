'use strict';
// The engine's byte protocol (core/hostabi/PROTOCOL.md): the generated
// codec (protocol.gen.js), the buffers' view (Bytes), the Reader the
// generated decoder reads with, and INSPECTED and LEADER in the API's shape.
// Handles are u64 below 2^53 and i64 durations safe integers: Numbers, never BigInt.

const { InternalError } = require('./errors');
const G = require('./protocol.gen');

// ACQUIRE's flags.
const ACQ = G.FLAGS.ACQUIRE;

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

/** The most bytes `s` takes as a protocol `str`. */
function strMax(s) { return 4 + s.length * 3; }

/**
 * Reads actions from `m` in [o, end), for the generated readAction. Strings
 * are decoded as they are met; a `bytes` field is a view into `m.b` (valid
 * only until the next step: the handler copies it). A field that would run
 * past `end` throws an InternalError naming it and the offset (malformed or
 * truncated output: a bug on one side of the protocol), so that nothing is
 * ever decoded from bytes beyond the engine's output.
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
  /** `bytes` as a view of m.b. */
  bytes() {
    const n = this.u32();
    this.need(n, 'bytes');
    const s = this.o;
    this.o += n;
    return this.m.b.subarray(s, s + n);
  }
}

/**
 * An INSPECTED action in the API's shape: { held, validity, owner, nodes }
 * (validity and a node's ttl null for "no expiry", a node's error null when
 * it answered).
 */
function inspectionOf(a) {
  const nodes = a.nodes.map((n) => ({
    node: n.node, addr: n.addr, locked: (n.flags & G.FLAGS.NODE.LOCKED) !== 0, holder: (n.flags & G.FLAGS.NODE.HOLDER) !== 0,
    owner: n.owner, ttl: ms(n.ttl_ms), error: n.cause === '' ? null : n.cause,
  }));
  const out = { held: a.held !== 0, validity: ms(a.validity_ms), owner: a.owner, nodes };
  if (a.permits > 0) { // a semaphore's inspection
    out.permits = a.permits;
    out.holders = a.holders.filter((h) => h.mode === 0).map((h) => ({ slot: h.slot, owner: h.owner, validity: ms(h.validity_ms) }));
    out.inUse = out.holders.length;
  } else if (a.holders.length > 0) { // a read-write lock's readers (holders of mode 1)
    out.readers = a.holders.filter((h) => h.mode === MODE_READ).map((h) => ({ owner: h.owner, validity: ms(h.validity_ms) }));
  }
  if (a.term > 0) { // an election's leader
    out.term = a.term;
    out.value = a.value;
  }
  return out;
}

/** A holder's mode in INSPECTED: a reader of a read-write lock (0: a semaphore's permit). */
const MODE_READ = 1;

/** A LEADER action (or an election's INSPECTED) as a leader: null for none. */
function leaderOf(a) {
  if (!a.held || !a.term) return null;
  return { value: a.value, term: a.term, owner: a.owner, validity: ms(a.validity_ms) };
}

/** A duration the engine gives in ms, null for "no expiry" (< 0). */
function ms(x) { return x < 0 ? null : x; }

module.exports = { ...G, ACQ, Bytes, Reader, strMax, inspectionOf, leaderOf };
