'use strict';
// The one host of both backends (docs/node.md, "How it works"): it steps an
// engine on the main event loop with node:net / node:tls sockets and one
// timer, and turns DONE and LOST into promises and AbortSignals. The engine
// decides everything else.
//
// An engine adapter (lib/native.js, lib/wasm.js) gives synchronous calls and its two buffers:
//   mem()          the Bytes (Buffer + DataView) holding both buffers
//   inOff, inCap   where events are written
//   outOff, outCap where actions come back
//   step(h, len)   one step with the event of len bytes at inOff → bytes of actions (< 0: a host bug)
//   free(h)
//   rxBuf          (optional) a Buffer over the input buffer from inOff + 9 (a
//                  RECEIVED header's room) that never moves: sockets read into
//                  it (see onRead); without it they read into one shared buffer

const net = require('node:net');
// node:tls (with node:crypto) is loaded with the first rediss:// connection:
// requiring it costs several milliseconds that a plain-TCP client never needs.
let tls = null;
const P = require('./protocol');
const E = require('./errors');
const F = require('./fastpath');
const S = require('./spin'); // reading a request's replies at once (lib/spin.js)
const { R: { HOLD }, logChannel } = require('./otel'); // the report kind whose lock a quiet host still forgets

const { EV, ACT } = P;

// Any action but a WRITE fits in MIN_OUT bytes, and a WRITE is split to fill
// whatever room is left: a step that left at least MIN_OUT of the output
// buffer unused has nothing more pending. Otherwise step again with no input.
const MIN_OUT = 64 * 1024;

// How many resources' cluster mutex keys a host remembers (Host#keyOf).
const MUTEX_KEYS = 4096;

// REPORTS levels (PROTOCOL.md, protocol 5): which REPORT actions an engine
// made with `report` emits. A quiet host (lib/otel.js quiet()) asks for the
// warnings alone (a loss, a failed auto-extension: what a log subscriber
// attached later must still hear of), so that a pair's reports are neither
// built nor handed over nor stepped over; otherwise all (the start).
const REPORTS_WARNINGS = 1;
const REPORTS_ALL = 2;

// ---------------------------------------------------------------- shared state

const stats = { engines: 0, locks: 0, pending: 0 };
// hooks.released(st): a lock's release completed (set by index.js: its
// FinalizationRegistry forgets the lock).
const hooks = { released: null };
let warmed = false;

// Open hosts (close() not called), for releaseAtExit.
const open = new Set();
let exitHooked = false;

/** 'beforeExit': releases every lock an open client still holds, each once (then 'beforeExit' comes again, with nothing left). */
function releaseAtExit() {
  for (const h of open) {
    if (h.closed || h.dead) continue;
    for (const st of h.locks.values()) {
      if (st.released || st.lost || st.atExit) continue;
      st.atExit = true;
      try {
        h.release(st).catch(() => {});
      } catch { /* the engine refused: nothing to release */ }
    }
  }
}

// An interval ref()'d while an operation is pending anywhere: sockets and timers are unref()'d.
let alive = null;
function hold(d) {
  stats.pending += d;
  if (stats.pending === d && d > 0) {
    if (!alive) alive = setInterval(() => {}, 0x7fffffff);
    alive.ref();
  } else if (stats.pending === 0 && alive) {
    alive.unref();
  }
}

// DONE, INSPECTED and LOST are delivered after the step that produced them has been
// read to its end: their handlers run user code (promise continuations are
// queued anyway, but an abort listener runs at once) that may step an engine
// again, and with it overwrite the output buffer. Shared by every host of
// the process (the wasm backend's engines share one instance's buffers).
const later = [];
let draining = false;

function drain() {
  // Called after every step and request: most find nothing to deliver.
  if (draining || later.length === 0) return;
  draining = true;
  try {
    // Acquires that got their lock go first (in order among themselves):
    // their continuations enter the section, while a releaser's, done in the
    // same step, only goes on to its next call.
    for (let i = 0; i < later.length; i += 5) {
      if (later[i + 1] !== ACT.DONE || later[i + 3] === 0 || later[i + 4]) continue;
      const h = later[i];
      later[i] = null;
      try {
        h.done(later[i + 2], later[i + 3], later[i + 4]);
      } catch (e) {
        queueMicrotask(() => { throw e; });
      }
    }
    for (let i = 0; i < later.length; i += 5) {
      const h = later[i];
      if (h === null) continue;
      try {
        const kind = later[i + 1];
        if (kind === ACT.DONE) h.done(later[i + 2], later[i + 3], later[i + 4]);
        else if (kind === ACT.INSPECTED) h.inspected(later[i + 2], later[i + 4]);
        else if (kind === ACT.LEADER) h.leaderChanged(later[i + 2], later[i + 4]); // lib/election.js
        else h.lost(later[i + 2], later[i + 4]);
      } catch (e) {
        queueMicrotask(() => { throw e; });
      }
    }
  } finally {
    later.length = 0;
    draining = false;
  }
}

const reader = new P.Reader();
// What F.readHot decoded last (one object for every host: actions are read
// to the end of a step before anything else steps an engine).
const hot = F.scratch();

// Plain TCP sockets read through net.Socket's `onread` into one buffer:
// the native engine's input buffer behind a RECEIVED header's room (rxBuf),
// or for wasm (whose memory can move) one shared buffer, copied from. Each
// read is stepped before its callback returns, so one buffer is enough.
let rxShared = null;
function onRead(n) {
  const h = this.llHost;
  if (h) h.receivedRx(this.llConn, this, n);
  // Nothing else: returning false would stop reading.
}

// A burst of requests is stepped BURST at a time, one batch per turn of the
// event loop, in order. The count restarts when the tick that made the
// requests ends (endTick: one process.nextTick per tick, shared with the writes).
const BURST = 64;
let burst = 0;
const deferred = [];

/** Whether a request may be stepped now; else it goes through defer(). */
function admit() {
  if (deferred.length > 0) return false;
  if (burst++ === 0 && !tickQueued) { tickQueued = true; process.nextTick(endTick); }
  return burst <= BURST;
}
function defer(fn) {
  if (deferred.push(fn) === 1) setImmediate(runDeferred);
}
function runDeferred() {
  const batch = deferred.splice(0, BURST);
  for (const fn of batch) {
    try { fn(); } catch (e) { queueMicrotask(() => { throw e; }); }
  }
  if (deferred.length > 0) setImmediate(runDeferred);
}

// The first write to a connection in a tick leaves at once; a second write
// to it in the same tick corks it until the end of the tick (one writev).
let tickNo = 1;
let tickQueued = false;
const corked = [];
function endTick() {
  tickQueued = false;
  tickNo++;
  burst = 0;
  if (corked.length === 0) return; // (an array's length set costs a runtime call even when 0)
  for (let i = 0; i < corked.length; i++) corked[i].uncork();
  corked.length = 0;
}
function send(s, buf) {
  if (s.llTick === tickNo) {
    if (!s.writableCorked) { s.cork(); corked.push(s); }
  } else {
    s.llTick = tickNo;
    if (!tickQueued) { tickQueued = true; process.nextTick(endTick); }
  }
  s.write(buf);
}

/**
 * A request's replies were read and stepped at once (lib/spin.js), inside
 * the tick that made it: what its continuation writes must leave at once
 * too, not be corked behind the tick's first write to the same socket.
 */
function newTick() {
  tickNo++;
  if (corked.length === 0) return;
  for (let i = 0; i < corked.length; i++) corked[i].uncork();
  corked.length = 0;
}

// The sockets the request being stepped wrote to (Host#write, while
// nWrote >= 0), for the spin after it (Host#pend); spinN: how many.
const wrote = [];
let nWrote = -1;
let spinN = 0;

// ---------------------------------------------------------------- Host

const ACQ = P.ACQ;
// The most bytes an event takes besides its strings' (P.strMax counts those).
const ROOM = 48;

/**
 * An event must fit the engine's input buffer: a string that might not is
 * measured, and one longer than its limit refused (as the engine would, in
 * Node's words), so that it is never written past the buffer's end.
 */
function fits(what, s, max, min = 0) {
  const got = Buffer.byteLength(s);
  if (got > max || got < min) {
    throw E.errorOf({ status: E.STATUS.INVALID_ARGUMENT, message: '', a: what, b: '', nodes: [], bound: got > max ? 'max' : 'min', limit: got > max ? max : min, unit: 'bytes', got });
  }
}

/** The PERMITS, READ and WRITE bits (the same in ACQUIRE and INSPECT). */
function kindFlags(permits, mode) {
  return (permits ? ACQ.PERMITS : 0) | (mode === 1 ? ACQ.READ : mode === 2 ? ACQ.WRITE : 0);
}

class Host {
  /**
   * @param adapter an engine adapter (see above)
   * @param handle the engine handle lock_engine_new returned (as the adapter passes it back)
   */
  constructor(adapter, handle, keyPrefix, tlsOptions, nodeTls, tel) {
    this.ad = adapter;
    this.tel = tel || null; // lib/otel.js, or null: no REPORT actions asked for
    this.h = handle;
    this.keyPrefix = keyPrefix;
    // Set by index.js when a node is a Redis Cluster (keyOf).
    this.clusterKeys = false;
    // On such a client, the mutex keys the engine gave (LOCK_INFO), by
    // resource (keyOf): a cluster pair steps the engine once less.
    this.mutexKeys = new Map();
    // The REPORTS level the engine was last told (quietNow).
    this.reports = REPORTS_ALL;
    this.tlsOptions = tlsOptions || null; // the client's `tls`, checked by index.js
    this.nodeTls = nodeTls || null; // by node index: the `tls` of a node given as { url, tls }, which replaces the client's
    this.ops = new Map(); // op id -> pending operation
    this.locks = new Map(); // lock id -> lock state (st)
    this.conns = new Map(); // conn id -> socket
    this.fences = new Map(); // lock id -> [fence, reentered] from an acquire's DONE, until it is delivered
    this.timer = null;
    // The timer's callback runs before the loop polls the sockets: the TICK
    // waits for the check phase (setImmediate), after replies that are
    // already there have been read, so that a stalled loop does not turn
    // them into timeouts.
    this.onTimer = () => { this.timer = null; setImmediate(this.onTick); };
    this.onTick = () => this.tick();
    this.closed = false; // close() was called
    this.dead = false; // CLOSED came; the engine is freed
    this.closing = null;
    this.closeDone = null;
    this.sawClosed = false;
    // The reply to the request being stepped.
    this.rKind = 0;
    this.rOp = 0;
    this.rErr = null;
    this.rInfo = null;
    this.spin = S.state(); // its spin credit (lib/spin.js)
    stats.engines++;
    open.add(this);
    if (!exitHooked) {
      exitHooked = true;
      process.on('beforeExit', releaseAtExit);
    }
    if (!warmed) {
      // Node compiles its socket code on first use (≈ 6 ms, more on a busy
      // machine): pay that here rather than inside the first operation,
      // whose node deadlines are running.
      warmed = true;
      new net.Socket().destroy();
    }
  }

  // ------------------------------------------------------------ stepping

  /** Steps the event enc writes (P.encX: the engine's input buffer, then its fields), and carries out the actions. */
  event(enc, a, b) {
    const ad = this.ad;
    this.run(enc(ad.mem(), ad.inOff, a, b));
  }

  /** Steps the engine with the event of `len` bytes already at inOff, and carries out the actions. */
  run(len, deliver = true) {
    if (this.dead) return;
    const ad = this.ad;
    this.rKind = 0;
    let n = ad.step(this.h, len);
    for (;;) {
      if (n < 0) throw new E.InternalError(`liblock: lock_engine_step refused an event (status ${-n}): a bug in the Node host`);
      if (n === 0) break;
      this.actions(ad.mem(), ad.outOff, ad.outOff + n);
      if (ad.outCap - n >= MIN_OUT || this.sawClosed) break;
      n = ad.step(this.h, 0);
    }
    if (this.sawClosed) this.finish();
    if (deliver) drain();
  }

  actions(m, o, end) {
    const r = reader;
    // DONE takes the hot path only with telemetry off or quiet (nothing
    // observes it: lib/otel.js quiet()): with it on, DONE goes through its
    // own (generic) path below, untouched. Quiet, a REPORT is skipped by its
    // length, undecoded (a HOLD only drops its lock's resource).
    const tel = this.tel;
    const quiet = tel === null || tel.quiet();
    while (o < end) {
      if (quiet && tel !== null) {
        const skipped = F.skipReport(m, o, end, hot);
        if (skipped > 0) {
          if (hot.op === HOLD) tel.forgetLock(hot.lock);
          o = skipped;
          continue;
        }
      }
      const next = F.readHot(m, o, end, hot, quiet);
      if (next > 0) {
        o = next;
        switch (hot.kind) {
          case ACT.WRITE: this.write(hot.conn, m.b, hot.from, hot.to); break;
          case ACT.STARTED: this.rKind = ACT.STARTED; this.rOp = hot.op; break;
          case ACT.TIMER: this.arm(hot.delayUs); break;
          default: // DONE: as below with a null error
            if (hot.lock !== 0 && (hot.fence !== 0 || hot.reentered !== 0)) this.fences.set(hot.lock, [hot.fence, hot.reentered !== 0]);
            later.push(this, ACT.DONE, hot.op, hot.lock, null);
        }
        continue;
      }
      r.start(m, o, end);
      const at = o;
      const a = P.readAction(r);
      o = r.o;
      if (a === null) {
        throw new E.InternalError(`liblock: unknown engine action ${m.b[at]} (the library is newer than this binding?)`);
      }
      switch (a.kind) {
        case ACT.OPEN: this.open(a.conn, a.node, a.flags, a.network, a.addr, a.server_name); break;
        case ACT.WRITE: this.write(a.conn, a.data, 0, a.data.length); break;
        case ACT.CLOSE: {
          const s = this.conns.get(a.conn);
          if (s) { this.conns.delete(a.conn); s.destroy(); }
          break;
        }
        case ACT.REPORT: if (this.tel) this.tel.report(a); break;
        case ACT.DONE:
          if (this.tel) this.tel.done(a.op, a.error);
          // An acquire's fence and re-entry (engine protocol 2), kept for the lock.
          if (a.lock !== 0 && (a.fence !== 0 || a.reentered !== 0)) this.fences.set(a.lock, [a.fence, a.reentered !== 0]);
          later.push(this, ACT.DONE, a.op, a.lock, a.error);
          break;
        case ACT.INSPECTED: later.push(this, ACT.INSPECTED, a.op, 0, P.inspectionOf(a)); break;
        case ACT.LEADER: later.push(this, ACT.LEADER, a.op, 0, P.leaderOf(a)); break;
        case ACT.LOST: later.push(this, ACT.LOST, a.lock, 0, a.error); break;
        case ACT.TIMER: this.arm(a.delay_us); break;
        case ACT.CLOSED: this.sawClosed = true; break;
        case ACT.STARTED: this.rKind = a.kind; this.rOp = a.op; break;
        case ACT.REJECTED: this.rKind = a.kind; this.rErr = a.error; break;
        case ACT.CANCELED: this.rKind = a.kind; break;
        case ACT.INFO: {
          this.rKind = a.kind;
          this.rInfo = {
            resource: a.resource, key: a.key, token: a.token, ttl: a.ttl_ms, validity: a.validity_ms, flags: a.flags, err: a.error,
          };
          break;
        }
        default:
          throw new E.InternalError(`liblock: unexpected engine action ${a.kind}`);
      }
    }
  }

  // ------------------------------------------------------------ I/O

  /** Sends src[from, to) (a WRITE's data) on conn, if it is still open. */
  write(conn, src, from, to) {
    const s = this.conns.get(conn);
    if (!s || s.llThrew) return;
    // A copy (the output buffer is reused by the next step), from Buffer's
    // pool for small writes.
    const b = Buffer.allocUnsafe(to - from);
    src.copy(b, 0, from, to);
    send(s, b);
    if (nWrote >= 0) wrote[nWrote++] = s;
  }

  open(conn, node, flags, network, addr, serverName) {
    let opts;
    if (network === 'unix') {
      opts = { path: addr };
    } else {
      const i = addr.lastIndexOf(':');
      let host = addr.slice(0, i);
      if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
      opts = { host, port: Number(addr.slice(i + 1)) };
    }
    let s;
    if (flags & 1) {
      const own = this.nodeTls && this.nodeTls[node];
      const t = own || this.tlsOptions;
      if (t) {
        if (t.ca !== undefined) opts.ca = t.ca;
        if (t.cert !== undefined) { opts.cert = t.cert; opts.key = t.key; }
      }
      // The URL's skip_verify=true turns verification off whatever the
      // client's tls option says; rejectUnauthorized: false does too.
      opts.rejectUnauthorized = !(flags & 2) && !(t && t.rejectUnauthorized === false);
      // Node verifies against `servername`, else `host`: the client's
      // servername wins over the engine's (the URL's host). An IP address
      // as SNI is not allowed (RFC 6066).
      if (t && t.servername !== undefined) opts.servername = t.servername;
      else if (serverName && !net.isIP(serverName)) opts.servername = serverName;
      tls ||= require('node:tls');
      s = this.connect(conn, tls, opts);
      if (s === null) return;
      s.once('secureConnect', () => this.opened(conn, s));
    } else {
      opts.onread = this.rx();
      s = this.connect(conn, net, opts);
      if (s === null) return;
      s.llFd = true; // plain TCP: lib/spin.js may read it
      s.once('connect', () => this.opened(conn, s));
    }
    s.llTick = 0; // the tick of its last write (see send)
    s.llHost = this; // for onRead
    s.llConn = conn;
    s.setNoDelay(true);
    s.unref();
    this.conns.set(conn, s);
    if (flags & 1) s.on('data', (d) => this.received(conn, s, d)); // TLS: no onread
    s.on('error', (e) => this.failed(conn, s, e.message || String(e)));
    // 'end' (the node closed its side: CLIENT KILL, a restart) comes before
    // 'close'; a write between them would fail, so the connection goes at once.
    s.on('end', () => this.failed(conn, s, 'connection closed by the node'));
    s.on('close', () => this.failed(conn, s, 'connection closed by the node'));
  }

  /**
   * mod.connect(opts), or null when it throws (Node's socket layer throws
   * for some addresses instead of emitting 'error'): the engine then hears
   * of the failure on the next tick, as of any connect failure, so that the
   * operations waiting on the connection, and close(), still end. (The
   * engine is being stepped now: it cannot take the event inside this step.)
   */
  connect(conn, mod, opts) {
    try {
      return mod.connect(opts);
    } catch (e) {
      const message = `connect: ${(e && e.message) || String(e)}`;
      const failed = { llThrew: true, destroy() {} }; // no socket: nothing to write to or destroy
      this.conns.set(conn, failed);
      process.nextTick(() => { if (!this.dead) this.failed(conn, failed, message); });
      return null;
    }
  }

  opened(conn, s) {
    if (this.conns.get(conn) !== s) return;
    this.event(P.encOpened, conn);
  }

  received(conn, s, d) {
    if (this.conns.get(conn) !== s) return;
    const ad = this.ad;
    const max = ad.inCap - P.EV_OVERHEAD.RECEIVED;
    for (let from = 0; from < d.length && !this.dead; from += max) {
      this.run(P.encReceived(ad.mem(), ad.inOff, conn, d.subarray(from, Math.min(d.length, from + max))));
      if (this.conns.get(conn) !== s) return;
    }
  }

  /** net.Socket's `onread` option for this host's plain TCP sockets (see onRead). */
  rx() {
    const ad = this.ad;
    if (ad.rxBuf && F.enabled) return ad.rxOnread ||= { buffer: ad.rxBuf, callback: onRead };
    rxShared ||= { buffer: Buffer.allocUnsafe(ad.inCap - F.RECEIVED_HEADER), callback: onRead };
    return rxShared;
  }

  /** n bytes read on conn into rx()'s buffer: one RECEIVED. */
  receivedRx(conn, s, n) {
    if (this.conns.get(conn) !== s || this.dead) return;
    const ad = this.ad;
    const m = ad.mem();
    const rx = this.rx().buffer;
    if (rx === ad.rxBuf) { // already in place, behind the header's room
      this.run(F.putReceivedHeader(m, ad.inOff, conn, n));
      return;
    }
    if (F.enabled) {
      rx.copy(m.b, ad.inOff + F.RECEIVED_HEADER, 0, n);
      this.run(F.putReceivedHeader(m, ad.inOff, conn, n));
      return;
    }
    this.run(P.encReceived(m, ad.inOff, conn, rx.subarray(0, n)));
  }

  failed(conn, s, message) {
    if (this.conns.get(conn) !== s) return; // reported once, or closed by the engine
    this.conns.delete(conn);
    s.destroy();
    this.event(P.encConnFailed, conn, message.slice(0, 1024));
  }

  arm(us) {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(this.onTimer, Math.ceil(us / 1000));
    this.timer.unref();
  }

  tick() {
    this.event(P.encTick);
  }

  // ------------------------------------------------------------ requests

  /** Steps a request event; returns after its STARTED, or throws its REJECTED error. */
  request(len) {
    nWrote = 0;
    spinN = 0;
    try {
      this.run(len, false);
    } finally {
      spinN = nWrote;
      nWrote = -1;
    }
    if (this.rKind === ACT.REJECTED) {
      drain();
      throw E.errorOf(this.rErr);
    }
    if (this.rKind !== ACT.STARTED) {
      drain();
      throw new E.InternalError(`liblock: the engine answered a request with action ${this.rKind}`);
    }
    return this.rOp;
  }

  /** Registers a started operation; its DONE settles it. Then delivers what the step produced. */
  pend(op, fields) {
    return new Promise((resolve, reject) => {
      fields.resolve = resolve;
      fields.reject = reject;
      this.ops.set(op, fields);
      hold(1);
      const n = spinN;
      spinN = 0;
      if (n > 0 && !draining) {
        try {
          if (S.spin(this, op, wrote, n)) newTick();
        } catch (e) {
          queueMicrotask(() => { throw e; }); // as from onread
        }
        wrote.fill(null, 0, n); // (keeps no closed socket alive)
      }
      drain();
    });
  }

  /**
   * Starts an acquire; resolves with req.wrap(the new lock's state). req:
   * { resource, resources (a multi-resource lock's further ones, or null),
   * ttl, wait, autoExtend, fence, token (or null), permits (0: none), mode
   * (0 mutex, 1 read, 2 write), value (a campaign's, or null), signal (or
   * null), wrap }; the engine validates the values.
   */
  acquire(req) {
    if (admit()) return this.acquireNow(req);
    const signal = req.signal;
    return new Promise((resolve, reject) => defer(() => {
      if (signal && signal.aborted) reject(E.canceledBy(signal));
      else if (this.closed) reject(new E.CanceledError('liblock: acquire: canceled: the client was closed'));
      else {
        try { resolve(this.acquireNow(req)); } catch (e) { reject(e); }
      }
    }));
  }

  acquireNow(req) {
    const ad = this.ad;
    const { resource, resources, token, signal } = req;
    let size = P.strMax(resource) + (token !== null ? P.strMax(token) : 0) + (req.value !== null ? P.strMax(req.value) : 0);
    if (resources !== null) for (let i = 0; i < resources.length; i++) size += P.strMax(resources[i]);
    if (size + ROOM > ad.inCap) {
      const L = P.LIMITS;
      fits(req.value !== null ? 'name' : 'resource', resource, L.resource.max);
      if (token !== null) fits('token', token, L.token.max);
      if (req.value !== null) fits('value', req.value, L.election_value.max);
      if (resources !== null) resources.forEach((r, i) => fits(`resources[${i + 1}]`, r, L.resource.max));
    }
    const flags = (req.autoExtend ? ACQ.AUTO_EXTEND : 0) | (req.fence ? ACQ.FENCE : 0) | (token !== null ? ACQ.TOKEN : 0) |
      kindFlags(req.permits, req.mode) | (resources !== null ? ACQ.RESOURCES : 0) | (req.value !== null ? ACQ.ELECTION : 0);
    // (Arguments run in order: quietNow() may step a REPORTS event before this one is encoded.)
    const op = this.traced(this.quietNow(), 'acquire', resource, P.encAcquire(ad.mem(), ad.inOff, resource, req.ttl, req.wait, flags, token, req.permits, resources, req.value));
    const p = { kind: 0, req, signal, onAbort: null };
    if (signal) {
      p.onAbort = () => this.cancel(op);
      signal.addEventListener('abort', p.onAbort, { once: true });
    }
    return this.pend(op, p);
  }

  /**
   * Starts an inspection; resolves with { held, validity, owner, nodes }.
   * The engine cannot cancel an inspection (it settles within a node
   * timeout): an aborted signal rejects the promise at once and the answer
   * that comes later is dropped.
   */
  inspect(resource, signal, kind) {
    const ad = this.ad;
    if (P.strMax(resource) + ROOM > ad.inCap) fits(kind && kind.election ? 'name' : 'resource', resource, P.LIMITS.resource.max);
    const iflags = kind ? kindFlags(kind.permits, kind.mode) | (kind.election ? P.FLAGS.INSPECT.ELECTION : 0) : 0;
    const op = this.request(P.encInspect(ad.mem(), ad.inOff, resource, iflags, kind ? kind.permits || 0 : 0));
    const fields = { kind: EV.INSPECT, signal: signal || null, onAbort: null };
    const p = this.pend(op, fields);
    if (signal) {
      fields.onAbort = () => fields.reject(E.canceledBy(signal, 'inspect'));
      signal.addEventListener('abort', fields.onAbort, { once: true });
    }
    return p;
  }

  inspected(op, result) {
    const p = this.ops.get(op);
    if (!p) return;
    this.ops.delete(op);
    hold(-1);
    if (p.signal) p.signal.removeEventListener('abort', p.onAbort);
    p.resolve(result);
  }

  cancel(op) {
    if (admit()) this.cancelNow(op);
    else defer(() => this.cancelNow(op));
  }

  cancelNow(op) {
    if (this.dead || !this.ops.has(op)) return;
    this.event(P.encCancel, op);
  }

  /**
   * Whether telemetry is off or quiet for the operation about to start
   * (lib/otel.js quiet()). When that changed since the last operation, the
   * engine is told first which REPORT actions to emit (REPORTS): the
   * warnings alone while quiet, all otherwise, from this operation on.
   * Called before the operation's event is written into the input buffer.
   */
  quietNow() {
    const tel = this.tel;
    if (tel === null) return true;
    const quiet = tel.quiet();
    const level = quiet ? REPORTS_WARNINGS : REPORTS_ALL;
    if (level !== this.reports && !this.dead) {
      this.reports = level;
      const ad = this.ad;
      this.run(P.encReports(ad.mem(), ad.inOff, level), false); // answers nothing
    }
    return quiet;
  }

  /** Steps a request event of len bytes (quiet: quietNow()'s answer), in a span of its own unless quiet (lib/otel.js). */
  traced(quiet, kind, resource, len) {
    const t = this.tel;
    if (quiet) return this.request(len);
    const span = t.start(kind, resource);
    // Bound by the operation's start report, in the step itself: a
    // release of a lock known lost is DONE in the step that starts it.
    t.pending = { span, kind, resource };
    let op;
    try {
      op = this.request(len);
    } catch (e) {
      t.pending = null;
      t.refused(span, e);
      throw e;
    }
    if (t.pending) t.bind(op, kind, resource, span); // queued behind the lock's round in flight: no start yet
    t.pending = null;
    return op;
  }

  extend(st, ttl) {
    const ad = this.ad;
    const op = this.traced(this.quietNow(), 'extend', st.resource, P.encExtend(ad.mem(), ad.inOff, st.id, ttl));
    return this.pend(op, { kind: EV.EXTEND, st });
  }

  release(st) {
    const ad = this.ad;
    const op = this.traced(this.quietNow(), 'release', st.resource, P.encRelease(ad.mem(), ad.inOff, st.id));
    return this.pend(op, { kind: EV.RELEASE, st });
  }

  /**
   * The lock's Redis key: keyPrefix + resource, except on a client with a Redis
   * Cluster node, where the engine wraps a key without a hash tag in one
   * (README "Redis Cluster nodes"): then the engine's own (LOCK_INFO), so that
   * the derivation stays in one place.
   */
  keyOf(lock, resource, mutex = false) {
    if (!this.clusterKeys) return this.keyPrefix + resource;
    // A mutex's key depends on the resource alone (the engine's keyOf: the
    // client's prefix, the hash tag rule), so the engine is asked once per
    // resource; other kinds of lock derive theirs further (a semaphore's,
    // a read-write lock's), and are asked each time.
    const known = mutex ? this.mutexKeys.get(resource) : undefined;
    if (known !== undefined) return known;
    const info = this.info({ id: lock });
    if (!info) return this.keyPrefix + resource;
    if (mutex) {
      if (this.mutexKeys.size >= MUTEX_KEYS) this.mutexKeys.clear(); // bounded: a program of unique names gains nothing
      this.mutexKeys.set(resource, info.key);
    }
    return info.key;
  }

  /** LOCK_INFO: { token, validity, flags, err, ... }, or null for a lock the engine no longer has. */
  info(st) {
    if (this.dead || this.closed) return null;
    const ad = this.ad;
    this.run(P.encLockInfo(ad.mem(), ad.inOff, st.id), false);
    const info = this.rKind === ACT.INFO ? this.rInfo : null;
    drain();
    return info;
  }

  /** Releases a lock nobody references any more (FinalizationRegistry); forgets it if that fails. */
  releaseDropped(st) {
    if (this.closed || st.released) return;
    this.release(st).catch(() => {
      if (this.dead || !this.locks.has(st.id)) return;
      this.dropLock(st);
      this.event(P.encForget, st.id);
    });
  }

  /** CLOSE: pending operations end with CANCELED, held locks are released, then CLOSED. */
  close() {
    if (this.closing) return this.closing;
    this.closed = true;
    open.delete(this);
    this.closing = new Promise((resolve) => { this.closeDone = resolve; });
    hold(1);
    this.event(P.encClose);
    return this.closing;
  }

  finish() {
    if (this.dead) return;
    this.dead = true;
    open.delete(this);
    if (this.timer) { clearTimeout(this.timer); this.timer = null; }
    for (const s of this.conns.values()) s.destroy();
    this.conns.clear();
    this.ad.free(this.h);
    stats.engines--;
    stats.locks -= this.locks.size;
    // CLOSE released what was still held (the engine's best effort, each
    // node bounded by the node timeout): those locks read released, not lost.
    for (const st of this.locks.values()) {
      if (st.lost) continue;
      st.released = true;
      if (hooks.released) hooks.released(st);
    }
    this.locks.clear();
    // Telemetry queued for after delivery (lib/otel.js) is recorded before close() resolves.
    if (this.tel) this.tel.flush();
    if (this.closeDone) {
      hold(-1);
      this.closeDone();
    }
  }

  // ------------------------------------------------------------ outcomes

  dropLock(st) {
    if (this.locks.delete(st.id)) stats.locks--;
    // Its resource, noted for log lines while not quiet: a quiet engine
    // sends no HOLD report to drop it by (REPORTS, quietNow).
    if (this.tel !== null) this.tel.forgetLock(st.id);
  }

  done(op, lock, err) {
    const p = this.ops.get(op);
    if (!p) return;
    this.ops.delete(op);
    hold(-1);
    if (p.kind === EV.WATCH) { p.ended(err ? E.errorOf(err) : null); return; } // lib/election.js
    if (p.kind === EV.INSPECT) { // an inspection that could not tell (INSPECTED settles the others)
      if (p.signal) p.signal.removeEventListener('abort', p.onAbort);
      p.reject(err ? E.errorOf(err) : new E.InternalError('liblock: inspect: the engine answered DONE without an error'));
      return;
    }
    if (p.kind === 0) { // acquire
      if (p.signal) p.signal.removeEventListener('abort', p.onAbort);
      if (err) {
        if (err.status === E.STATUS.CANCELED && p.signal && p.signal.aborted) p.reject(E.canceledBy(p.signal));
        else p.reject(E.errorOf(err));
        return;
      }
      const f = this.fences.get(lock);
      if (f) this.fences.delete(lock);
      const q = p.req;
      const resource = q.resource;
      const mutex = q.resources === null && q.permits === 0 && q.mode === 0 && q.value === null;
      const st = {
        host: this, id: lock, resource, key: this.clusterKeys ? this.keyOf(lock, resource, mutex) : this.keyPrefix + resource, token: q.token,
        autoExtend: q.autoExtend, released: false, lost: false, lostReason: null, controller: null, atExit: false,
        fence: f ? f[0] : 0, reentered: f ? f[1] : false, resources: q.resources === null ? null : [resource, ...q.resources], mode: q.mode,
        registered: false, // with index.js's FinalizationRegistry (lib/dropped.js)
      };
      this.locks.set(lock, st);
      stats.locks++;
      p.resolve(q.wrap(st));
      return;
    }
    const st = p.st;
    if (p.kind === EV.RELEASE && (!err || err.status === E.STATUS.LOST)) {
      st.released = true;
      if (err) st.lost = true;
      this.dropLock(st);
      if (hooks.released) hooks.released(st);
    }
    if (!err) { p.resolve(); return; }
    const e = E.errorOf(err);
    if (err.status === E.STATUS.LOST && p.kind === EV.EXTEND) markLost(st, e);
    p.reject(e);
  }

  lost(lock, err) {
    const st = this.locks.get(lock);
    if (st) markLost(st, err ? E.errorOf(err) : new E.LockLostError('liblock: lock lost'));
  }
}

/**
 * A loss is never silent: its record goes to the 'liblock:log' diagnostics
 * channel when something listens there (the application's logging), else
 * to process.emitWarning (printed on stderr unless the application handles
 * 'warning' events or runs with --no-warnings), with a stable code. The
 * text is the engine's, the same in every language: the resource, the
 * reason and the count ("held on at most 1 of 3 nodes (2 answered it is
 * gone), quorum is 2").
 */
function warnLost(st) {
  const message = st.lostReason.message;
  if (logChannel.hasSubscribers) {
    logChannel.publish({ level: 'warn', msg: 'liblock: lock lost', resource: st.resource, error: message });
    return;
  }
  process.emitWarning(message, { type: 'LiblockWarning', code: LOST_WARNING });
}

/** The code of the loss warning (process.emitWarning). */
const LOST_WARNING = 'LIBLOCK_LOCK_LOST';

/** Records the loss once; aborts the lock's signal if it was made; warns (warnLost). */
function markLost(st, reason) {
  if (st.lost || st.released) return false;
  st.lost = true;
  if (!(reason instanceof E.LockLostError)) reason = new E.LockLostError(reason.message);
  st.lostReason = reason;
  if (st.controller && !st.controller.signal.aborted) st.controller.abort(reason);
  warnLost(st);
  return true;
}

module.exports = { Host, stats, markLost, hooks, hold, drain, fits, ROOM };
