'use strict';
// The error classes (stable `code`, the C ABI's `status`) and the mapping
// from the engine's `error` records to them.

// The status codes and, for each, its code, default message and error class: the spec's.
const { STATUS, STATUSES, LIMITS } = require('./protocol.gen');

/** Base class of every error this package throws; `code` is stable. */
class LockError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
}
function defineError(name, code, status = STATUS[code]) {
  const cls = { [name]: class extends LockError {} }[name];
  Object.defineProperty(cls.prototype, 'code', { value: code, enumerable: true });
  Object.defineProperty(cls.prototype, 'status', { value: status, enumerable: false });
  return cls;
}
// One class for each error status, named by the spec (index.d.ts says what each means).
const ERROR_OF = STATUSES.map((s) => (s.nodeClass ? defineError(s.nodeClass, s.code) : null));
const CLASSES = Object.fromEntries(ERROR_OF.filter(Boolean).map((cls) => [cls.name, cls]));
const { NotAcquiredError, UnavailableError, LockLostError, CanceledError, InvalidArgumentError,
  InvalidHandleError, InternalError } = CLASSES;
// A call after close(): `status` is LOCK_INVALID_HANDLE's, what the C ABI answers for a freed client.
const ClientClosedError = defineError('ClientClosedError', 'CLOSED', STATUS.INVALID_HANDLE);

/** The ClientClosedError of a call (`what`, e.g. 'acquire') made after close(). */
function closedError(what) {
  return new ClientClosedError(`liblock: the client is closed: ${what}() after close()`);
}
// The backend's library could not be loaded: `status` is LOCK_INTERNAL's (no library call was made).
const LoadError = defineError('LoadError', 'LOAD_FAILED', STATUS.INTERNAL);

function errorFor(status, message) {
  const cls = ERROR_OF[status] || InternalError;
  if (!message) message = STATUSES[status] ? STATUSES[status].message : `liblock: status ${status}`;
  const e = new cls(message);
  if (!ERROR_OF[status]) e.message += ` (unknown status ${status})`;
  return e;
}

// The engine names arguments as the C ABI does (JSON keys, *_ms); say the
// caller's names instead.
const ARG_NAMES = {
  ttl_ms: 'ttl', wait_ms: 'wait', auto_extend: 'autoExtend',
  node_timeout: 'nodeTimeout', node_timeout_ms: 'nodeTimeout', drift_factor: 'driftFactor', key_prefix: 'keyPrefix', wait_replicas: 'waitReplicas',
};
const ARG_IN_MESSAGE = /^(liblock: invalid argument: )([a-z_]+)(: )/;

/** Replaces a C argument name at the start of an invalid-argument message. */
function jsArgNames(message) {
  return message.replace(ARG_IN_MESSAGE, (all, pre, name, post) => (ARG_NAMES[name] ? pre + ARG_NAMES[name] + post : all));
}

// The spec's limits by the names the engine gives them (its own, or the
// C/JSON one: 'ttl', 'ttl_ms'): for the Node option's name.
const LIMIT_BY_ARG = new Map();
for (const l of Object.values(LIMITS)) {
  LIMIT_BY_ARG.set(l.c, l);
  if (!LIMIT_BY_ARG.has(l.node)) LIMIT_BY_ARG.set(l.node, l);
}

/** A value of a bound in Node's units: ms stay ms (with seconds when round), bytes, counts bare. */
function amount(v, unit) {
  if (unit === 'ms') return v >= 1000 && v % 1000 === 0 ? `${v} ms (${v / 1000} s)` : `${v} ms`;
  return unit === 'count' || !unit ? String(v) : `${v} ${unit}`;
}

/**
 * The reason for an argument the engine refused as out of its range (the
 * record's bound, limit, unit and got: protocol 4), in Node's units; the
 * engine's own reason for any other rejection.
 */
function boundReason(r) {
  if (r.bound !== 'min' && r.bound !== 'max') return r.b;
  if (r.bound === 'min' && r.limit === 1 && r.got === 0 && r.unit === 'bytes') return 'must not be empty';
  const word = r.bound === 'min' ? 'at least' : 'at most';
  return `must be ${word} ${amount(r.limit, r.unit)}${r.unit === 'bytes' ? ' of UTF-8' : ''}, got ${amount(r.got, r.unit)}`;
}

/**
 * The error for an engine `error` record { status, message, a, b, nodes,
 * bound, limit, unit, got }: an InvalidArgumentError names the Node option
 * and words a bound in Node's units. An UnavailableError carries the
 * per-node causes as `nodes`.
 */
function errorOf(r) {
  let msg = r.message;
  if (r.status === STATUS.INVALID_ARGUMENT && r.a) {
    const l = LIMIT_BY_ARG.get(r.a);
    const name = ARG_NAMES[r.a] || (l && l.c === r.a ? l.node : r.a);
    msg = `liblock: invalid argument: ${name}: ${boundReason(r)}`;
  }
  const e = errorFor(r.status, msg);
  if (r.nodes && r.nodes.length) e.nodes = r.nodes;
  return e;
}

function canceledBy(signal, what = 'acquire') {
  return new CanceledError(`liblock: ${what} canceled by its AbortSignal`, { cause: signal.reason });
}

module.exports = {
  STATUS, LockError, NotAcquiredError, UnavailableError, LockLostError, CanceledError,
  InvalidArgumentError, InvalidHandleError, InternalError, LoadError, ClientClosedError,
  errorFor, closedError, errorOf, jsArgNames, canceledBy,
};
