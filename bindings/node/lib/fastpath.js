'use strict';
// The host's hot path: the four actions a pair is made of (WRITE, STARTED,
// TIMER, a DONE without an error) decoded in place into one reused scratch
// object (readHot), and the header of a RECEIVED event whose data a socket
// read put straight into the engine's input buffer (putReceivedHeader).
// Anything else, or anything that would run past the step's output, goes
// to the generated decoder (-1), which owns the error for malformed output.
// The layouts are protocol 5's (test/fastpath.test.js decodes the golden
// vectors both ways): with another protocol version the hot path is off.

const P = require('./protocol');

const { ACT, EV } = P;

/** The protocol version whose layouts this file knows. */
const FOR_PROTOCOL = 5;
const enabled = P.PROTOCOL_VERSION === FOR_PROTOCOL;

/** RECEIVED's header: kind (u8), conn (u32), then the data as `bytes` (u32 length + bytes). */
const RECEIVED_HEADER = 9;

/**
 * A REPORT action's length (its fields are all of fixed width: generated
 * from the spec). The host skips a REPORT by it when nothing observes
 * telemetry (lib/otel.js quiet()), reading only `what` (REPORT_WHAT) and
 * `lock` (REPORT_LOCK), whose offsets the layouts test checks.
 */
const REPORT_BYTES = P.ACT_SIZE.REPORT;
const REPORT_WHAT = 1;
const REPORT_LOCK = 11;

/**
 * The offset after the REPORT at o, or -1 when there is none there (or
 * the hot path is off); `what` and `lock` of it into a.
 */
function skipReport(m, o, end, a) {
  if (!enabled || m.b[o] !== ACT.REPORT || o + REPORT_BYTES > end) return -1;
  a.kind = ACT.REPORT;
  a.op = m.b[o + REPORT_WHAT]; // the report's kind
  a.lock = u64(m.v, o + REPORT_LOCK);
  return o + REPORT_BYTES;
}

const TWO32 = 4294967296;

function u64(v, o) { return v.getUint32(o, true) + v.getUint32(o + 4, true) * TWO32; }
function i64(v, o) { return v.getUint32(o, true) + v.getInt32(o + 4, true) * TWO32; }

/** The offset after the `str` at o, or -1 when it runs past end. */
function skipStr(v, o, end) {
  if (o < 0 || o + 4 > end) return -1;
  const next = o + 4 + v.getUint32(o, true);
  return next > end ? -1 : next;
}

/**
 * The offset after the error record at o when its status is 0 (no error),
 * or -1 when it carries an error or runs past end. Record: i32 status, str
 * message, a, b, list of { u16 node, str addr, str cause }, str bound, i64
 * limit, str unit, i64 got.
 */
function skipNoError(v, o, end) {
  if (o + 4 > end || v.getInt32(o, true) !== 0) return -1;
  o = skipStr(v, skipStr(v, skipStr(v, o + 4, end), end), end);
  if (o < 0 || o + 2 > end) return -1;
  const n = v.getUint16(o, true);
  o += 2;
  for (let i = 0; i < n && o >= 0; i++) o = skipStr(v, skipStr(v, o + 2, end), end);
  o = skipStr(v, o, end); // bound
  if (o < 0) return -1;
  o = skipStr(v, o + 8, end); // limit, unit
  if (o < 0 || o + 8 > end) return -1;
  return o + 8; // got
}

/** The scratch object readHot fills (one shape, reused: no allocation per action). */
function scratch() {
  return { kind: 0, conn: 0, from: 0, to: 0, op: 0, lock: 0, fence: 0, reentered: 0, delayUs: 0 };
}

/**
 * Reads the action at o of m (a Bytes) if it is a WRITE (conn, data in
 * m.b[from, to)), a STARTED (op), a TIMER (delayUs), or, when `done` is
 * true, a DONE without an error (op, lock, fence, reentered), into `a`;
 * returns the offset after it. -1: not one of those, or malformed: decode
 * it with readAction.
 */
function readHot(m, o, end, a, done) {
  if (!enabled) return -1;
  const v = m.v;
  switch (m.b[o]) {
    case ACT.WRITE: {
      if (o + 9 > end) return -1;
      const to = o + 9 + v.getUint32(o + 5, true);
      if (to > end) return -1;
      a.kind = ACT.WRITE;
      a.conn = v.getUint32(o + 1, true);
      a.from = o + 9;
      a.to = to;
      return to;
    }
    case ACT.STARTED:
      if (o + 9 > end) return -1;
      a.kind = ACT.STARTED;
      a.op = u64(v, o + 1);
      return o + 9;
    case ACT.TIMER:
      if (o + 9 > end) return -1;
      a.kind = ACT.TIMER;
      a.delayUs = i64(v, o + 1);
      return o + 9;
    case ACT.DONE: {
      if (!done || o + 26 > end) return -1;
      const next = skipNoError(v, o + 26, end);
      if (next < 0) return -1;
      a.kind = ACT.DONE;
      a.op = u64(v, o + 1);
      a.lock = u64(v, o + 9);
      a.fence = i64(v, o + 17);
      a.reentered = m.b[o + 25];
      return next;
    }
    default:
      return -1;
  }
}

/**
 * Writes a RECEIVED event's header for `n` bytes of data on `conn` at o (the
 * data already at o + RECEIVED_HEADER); returns the event's length.
 */
function putReceivedHeader(m, o, conn, n) {
  m.b[o] = EV.RECEIVED;
  m.v.setUint32(o + 1, conn, true);
  m.v.setUint32(o + 5, n, true);
  return RECEIVED_HEADER + n;
}

module.exports = { enabled, FOR_PROTOCOL, RECEIVED_HEADER, REPORT_BYTES, readHot, skipReport, scratch, putReceivedHeader };
