'use strict';
// Which engine a client runs when it names no backend: liblock.so where it
// loads (koffi and a library for this platform), else liblock.wasm, said
// once per process with process.emitWarning (code LIBLOCK_NATIVE_UNAVAILABLE;
// `node --disable-warning=LIBLOCK_NATIVE_UNAVAILABLE`, or a 'warning'
// listener, or backend: 'wasm'). The choice is made by the first such client
// (or library()) and kept. An explicit backend: 'native' never falls back.

const { LoadError } = require('./errors');

const WARNING_CODE = 'LIBLOCK_NATIVE_UNAVAILABLE';
let chosen = null; // the adapter
let fallbackReason = null; // why the native library did not load, when wasm was chosen

function auto() {
  if (chosen) return chosen;
  let nativeErr;
  try {
    chosen = require('./native').load();
    return chosen;
  } catch (e) {
    if (!(e instanceof LoadError)) throw e;
    nativeErr = e;
  }
  let wasm;
  try {
    wasm = require('./wasm').load();
  } catch (e) {
    throw new LoadError(`liblock: no backend runs here: the native library does not load (${nativeErr.message}); ` +
      `and the wasm backend cannot run either (${e.message})`, { cause: nativeErr });
  }
  chosen = wasm;
  fallbackReason = nativeErr.message;
  process.emitWarning(`liblock: running the wasm backend (liblock.wasm): the native library does not load here ` +
    `(${fallbackReason}). Pass backend: 'wasm' to choose it without this warning, or backend: 'native' to make this an error.`,
  { type: 'LiblockWarning', code: WARNING_CODE });
  return chosen;
}

module.exports = { auto, fallback: () => fallbackReason, WARNING_CODE };
