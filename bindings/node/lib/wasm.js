'use strict';
// The wasm engine adapter: liblock.wasm (a WASI reactor) under V8's
// WebAssembly, on the main thread. The module is compiled and instantiated
// once per process (per copy of this package); every wasm client is one
// engine in that instance, stepped synchronously like the native one. The
// input and output buffers are module memory (lock_buffer), shared by the
// engines: lib/host.js reads each step's actions to the end before the next.

const fs = require('node:fs');
const path = require('node:path');
const { wasiImports } = require('./wasi');
const { Bytes } = require('./protocol');
const { LoadError, errorFor, jsArgNames, STATUS } = require('./errors');

const ABI_VERSION = 1;
const IN_CAP = 64 * 1024;
const OUT_CAP = 128 * 1024; // twice the protocol's minimum: a second step is rarely needed
const utf8 = new TextDecoder();

let adapter = null;

function candidatePaths() {
  const out = [];
  if (process.env.LIBLOCK_WASM_PATH) out.push({ from: 'LIBLOCK_WASM_PATH', file: process.env.LIBLOCK_WASM_PATH, required: true });
  out.push({ from: 'repository build', file: path.resolve(__dirname, '..', '..', '..', 'build', 'liblock.wasm') });
  out.push({ from: 'packaged copy', file: path.join(__dirname, '..', 'prebuilt', 'liblock.wasm') });
  return out;
}

// V8 compiles a module's functions lazily, at their first call: then the
// Go runtime's start and the first acquire, release, reply... each compile
// their code inside a step, tens of milliseconds on a busy machine, and a
// node request's deadline (counted by the engine from the step's start) can
// pass before its reply is read. Compiling every function up front costs
// about as much in total, all of it in new Client(). The flag is set for
// this one compilation only, unless the process chose for itself.
function eagerCompilation() {
  const own = [...process.execArgv, process.env.NODE_OPTIONS || ''].some((a) => a.includes('wasm-lazy-compilation'));
  if (own) return () => {};
  const v8 = require('node:v8');
  try {
    v8.setFlagsFromString('--no-wasm-lazy-compilation');
  } catch {
    return () => {};
  }
  return () => { try { v8.setFlagsFromString('--wasm-lazy-compilation'); } catch { /* keep */ } };
}

/** Finds, compiles and instantiates liblock.wasm once; returns the adapter. Throws LoadError. */
function load() {
  if (adapter) return adapter;
  let chosen = null;
  const tried = [];
  for (const c of candidatePaths()) {
    tried.push(`${c.file} (${c.from})`);
    if (fs.existsSync(c.file)) { chosen = c; break; }
    if (c.required) throw new LoadError(`liblock: LIBLOCK_WASM_PATH=${c.file} does not exist`);
  }
  if (!chosen) {
    throw new LoadError(`liblock: cannot find liblock.wasm; tried ${tried.join(', ')}. ` +
      'Build it with `make build` at the repository root, or set LIBLOCK_WASM_PATH.');
  }
  const where = `${chosen.file} (${chosen.from})`;
  let bytes;
  try {
    bytes = fs.readFileSync(chosen.file);
  } catch (e) {
    throw new LoadError(`liblock: cannot read ${where}: ${e.message}`, { cause: e });
  }
  const t0 = performance.now();
  let module;
  const eager = eagerCompilation();
  try {
    module = new WebAssembly.Module(bytes);
  } catch (e) {
    throw new LoadError(`liblock: ${where} is not a WebAssembly module: ${e.message}`, { cause: e });
  } finally {
    eager();
  }
  const compileMs = performance.now() - t0;
  const t1 = performance.now();
  let x = null;
  let inst;
  try {
    inst = new WebAssembly.Instance(module, { wasi_snapshot_preview1: wasiImports(() => x.memory) });
  } catch (e) {
    throw new LoadError(`liblock: ${where} cannot be instantiated as liblock.wasm: ${e.message}; ` +
      'rebuild it (make build) or install a matching package', { cause: e });
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
  if (abi !== ABI_VERSION) {
    throw new LoadError(`liblock: ABI version mismatch: ${where} has ABI ${abi}, this binding needs ABI ${ABI_VERSION}; ` +
      'rebuild it (make build) or install a matching package');
  }
  for (const f of ['lock_engine_new', 'lock_engine_step', 'lock_engine_free', 'lock_buffer']) {
    if (typeof x[f] !== 'function') {
      throw new LoadError(`liblock: ${where} is too old for this binding: it has no ${f} (the engine interface); rebuild it (make build)`);
    }
  }
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
