'use strict';
// The wasm engine adapter: liblock.wasm (a WASI reactor) under V8's
// WebAssembly, on the main thread. The module is compiled and instantiated
// once per process (per copy of this package); every wasm client is one
// engine in that instance, stepped synchronously like the native one. The
// input and output buffers are module memory (lock_buffer), shared by the
// engines: lib/host.js reads each step's actions to the end before the next.

const fs = require('node:fs');
const { wasiImports } = require('./wasi');
const { Bytes, ABI_VERSION } = require('./protocol');
const { LoadError, errorFor, jsArgNames, STATUS } = require('./errors');
const { findLibrary, checkVersions, IN_CAP, OUT_CAP } = require('./library');

const utf8 = new TextDecoder();

let adapter = null;

// Two V8 settings for this one module, set while it is compiled and
// instantiated and put back afterwards (unless the process chose them):
//
// - Eager compilation. V8 compiles a module's functions lazily, at their
//   first call: then the Go runtime's start and the first acquire, release,
//   reply... each compile their code inside a step. Compiling every function
//   up front (with Liftoff, V8's baseline compiler) costs about as much in
//   total, all of it in new Client().
// - A large tiering budget. V8 recompiles a function with TurboFan once it
//   has run "enough" (--wasm-tiering-budget, about 1.8 MB of code executed).
//   The Go runtime's start (_initialize) runs enough of the runtime's huge
//   functions to send dozens of them to TurboFan at once, on background
//   threads, right while the first lock connects: on a 2-core machine that
//   took the first lock from about 7 ms to 20-55 ms (measured, see the
//   README) and sometimes past the node timeout. With the budget at 10 M a
//   function is recompiled only once it is really hot, i.e. spread over the
//   client's life. The budget is read when the instance is made; a function
//   that has been recompiled gets V8's default budget again.
const V8_DEFAULT_TIERING_BUDGET = 1800000; // V8 11-12 (Node 20-22)
function compileFlags() {
  const own = [...process.execArgv, process.env.NODE_OPTIONS || ''];
  const flags = [];
  if (!own.some((a) => a.includes('wasm-lazy-compilation'))) flags.push(['--no-wasm-lazy-compilation', '--wasm-lazy-compilation']);
  if (!own.some((a) => a.includes('wasm-tiering-budget'))) flags.push(['--wasm-tiering-budget=10000000', `--wasm-tiering-budget=${V8_DEFAULT_TIERING_BUDGET}`]);
  if (flags.length === 0) return () => {};
  const v8 = require('node:v8');
  const set = [];
  for (const [on, off] of flags) {
    try { v8.setFlagsFromString(on); set.push(off); } catch { /* keep V8's */ }
  }
  return () => { for (const off of set) { try { v8.setFlagsFromString(off); } catch { /* keep */ } } };
}

/** Finds, compiles and instantiates liblock.wasm once; returns the adapter. Throws LoadError. */
function load() {
  if (adapter) return adapter;
  const chosen = findLibrary('liblock.wasm', 'LIBLOCK_WASM_PATH', 'prebuilt/liblock.wasm', { missing: '', notFound: 'or set LIBLOCK_WASM_PATH.' });
  const where = `${chosen.file} (${chosen.from})`;
  let bytes;
  try {
    bytes = fs.readFileSync(chosen.file);
  } catch (e) {
    throw new LoadError(`liblock: cannot read ${where}: ${e.message}`, { cause: e });
  }
  const t0 = performance.now();
  let module;
  const restore = compileFlags();
  let compileMs = 0;
  let t1 = 0;
  let x = null;
  let inst;
  try {
    try {
      module = new WebAssembly.Module(bytes);
    } catch (e) {
      throw new LoadError(`liblock: ${where} is not a WebAssembly module: ${e.message}`, { cause: e });
    }
    compileMs = performance.now() - t0;
    t1 = performance.now();
    try {
      inst = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasiImports(() => x.memory) });
    } catch (e) {
      throw new LoadError(`liblock: ${where} cannot be instantiated as liblock.wasm: ${e.message}; ` +
        'rebuild it (make build) or install a matching package', { cause: e });
    }
  } finally {
    restore();
  }
  x = inst.exports;
  if (typeof x._initialize !== 'function' || typeof x.lock_abi_version !== 'function') {
    throw new LoadError(`liblock: ${where} is not liblock.wasm (no lock_abi_version)`);
  }
  try {
    x._initialize();
  } catch (e) {
    throw new LoadError(`liblock: cannot start ${where}: ${e.message}`, { cause: e });
  }
  const abi = x.lock_abi_version();
  checkVersions(where, abi); // the protocol below, once the engine interface is known
  for (const f of ['lock_engine_new', 'lock_engine_step', 'lock_engine_free', 'lock_buffer']) {
    if (typeof x[f] !== 'function') {
      throw new LoadError(`liblock: ${where} is too old for this binding: it has no ${f} (the engine interface); rebuild it (make build)`);
    }
  }
  checkVersions(where, abi, typeof x.lock_engine_protocol_version === 'function' ? x.lock_engine_protocol_version() : 1);
  const inOff = x.lock_buffer(IN_CAP);
  const outOff = x.lock_buffer(OUT_CAP);
  const instantiateMs = performance.now() - t1;

  // The memory's ArrayBuffer is replaced when it grows: mem() re-wraps it.
  const m = new Bytes(x.memory.buffer);
  const mem = () => {
    if (m.ab !== x.memory.buffer) m.reset(x.memory.buffer);
    return m;
  };
  let cfgOff = 0;
  let cfgCap = 0;

  adapter = {
    backend: 'wasm',
    path: chosen.file,
    from: chosen.from,
    abi,
    size: bytes.length,
    compileMs,
    instantiateMs,
    version: () => null,
    inOff,
    inCap: IN_CAP,
    outOff,
    outCap: OUT_CAP,
    mem,
    step: (h, len) => Number(x.lock_engine_step(h, inOff, len, outOff, OUT_CAP)),
    free: (h) => { x.lock_engine_free(h); },
    /** lock_engine_new(config JSON) → the engine handle (a BigInt, as the exports take it); throws the engine's error. */
    engineNew(json) {
      const cfg = Buffer.from(json, 'utf8');
      let at = inOff;
      if (cfg.length > IN_CAP) {
        if (cfg.length > cfgCap) { cfgCap = cfg.length; cfgOff = x.lock_buffer(cfgCap); } // never freed: rare
        at = cfgOff;
      }
      cfg.copy(mem().b, at);
      const r = x.lock_engine_new(at, cfg.length, outOff, OUT_CAP);
      if (r > 0n) return r;
      const b = mem();
      const n = b.v.getUint32(outOff, true);
      const msg = utf8.decode(b.b.subarray(outOff + 4, outOff + 4 + n));
      throw errorFor(r < 0n ? Number(-r) : STATUS.INTERNAL, jsArgNames(msg));
    },
  };
  return adapter;
}

module.exports = { load, ABI_VERSION };
