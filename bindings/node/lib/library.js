'use strict';
// What both engine adapters (lib/native.js, lib/wasm.js) share: where the
// library file is looked for, the versions it must speak, and the sizes of
// the engine's buffers.

const fs = require('node:fs');
const path = require('node:path');
const { LoadError } = require('./errors');
const { ABI_VERSION, PROTOCOL_VERSION } = require('./protocol');

const IN_CAP = 64 * 1024;
const OUT_CAP = 128 * 1024; // twice the protocol's minimum: a second step is rarely needed

/**
 * The file `name` to load, { from, file }: $env when set (it must exist),
 * else the repository's build, else the package's copy (`packaged`, from
 * the package's root). `refuse(c)` may throw for a file found; `hint` ends
 * the messages of a file not found.
 */
function findLibrary(name, env, packaged, hint, refuse = () => {}) {
  const candidates = [{ from: 'repository build', file: path.resolve(__dirname, '..', '..', '..', 'build', name) },
    { from: 'packaged copy', file: path.join(__dirname, '..', packaged) }];
  if (process.env[env]) candidates.unshift({ from: env, file: process.env[env], required: true });
  const tried = [];
  for (const c of candidates) {
    tried.push(`${c.file} (${c.from})`);
    if (fs.existsSync(c.file)) { refuse(c); return c; }
    if (c.required) throw new LoadError(`liblock: ${env}=${c.file} does not exist${hint.missing}`);
  }
  throw new LoadError(`liblock: cannot find ${name}; tried ${tried.join(', ')}. Build it with \`make build\` at the repository root, ${hint.notFound}`);
}

/** Throws unless the library at `where` speaks this binding's ABI, and its engine protocol when given. */
function checkVersions(where, abi, proto) {
  const fix = 'rebuild the library (make build) or install a matching package';
  if (abi !== ABI_VERSION) throw new LoadError(`liblock: ABI version mismatch: ${where} has ABI ${abi}, this binding needs ABI ${ABI_VERSION}; ${fix}`);
  if (proto !== undefined && proto !== PROTOCOL_VERSION) {
    throw new LoadError(`liblock: engine protocol mismatch: ${where} speaks engine protocol ${proto}, this binding needs ${PROTOCOL_VERSION}; ${fix}`);
  }
}

module.exports = { findLibrary, checkVersions, IN_CAP, OUT_CAP };
