'use strict';
// The native engine adapter: liblock.so through koffi, synchronous calls on
// the main thread (lock_engine_new, lock_engine_step, lock_engine_free; each
// a microsecond or so, see capi/stackbound.c). No callbacks, no thread pool.

const { isMainThread } = require('node:worker_threads');
const { Bytes, ABI_VERSION } = require('./protocol');
const { LoadError, errorFor, jsArgNames, STATUS } = require('./errors');
const { RECEIVED_HEADER } = require('./fastpath');
const { findLibrary, checkVersions, IN_CAP, OUT_CAP } = require('./library');

// Said by every load failure of the native backend: where it cannot work,
// the wasm backend can.
const WASM_HINT = "use new Client({ nodes, backend: 'wasm' }) (liblock.wasm; no koffi, no liblock.so) instead";

// The packaged liblock.so files are glibc builds: on musl (Alpine) loading one
// would fail at best, so it is not tried (Node's report names the glibc it runs on).
function glibcMissing() {
  if (process.platform !== 'linux') return false;
  try {
    const report = process.report && process.report.getReport();
    return !!report && !report.header.glibcVersionRuntime;
  } catch { return false; }
}

// koffi is an optional dependency (`npm install liblock` must succeed where
// it cannot install, for the wasm backend): required here, never at module load.
function loadKoffi() {
  try {
    return require('koffi');
  } catch (e) {
    throw new LoadError(`liblock: the native backend needs the koffi package, which cannot be loaded ` +
      `(${e.message.split('\n')[0]}); it is an optional dependency of liblock, so its install may have failed ` +
      `or been skipped on this platform: install it (npm install koffi@3.3.4), or ${WASM_HINT}`, { cause: e });
  }
}

let adapter = null;

/** Loads liblock.so once; returns the adapter (see lib/host.js). Throws LoadError. */
function load() {
  if (adapter) return adapter;
  if (!isMainThread) {
    throw new LoadError('liblock: load the library on the main thread only (not in a worker thread)');
  }
  const koffi = loadKoffi();
  // The package's libraries, one directory per platform (glibc 2.17 or newer); elsewhere the wasm backend runs.
  const chosen = findLibrary('liblock.so', 'LIBLOCK_PATH', `prebuilt/${process.platform}-${process.arch}/liblock.so`,
    { missing: `; set it to liblock.so, or ${WASM_HINT}`, notFound: `set LIBLOCK_PATH, or ${WASM_HINT}` }, (c) => {
      if (c.from === 'packaged copy' && glibcMissing()) {
        throw new LoadError(`liblock: the packaged ${c.file} is built for glibc, and this Linux has none (musl?); ${WASM_HINT}`);
      }
    });
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
  checkVersions(`${chosen.file} (${chosen.from})`, abi); // the protocol below, once the engine interface is known
  let engineNew;
  let step;
  let free;
  let stringFree;
  try {
    engineNew = lib.func('int32_t lock_engine_new(const char *config_json, _Out_ uint64_t *out_engine, _Out_ void **err)');
    step = lib.func('int64_t lock_engine_step(uint64_t engine, const uint8_t *in, size_t in_len, uint8_t *out, size_t out_cap)');
    free = lib.func('int32_t lock_engine_free(uint64_t engine)');
    stringFree = lib.func('void lock_string_free(void *s)');
  } catch (e) {
    throw new LoadError(`liblock: ${chosen.file} is too old for this binding: it has no engine interface ` +
      `(lock_engine_step): ${e.message}; rebuild it (make build)`, { cause: e });
  }
  const opt = (decl) => { try { return lib.func(decl); } catch { return null; } };
  const protoFn = opt('int32_t lock_engine_protocol_version(void)');
  checkVersions(`${chosen.file} (${chosen.from})`, abi, protoFn ? protoFn() : 1); // without it: protocol 1
  const version = opt('const char *lock_version(void)');
  const debugPanic = opt('int32_t lock_debug_panic(_Out_ void **err)');

  const takeString = (p) => {
    if (p === null || p === undefined || p === 0n) return null;
    const s = koffi.decode(p, 'char', -1);
    stringFree(p);
    return s;
  };
  const outBox = [0];
  const errBox = [null];
  const takeErr = () => {
    const p = errBox[0];
    errBox[0] = null;
    const s = takeString(p);
    if (s && s[0] === '{') { try { return JSON.parse(s).message || s; } catch { /* plain text */ } }
    return s;
  };

  // One block: the input buffer, then the output buffer. Buffers are passed
  // to koffi as pointers to their memory (no copy).
  const ab = new ArrayBuffer(IN_CAP + OUT_CAP);
  const m = new Bytes(ab);
  const inBuf = Buffer.from(ab, 0, IN_CAP);
  const outBuf = Buffer.from(ab, IN_CAP, OUT_CAP);
  // Where plain TCP sockets read into (lib/host.js onRead): the input
  // buffer behind a RECEIVED event's header, so that a reply is stepped
  // where it was read. Its memory never moves (a plain ArrayBuffer).
  const rxBuf = Buffer.from(ab, RECEIVED_HEADER, IN_CAP - RECEIVED_HEADER);

  adapter = {
    backend: 'native',
    path: chosen.file,
    from: chosen.from,
    abi,
    version: () => (version ? version() : null),
    inOff: 0,
    inCap: IN_CAP,
    outOff: IN_CAP,
    outCap: OUT_CAP,
    mem: () => m,
    rxBuf,
    rxOnread: null, // lib/host.js's onread option over rxBuf, made once
    step: (h, len) => step(h, inBuf, len, outBuf, OUT_CAP),
    free: (h) => { free(h); },
    /** lock_engine_new(config JSON) → the engine handle; throws the engine's error. */
    engineNew(json) {
      const status = engineNew(json, outBox, errBox);
      const msg = takeErr();
      if (status !== STATUS.OK) throw errorFor(status, msg && jsArgNames(msg));
      const h = Number(outBox[0]);
      outBox[0] = 0;
      return h;
    },
    /** lock_debug_panic: the InternalError a panic in the library becomes, or null. */
    debugPanic() {
      if (!debugPanic) return null;
      const status = debugPanic(errBox);
      const msg = takeErr();
      return status === STATUS.OK ? null : errorFor(status, msg);
    },
  };
  return adapter;
}

module.exports = { load, ABI_VERSION };
