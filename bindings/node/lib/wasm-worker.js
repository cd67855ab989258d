'use strict';
// The worker thread that runs liblock.wasm for every wasm-backend client of
// the process: ONE instance, exports called one at a time, in the order the
// main thread's requests arrive. The module does the Redlock algorithm; its
// only I/O is the synchronous host call liblock.exec, which this thread
// bridges to the main thread (the Redis connections live there) through a
// SharedArrayBuffer: write the request, post a signal, block in Atomics.wait
// until the response is written and notified. Time is driven by ONE timer:
// lock_run after every export and whenever its next_run_ms elapses
// (/work/briefs/wasm-nonblocking.md; wasm/PROTOCOL.md §8).

const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
const { Instance, OUT_HANDLE, OUT_ERR } = require('./wasm-instance');
const { W, STATE, views } = require('./wasm-exchange');

const { module: wasmModule, sab, bigPort, where } = workerData;
const { ctrl, data } = views(sab);

// ---------------------------------------------------------------- exec bridge

let lastResponse = null; // for exec_take, when the response did not fit

function hostImports(memory) {
  return {
    exec(reqP, reqLen, respP, respCap) {
      const req = new Uint8Array(memory().buffer, reqP, reqLen);
      ctrl[W.CID] = cidOfRequest(req);
      ctrl[W.REQ_LEN] = reqLen;
      if (reqLen <= data.length) data.set(req);
      else bigPort.postMessage(req.slice()); // the main thread takes it with receiveMessageOnPort
      Atomics.store(ctrl, W.STATE, STATE.REQUEST);
      // The main thread waits for this with Atomics.waitAsync: cheaper than a
      // message (no serialization, no MessagePort).
      Atomics.add(ctrl, W.SEQ, 1);
      Atomics.notify(ctrl, W.SEQ);
      while (Atomics.load(ctrl, W.STATE) === STATE.REQUEST) Atomics.wait(ctrl, W.STATE, STATE.REQUEST);
      const n = ctrl[W.RESP_LEN];
      let resp;
      if (n <= data.length) {
        resp = data.subarray(0, n);
      } else {
        const m = receiveMessageOnPort(bigPort);
        resp = m ? m.message : new Uint8Array(0);
      }
      if (n <= respCap) {
        new Uint8Array(memory().buffer, respP, n).set(resp);
        lastResponse = null;
      } else {
        lastResponse = resp.slice();
      }
      Atomics.store(ctrl, W.STATE, STATE.IDLE);
      return n;
    },
    exec_take(p, cap) {
      const b = lastResponse || new Uint8Array(0);
      const n = Math.min(b.length, cap);
      new Uint8Array(memory().buffer, p, n).set(b.subarray(0, n));
      return n;
    },
    // Only the blocking lock_acquire polls this; cancellation goes through lock_cancel.
    interrupted() { return 0; },
  };
}

// The request is msgpack [client, timeout_ms, cmds]: read the client handle.
function cidOfRequest(req) {
  let h = -1;
  const b = req[1];
  if (b <= 0x7f) h = b;
  else if (b === 0xcc) h = req[2];
  else if (b === 0xcd) h = (req[2] << 8) | req[3];
  else if (b === 0xce) h = ((req[2] << 24) >>> 0) + ((req[3] << 16) | (req[4] << 8) | req[5]);
  else if (b === 0xcf) h = Number(new DataView(req.buffer, req.byteOffset + 2, 8).getBigUint64(0));
  const c = clientByHandle.get(h);
  return c ? c.cid : 0;
}

// ---------------------------------------------------------------- the instance

const inst = new Instance(wasmModule, hostImports, where);
const x = inst.x;
const RUN_EVENTS = 64;
const runCap = 8 + 16 * RUN_EVENTS;
const runBuf = x.lock_buf_alloc(runCap);

const clients = new Map(); // cid -> { cid, handle, ops: Set<op>, locks: Set<lock> }
const clientByHandle = new Map(); // module client handle -> client
const ops = new Map(); // op handle -> { id (request id), client }
const opByRequest = new Map(); // request id -> op handle
const locks = new Map(); // lock handle -> { client, autoExtend, validUntil }
let liveHandles = 0;

function countHandles(d) {
  liveHandles += d;
  Atomics.store(ctrl, W.HANDLES, liveHandles);
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function reply(id, status, err, extra) {
  parentPort.postMessage({ t: 'r', id, status, err: err || null, ...extra });
}

// lockState reads what the main thread shows synchronously: the token and
// the moment the validity ends, on the process-wide monotonic clock.
function lockState(lock) {
  const t = nowMs();
  const r = inst.info(lock);
  if (r.status !== 0) return { validUntil: 0, token: null, lost: true };
  return { token: r.info.token, validUntil: t + Math.max(0, r.info.validity_ms), lost: r.info.lost };
}

function finishAcquire(op) {
  const o = ops.get(op);
  ops.delete(op);
  opByRequest.delete(o.id);
  o.client.ops.delete(op);
  const status = x.lock_op_result(BigInt(op), inst.out + OUT_HANDLE, inst.out + OUT_ERR);
  const err = status === 0 ? null : inst.takeError();
  if (status === 8) throw new Error(`liblock.wasm: lock_op_result(${op}) is PENDING after its event`);
  countHandles(-1);
  if (status !== 0) {
    reply(o.id, status, err);
    return;
  }
  const lock = inst.outHandle();
  inst.takeError();
  countHandles(1);
  const st = lockState(lock);
  locks.set(lock, { client: o.client, autoExtend: o.autoExtend, validUntil: st.validUntil });
  o.client.locks.add(lock);
  reply(o.id, 0, null, { lock, ...st });
}

// The module extends auto-extended locks inside lock_run without telling;
// the main thread computes lock.validity from the last validity it saw, so
// it is told when an extension moved the end of the validity.
let lastRefresh = 0;
function refreshValidity() {
  const t = nowMs();
  if (t - lastRefresh < 10) return;
  lastRefresh = t;
  for (const [lock, l] of locks) {
    if (!l.autoExtend) continue;
    const st = lockState(lock);
    if (st.validUntil > l.validUntil + 2) {
      l.validUntil = st.validUntil;
      parentPort.postMessage({ t: 'validity', lock, validUntil: st.validUntil });
    }
  }
}

// ---------------------------------------------------------------- time

let timer = null;
let immediate = null;

function arm(ms) {
  if (timer) { clearTimeout(timer); timer = null; }
  if (immediate) { clearImmediate(immediate); immediate = null; }
  if (ms < 0) return;
  if (ms === 0) immediate = setImmediate(run);
  else timer = setTimeout(run, ms);
}

// run calls lock_run until nothing is due now, handles its events and arms
// the one timer with next_run_ms.
function run() {
  timer = null;
  immediate = null;
  for (let round = 0; round < 16; round++) {
    const n = x.lock_run(runBuf, runCap);
    const v = inst.view();
    const next = Number(v.getBigInt64(runBuf, true));
    const events = [];
    for (let i = 0; i < n; i++) {
      const e = runBuf + 8 + i * 16;
      events.push([Number(v.getBigUint64(e, true)), v.getUint32(e + 8, true)]);
    }
    for (const [handle, kind] of events) {
      if (kind === 1 && ops.has(handle)) finishAcquire(handle);
      else if (kind === 2 && locks.has(handle)) parentPort.postMessage({ t: 'lost', lock: handle });
    }
    if (n < RUN_EVENTS && next !== 0) {
      refreshValidity();
      arm(next);
      return;
    }
  }
  refreshValidity();
  arm(0); // more is due: after the messages already queued
}

// ---------------------------------------------------------------- requests

const handlers = {
  client(m) {
    const r = inst.clientNew(m.json);
    if (r.status === 0) {
      const c = { cid: m.cid, handle: r.handle, ops: new Set(), locks: new Set() };
      clients.set(m.cid, c);
      clientByHandle.set(r.handle, c);
      countHandles(1);
    }
    reply(m.id, r.status, r.err);
  },

  acquire(m) {
    const c = clients.get(m.cid);
    if (!c) return reply(m.id, 4, { message: 'liblock: acquire: the client is closed' });
    const [rp, rn] = inst.putString(0, m.resource);
    const [op, on] = m.opts === null ? [0, 0] : inst.putString(1, m.opts);
    const status = x.lock_acquire_start(BigInt(c.handle), rp, rn, BigInt(m.ttl), op, on, inst.out + OUT_HANDLE, inst.out + OUT_ERR);
    const err = inst.takeError();
    if (status !== 0) return reply(m.id, status, err);
    const h = inst.outHandle();
    countHandles(1);
    ops.set(h, { id: m.id, client: c, autoExtend: m.autoExtend });
    opByRequest.set(m.id, h);
    c.ops.add(h);
    return undefined; // answered by run() when the operation finishes
  },

  cancel(m) {
    const op = opByRequest.get(m.target);
    if (op !== undefined) x.lock_cancel(BigInt(op)); // its event comes from lock_run
  },

  extend(m) {
    if (!locks.has(m.lock)) return reply(m.id, 4, { message: 'liblock: extend: not a live lock handle' });
    const status = x.lock_extend(BigInt(m.lock), BigInt(m.ttl), inst.out + OUT_ERR);
    const err = inst.takeError();
    const st = lockState(m.lock);
    locks.get(m.lock).validUntil = st.validUntil;
    return reply(m.id, status, err, st);
  },

  release(m) {
    if (!locks.has(m.lock)) return reply(m.id, 4, { message: 'liblock: release: not a live lock handle' });
    const status = x.lock_release(BigInt(m.lock), inst.out + OUT_ERR);
    const err = inst.takeError();
    if (status === 0 || status === 2) {
      // Released (or found lost): nothing is left to do on the network, so
      // the handle is freed now, sparing the main thread a message.
      const l = locks.get(m.lock);
      locks.delete(m.lock);
      l.client.locks.delete(m.lock);
      if (x.lock_free(BigInt(m.lock)) === 0) countHandles(-1);
    }
    return reply(m.id, status, err);
  },

  free(m) {
    const l = locks.get(m.lock);
    let status = 4;
    if (l) {
      const c = l.client;
      status = x.lock_free(BigInt(m.lock));
      locks.delete(m.lock);
      c.locks.delete(m.lock);
      if (status === 0) countHandles(-1);
    }
    if (m.id) reply(m.id, status, null);
  },

  // lock_free(client) cancels the client's pending acquires without events:
  // they are answered CANCELED here; its locks are released and freed.
  freeClient(m) {
    const c = clients.get(m.cid);
    if (!c) return m.id ? reply(m.id, 4, null) : undefined;
    const status = x.lock_free(BigInt(c.handle));
    clients.delete(m.cid);
    clientByHandle.delete(c.handle);
    for (const op of c.ops) {
      const o = ops.get(op);
      ops.delete(op);
      opByRequest.delete(o.id);
      reply(o.id, 6, { message: 'liblock: acquire: canceled: the client was closed' });
    }
    for (const l of c.locks) locks.delete(l);
    countHandles(-(1 + c.ops.size + c.locks.size));
    if (m.id) reply(m.id, status, null);
    return undefined;
  },
};

parentPort.on('message', (m) => {
  Atomics.add(ctrl, W.PROCESSED, 1); // picked up (the eventloop test waits for all)
  try {
    handlers[m.t](m);
  } catch (e) {
    // A trap or a bug: the instance may be unusable. Say so to the caller
    // (INTERNAL) and to the main thread, which stops using this worker.
    if (m.id) reply(m.id, 7, { message: `liblock: internal error in the wasm worker: ${e && e.message}` });
    parentPort.postMessage({ t: 'fatal', message: String(e && e.stack) });
    return;
  }
  run();
});

parentPort.postMessage({ t: 'ready', abi: inst.abi });
