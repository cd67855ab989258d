'use strict';
// The binding's argument checks: types only (a number that is an integer,
// a string the engine can take, a known option of the right kind). The
// values are the engine's to judge: it names the caller's option and words
// a bound in Node's units (lib/errors.js errorOf).

const { InvalidArgumentError } = require('./errors');
const { OPTIONS } = require('./options.gen');
const { LIMITS } = require('./protocol.gen');

/** What v is, for a message: its type, or null, array, NaN, Infinity. */
function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
  return typeof v;
}

function badArg(what, msg) {
  return new InvalidArgumentError(`liblock: invalid argument: ${what}: ${msg}`);
}

function msText(ms) {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms} ms (${ms / 1000} s)` : `${ms} ms`;
}

/** An integer number of milliseconds (a safe integer: the protocol's i64 as a Number), within [lo, hi] when given. */
function intArg(what, v, lo = -Infinity, hi = Infinity) {
  if (typeof v !== 'number') throw badArg(what, `must be an integer number of milliseconds, got ${kind(v)}`);
  if (!Number.isSafeInteger(v)) {
    throw badArg(what, Number.isInteger(v) ? `must be a safe integer, got ${v}` : `must be an integer number of milliseconds, got ${kind(v) === 'number' ? v : kind(v)}`);
  }
  if (v < lo || v > hi) throw badArg(what, `must be between ${msText(lo)} and ${msText(hi)} (durations are milliseconds), got ${v}`);
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

function isAbortSignal(s) {
  return typeof AbortSignal !== 'undefined' && s instanceof AbortSignal;
}

/** Checks that v is of an option's kind (lib/options.gen.js): an enum's kind is its values. */
function kindArg(what, v, k) {
  switch (k) {
    case 'ms': intArg(what, v); break;
    case 'int':
      if (!Number.isSafeInteger(v)) throw badArg(what, `must be an integer, got ${typeof v === 'number' ? v : kind(v)}`);
      break;
    case 'number': if (typeof v !== 'number' || !Number.isFinite(v)) throw badArg(what, `must be a finite number, got ${kind(v)}`); break;
    case 'bool': if (typeof v !== 'boolean') throw badArg(what, `must be a boolean, got ${kind(v)}`); break;
    case 'str': stringArg(what, v); break;
    case 'signal': if (!isAbortSignal(v)) throw badArg(what, `must be an AbortSignal, got ${kind(v)}`); break;
    case 'function': if (typeof v !== 'function') throw badArg(what, `must be a function, got ${kind(v)}`); break;
    case 'custom': case 'unknown': break; // checked by its caller, or not at all
    default:
      if (!k.includes(v)) throw badArg(what, `must be ${k.map((x) => `'${x}'`).join(', ')}, got ${typeof v === 'string' ? JSON.stringify(v) : kind(v)}`);
  }
}

const NONE = Object.freeze({});

/**
 * Checks an option object of the spec's set `set` (undefined and null are
 * none: {}): an object, whose every field is known and of its kind; errors
 * name the field, after `prefix` (e.g. 'tls.').
 */
function optionsArg(what, v, set, prefix = '') {
  if (v === undefined || v === null) return NONE;
  if (typeof v !== 'object' || Array.isArray(v)) throw badArg(what, `must be an object, got ${kind(v)}`);
  const fields = OPTIONS[set];
  for (const k of Object.keys(v)) {
    const f = fields[k];
    if (f === undefined) throw badArg(what, `unknown option ${JSON.stringify(k)} (known: ${Object.keys(fields).join(', ')})`);
    if (v[k] !== undefined) kindArg(prefix + k, v[k], f);
  }
  return v;
}

/**
 * A semaphore's permit count, 0 for none (the mutex). The engine takes 0 as
 * none: 0 given is refused here, and so is a count above the limit, before
 * index.js's ttl rule can speak first.
 */
function permitsArg(v) {
  if (v === undefined) return 0;
  if (v < 1 || v > LIMITS.permits.max) throw badArg('permits', `must be 1 to ${LIMITS.permits.max}, got ${v}`);
  return v;
}

module.exports = { kind, badArg, intArg, stringArg, isAbortSignal, optionsArg, permitsArg, OPTIONS };
