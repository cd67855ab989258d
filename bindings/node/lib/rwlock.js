'use strict';
// Read-write locks: the `mode` option of acquire() and inspect(). The engine
// does the work (rwlock.go); the binding checks the option and passes it on
// (the protocol's READ and WRITE flags, through Host's `kind`).

const { InvalidArgumentError } = require('./errors');

/** The engine's LockMode numbers, by option value. */
const MODES = { exclusive: 0, read: 1, write: 2 };
/** Lock#mode's value, by the engine's number. */
const MODE_NAMES = ['exclusive', 'read', 'write'];

function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'string') return JSON.stringify(v);
  return typeof v;
}

/**
 * The engine's number for an acquire's or inspect's `mode` (undefined: the
 * mutex, 0). Throws InvalidArgumentError naming mode for anything but
 * 'read', 'write' or 'exclusive', and for a mode with a caller's token.
 */
function modeArg(mode, token) {
  if (mode === undefined) return 0;
  if (typeof mode !== 'string' || !Object.prototype.hasOwnProperty.call(MODES, mode)) {
    throw new InvalidArgumentError(`liblock: invalid argument: mode: must be 'read' or 'write', got ${describe(mode)}`);
  }
  const m = MODES[mode];
  if (m !== 0 && token !== undefined) {
    throw new InvalidArgumentError('liblock: invalid argument: mode: a read-write lock does not take a caller\'s token');
  }
  return m;
}

module.exports = { modeArg, MODE_NAMES };
