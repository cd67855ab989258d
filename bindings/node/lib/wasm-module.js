'use strict';
// Finding, compiling (once per process) and checking liblock.wasm, and the
// small instance on the main thread that validates client configurations
// synchronously (new Client() throws at once, with the module's own
// message, exactly like the native backend). That instance never does I/O:
// lock_client_new only parses and checks, and the client is freed at once.

const fs = require('node:fs');
const path = require('node:path');
const { Instance, ModuleMismatchError } = require('./wasm-instance');
const { Encoder, decode } = require('./msgpack');

let loaded = null; // { module, path, from, abi, compileMs, validator, instantiateMs }

function candidatePaths() {
  const out = [];
  if (process.env.LIBLOCK_WASM_PATH) out.push({ from: 'LIBLOCK_WASM_PATH', file: process.env.LIBLOCK_WASM_PATH, required: true });
  out.push({ from: 'repository build', file: path.resolve(__dirname, '..', '..', '..', 'build', 'liblock.wasm') });
  out.push({ from: 'packaged copy', file: path.join(__dirname, '..', 'prebuilt', 'liblock.wasm') });
  return out;
}

// The validator's exec: never expected to be called (lock_client_new does
// no I/O); if it ever is, every node fails instead of a trap.
function validatorImports(memory) {
  const enc = new Encoder();
  let last = new Uint8Array(0);
  return {
    exec(reqP, reqLen, respP, respCap) {
      let n = 0;
      try { n = decode(new Uint8Array(memory().buffer, reqP, reqLen))[2].length; } catch { /* malformed: no entries */ }
      enc.reset().array(n);
      for (let i = 0; i < n; i++) enc.array(2).int(3).str('liblock: no I/O on the validating instance');
      last = enc.bytes().slice();
      if (last.length <= respCap) new Uint8Array(memory().buffer, respP, last.length).set(last);
      return last.length;
    },
    exec_take(p, cap) {
      const n = Math.min(cap, last.length);
      new Uint8Array(memory().buffer, p, n).set(last.subarray(0, n));
      return n;
    },
    interrupted() { return 0; },
  };
}

/**
 * Loads the module once: the file, its compilation, the ABI check and the
 * validating instance. Throws Error(message) on any failure; `LoadError`
 * wraps it in the caller's error class.
 * @param {(msg: string, cause?: Error) => Error} fail makes the thrown error
 */
function loadModule(fail) {
  if (loaded) return loaded;
  let chosen = null;
  const tried = [];
  for (const c of candidatePaths()) {
    tried.push(`${c.file} (${c.from})`);
    if (fs.existsSync(c.file)) { chosen = c; break; }
    if (c.required) throw fail(`liblock: LIBLOCK_WASM_PATH=${c.file} does not exist`);
  }
  if (!chosen) {
    throw fail(`liblock: cannot find liblock.wasm; tried ${tried.join(', ')}. ` +
      'Build it with `make build` at the repository root, or set LIBLOCK_WASM_PATH.');
  }
  const where = `${chosen.file} (${chosen.from})`;
  let bytes;
  try {
    bytes = fs.readFileSync(chosen.file);
  } catch (e) {
    throw fail(`liblock: cannot read ${where}: ${e.message}`, e);
  }
  let module;
  const t0 = performance.now();
  try {
    module = new WebAssembly.Module(bytes);
  } catch (e) {
    throw fail(`liblock: ${where} is not a WebAssembly module: ${e.message}`, e);
  }
  const compileMs = performance.now() - t0;
  let validator;
  const t1 = performance.now();
  try {
    validator = new Instance(module, validatorImports, where);
  } catch (e) {
    if (e instanceof ModuleMismatchError) {
      throw fail(`liblock: ${e.message}; rebuild it (make build) or install a matching package`, e);
    }
    throw fail(`liblock: cannot start ${where}: ${e.message}`, e);
  }
  const instantiateMs = performance.now() - t1;
  loaded = { module, path: chosen.file, from: chosen.from, abi: validator.abi, where, compileMs, instantiateMs, validator, size: bytes.length };
  return loaded;
}

/**
 * Validates a configuration JSON with the module itself; returns null when
 * valid, else { status, err } (the module's error record).
 */
function validateConfig(m, json) {
  const r = m.validator.clientNew(json);
  if (r.status === 0) {
    m.validator.x.lock_free(BigInt(r.handle));
    return null;
  }
  return r;
}

module.exports = { loadModule, validateConfig };
