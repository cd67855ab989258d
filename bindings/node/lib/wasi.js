'use strict';
// The WASI preview 1 imports liblock.wasm's Go runtime needs, hand written:
// real wall and monotonic clocks, crypto random bytes (pooled), a
// poll_oneoff that never sleeps (no engine export waits), stderr for Go's
// fatal messages, and no files, arguments or environment. (node:wasi prints
// an ExperimentalWarning on Node 20 and brings a file-system sandbox.)

const fs = require('node:fs');
const { getRandomValues } = require('node:crypto');

const POOL_SIZE = 4096;
const pool = new Uint8Array(POOL_SIZE);
let poolLeft = 0;

const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;

const CLOCK_REALTIME = 0;
const EVENTTYPE_CLOCK = 0;
const FILETYPE_CHARACTER_DEVICE = 2;

/** Thrown by proc_exit: the module asked to end (Go's runtime after a fatal error). */
class WasiExit extends Error {
  constructor(code) {
    super(`liblock.wasm: exit(${code})`);
    this.code = code;
  }
}

function nowNs(id) {
  if (id === CLOCK_REALTIME) {
    return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1e6));
  }
  return process.hrtime.bigint(); // monotonic, process and thread CPU clocks
}

/**
 * The wasi_snapshot_preview1 import object.
 * @param {() => WebAssembly.Memory} memory the instance's memory (set after instantiation)
 */
function wasiImports(memory) {
  // One DataView per memory buffer (a new one only after the memory grew):
  // the clock is read on every step.
  let viewOf = null;
  let view = null;
  const dv = () => {
    const b = memory().buffer;
    if (b !== viewOf) { viewOf = b; view = new DataView(b); }
    return view;
  };
  const bytes = (p, n) => new Uint8Array(memory().buffer, p, n);
  const none = (count, bufSize) => { // no arguments, no environment
    dv().setUint32(count, 0, true);
    dv().setUint32(bufSize, 0, true);
    return ESUCCESS;
  };
  return {
    args_sizes_get: none,
    args_get() { return ESUCCESS; },
    environ_sizes_get: none,
    environ_get() { return ESUCCESS; },
    clock_time_get(id, _precision, out) {
      if (id > 3) return EINVAL;
      dv().setBigUint64(out, nowNs(id), true);
      return ESUCCESS;
    },
    random_get(p, n) {
      if (n <= POOL_SIZE) {
        // Small requests (a lock token, the runtime's seeds) come from a
        // pool refilled from the CSPRNG 4 KB at a time, as Node's own
        // randomUUID does (one getRandomValues per request costs more than a step).
        if (poolLeft < n) { getRandomValues(pool); poolLeft = POOL_SIZE; }
        bytes(p, n).set(pool.subarray(POOL_SIZE - poolLeft, POOL_SIZE - poolLeft + n));
        pool.fill(0, POOL_SIZE - poolLeft, POOL_SIZE - poolLeft + n); // handed-out bytes are not kept
        poolLeft -= n;
        return ESUCCESS;
      }
      for (let off = 0; off < n; off += 65536) {
        getRandomValues(bytes(p + off, Math.min(65536, n - off)));
      }
      return ESUCCESS;
    },
    poll_oneoff(inPtr, outPtr, nsubs, neventsPtr) {
      if (nsubs === 0) return EINVAL;
      const v = dv();
      // Never sleeps: no export of the engine waits (the module only calls
      // this when the Go scheduler is idle). Every subscription is reported
      // ready at once: fd ones when there are any (there are no real
      // files here), else the clock ones.
      let fdSub = false;
      for (let i = 0; i < nsubs; i++) if (v.getUint8(inPtr + i * 48 + 8) !== EVENTTYPE_CLOCK) fdSub = true;
      let n = 0;
      for (let i = 0; i < nsubs; i++) {
        const s = inPtr + i * 48;
        const type = v.getUint8(s + 8);
        if (type === EVENTTYPE_CLOCK && fdSub) continue;
        const e = outPtr + n * 32;
        v.setBigUint64(e, v.getBigUint64(s, true), true);
        v.setUint16(e + 8, ESUCCESS, true);
        v.setUint8(e + 10, type);
        v.setBigUint64(e + 16, 0n, true);
        v.setUint16(e + 24, 0, true);
        n++;
      }
      v.setUint32(neventsPtr, n, true);
      return ESUCCESS;
    },
    sched_yield() { return ESUCCESS; },
    proc_exit(code) { throw new WasiExit(code); },
    fd_write(fd, iovs, iovsLen, nwrittenPtr) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const v = dv();
      let total = 0;
      for (let i = 0; i < iovsLen; i++) {
        const p = v.getUint32(iovs + i * 8, true);
        const n = v.getUint32(iovs + i * 8 + 4, true);
        if (n > 0) {
          try { fs.writeSync(2, bytes(p, n)); } catch { /* stderr gone */ }
        }
        total += n;
      }
      v.setUint32(nwrittenPtr, total, true);
      return ESUCCESS;
    },
    fd_read(fd, _iovs, _iovsLen, nreadPtr) {
      if (fd !== 0) return EBADF;
      dv().setUint32(nreadPtr, 0, true); // stdin: always at its end
      return ESUCCESS;
    },
    fd_close(fd) { return fd <= 2 ? ESUCCESS : EBADF; },
    fd_fdstat_get(fd, out) {
      if (fd > 2) return EBADF;
      const v = dv();
      v.setUint8(out, FILETYPE_CHARACTER_DEVICE);
      v.setUint16(out + 2, 0, true);
      v.setBigUint64(out + 8, 0xffffffffffffffffn, true);
      v.setBigUint64(out + 16, 0n, true);
      return ESUCCESS;
    },
    fd_fdstat_set_flags(fd) { return fd <= 2 ? ESUCCESS : EBADF; },
    fd_prestat_get() { return EBADF; }, // nothing preopened
    fd_prestat_dir_name() { return EBADF; },
  };
}

module.exports = { wasiImports, WasiExit };
