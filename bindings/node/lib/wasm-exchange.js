'use strict';
// The layout of the SharedArrayBuffer through which the worker's synchronous
// liblock.exec host call hands a request to the main thread and blocks in
// Atomics.wait until the response is there (wasm-worker.js: exec;
// wasm-backend.js: onExec). One exchange at a time: the instance runs one
// export at a time and an export makes one exec at a time.

/** Int32 words at the start of the buffer. */
const W = Object.freeze({
  STATE: 0, // IDLE, REQUEST (worker posted a request) or RESPONSE (main wrote the answer)
  REQ_LEN: 1, // bytes of the request in the data area (when it fits)
  RESP_LEN: 2, // bytes of the response; more than the data area: it came by message
  HANDLES: 3, // live handles in the worker's instance (clients, locks, operations), for leak tests
  PROCESSED: 4, // requests the worker has handled (the main thread counts those it posted)
  SEQ: 5, // exec requests so far: the worker bumps and notifies it, the main thread waits on it (Atomics.waitAsync)
  CID: 6, // the client (the main thread's id) the pending exec request is for
  COUNT: 16,
});
const STATE = Object.freeze({ IDLE: 0, REQUEST: 1, RESPONSE: 2 });
const HEADER = W.COUNT * 4;

/** Default data area: the largest exec messages (64 nodes × a 1,280-byte key) pass by message instead. */
const DEFAULT_DATA_BYTES = 64 * 1024;

/** The exchange size: LIBLOCK_WASM_EXCHANGE_BYTES (a test knob; at least 16) or the default. */
function dataBytes() {
  const v = Number(process.env.LIBLOCK_WASM_EXCHANGE_BYTES);
  return Number.isSafeInteger(v) && v >= 16 ? v : DEFAULT_DATA_BYTES;
}

/** Views over one exchange buffer. */
function views(sab) {
  return { ctrl: new Int32Array(sab, 0, W.COUNT), data: new Uint8Array(sab, HEADER) };
}

function create() {
  return new SharedArrayBuffer(HEADER + dataBytes());
}

module.exports = { W, STATE, views, create };
