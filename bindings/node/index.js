'use strict';
// liblock for Node.js: a thin binding over liblock.so (the C ABI of the Go
// core) through koffi. Every operation that can wait on the network goes
// through the library's non-blocking calls (lock_*_async); their completion
// callbacks come back from Go threads and koffi queues them onto the JS main
// thread. The binding has no retry loop, timer or watchdog of its own: the
// core waits (with randomized backoff and wake-ups), extends and detects loss.

const fs = require('node:fs');
const path = require('node:path');
const { isMainThread } = require('node:worker_threads');

const ABI_VERSION = 1;

// ---------------------------------------------------------------- errors

const STATUS = Object.freeze({
  OK: 0,
  NOT_ACQUIRED: 1,
  LOST: 2,
  INVALID_ARGUMENT: 3,
  INVALID_HANDLE: 4,
  UNAVAILABLE: 5,
  CANCELED: 6,
  INTERNAL: 7,
});
const CODE_OF = ['OK', 'NOT_ACQUIRED', 'LOST', 'INVALID_ARGUMENT', 'INVALID_HANDLE', 'UNAVAILABLE', 'CANCELED', 'INTERNAL'];

/** Base class of every error this package throws; `code` is stable. */
class LockError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}
function defineError(name, code) {
  const cls = {
    [name]: class extends LockError {},
  }[name];
  Object.defineProperty(cls.prototype, 'code', { value: code, enumerable: true });
  Object.defineProperty(cls.prototype, 'status', { value: STATUS[code], enumerable: false });
  return cls;
}
/** Another owner holds the resource: no quorum of grants before the wait ran out. */
const NotAcquiredError = defineError('NotAcquiredError', 'NOT_ACQUIRED');
/** Too many nodes failed (errors, timeouts, refused connections) for a quorum. */
const UnavailableError = defineError('UnavailableError', 'UNAVAILABLE');
/** The lock is no longer held on a quorum (expired, released, or taken by someone else). */
const LockLostError = defineError('LockLostError', 'LOST');
/** The pending operation was canceled (AbortSignal, or the client was closed). */
const CanceledError = defineError('CanceledError', 'CANCELED');
/** A bad argument: wrong type (checked here) or out of range (checked by the library). */
const InvalidArgumentError = defineError('InvalidArgumentError', 'INVALID_ARGUMENT');
/** The client or lock was closed/freed. */
const InvalidHandleError = defineError('InvalidHandleError', 'INVALID_HANDLE');
/** A bug inside liblock; the message says what. */
const InternalError = defineError('InternalError', 'INTERNAL');
/**
 * The backend's library could not be loaded: for the native backend koffi
 * (an optional dependency) or liblock.so (missing, not loadable on this
 * platform, wrong ABI); for the wasm backend liblock.wasm. Nothing was sent
 * to Redis. `status` is LOCK_INTERNAL's (7): no library call was made.
 */
class LoadError extends LockError {}
Object.defineProperty(LoadError.prototype, 'code', { value: 'LOAD_FAILED', enumerable: true });
Object.defineProperty(LoadError.prototype, 'status', { value: STATUS.INTERNAL, enumerable: false });

const ERROR_OF = [null, NotAcquiredError, LockLostError, InvalidArgumentError, InvalidHandleError,
  UnavailableError, CanceledError, InternalError];

function errorFor(status, message) {
  const cls = ERROR_OF[status] || InternalError;
  if (!message) message = `liblock: ${CODE_OF[status] || `status ${status}`}`;
  const e = new cls(message);
  if (!ERROR_OF[status]) e.message += ` (unknown status ${status})`;
  return e;
}

// ---------------------------------------------------------------- library

let native = null; // loaded lazily, once, on the main thread

// backend: 'wasm' (lib/wasm-backend.js) is loaded with the first client that
// asks for it; it shares this file's classes, errors and argument checks.
let wasmBackend = null;
function wasm() {
  if (!wasmBackend) {
    wasmBackend = require('./lib/wasm-backend');
    wasmBackend.bind({ LockError, LoadError, InvalidArgumentError, InternalError, InvalidHandleError, CanceledError, LockLostError, Lock, errorFor, canceledBy, markLost, settleAbortable });
  }
  return wasmBackend;
}

function candidatePaths() {
  const out = [];
  if (process.env.LIBLOCK_PATH) out.push({ from: 'LIBLOCK_PATH', file: process.env.LIBLOCK_PATH, required: true });
  out.push({ from: 'repository build', file: path.resolve(__dirname, '..', '..', 'build', 'liblock.so') });
  out.push({ from: 'packaged copy', file: path.join(__dirname, 'prebuilt', 'liblock.so') });
  return out;
}

// Said by every load failure of the native backend: where it cannot work,
// the wasm backend can.
const WASM_HINT = "use new Client({ nodes, backend: 'wasm' }) (liblock.wasm; no koffi, no liblock.so) instead";

// koffi is an optional dependency: its install may fail (or be skipped) on
// a platform without a prebuilt binary, and `npm install liblock` must still
// succeed there for the wasm backend. It is required here, never at module
// load.
function loadKoffi() {
  try {
    return require('koffi');
  } catch (e) {
    throw new LoadError(`liblock: the native backend needs the koffi package, which cannot be loaded ` +
      `(${e.message.split('\n')[0]}); it is an optional dependency of liblock, so its install may have failed ` +
      `or been skipped on this platform: install it (npm install koffi@3.3.4), or ${WASM_HINT}`, { cause: e });
  }
}

// koffi's type names are global to the process and a name can be declared
// only once (koffi throws "Duplicate type name"); another copy of this
// module in the process (a second node_modules/liblock, a copy under another
// path, an older version) declares its own types, so every declaration gets
// a name of its own: no shared counter is needed, and no copy can collide
// with another's.
function typeName(base) {
  return `${base}_${require('node:crypto').randomBytes(8).toString('hex')}`;
}

function loadNative() {
  if (native) return native;
  if (!isMainThread) {
    throw new LoadError('liblock: load the library on the main thread only (not in a worker thread)');
  }
  const koffi = loadKoffi();
  let chosen = null;
  const tried = [];
  for (const c of candidatePaths()) {
    tried.push(`${c.file} (${c.from})`);
    if (fs.existsSync(c.file)) { chosen = c; break; }
    if (c.required) {
      throw new LoadError(`liblock: LIBLOCK_PATH=${c.file} does not exist; set it to liblock.so, or ${WASM_HINT}`);
    }
  }
  if (!chosen) {
    throw new LoadError(`liblock: cannot find liblock.so; tried ${tried.join(', ')}. ` +
      `Build it with \`make build\` at the repository root, set LIBLOCK_PATH, or ${WASM_HINT}`);
  }
  // A koffi callback called from a Go thread waits there until the main
  // thread has run it. With the completion queue only its wake-up function
  // is called that way (a few at a time); without it (an older library)
  // every completion is, and koffi's default of 256 callbacks in flight at
  // once is too few for thousands of pending acquires canceled together.
  // This fails harmlessly if another library was loaded first.
  try { koffi.config({ ...koffi.config(), max_async_calls: 4096 }); } catch { /* keep defaults */ }
  let lib;
  try {
    lib = koffi.load(chosen.file);
  } catch (e) {
    throw new LoadError(`liblock: cannot load ${chosen.file} (${chosen.from}): ${e.message} ` +
      `(liblock.so needs Linux with glibc on the CPU it was built for); ${WASM_HINT}`, { cause: e });
  }
  let abiFn;
  try {
    abiFn = lib.func('int32_t lock_abi_version(void)');
  } catch (e) {
    throw new LoadError(`liblock: ${chosen.file} is not liblock (no lock_abi_version): ${e.message}`, { cause: e });
  }
  const abi = abiFn();
  if (abi !== ABI_VERSION) {
    throw new LoadError(`liblock: ABI version mismatch: ${chosen.file} (${chosen.from}) has ABI ${abi}, ` +
      `this binding needs ABI ${ABI_VERSION}; rebuild the library (make build) or install a matching package`);
  }
  // user_data is declared as uintptr_t (same register class as void * on
  // every 64-bit ABI): it carries a small integer id, never a pointer.
  const cbName = typeName('liblock_node_cb');
  const Callback = koffi.proto(`void ${cbName}(uintptr_t user_data, int32_t status, uint64_t handle, const char *err)`);
  const n = {
    koffi,
    path: chosen.file,
    from: chosen.from,
    abi,
    client_new: lib.func('int32_t lock_client_new(const char *config_json, _Out_ uint64_t *out_client, _Out_ void **err)'),
    acquire_async: lib.func(`int32_t lock_acquire_async(uint64_t client, const char *resource, int64_t ttl_ms, const char *options_json, ${cbName} *cb, uintptr_t user_data, _Out_ uint64_t *out_op, _Out_ void **err)`),
    extend_async: lib.func(`int32_t lock_extend_async(uint64_t lock, int64_t ttl_ms, ${cbName} *cb, uintptr_t user_data, _Out_ void **err)`),
    release_async: lib.func(`int32_t lock_release_async(uint64_t lock, ${cbName} *cb, uintptr_t user_data, _Out_ void **err)`),
    cancel: lib.func('int32_t lock_cancel(uint64_t op)'),
    on_lost: lib.func(`int32_t lock_on_lost(uint64_t lock, ${cbName} *cb, uintptr_t user_data, _Out_ void **err)`),
    info: lib.func('int32_t lock_info(uint64_t lock, _Out_ void **info_json, _Out_ void **err)'),
    free: lib.func('int32_t lock_free(uint64_t handle)'),
    string_free: lib.func('void lock_string_free(void *s)'),
    version: null,
    debugHandles: null,
  };
  try { n.version = lib.func('const char *lock_version(void)'); } catch { /* optional extension */ }
  try { n.debugHandles = lib.func('int64_t lock_debug_handles(void)'); } catch { /* optional extension */ }
  try { n.debugPanic = lib.func('int32_t lock_debug_panic(_Out_ void **err)'); } catch { /* optional extension */ }
  slotBase = Number(koffi.alloc('uint8_t', 2 * SLOTS)); // never freed, never touched
  if (!openQueue(n, lib)) {
    // Fallback for a library without the completion queue: two registered
    // callbacks serve every operation of the process, keyed by the id in
    // user_data, so the slot limit (8192) can never be reached, and a late
    // call (e.g. an on-lost callback already running when its lock was
    // freed) finds no entry and is ignored instead of jumping into an
    // unregistered trampoline. They stay registered for the life of the
    // process: a Go thread may call one at any moment, up to exit.
    n.doneCb = koffi.register(onDone, koffi.pointer(Callback));
    n.lostCb = koffi.register(onLost, koffi.pointer(Callback));
    const keepAlive = setInterval(() => {}, 0x7fffffff); // koffi's relay does not keep the loop alive
    keepAlive.unref();
    n.ref = () => keepAlive.ref();
    n.unref = () => keepAlive.unref();
  }
  native = n;
  return n;
}

// ---------------------------------------------------------------- completion queue

// Completions arrive through liblock's completion queue (capi/queue.c): the
// library's C function lock_queue_callback is the callback of every
// operation; it appends (user_data, status, handle, err) to a queue and, when
// the queue was empty, calls one koffi-registered wake-up function, which
// koffi relays to this thread; it drains everything queued by then in one
// call. Per completion this costs what a koffi callback per operation costs
// when operations come one at a time, and far less under load: one relay
// (one parked library thread) per batch instead of per completion. A pipe
// watched by a net.Socket (lock_queue_fd) was measured too: Node's stream
// machinery cost more main-thread time per completion than koffi's relay.
// Nothing runs on a libuv pool thread.
//
// The queue is one per loaded library, so it is shared by every copy of this
// module in the process that loads the same file: one wake-up function
// drains it and hands each completion to the copy that owns its user_data
// range.
const COMPLETION_SIZE = 32; // sizeof(lock_completion) on 64-bit Linux
const DRAIN_MAX = 256;
const QUEUES = Symbol.for('liblock.node.completionQueues.v1');

function openQueue(n, lib) {
  let drain;
  let setWakeup;
  let cb;
  try {
    drain = lib.func('int32_t lock_queue_drain(void *out, int32_t max)');
    setWakeup = lib.func('void lock_queue_set_wakeup(void *fn)');
    cb = lib.symbol('lock_queue_callback');
  } catch {
    return false; // an older library: no queue
  }
  const queues = (globalThis[QUEUES] ||= new Map());
  let q = queues.get(cb);
  if (!q) {
    q = newQueue(n.koffi, drain, setWakeup);
    queues.set(cb, q);
  }
  q.owners.push({ lo: slotBase, hi: slotBase + 2 * SLOTS, done: onDone, lost: onLost });
  n.doneCb = cb;
  n.lostCb = cb;
  n.ref = () => { if (q.refs++ === 0) q.alive.ref(); };
  n.unref = () => { if (--q.refs === 0) q.alive.unref(); };
  return true;
}

function newQueue(koffi, drain, setWakeup) {
  const buf = Buffer.alloc(COMPLETION_SIZE * DRAIN_MAX);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const q = { owners: [], refs: 0, alive: null, wake: null };
  const drainAll = () => {
    let count;
    do {
      count = drain(buf, DRAIN_MAX);
      for (let i = 0, off = 0; i < count; i++, off += COMPLETION_SIZE) {
        const ud = Number(view.getBigUint64(off, true));
        const status = view.getInt32(off + 8, true);
        const handle = Number(view.getBigUint64(off + 16, true));
        const errPtr = view.getBigUint64(off + 24, true);
        const err = errPtr === 0n ? null : takeString(errPtr);
        deliver(q.owners, ud, status, handle, err);
      }
    } while (count === DRAIN_MAX);
  };
  // Registered for the life of the process: a library thread may call it at
  // any moment, up to exit (koffi drops calls once the environment is torn
  // down); unregistering it while a thread is about to call it would be a
  // use-after-free.
  q.wake = koffi.register(drainAll, koffi.pointer(koffi.proto(`void ${typeName('liblock_node_wake')}(void)`)));
  setWakeup(q.wake);
  // koffi's relay does not keep the event loop alive; this timer does, while
  // some operation is pending (it never fires).
  q.alive = setInterval(() => {}, 0x7fffffff);
  q.alive.unref();
  return q;
}

function deliver(owners, ud, status, handle, err) {
  for (let i = 0; i < owners.length; i++) {
    const o = owners[i];
    if (ud < o.lo || ud >= o.hi) continue;
    try {
      if (ud - o.lo >= SLOTS) o.lost(ud, status, handle, err);
      else o.done(ud, status, handle, err);
    } catch (e) {
      // A listener threw (on a lost lock's signal, say): report it as an
      // uncaught error, after every other completion was delivered.
      queueMicrotask(() => { throw e; });
    }
    return;
  }
}

// ---------------------------------------------------------------- calls into the library

// Every entry point that returns at once (the lock_*_async calls, cancel,
// on_lost, info, string_free, and lock_free of a lock whose release has
// settled) is called synchronously on the main thread: each takes about a
// microsecond. That is only true because liblock.so answers the Go runtime's
// per-call stack-bounds question for the main thread from a cache
// (capi/stackbound.c); before that, each call cost 0.1-0.2 ms of
// /proc/self/maps parsing, and the binding hopped through koffi's thread
// pool to avoid it. Nothing here waits for a lock: waiting happens in Go, and
// the results come back through the registered callbacks.
//
// The only calls that do network I/O, lock_free of a client (close) and of a
// lock still held (a dropped Lock), run on koffi's thread pool: each is
// bounded by node_timeout and never waits for a lock. They are queued past
// MAX_SUBMITS, so that koffi's limit on asynchronous calls (shared with the
// completion callbacks) is never hit.
const MAX_SUBMITS = 64;
let submitting = 0;
const submitQueue = [];

function submit(fn, args, done) {
  if (submitting >= MAX_SUBMITS) {
    submitQueue.push([fn, args, done]);
    return;
  }
  submitting++;
  try {
    fn.async(...args, (err, status) => {
      submitting--;
      drainSubmits();
      if (done) done(err, status);
    });
  } catch (err) {
    // koffi refused the call (it cannot take more asynchronous calls):
    // report it like a failed call, never by throwing into a callback.
    submitting--;
    if (done) queueMicrotask(() => done(err, STATUS.INTERNAL));
  }
}

function drainSubmits() {
  while (submitQueue.length > 0 && submitting < MAX_SUBMITS) {
    const [f, a, d] = submitQueue.shift();
    submit(f, a, d);
  }
}

// Out-parameter boxes reused by every synchronous call: each is read right
// after the call returns, and no JS runs in between (the library never calls
// a callback on the caller's thread), so one of each is enough.
const errBox = [null];
const outBox = [null];

// takeString reads a library-allocated C string and frees it.
function takeString(ptr) {
  if (ptr === null || ptr === undefined || ptr === 0n) return null;
  const s = native.koffi.decode(ptr, 'char', -1);
  native.string_free(ptr);
  return s;
}

// takeErr returns (and frees) the message left in errBox by the last call.
function takeErr() {
  const p = errBox[0];
  errBox[0] = null;
  return takeString(p);
}

// ---------------------------------------------------------------- pending operations

// user_data carries a slot number as an address inside a C-heap block that
// the binding owns and never dereferences: liblock keeps user_data as a
// pointer on Go stacks, where a small integer such as 1 makes the Go runtime
// abort ("invalid pointer found on stack"); an address in malloc'ed memory is
// just a foreign pointer to it.
const SLOTS = 1 << 20; // pending operations at once; as many lost-watches
let slotBase = 0; // address of the block (2 * SLOTS bytes)

const pending = new Map(); // slot -> (status, handle, err) => void
const freeSlots = [];
let nextSlot = 0;
// Neither the completion pipe nor koffi's callback relay keeps the event loop
// alive by itself: native.ref() does, while some operation is pending.

function addPending(fn) {
  let slot = freeSlots.pop();
  if (slot === undefined) {
    if (nextSlot >= SLOTS) throw new InternalError(`liblock: more than ${SLOTS} operations pending at once`);
    slot = nextSlot++;
  }
  pending.set(slot, fn);
  if (pending.size === 1) native.ref();
  return slotBase + slot;
}

// dropPending forgets an operation whose callback will never run (the call
// was refused), or that just completed; the slot may then be reused, since a
// completion callback runs exactly once.
function dropPending(ud) {
  const slot = ud - slotBase;
  const fn = pending.get(slot);
  if (fn === undefined) return undefined;
  pending.delete(slot);
  freeSlots.push(slot);
  if (pending.size === 0) native.unref();
  return fn;
}

function onDone(ud, status, handle, err) {
  const fn = dropPending(Number(ud));
  if (fn) fn(status, Number(handle), err);
  else if (status === STATUS.OK && handle) {
    // Unknown operation (cannot happen): do not leak a lock.
    submit(native.free, [handle], null);
  }
}

// Lost-watches use slots in the second half of the block, in turn: an
// on-lost callback may still arrive just after its lock was freed, so a slot
// is reused only after a million other locks.
const lostWatch = new Map(); // slot -> lock state
let nextLost = 0;

function addLostWatch(st) {
  for (let i = 0; i < SLOTS; i++) {
    const slot = SLOTS + (nextLost++ % SLOTS);
    if (!lostWatch.has(slot)) {
      lostWatch.set(slot, st);
      return slot;
    }
  }
  throw new InternalError(`liblock: more than ${SLOTS} locks held at once`);
}

function onLost(ud, status, handle, err) {
  const slot = Number(ud) - slotBase;
  const st = lostWatch.get(slot);
  if (!st || st.handle !== Number(handle)) return;
  lostWatch.delete(slot);
  markLost(st, err || 'liblock: lock lost');
}

function markLost(st, message) {
  if (st.lost || st.released) return;
  st.lost = true;
  if (!st.controller.signal.aborted) st.controller.abort(new LockLostError(message));
}

// A call into the library that reports through (status, err out-param box).
function check(status, box) {
  const p = box[0];
  box[0] = null;
  const msg = takeString(p);
  if (status !== STATUS.OK) throw errorFor(status, msg);
}

// ---------------------------------------------------------------- argument kinds

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return String(v);
  }
  return typeof v;
}

function badArg(what, msg) {
  return new InvalidArgumentError(`liblock: invalid argument: ${what}: ${msg}`);
}

// The library's limits (core/config.go), checked here so that every error
// names the caller's option in milliseconds (ttl, wait, nodeTimeout), never
// the C ABI's ttl_ms / wait_ms / node_timeout_ms.
const MAX_TTL_MS = 24 * 3600 * 1000;
const MAX_WAIT_MS = 24 * 3600 * 1000;
const MAX_NODE_TIMEOUT_MS = 60 * 1000;
const DEFAULT_NODE_TIMEOUT_MS = 50;
const MAX_DRIFT_FACTOR = 0.1;
const MAX_RESOURCE_BYTES = 1024;
const MAX_KEY_PREFIX_BYTES = 256;
const MAX_NODES = 64;
/**
 * acquire()'s default wait (ms). node-redlock retries for a few seconds by
 * default (10 retries, 200 ms apart) and redis-semaphore waits 10 s
 * (acquireTimeout): Node users expect an acquire to wait, bounded. wait: 0
 * makes a single attempt.
 */
const DEFAULT_WAIT_MS = 10000;

function msText(ms) {
  if (ms >= 1000 && ms % 1000 === 0) return `${ms} ms (${ms / 1000} s)`;
  return `${ms} ms`;
}

function intArg(what, v, optional, lo = -Infinity, hi = Infinity) {
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number') throw badArg(what, `must be an integer number of milliseconds, got ${kind(v)}`);
  if (!Number.isSafeInteger(v)) {
    throw badArg(what, Number.isInteger(v) ? `must be a safe integer, got ${v}` : `must be an integer number of milliseconds, got ${kind(v) === 'number' ? v : kind(v)}`);
  }
  if (v < lo || v > hi) throw badArg(what, `must be between ${msText(lo)} and ${msText(hi)} (durations are milliseconds), got ${v}`);
  return v;
}

// A lock must outlast one node request: a ttl below the node timeout is a
// unit mistake (ttl: 10 meaning ten seconds) or a lock a slow node makes
// invalid before it is granted.
function ttlFits(what, ttl, nodeTimeout) {
  if (ttl < nodeTimeout) {
    throw badArg(what, `${ttl} ms is shorter than the client's nodeTimeout (${nodeTimeout} ms): a lock must outlast one ` +
      `node request; durations are milliseconds (${what}: ${ttl * 1000} is ${ttl} s)`);
  }
}

function bytesArg(what, v, min, max) {
  const n = Buffer.byteLength(v, 'utf8');
  if (n < min) throw badArg(what, 'must not be empty');
  if (n > max) throw badArg(what, `must be at most ${max} bytes of UTF-8, got ${n}`);
  return v;
}

function stringArg(what, v) {
  if (typeof v !== 'string') throw badArg(what, `must be a string, got ${kind(v)}`);
  // A C string ends at NUL, and a lone surrogate would be changed by UTF-8
  // encoding: either would lock a different key than the one asked for.
  if (v.includes('\0')) throw badArg(what, 'must not contain a NUL character');
  if (typeof v.isWellFormed === 'function' ? !v.isWellFormed() : /[\uD800-\uDFFF]/.test(v.replace(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g, ''))) {
    throw badArg(what, 'must be well-formed Unicode (no lone surrogates)');
  }
  return v;
}

function optionsArg(what, v, allowed) {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badArg(what, `must be an object, got ${kind(v)}`);
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) throw badArg(what, `unknown option ${JSON.stringify(k)} (known: ${allowed.join(', ')})`);
  }
  return v;
}

function isAbortSignal(s) {
  return typeof AbortSignal !== 'undefined' && s instanceof AbortSignal;
}

/**
 * Waits for a pending acquire's result while `signal` (if any) may abort it:
 * an abort calls `cancel` (the backend's way to stop the operation) and is
 * reported as `aborted`, so the caller can give back a lock the backend
 * granted after the signal fired. The listener is removed once settled.
 */
async function settleAbortable(result, signal, cancel) {
  let aborted = false;
  const onAbort = () => { aborted = true; cancel(); };
  if (signal) signal.addEventListener('abort', onAbort, { once: true });
  try {
    return { r: await result, aborted };
  } finally {
    if (signal) signal.removeEventListener('abort', onAbort);
  }
}

function canceledBy(signal) {
  return new CanceledError('liblock: acquire canceled by its AbortSignal', { cause: signal.reason });
}

// ---------------------------------------------------------------- cleanup of dropped objects

// Locks and clients that are garbage-collected without release()/close()
// have their handles freed. lock_free releases a lock still held, which is
// network I/O bounded by node_timeout: it runs on koffi's thread pool, not
// on the main thread.
function freeInBackground(handle) {
  try {
    submit(native.free, [handle], null);
  } catch { /* process shutting down */ }
}

const lockRegistry = new FinalizationRegistry((st) => {
  if (st.lostId) lostWatch.delete(st.lostId);
  if (st.handle && !st.client.closed) {
    const h = st.handle;
    st.handle = 0;
    st.client.locks.delete(st);
    if (st.client.be) st.client.be.free(h);
    else freeInBackground(h);
  }
});

const clientRegistry = new FinalizationRegistry((cs) => {
  if (!cs.closed && cs.handle) {
    cs.closed = true;
    if (cs.be) { cs.be.freeClient(cs); return; }
    const h = cs.handle;
    cs.handle = 0;
    freeInBackground(h);
  }
});

// ---------------------------------------------------------------- Lock

/** A held (or once held) lock. Get one from Client#acquire. */
class Lock {
  #st;
  #client; // keeps the Client (whose finalizer would free this lock) alive

  /** @internal */
  constructor(st, client) {
    this.#st = st;
    this.#client = client;
    lockRegistry.register(this, st, st);
    if (st.autoExtend) watchLoss(st);
  }

  /** The resource name given to acquire. */
  get resource() { return this.#st.resource; }
  /** The Redis key: the client's keyPrefix + resource. */
  get key() { return this.#st.key; }
  /** The random token stored as the key's value (read from the library once). */
  get token() {
    const st = this.#st;
    if (st.token === null) {
      const info = infoOf(st);
      if (info) st.token = info.token;
    }
    return st.token;
  }
  /** Whether the library extends this lock in the background. */
  get autoExtend() { return this.#st.autoExtend; }
  /** Whether release() completed (held or not). */
  get released() { return this.#st.released; }
  /** Whether the library knows the lock is no longer held (a synchronous call into the library). */
  get lost() {
    const st = this.#st;
    if (st.lost) return true;
    if (st.released) return false;
    const info = infoOf(st);
    if (info && info.lost) markLost(st, 'liblock: lock lost');
    return st.lost;
  }
  /** Remaining validity in ms by the local monotonic clock (0 once expired, released or lost). */
  get validity() {
    const st = this.#st;
    if (st.released || st.lost) return 0;
    const info = infoOf(st);
    return info ? Math.max(0, info.validity_ms) : 0;
  }
  /** Aborted, with a LockLostError as its reason, when the lock is lost. */
  get signal() {
    const st = this.#st;
    watchLoss(st);
    return st.controller.signal;
  }

  // #run starts an extend or a release (fn: their _async call; arg: the ttl,
  // or undefined) and settles when its completion callback ran.
  #run(name, fn, arg) {
    const st = this.#st;
    if (st.client.closed || !st.handle) {
      return Promise.reject(new InvalidHandleError(`liblock: ${name}: the lock's client is closed`));
    }
    return new Promise((resolve, reject) => {
      st.inflight++;
      const ud = addPending((status, handle, err) => {
        st.inflight--;
        if (status === STATUS.OK) resolve();
        else reject(errorFor(status, err));
      });
      let status;
      let msg;
      try {
        status = arg === undefined
          ? fn(st.handle, native.doneCb, ud, errBox)
          : fn(st.handle, arg, native.doneCb, ud, errBox);
        msg = status === STATUS.OK ? null : takeErr();
      } catch (e) {
        status = STATUS.INTERNAL;
        msg = `liblock: ${e.message}`;
      }
      if (status === STATUS.OK) return;
      if (dropPending(ud)) { // the callback will never run
        st.inflight--;
        reject(errorFor(status, msg));
      }
    });
  }

  /**
   * Resets the expiry to `ttl` ms from now where this token still holds the
   * key; never re-acquires an expired lock (LockLostError).
   * @param {number} ttl
   */
  async extend(ttl) {
    intArg('ttl', ttl, false, 1, MAX_TTL_MS);
    const st = this.#st;
    ttlFits('ttl', ttl, st.client.nodeTimeout);
    if (st.released) throw new LockLostError('liblock: extend: already released');
    try {
      await (st.client.be ? st.client.be.extend(st, ttl) : this.#run('extend', native.extend_async, ttl));
    } catch (e) {
      if (e.code === 'LOST') markLost(st, e.message);
      throw e;
    } finally {
      maybeFree(st);
    }
  }

  /**
   * Deletes the key on every node where this token holds it. Resolves when it
   * was still held on a quorum; rejects with LockLostError when it was not
   * (or was already released), UnavailableError when too many nodes failed to
   * tell (the lock stays held: call release again).
   */
  async release() {
    const st = this.#st;
    if (st.released) throw new LockLostError('liblock: release: already released');
    try {
      await (st.client.be ? st.client.be.release(st) : this.#run('release', native.release_async, undefined));
      st.released = true;
    } catch (e) {
      if (e.code === 'LOST') {
        st.lost = true;
        st.released = true;
      }
      throw e;
    } finally {
      if (st.released) {
        if (st.lostId) lostWatch.delete(st.lostId);
        maybeFree(st);
      }
    }
  }

  /** For `await using lock = await client.acquire(...)`: releases, ignoring LOST. */
  async [Symbol.asyncDispose]() {
    const st = this.#st;
    if (st.released || st.client.closed) return;
    try {
      await this.release();
    } catch (e) {
      if (e.code !== 'LOST') throw e;
    }
  }

  get [Symbol.toStringTag]() { return 'Lock'; }
}

// infoOf reads lock_info (a synchronous call; no I/O). null when the handle
// is gone.
function infoOf(st) {
  if (st.client.be) return st.client.be.info(st);
  if (!st.handle || st.client.closed) return null;
  const status = native.info(st.handle, outBox, errBox);
  const msg = takeErr();
  if (status !== STATUS.OK) {
    if (status === STATUS.INVALID_HANDLE) return null;
    throw errorFor(status, msg);
  }
  const json = outBox[0];
  outBox[0] = null;
  return JSON.parse(takeString(json));
}

// watchLoss registers the lock's on-lost callback, once (always for
// auto-extended locks, otherwise when lock.signal is first read).
function watchLoss(st) {
  if (st.client.be) return; // the wasm backend reports every loss
  if (st.lostId || st.released || st.lost || !st.handle || st.client.closed) return;
  st.lostId = addLostWatch(st);
  let status;
  let msg;
  try {
    status = native.on_lost(st.handle, native.lostCb, slotBase + st.lostId, errBox);
    msg = takeErr();
  } catch (e) {
    status = STATUS.INTERNAL;
    msg = e.message;
  }
  if (status === STATUS.OK || status === STATUS.INVALID_HANDLE) return; // INVALID_HANDLE: freed meanwhile
  // Cannot watch: say so on the signal rather than keep silent.
  lostWatch.delete(st.lostId);
  markLost(st, `liblock: cannot watch the lock for loss: ${msg}`);
}

// After a release settled (OK or LOST) and no operation is in flight, the
// handle is freed: lock_free then has nothing left to do on the network, so
// it is called right here.
function maybeFree(st) {
  if (!st.released || st.inflight > 0 || !st.handle) return;
  const h = st.handle;
  st.handle = 0;
  st.client.locks.delete(st);
  lockRegistry.unregister(st);
  if (st.client.closed) return;
  if (st.client.be) st.client.be.free(h);
  else native.free(h);
}

if (!Symbol.asyncDispose) {
  // Node 18 has no Symbol.asyncDispose; Node 20 has it.
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose') });
}

// ---------------------------------------------------------------- Client

const CLIENT_OPTIONS = ['nodes', 'nodeTimeout', 'driftFactor', 'keyPrefix', 'backend'];
const BACKENDS = ['native', 'wasm'];
const ACQUIRE_OPTIONS = ['ttl', 'wait', 'autoExtend', 'signal'];

/** A client over a set of independent Redis masters (Redlock). */
class Client {
  #cs;

  /**
   * @param {{nodes: string[], nodeTimeout?: number, driftFactor?: number, keyPrefix?: string}} options
   */
  constructor(options) {
    if (options === undefined || options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw badArg('options', `must be an object with at least "nodes", got ${kind(options)}`);
    }
    optionsArg('options', options, CLIENT_OPTIONS);
    const cfg = {};
    const { nodes, nodeTimeout, driftFactor, keyPrefix } = options;
    if (!Array.isArray(nodes)) throw badArg('nodes', `must be an array of URL strings, got ${kind(nodes)}`);
    cfg.nodes = nodes.map((u, i) => stringArg(`nodes[${i}]`, u));
    if (nodes.length < 1 || nodes.length > MAX_NODES) throw badArg('nodes', `must hold 1 to ${MAX_NODES} URLs, got ${nodes.length}`);
    if (nodeTimeout !== undefined) cfg.node_timeout_ms = intArg('nodeTimeout', nodeTimeout, false, 1, MAX_NODE_TIMEOUT_MS);
    if (driftFactor !== undefined) {
      if (typeof driftFactor !== 'number' || !Number.isFinite(driftFactor)) {
        throw badArg('driftFactor', `must be a finite number, got ${kind(driftFactor)}`);
      }
      if (driftFactor < 0 || driftFactor > MAX_DRIFT_FACTOR) {
        throw badArg('driftFactor', `must be between 0 and ${MAX_DRIFT_FACTOR}, got ${driftFactor}`);
      }
      cfg.drift_factor = driftFactor;
    }
    if (keyPrefix !== undefined) cfg.key_prefix = bytesArg('keyPrefix', stringArg('keyPrefix', keyPrefix), 0, MAX_KEY_PREFIX_BYTES);
    const { backend } = options;
    if (backend !== undefined && !BACKENDS.includes(backend)) {
      throw badArg('backend', `must be ${BACKENDS.map((b) => JSON.stringify(b)).join(' or ')}, got ${typeof backend === 'string' ? JSON.stringify(backend) : kind(backend)}`);
    }
    if (backend === 'wasm') {
      this.#cs = wasm().backend.clientNew(cfg);
    } else {
      const n = loadNative();
      const out = [0];
      const errBox = [null];
      check(n.client_new(JSON.stringify(cfg), out, errBox), errBox);
      this.#cs = { handle: Number(out[0]), closed: false, locks: new Set(), keyPrefix: cfg.key_prefix || '' };
    }
    this.#cs.nodeTimeout = nodeTimeout === undefined ? DEFAULT_NODE_TIMEOUT_MS : nodeTimeout;
    clientRegistry.register(this, this.#cs, this.#cs);
  }

  /** The longest a single node request may take, in ms (as configured, or the default 50). */
  get nodeTimeout() { return this.#cs.nodeTimeout; }

  /** Whether close() was called. */
  get closed() { return this.#cs.closed; }

  /**
   * Takes the lock on `resource`. Waits (with randomized backoff, woken early
   * by releases through this client) for at most `wait` ms: 10000 by default
   * (DEFAULT_WAIT), 0 for a single attempt.
   * @param {string} resource
   * @param {{ttl: number, wait?: number, autoExtend?: boolean, signal?: AbortSignal}} options
   * @returns {Promise<Lock>}
   */
  async acquire(resource, options) {
    bytesArg('resource', stringArg('resource', resource), 1, MAX_RESOURCE_BYTES);
    if (options === undefined || options === null) throw badArg('options', 'must be an object with at least "ttl" (ms)');
    optionsArg('options', options, ACQUIRE_OPTIONS);
    const ttl = intArg('ttl', options.ttl, false, 1, MAX_TTL_MS);
    const given = intArg('wait', options.wait, true, 0, MAX_WAIT_MS);
    const wait = given === undefined ? DEFAULT_WAIT_MS : given;
    const autoExtend = options.autoExtend;
    if (autoExtend !== undefined && typeof autoExtend !== 'boolean') {
      throw badArg('autoExtend', `must be a boolean, got ${kind(autoExtend)}`);
    }
    const signal = options.signal;
    if (signal !== undefined && !isAbortSignal(signal)) {
      throw badArg('signal', `must be an AbortSignal, got ${kind(signal)}`);
    }
    const cs = this.#cs;
    ttlFits('ttl', ttl, cs.nodeTimeout);
    if (cs.closed) throw new InvalidHandleError('liblock: acquire: the client is closed');
    if (signal && signal.aborted) throw canceledBy(signal);
    if (cs.be) return cs.be.acquire(this, cs, resource, ttl, wait, autoExtend, signal);

    const opts = {};
    if (wait !== 0) opts.wait_ms = wait;
    if (autoExtend) opts.auto_extend = true;
    const optsJson = wait === 0 && !autoExtend ? null : JSON.stringify(opts);

    const n = native;
    let opHandle = 0;
    let ud = 0;
    const result = new Promise((resolve) => {
      ud = addPending((status, handle, err) => resolve({ status, handle, err }));
    });
    let status;
    let msg = null;
    try {
      status = n.acquire_async(cs.handle, resource, ttl, optsJson, n.doneCb, ud, outBox, errBox);
      if (status === STATUS.OK) opHandle = Number(outBox[0]);
      else msg = takeErr();
      outBox[0] = null;
    } catch (e) {
      status = STATUS.INTERNAL;
      msg = `liblock: ${e.message}`;
    }
    if (status !== STATUS.OK) {
      const fn = dropPending(ud); // the callback will never run
      if (fn) fn(status, 0, msg);
    }
    // INVALID_HANDLE from the cancel when the result is already decided: fine.
    const { r, aborted: abortedBySignal } = await settleAbortable(result, opHandle ? signal : null, () => n.cancel(opHandle));
    if (r.status === STATUS.OK && abortedBySignal) {
      // The signal fired before this promise settled, though after the
      // library had decided: honour the abort and give the lock back
      // (lock_free releases it, off the main thread).
      freeInBackground(r.handle);
      throw canceledBy(signal);
    }
    if (r.status !== STATUS.OK) {
      if (r.handle) freeInBackground(r.handle); // defensive: never leak a lock
      if (r.status === STATUS.CANCELED && abortedBySignal) throw canceledBy(signal);
      throw errorFor(r.status, r.err);
    }
    const st = {
      client: cs, handle: r.handle, resource, autoExtend: !!autoExtend,
      key: cs.keyPrefix + resource, token: null,
      released: false, lost: false, inflight: 0,
      controller: new AbortController(),
      lostId: 0,
    };
    if (cs.closed) {
      // closed while the callback was queued: the library freed the lock.
      st.handle = 0;
      st.released = true;
      throw new CanceledError('liblock: acquire: the client was closed');
    }
    cs.locks.add(st);
    return new Lock(st, this);
  }

  /**
   * Runs `fn` while holding the lock on `resource` (auto-extended unless
   * `autoExtend: false`), then releases it. `fn` receives an AbortSignal that
   * aborts if the lock is lost. Resolves with fn's result; rejects with fn's
   * error, or with LockLostError if the lock was lost while fn ran.
   * @template T
   * @param {string} resource
   * @param {{ttl: number, wait?: number, autoExtend?: boolean, signal?: AbortSignal}} options
   * @param {(signal: AbortSignal, lock: Lock) => Promise<T> | T} fn
   * @returns {Promise<T>}
   */
  async using(resource, options, fn) {
    if (typeof fn !== 'function') throw badArg('fn', `must be a function, got ${kind(fn)}`);
    if (options === undefined || options === null) throw badArg('options', 'must be an object with at least "ttl" (ms)');
    optionsArg('options', options, ACQUIRE_OPTIONS);
    const lock = await this.acquire(resource, { autoExtend: true, ...options });
    const signal = lock.signal;
    let value;
    try {
      value = await fn(signal, lock);
    } catch (e) {
      try { await lock.release(); } catch { /* fn's error wins */ }
      throw e;
    }
    const wasLost = signal.aborted;
    try {
      await lock.release();
    } catch (e) {
      if (e.code === 'LOST' && wasLost) throw signal.reason;
      throw e;
    }
    if (wasLost) throw signal.reason;
    return value;
  }

  /**
   * Closes the client: pending operations reject with CanceledError, locks
   * still held are released, connections are closed. Safe to call twice.
   * The returned promise resolves once the releases are done (each bounded
   * by nodeTimeout); it never rejects.
   * @returns {Promise<void>}
   */
  close() {
    const cs = this.#cs;
    if (cs.closed) return cs.closing;
    cs.closed = true;
    const h = cs.handle;
    clientRegistry.unregister(cs);
    for (const st of cs.locks) {
      if (st.lostId) lostWatch.delete(st.lostId);
      lockRegistry.unregister(st);
      st.handle = 0;
    }
    cs.locks.clear();
    // lock_free on the client cancels its pending operations (their promises
    // reject with CanceledError) and releases the locks still held: network
    // I/O bounded by nodeTimeout, so it runs off the main thread.
    cs.closing = cs.be ? cs.be.closeClient(cs) : new Promise((resolve) => {
      submit(native.free, [h], () => resolve());
    });
    return cs.closing;
  }

  get [Symbol.toStringTag]() { return 'Client'; }
}

/**
 * Information about the loaded library (loads it if needed): liblock.so, or
 * with 'wasm' liblock.wasm (with its compile and instantiate times).
 */
function library(backend) {
  if (backend === 'wasm') return wasm().library();
  const n = loadNative();
  return {
    path: n.path,
    from: n.from,
    abiVersion: n.abi,
    version: n.version ? n.version() : null,
  };
}

/** @internal Debug counters of the loaded library, for leak tests. */
function _debug(backend) {
  if (backend === 'wasm') return wasm().debug();
  const n = loadNative();
  return {
    handles: n.debugHandles ? Number(n.debugHandles()) : null,
    pending: pending.size,
    lostWatch: lostWatch.size,
    submitting,
  };
}

/** @internal Makes the library panic inside a call (a debug export), to test LOCK_INTERNAL. */
function _debugPanic() {
  const n = loadNative();
  if (!n.debugPanic) return null;
  const status = n.debugPanic(errBox);
  const msg = takeErr();
  return status === STATUS.OK ? null : errorFor(status, msg);
}

module.exports = {
  Client,
  Lock,
  LockError,
  NotAcquiredError,
  UnavailableError,
  LockLostError,
  CanceledError,
  InvalidArgumentError,
  InvalidHandleError,
  InternalError,
  LoadError,
  ABI_VERSION,
  DEFAULT_WAIT: DEFAULT_WAIT_MS,
  library,
  _debug,
  _debugPanic,
};
// `import liblock from 'liblock'` compiled to CommonJS by TypeScript or Babel
// without esModuleInterop reads `.default`: it is the module itself, as the
// type declarations (index.d.ts) say.
Object.defineProperty(module.exports, 'default', { value: module.exports, enumerable: false });
