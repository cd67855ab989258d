'use strict';
// Reading a request's replies at once (docs/node.md "Replies read at once";
// the safety argument: docs/architecture.md): right after a request's writes
// have left, the native host reads the plain TCP sockets it wrote to with
// non-blocking recv(2) into onread's buffer and steps what arrives exactly
// as onread would, until the request is settled, every socket gave bytes, or
// POLLS recv calls are spent. EOF and errors are left to libuv (its epoll is
// level-triggered): the spin stops and the usual close/error path runs.
// Whether it pays is decided per host by a credit: a spin that settles its
// request adds 1 (at most CREDIT), one that does not takes 1; with no credit
// only every PROBE-th request spins. A request spins only when it is the only
// operation in flight on its host, and at most EAGER_RUN in a row between two
// turns of the event loop.

const { SPIN } = require('./protocol.gen'); // the spec's "spin", shared with the Python host

const MSG_DONTWAIT = 0x40; // Linux
const EAGAIN = 11; // = EWOULDBLOCK on Linux
const EINTR = 4;

/** Tunables (tests set them through config()). */
const cfg = {
  polls: SPIN.polls, // recv calls per spin at most
  credit: SPIN.credit, // the credit's ceiling (and a new host's)
  probe: SPIN.probe, // with no credit, every probe-th request spins
  eagerRun: SPIN.eagerRun, // settled spins in a row between two turns of the loop
  creditRule: true, // false: every request spins (tests' control)
  aloneRule: true, // false: a request spins with other operations in flight too (tests' control)
  connGuard: true, // false: a socket no longer the host's connection is read too (tests' control)
  onSpin: null, // tests: called (host, op) as a spin starts
  // The wasm backend too: opt-in (LIBLOCK_SPIN_WASM=1), since the wasm
  // backend never requires koffi by itself (test/portability.test.js). It
  // reads into onread's shared buffer, copied into wasm memory as onread's
  // reads are; pair.js, same run: 1 node 0.77x latency, 1.03x CPU; 5 nodes
  // 0.87x, 0.91x.
  wasm: process.env.LIBLOCK_SPIN_WASM === '1',
};

/** Counters (cheap; read by tests and benches). */
const stats = { spins: 0, settled: 0, skipped: 0, crowded: 0, reads: 0, bytes: 0, answered: 0, empty: 0, stopped: 0 };

// Set with LIBLOCK_SPIN_STATS=1: how many recv calls a settled spin took
// (histogram), and the longest a spin held the event loop (ns).
const measure = process.env.LIBLOCK_SPIN_STATS === '1';
const hist = measure ? new Array(cfg.polls + 1).fill(0) : null;
let maxHoldNs = 0;
let sumHoldNs = 0;
const holds = []; // every spin's hold (ns), for percentiles

let recv = null; // koffi-bound recv(2), or false: unavailable
let koffi = null;

function bind() {
  if (recv !== null) return recv;
  if (process.platform !== 'linux' || process.env.LIBLOCK_SPIN === '0') { recv = false; return recv; }
  try {
    koffi = require('koffi');
    const libc = koffi.load('libc.so.6');
    recv = libc.func('intptr_t recv(int fd, uint8_t *buf, size_t len, int flags)');
  } catch {
    recv = false; // musl, no koffi: no spin (everything goes through onread)
  }
  return recv;
}

let eager = 0;
let eagerReset = false;
function resetEager() { eager = 0; eagerReset = false; }

/** The state a host keeps: its credit. */
function state() {
  return { credit: cfg.credit, skipped: 0 };
}

/** Whether socket s may be read here: plain TCP, connected, its writes gone. */
function ready(s) {
  return s.llFd === true && !s.connecting && !s.destroyed && s.writableLength === 0 && !s.writableCorked &&
    s._handle != null && s._handle.fd > 0;
}

/**
 * Spins for request `op` of host h, which wrote to socks[0, n) (the
 * sockets of its WRITE actions, in order; repeats allowed). Returns true
 * when the spin settled the request.
 */
function spin(h, op, socks, n) {
  const ad = h.ad;
  if ((ad.backend !== 'native' && !cfg.wasm) || !bind()) return false;
  // Only a request alone in flight on its host spins: with other operations
  // pending (waiters of a contended resource, other tasks' requests) the
  // loop has work that a spin would hold up, and it turns again soon anyway
  // (make bench's contention, one process, 10 tasks: 1.51-1.67 ms a section
  // with every request spinning against 1.44-1.48 without the spin).
  if (cfg.aloneRule && h.ops.size > 1) { stats.crowded++; return false; }
  const sp = h.spin;
  if (cfg.creditRule && sp.credit <= 0) {
    if (++sp.skipped < cfg.probe) { stats.skipped++; return false; }
    sp.skipped = 0;
  }
  if (eager >= cfg.eagerRun) return false;
  // The distinct sockets, each once (a request writes once per node).
  const list = [];
  for (let i = 0; i < n; i++) {
    const s = socks[i];
    if (list.includes(s)) continue;
    if (!ready(s)) return false; // a write still queued: nothing to wait for yet
    list.push(s);
  }
  if (list.length === 0) return false;
  stats.spins++;
  if (cfg.onSpin !== null) cfg.onSpin(h, op);
  const t0 = measure ? process.hrtime.bigint() : 0n;
  const buf = h.rx().buffer; // where onread reads to (native: the engine's input buffer)
  const cap = buf.length;
  let left = list.length;
  let polls = 0;
  let settled = false;
  let verdict = true; // false: every socket answered, or the spin stopped for EOF/an error
  out:
  while (polls < cfg.polls) {
    for (let i = 0; i < list.length; i++) {
      const s = list[i];
      if (s === null) continue;
      // A step of this spin may have closed a socket (the engine's CLOSE, a
      // failure): its fd is closed at once and its number may already be
      // another socket's (an OPEN in the same step). Only a socket that is
      // still this host's connection, open, is read, through its handle's fd now.
      const hd = s._handle;
      if (s.destroyed || hd == null || hd.fd <= 0 || (cfg.connGuard && h.conns.get(s.llConn) !== s)) {
        list[i] = null;
        if (--left === 0) { verdict = false; break out; }
        continue;
      }
      polls++;
      const got = Number(recv(hd.fd, buf, cap, MSG_DONTWAIT));
      if (got > 0) {
        stats.reads++;
        stats.bytes += got;
        h.receivedRx(s.llConn, s, got); // as onread: a RECEIVED event, stepped, delivered
        list[i] = null;
        left--;
        if (h.dead || !h.ops.has(op)) { settled = h.ops.has(op) === false; break out; }
        if (left === 0) { verdict = false; stats.answered++; break out; }
      } else if (got === 0 || koffi.errno() !== EAGAIN) {
        if (got < 0 && koffi.errno() === EINTR) continue;
        verdict = false; // EOF or an error: libuv will see it and run the usual path
        stats.stopped++;
        break out;
      }
      if (polls >= cfg.polls) break out;
    }
  }
  if (measure) {
    const held = Number(process.hrtime.bigint() - t0);
    if (held > maxHoldNs) maxHoldNs = held;
    sumHoldNs += held;
    if (holds.length < 1e6) holds.push(held);
    if (settled) hist[Math.min(polls, cfg.polls)]++;
  }
  if (settled) {
    stats.settled++;
    sp.credit = sp.credit > 0 ? Math.min(sp.credit + 1, cfg.credit) : 1;
    if (++eager === 1 && !eagerReset) { eagerReset = true; setImmediate(resetEager); }
    return true;
  }
  if (verdict) { stats.empty++; sp.credit = sp.credit > 0 ? sp.credit - 1 : 0; }
  return false;
}

/** Sets tunables (tests); returns the previous ones. */
function config(c) {
  const prev = { ...cfg };
  Object.assign(cfg, c);
  return prev;
}

/** What LIBLOCK_SPIN_STATS=1 gathered: { hist (recv calls per settled spin), max, mean, p50, p99 hold of the loop by a spin (ns) }; reset: start again. */
function measured(reset = false) {
  const sorted = holds.slice().sort((x, y) => x - y);
  const pct = (q) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0);
  const m = { hist: hist ? hist.slice() : null, maxHoldNs, meanHoldNs: holds.length ? sumHoldNs / holds.length : 0, p50HoldNs: pct(0.5), p99HoldNs: pct(0.99) };
  if (reset) { if (hist) hist.fill(0); maxHoldNs = 0; sumHoldNs = 0; holds.length = 0; }
  return m;
}

module.exports = { spin, state, config, stats, measured, available: () => !!bind() };
