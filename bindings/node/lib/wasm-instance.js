'use strict';
// One instance of liblock.wasm and the plumbing every caller of its exports
// needs (wasm/PROTOCOL.md §1, §4): _initialize, the ABI check, scratch
// buffers in module memory for strings going in and out-parameters, error
// records. Used by the worker (the instance that does I/O) and on the main
// thread by the small instance that only validates configurations.

const { wasiImports } = require('./wasi');

const ABI_VERSION = 1;
const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

// Scratch layout at `out` (module memory the host owns).
const OUT_HANDLE = 0; // u64
const OUT_ERR = 8; // (ptr u32, len u32)
const OUT_INFO = 16; // (ptr u32, len u32)
const OUT_SIZE = 24;

/** Thrown when the file is not liblock.wasm or has another ABI. */
class ModuleMismatchError extends Error {}

class Instance {
  /**
   * @param {WebAssembly.Module} module
   * @param {(memory: () => WebAssembly.Memory) => object} hostImports builds the `liblock` import module
   * @param {string} where names the file in error messages
   */
  constructor(module, hostImports, where) {
    let exports = null;
    const memory = () => exports.memory;
    let inst;
    try {
      inst = new WebAssembly.Instance(module, {
        wasi_snapshot_preview1: wasiImports(memory),
        liblock: hostImports(memory),
      });
    } catch (e) {
      throw new ModuleMismatchError(`${where} cannot be instantiated as liblock.wasm: ${e.message}`);
    }
    exports = inst.exports;
    this.x = exports;
    if (typeof exports._initialize !== 'function' || typeof exports.lock_abi_version !== 'function') {
      throw new ModuleMismatchError(`${where} is not liblock.wasm (no lock_abi_version)`);
    }
    exports._initialize();
    this.abi = exports.lock_abi_version();
    if (this.abi !== ABI_VERSION) {
      throw new ModuleMismatchError(`ABI version mismatch: ${where} has ABI ${this.abi}, this binding needs ABI ${ABI_VERSION}`);
    }
    for (const f of ['lock_acquire_start', 'lock_run', 'lock_op_result', 'lock_cancel']) {
      if (typeof exports[f] !== 'function') {
        throw new ModuleMismatchError(`${where} is too old for this binding: it has no ${f} (the non-blocking acquire)`);
      }
    }
    this.out = exports.lock_buf_alloc(OUT_SIZE);
    this.bufs = [{ ptr: 0, cap: 0 }, { ptr: 0, cap: 0 }];
    this.viewOf = null;
    this.dataView = null;
  }

  /** The memory as bytes (re-read after every call: memory may grow). */
  bytes() { return new Uint8Array(this.x.memory.buffer); }

  /** A DataView of the memory, made again only when the memory grew (its buffer changed). */
  view() {
    const b = this.x.memory.buffer;
    if (b !== this.viewOf) { this.viewOf = b; this.dataView = new DataView(b); }
    return this.dataView;
  }

  /**
   * Writes s (UTF-8) into scratch buffer `slot` (0 or 1); returns [ptr, len].
   * @param {number} slot
   * @param {string} s
   */
  putString(slot, s) {
    const b = this.bufs[slot];
    const max = s.length * 3;
    if (max > b.cap) {
      if (b.ptr) this.x.lock_buf_free(b.ptr);
      b.cap = Math.max(256, max);
      b.ptr = this.x.lock_buf_alloc(b.cap);
      if (!b.ptr) throw new RangeError(`liblock.wasm: cannot allocate ${b.cap} bytes`);
    }
    const { written } = utf8.encodeInto(s, new Uint8Array(this.x.memory.buffer, b.ptr, b.cap));
    return [b.ptr, written];
  }

  /** The u64 written at out+OUT_HANDLE, as a Number (handles are below 2^53). */
  outHandle() { return Number(this.view().getBigUint64(this.out + OUT_HANDLE, true)); }

  /** Reads and frees a (ptr, len) pair written by the module at `at`; null when ptr is 0. */
  takeBuffer(at) {
    const v = this.view();
    const p = v.getUint32(at, true);
    const n = v.getUint32(at + 4, true);
    if (!p) return null;
    const s = utf8d.decode(new Uint8Array(this.x.memory.buffer, p, n));
    this.x.lock_buf_free(p);
    return s;
  }

  /** The error record of the last call (parsed JSON), or null. */
  takeError() {
    const s = this.takeBuffer(this.out + OUT_ERR);
    if (s === null) return null;
    try { return JSON.parse(s); } catch { return { message: s }; }
  }

  /** lock_client_new(config JSON) → { status, handle, err }. */
  clientNew(json) {
    const [p, n] = this.putString(0, json);
    const status = this.x.lock_client_new(p, n, this.out + OUT_HANDLE, this.out + OUT_ERR);
    return { status, handle: status === 0 ? this.outHandle() : 0, err: this.takeError() };
  }

  /** lock_info(lock) → { status, info, err }. */
  info(lock) {
    const status = this.x.lock_info(BigInt(lock), this.out + OUT_INFO, this.out + OUT_ERR);
    const err = this.takeError();
    const s = status === 0 ? this.takeBuffer(this.out + OUT_INFO) : null;
    return { status, info: s === null ? null : JSON.parse(s), err };
  }
}

module.exports = { Instance, ModuleMismatchError, ABI_VERSION, OUT_HANDLE, OUT_ERR, OUT_INFO };
