'use strict';
// backend: 'wasm' — liblock.wasm instead of liblock.so, behind the same
// Client/Lock front end (index.js calls the functions exported here where
// the native backend calls the .so).
//
// Threads: the module is compiled once, on the main thread; ONE worker
// thread (lib/wasm-worker.js), started with the first wasm client, runs ONE
// instance for every wasm client of the process, one export at a time. Its
// synchronous exec host call is answered here: the request comes through a
// SharedArrayBuffer (lib/wasm-exchange.js), the commands go to the nodes in
// parallel with ioredis (lib/wasm-io.js), the response goes back the same
// way and Atomics.notify wakes the worker. The worker is ref()'d only while
// a call is pending (like the native backend, an idle open client does not
// keep the process alive) and terminated when the last client closes.
// A second, I/O-free instance on the main thread validates configurations,
// so new Client() throws synchronously with the module's own message.

const path = require('node:path');
const { Worker, MessageChannel, receiveMessageOnPort } = require('node:worker_threads');
const exchange = require('./wasm-exchange');
const { W, STATE } = exchange;
const { loadModule, validateConfig } = require('./wasm-module');
const { NodeSet, parseNodeURL } = require('./wasm-io');
const { NodeURLError, scrub } = require('./node-url');
const { decode, Encoder } = require('./msgpack');

const OK = 0;
const CANCELED = 6;
const INTERNAL = 7;

let F = null; // the front end's classes and helpers (bind)

/**
 * Receives what the backend needs from index.js: the error classes,
 * errorFor, canceledBy, markLost and the Lock class.
 */
function bind(frontEnd) { F = frontEnd; }

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function loaded() {
  return loadModule((msg, cause) => new F.LoadError(msg, cause ? { cause } : undefined));
}

// ---------------------------------------------------------------- the worker

let worker = null; // { w, ctrl, data, port, exited }
const replies = new Map(); // request id -> (reply message) => void
let refs = 0; // pending calls that keep the process alive
let nextId = 1;
let posted = 0;
const clients = new Map(); // cid -> client state (cs)
let nextCid = 1;
const lockStates = new Map(); // lock handle -> st (for 'lost' and 'validity' messages)
const enc = new Encoder(1024);

function startWorker() {
  if (worker) return worker;
  const m = loaded();
  const sab = exchange.create();
  const { ctrl, data } = exchange.views(sab);
  const { port1, port2 } = new MessageChannel();
  const w = new Worker(path.join(__dirname, 'wasm-worker.js'), {
    workerData: { module: m.module, sab, bigPort: port2, where: m.where },
    transferList: [port2],
    stdout: false,
    stderr: false,
  });
  port1.unref();
  const wk = { w, ctrl, data, port: port1, exited: false, startedAt: performance.now(), readyMs: null };
  w.on('message', (msg) => onMessage(wk, msg));
  w.on('error', (e) => workerFailed(wk, `the wasm worker failed: ${e && e.message}`));
  w.on('exit', (code) => { if (!wk.exited) workerFailed(wk, `the wasm worker exited (code ${code})`); });
  w.unref();
  worker = wk;
  posted = 0;
  listen(wk, 0);
  return wk;
}

// listen waits (without blocking, and without keeping the process alive)
// for the worker's next exec request: it bumps W.SEQ and notifies.
function listen(wk, seen) {
  const r = Atomics.waitAsync(wk.ctrl, W.SEQ, seen);
  const next = () => {
    if (wk.exited) return;
    const seq = Atomics.load(wk.ctrl, W.SEQ);
    if (seq !== seen) onExec(wk);
    listen(wk, seq);
  };
  if (r.async) r.value.then(next);
  else queueMicrotask(next);
}

// A worker that failed (a trap, a crash) is not used again: its calls fail
// with INTERNAL, its clients are dead (their handles lived in its instance).
function workerFailed(wk, message) {
  if (wk.exited) return;
  wk.exited = true;
  if (worker === wk) worker = null;
  for (const [id, fn] of [...replies]) {
    replies.delete(id);
    fn({ status: INTERNAL, err: { message: `liblock: ${message}` } });
  }
  refs = 0;
  Atomics.notify(wk.ctrl, W.SEQ);
  for (const cs of clients.values()) {
    if (cs.w.worker === wk) cs.w.dead = `liblock: ${message}`;
  }
  wk.w.terminate().catch(() => {});
}

function ref(d) {
  refs += d;
  if (!worker) return;
  if (refs > 0 && refs === d) worker.w.ref();
  else if (refs === 0) worker.w.unref();
}

/**
 * Posts a request to the worker; resolves with its reply. `keepAlive`
 * (default true) ref()s the worker until the reply.
 */
function call(wk, msg, keepAlive = true) {
  return new Promise((resolve) => {
    const id = nextId++;
    msg.id = id;
    if (keepAlive) ref(1);
    replies.set(id, (r) => {
      if (keepAlive && refs > 0) ref(-1);
      resolve(r);
    });
    posted++;
    wk.w.postMessage(msg);
  });
}

function onMessage(wk, msg) {
  switch (msg.t) {
    case 'r': {
      const fn = replies.get(msg.id);
      if (fn) { replies.delete(msg.id); fn(msg); }
      maybeStop();
      break;
    }
    case 'lost': {
      const st = lockStates.get(msg.lock);
      if (st) F.markLost(st, 'liblock: lock lost: it could no longer be kept on a quorum of nodes, or its validity ran out');
      break;
    }
    case 'validity': {
      const st = lockStates.get(msg.lock);
      if (st) st.validUntil = msg.validUntil;
      break;
    }
    case 'ready': wk.readyMs = performance.now() - wk.startedAt; break;
    case 'fatal': workerFailed(wk, msg.message); break;
    default: break;
  }
}

// onExec answers the worker's exec host call: decode, send to the nodes in
// parallel, write the response, wake the worker. Always answers.
function onExec(wk) {
  let req = null;
  let n = 0;
  try {
    const len = wk.ctrl[W.REQ_LEN];
    let bytes;
    if (len <= wk.data.length) bytes = wk.data.slice(0, len);
    else { const m = receiveMessageOnPort(wk.port); bytes = m ? m.message : new Uint8Array(0); }
    req = decode(bytes);
    n = req[2].length;
  } catch { /* malformed: answered with no entries below */ }
  const cs = clients.get(wk.ctrl[W.CID]);
  const done = (entries) => respond(wk, entries);
  if (!req) return done([]);
  if (!cs || !cs.w.nodes) return done(req[2].map((c) => (c ? [3, 'liblock: the client is closed'] : null)));
  cs.w.nodes.exec(Math.max(1, req[1]), req[2]).then(done, () => done(new Array(n).fill([3, 'liblock: internal error'])));
  return undefined;
}

function respond(wk, entries) {
  if (wk.exited) return;
  enc.reset().array(entries.length);
  for (const e of entries) {
    if (e === null) { enc.nil(); continue; }
    enc.array(2).int(e[0]);
    if (e[1] === null) enc.nil();
    else if (typeof e[1] === 'number') enc.int(e[1]);
    else enc.str(e[1]);
  }
  const b = enc.bytes();
  if (b.length <= wk.data.length) {
    wk.data.set(b);
  } else {
    wk.port.postMessage(b.slice()); // read by the worker with receiveMessageOnPort
  }
  wk.ctrl[W.RESP_LEN] = b.length;
  Atomics.store(wk.ctrl, W.STATE, STATE.RESPONSE);
  Atomics.notify(wk.ctrl, W.STATE);
}

function errorOf(r) {
  return F.errorFor(r.status, r.err && r.err.message);
}

// ---------------------------------------------------------------- node URLs

// nodeSpec reads nodes[i] as the native backend does (go-redis's ParseURL,
// lib/node-url.js): its connection settings, or the native backend's
// InvalidArgumentError for a URL go-redis rejects (an unknown or malformed
// query parameter, skip_verify on a non-TLS URL, …), which the module,
// having no go-redis, accepts.
function nodeSpec(nodes, i) {
  try {
    return parseNodeURL(nodes[i]);
  } catch (e) {
    if (!(e instanceof NodeURLError)) throw e;
    return F.errorFor(3, `liblock: invalid argument: nodes[${i}]: ${scrub(e.message, nodes[i])}`);
  }
}

// The module checks a redis:// URL's database number itself (the native
// backend leaves that to go-redis, after every other check): for a config
// it rejects for that, the native backend reports go-redis's message for
// the first node go-redis rejects. null when the module's error is another.
function nativeMessage(nodes, bad) {
  const err = bad.err || {};
  const m = /^nodes\[(\d+)\]$/.exec(err.arg || '');
  if (bad.status !== 3 || !m || !/invalid database number/.test(err.message || '')) return null;
  for (let i = 0; i <= Number(m[1]); i++) {
    const r = nodeSpec(nodes, i);
    if (r instanceof Error) return r;
  }
  return null;
}

// ---------------------------------------------------------------- the backend

const backend = {
  /**
   * Validates cfg with the module (synchronously; throws the front end's
   * errors), then creates the client in the worker. Returns the client
   * state the front end keeps (cs).
   */
  clientNew(cfg) {
    const m = loaded();
    const json = JSON.stringify(cfg);
    const bad = validateConfig(m, json);
    if (bad) throw nativeMessage(cfg.nodes, bad) || errorOf(bad);
    const specs = [];
    for (let i = 0; i < cfg.nodes.length; i++) {
      const r = nodeSpec(cfg.nodes, i);
      if (r instanceof Error) throw r;
      specs.push(r);
    }
    const wk = startWorker();
    const cid = nextCid++;
    const cs = {
      handle: cid, closed: false, locks: new Set(), keyPrefix: cfg.key_prefix || '', be: backend,
      w: { worker: wk, nodes: new NodeSet(cfg.nodes, specs), created: null, dead: null },
    };
    clients.set(cid, cs);
    cs.w.nodes.warm();
    // Not kept alive: an idle open client must not hold the process.
    cs.w.created = call(wk, { t: 'client', cid, json }, false).then((r) => {
      if (r.status !== OK) cs.w.dead = (r.err && r.err.message) || `liblock: client creation failed (status ${r.status})`;
    });
    return cs;
  },

  /** Client#acquire after the front end checked the arguments' kinds. */
  async acquire(client, cs, resource, ttl, wait, autoExtend, signal) {
    if (cs.w.dead) throw new F.InternalError(cs.w.dead);
    const opts = {};
    if (wait !== undefined) opts.wait_ms = wait;
    if (autoExtend) opts.auto_extend = true;
    const optsJson = wait === undefined && !autoExtend ? null : JSON.stringify(opts);
    const wk = cs.w.worker;
    const result = call(wk, { t: 'acquire', cid: cs.handle, resource, ttl, opts: optsJson, autoExtend: !!autoExtend });
    const id = nextId - 1;
    const { r, aborted: abortedBySignal } = await F.settleAbortable(result, signal, () => {
      if (!wk.exited) { posted++; wk.w.postMessage({ t: 'cancel', target: id }); }
    });
    if (r.status === OK && (abortedBySignal || cs.closed)) {
      // The signal fired (or close() ran) before this promise settled,
      // though after the module had decided: give the lock back.
      if (!cs.closed) backend.free(r.lock);
      if (abortedBySignal) throw F.canceledBy(signal);
      throw new F.CanceledError('liblock: acquire: the client was closed');
    }
    if (r.status !== OK) {
      if (r.status === CANCELED && abortedBySignal) throw F.canceledBy(signal);
      throw errorOf(r);
    }
    const st = {
      client: cs, handle: r.lock, resource, autoExtend: !!autoExtend,
      key: cs.keyPrefix + resource, token: r.token,
      released: false, lost: false, inflight: 0,
      controller: new AbortController(),
      lostId: 0,
      validUntil: r.validUntil,
    };
    cs.locks.add(st);
    lockStates.set(st.handle, st);
    const lock = new F.Lock(st, client);
    if (r.lost) F.markLost(st, 'liblock: lock lost');
    return lock;
  },

  /** lock_info's view, from what the worker last said (no call: the worker may be busy). */
  info(st) {
    if (!st.handle || st.client.closed) return null;
    const validity = st.lost || st.released ? 0 : Math.max(0, Math.floor(st.validUntil - nowMs()));
    return { token: st.token, validity_ms: validity, lost: st.lost, released: st.released };
  },

  extend(st, ttl) { return backend.lockCall(st, 'extend', { ttl }); },
  release(st) { return backend.lockCall(st, 'release', {}); },

  async lockCall(st, name, args) {
    const cs = st.client;
    if (cs.closed || !st.handle) throw new F.InvalidHandleError(`liblock: ${name}: the lock's client is closed`);
    st.inflight++;
    let r;
    try {
      r = await call(cs.w.worker, { t: name, lock: st.handle, ...args });
    } finally {
      st.inflight--;
    }
    if (r.validUntil !== undefined && r.status === OK) st.validUntil = r.validUntil;
    // The worker frees a lock as soon as a release settled (OK or LOST).
    if (name === 'release' && (r.status === OK || r.status === 2)) st.workerFreed = true;
    if (r.status !== OK) {
      if (r.status === 4 && cs.closed) {
        throw new F.CanceledError(`liblock: ${name}: canceled: the client was closed`);
      }
      if (r.status === 4 && st.workerFreed) {
        throw new F.LockLostError(`liblock: ${name}: already released`);
      }
      throw errorOf(r);
    }
  },

  /** Frees a lock handle (lock_free releases it if still held), in the background. */
  free(lock) {
    const st = lockStates.get(lock);
    lockStates.delete(lock);
    if (st && st.workerFreed) return;
    const wk = st ? st.client.w.worker : worker;
    if (wk && !wk.exited) call(wk, { t: 'free', lock }, false);
  },

  /** Client#close: cancels pending acquires, releases held locks, closes the connections. */
  closeClient(cs) {
    const wk = cs.w.worker;
    for (const [h, st] of lockStates) if (st.client === cs) lockStates.delete(h);
    if (wk.exited) {
      finishClose(cs);
      return Promise.resolve();
    }
    return call(wk, { t: 'freeClient', cid: cs.handle }).then(() => finishClose(cs));
  },

  /** The FinalizationRegistry's free of a dropped client. */
  freeClient(cs) {
    cs.closed = true;
    backend.closeClient(cs);
  },
};

function finishClose(cs) {
  if (cs.w.nodes) cs.w.nodes.close();
  cs.w.nodes = null;
  clients.delete(cs.handle);
  maybeStop();
}

// When the last client is closed and nothing is pending, the worker (and its
// instance) goes; the next wasm client starts a new one from the compiled
// module.
function maybeStop() {
  const wk = worker;
  if (!wk || clients.size > 0 || replies.size > 0) return;
  wk.exited = true;
  worker = null;
  Atomics.notify(wk.ctrl, W.SEQ); // settles the pending waitAsync
  wk.w.terminate().catch(() => {});
}

/** library('wasm'): which module, from where, its ABI, load costs. */
function library() {
  const m = loaded();
  return {
    path: m.path,
    from: m.from,
    abiVersion: m.abi,
    version: null,
    size: m.size,
    compileMs: m.compileMs,
    instantiateMs: m.instantiateMs,
  };
}

/** _debug('wasm'): live handles in the worker's instance, pending calls, whether the worker runs. */
function debug() {
  const wk = worker;
  return {
    handles: wk ? Atomics.load(wk.ctrl, W.HANDLES) : 0,
    pending: replies.size,
    lostWatch: lockStates.size,
    submitting: wk ? posted - Atomics.load(wk.ctrl, W.PROCESSED) : 0,
    worker: !!wk,
    clients: clients.size,
    workerReadyMs: wk ? wk.readyMs : null,
  };
}

module.exports = { bind, backend, library, debug };
