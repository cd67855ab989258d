'use strict';
// liblock for Node.js: the public API (Client, Lock, errors) over one host
// (lib/host.js) that runs liblock's I/O-free engine on the main event loop
// with node:net / node:tls sockets and one timer. The engine comes from
// liblock.so through koffi (backend 'native', lib/native.js) or from
// liblock.wasm under V8 (backend 'wasm', lib/wasm.js): synchronous calls on
// the main thread, no worker, no thread pool. The engine parses node URLs,
// speaks Redis, decides every timeout, waits, extends and detects loss; the
// binding only maps its outcomes to promises and AbortSignals.

const E = require('./lib/errors');
const { Host, stats, markLost, hooks } = require('./lib/host');
const { makeTelemetry } = require('./lib/otel');
const { ACQ, LIMITS, ABI_VERSION } = require('./lib/protocol');
const { modeArg, MODE_NAMES } = require('./lib/rwlock');
const { resourceList, MAX_RESOURCES } = require('./lib/multi');
const election = require('./lib/election');

election.install(Host);

const { LockError, NotAcquiredError, UnavailableError, LockLostError, CanceledError,
  InvalidArgumentError, InvalidHandleError, InternalError, LoadError, ClientClosedError, canceledBy, closedError } = E;


// The adapters are loaded with the first client that needs one: loading
// the package never requires koffi nor reads liblock.so or liblock.wasm.
// With no backend named: native where it loads, else wasm (lib/backend.js).
function adapterFor(backend) {
  if (backend === undefined) return require('./lib/backend').auto();
  return backend === 'wasm' ? require('./lib/wasm').load() : require('./lib/native').load();
}

// ---------------------------------------------------------------- argument kinds

function kind(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN';
    if (!Number.isFinite(v)) return String(v);
  }
  return typeof v;
}

function badArg(what, msg) {
  return new InvalidArgumentError(`liblock: invalid argument: ${what}: ${msg}`);
}

// The library's limits (core/engine/config.go's, from the protocol's spec
// core/hostabi/spec/protocol.json through lib/protocol.gen.js), checked here
// so that every error names the caller's option in milliseconds (ttl, wait,
// nodeTimeout), never the C ABI's ttl_ms / wait_ms / node_timeout_ms.
const MIN_TTL_MS = LIMITS.ttl.min;
const MAX_TTL_MS = LIMITS.ttl.max;
const MIN_WAIT_MS = LIMITS.wait.min;
const MAX_WAIT_MS = LIMITS.wait.max;
const MIN_NODE_TIMEOUT_MS = LIMITS.node_timeout.min;
const MAX_NODE_TIMEOUT_MS = LIMITS.node_timeout.max;
const DEFAULT_NODE_TIMEOUT_MS = LIMITS.node_timeout.default;
const MAX_DRIFT_FACTOR = LIMITS.drift_factor.max;
const MIN_RESOURCE_BYTES = LIMITS.resource.min;
const MAX_RESOURCE_BYTES = LIMITS.resource.max;
const MAX_KEY_PREFIX_BYTES = LIMITS.key_prefix.max;
const MAX_NODES = LIMITS.nodes.max;
const MIN_TOKEN_BYTES = LIMITS.token.min;
const MAX_TOKEN_BYTES = LIMITS.token.max;
const MAX_OWNER_BYTES = LIMITS.owner.max;
/**
 * acquire()'s default wait (ms). node-redlock retries for a few seconds by
 * default (10 retries, 200 ms apart) and redis-semaphore waits 10 s
 * (acquireTimeout): Node users expect an acquire to wait, bounded. wait: 0
 * makes a single attempt.
 */
const DEFAULT_WAIT_MS = LIMITS.wait.default; // the spec's: 10000

function msText(ms) {
  if (ms >= 1000 && ms % 1000 === 0) return `${ms} ms (${ms / 1000} s)`;
  return `${ms} ms`;
}

function intArg(what, v, optional, lo = -Infinity, hi = Infinity) {
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'number') throw badArg(what, `must be an integer number of milliseconds, got ${kind(v)}`);
  if (!Number.isSafeInteger(v)) {
    throw badArg(what, Number.isInteger(v) ? `must be a safe integer, got ${v}` : `must be an integer number of milliseconds, got ${kind(v) === 'number' ? v : kind(v)}`);
  }
  if (v < lo || v > hi) throw badArg(what, `must be between ${msText(lo)} and ${msText(hi)} (durations are milliseconds), got ${v}`);
  return v;
}

// A lock must outlast an acquire round (each node request takes up to the
// node timeout) and, auto-extended, leave room for an extension round every
// ttl/3: a ttl below 3 × nodeTimeout (150 ms by default) is refused. It is
// almost always a unit mistake (ttl: 60 meant as 60 seconds). The factor is
// the spec's (core/hostabi/spec/protocol.json), as in the Python binding.
const TTL_NODE_TIMEOUTS = LIMITS.ttl.minNodeTimeouts;
function ttlFits(what, ttl, nodeTimeout) {
  const min = TTL_NODE_TIMEOUTS * nodeTimeout;
  if (ttl >= min) return;
  const hint = ttl * 1000 >= min && ttl * 1000 <= MAX_TTL_MS ? `; write ${what}: ${ttl * 1000} for ${ttl} s` : '; durations are milliseconds';
  throw badArg(what, `${ttl} ms is shorter than ${min} ms, ${TTL_NODE_TIMEOUTS} × nodeTimeout (${nodeTimeout} ms): a lock must outlast ` +
    `an acquire round and, auto-extended, an extension round every ttl/3${hint}`);
}

function bytesArg(what, v, min, max) {
  const n = Buffer.byteLength(v, 'utf8');
  if (n < min) throw badArg(what, min === 1 ? 'must not be empty' : `must be at least ${min} bytes of UTF-8, got ${n}`);
  if (n > max) throw badArg(what, `must be at most ${max} bytes of UTF-8, got ${n}`);
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

function optionsArg(what, v, allowed) {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'object' || Array.isArray(v)) throw badArg(what, `must be an object, got ${kind(v)}`);
  for (const k of Object.keys(v)) {
    if (!allowed.includes(k)) throw badArg(what, `unknown option ${JSON.stringify(k)} (known: ${allowed.join(', ')})`);
  }
  return v;
}

function isAbortSignal(s) {
  return typeof AbortSignal !== 'undefined' && s instanceof AbortSignal;
}


// ---------------------------------------------------------------- cleanup of dropped objects

// Locks and clients that are garbage-collected without release()/close():
// a dropped lock is released, a dropped client closed (which releases its
// locks), in the background. A Lock keeps its Client alive; the host and
// the lock states never reference either, so both can be collected while
// their sockets and timer live on.
// The argument checks lib/election.js shares with this file.
const ELECTION_HELPERS = {
  kind, badArg, bytesArg, stringArg, intArg, optionsArg, isAbortSignal, ttlFits,
  MAX_RESOURCE_BYTES, MIN_TTL_MS, MAX_TTL_MS,
};

const lockRegistry = new FinalizationRegistry((st) => st.host.releaseDropped(st));
// A new Lock is registered only if still unreleased some ms later (lib/dropped.js).
const dropped = require('./lib/dropped').tracker(lockRegistry);
hooks.released = dropped.forget;
const clientRegistry = new FinalizationRegistry((host) => { host.close(); });

// ---------------------------------------------------------------- Lock

/** A held (or once held) lock. Get one from Client#acquire. */
class Lock {
  #st;
  #client; // keeps the Client (whose finalizer would close the engine) alive

  /** @internal */
  constructor(st, client) {
    this.#st = st;
    this.#client = client;
    dropped.track(this, st);
  }

  /** The resource name given to acquire (a list's first). */
  get resource() { return this.#st.resource; }
  /** The resources this lock holds: the list given to acquire, or [resource]. */
  get resources() { return this.#st.resources ? [...this.#st.resources] : [this.#st.resource]; }
  /** The Redis key: the client's keyPrefix + resource (wrapped in a hash tag, `{…}`, on a client with a Redis Cluster node). */
  get key() { return this.#st.key; }
  /**
   * The token stored as the key's value: the caller's (acquire's `token`),
   * or a random one, prefixed by the client's `owner` and '/' when it has one
   * (read from the engine once).
   */
  get token() {
    const st = this.#st;
    if (st.token === null) {
      const info = st.host.info(st);
      if (info) st.token = info.token;
    }
    return st.token;
  }
  /**
   * The fencing token (acquire's `fence: true`): strictly greater than the
   * fence of every lock on this resource acquired before this one, also after
   * nodes restart empty when they stayed down longer than the largest ttl and
   * the servers' clocks agree within that time. A large number (at least the
   * servers' clock in microseconds, ~1.8e15: exact, below 2^53). 0 when no
   * fence was asked for.
   */
  get fence() { return this.#st.fence; }
  /**
   * Whether this acquire re-entered a lock its token already held on a quorum
   * (acquire's `token`: a hand-over, a re-attach, a reentrant lock). The
   * lock's key is shared with that holder: releasing either frees both.
   */
  get reentered() { return this.#st.reentered; }
  /**
   * What this lock holds: 'exclusive' (the mutex), or 'read' or 'write' (a
   * reader or the writer of the resource's read-write lock: acquire's `mode`).
   */
  get mode() { return MODE_NAMES[this.#st.mode || 0]; }
  /** Whether the engine extends this lock in the background. */
  get autoExtend() { return this.#st.autoExtend; }
  /** Whether release() completed (held or not). */
  get released() { return this.#st.released; }
  /** Whether the engine knows the lock is no longer held. */
  get lost() {
    const st = this.#st;
    if (st.lost) return true;
    if (st.released) return false;
    const info = st.host.info(st);
    if (info && info.err) markLost(st, E.errorOf(info.err));
    return st.lost;
  }
  /** Remaining validity in ms by the local monotonic clock (0 once expired, released or lost). */
  get validity() {
    const st = this.#st;
    if (st.released || st.lost) return 0;
    const info = st.host.info(st);
    return info ? Math.max(0, info.validity) : 0;
  }
  /** Aborted, with a LockLostError as its reason, when the lock is lost. */
  get signal() {
    const st = this.#st;
    if (!st.controller) {
      st.controller = new AbortController();
      if (st.lost) st.controller.abort(st.lostReason || new LockLostError('liblock: lock lost'));
    }
    return st.controller.signal;
  }

  /**
   * Resets the expiry to `ttl` ms from now where this token still holds the
   * key; never re-acquires an expired lock (LockLostError).
   * @param {number} ttl
   */
  async extend(ttl) {
    const st = this.#st;
    if (st.host.closed) throw closedError('extend');
    intArg('ttl', ttl, false, MIN_TTL_MS, MAX_TTL_MS);
    ttlFits('ttl', ttl, this.#client.nodeTimeout);
    if (st.released) throw new LockLostError('liblock: extend: already released');
    await st.host.extend(st, ttl);
  }

  /**
   * Deletes the key on every node where this token holds it. Resolves when it
   * was still held on a quorum; rejects with LockLostError when it was not
   * (or was already released), UnavailableError when too many nodes failed to
   * tell (the lock stays held: call release again).
   */
  release() {
    const st = this.#st;
    if (st.host.closed) return Promise.reject(closedError('release'));
    if (st.released) return Promise.reject(new LockLostError('liblock: release: already released'));
    try {
      return st.host.release(st); // once released, the host unregisters st (hooks.released)
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /** For `await using lock = await client.acquire(...)`: releases, ignoring LOST. */
  async [Symbol.asyncDispose]() {
    const st = this.#st;
    if (st.released || st.host.closed) return;
    try {
      await this.release();
    } catch (e) {
      if (e.code !== 'LOST') throw e;
    }
  }

  get [Symbol.toStringTag]() { return 'Lock'; }
}

if (!Symbol.asyncDispose) {
  // Node 18 has no Symbol.asyncDispose; Node 20 has it.
  Object.defineProperty(Symbol, 'asyncDispose', { value: Symbol.for('nodejs.asyncDispose') });
}

// ---------------------------------------------------------------- Client

const CLIENT_OPTIONS = ['nodes', 'nodeTimeout', 'driftFactor', 'keyPrefix', 'owner', 'backend', 'tls', 'waitReplicas', 'telemetry'];
// The most replicas waitReplicas may ask for (the spec's, as engine.MaxWaitReplicas).
const MAX_WAIT_REPLICAS = LIMITS.wait_replicas.max;
const TLS_OPTIONS = ['ca', 'cert', 'key', 'servername', 'rejectUnauthorized'];

function isPem(v) { return typeof v === 'string' || Buffer.isBuffer(v); }

/**
 * Checks the `tls` option and returns the node:tls options every rediss://
 * connection of the client gets (a copy: later changes to the caller's
 * object do not reach it). Each PEM is parsed now, so that a bad one is an
 * InvalidArgumentError naming its field here rather than a failed node
 * later; the messages are OpenSSL's reasons, never the PEM itself.
 */
function tlsArg(v, name = 'tls') {
  if (v === undefined) return null;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw badArg(name, `must be an object, got ${kind(v)}`);
  for (const k of Object.keys(v)) {
    if (!TLS_OPTIONS.includes(k)) throw badArg(name, `unknown option ${JSON.stringify(k)} (known: ${TLS_OPTIONS.join(', ')})`);
  }
  const out = {};
  const { ca, cert, key, servername, rejectUnauthorized } = v;
  const tls = require('node:tls');
  const { X509Certificate } = require('node:crypto');
  if (ca !== undefined) {
    const list = Array.isArray(ca) ? ca : [ca];
    if (list.length === 0) throw badArg(`${name}.ca`, `must not be an empty array`);
    list.forEach((c, i) => {
      const what = Array.isArray(ca) ? `${name}.ca[${i}]` : `${name}.ca`;
      if (!isPem(c)) throw badArg(what, `must be a PEM string or a Buffer, got ${kind(c)}`);
      // node:tls ignores what it cannot parse in ca: check every block.
      const blocks = String(c).match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g);
      if (!blocks) throw badArg(what, 'holds no PEM certificate (-----BEGIN CERTIFICATE-----)');
      for (const b of blocks) {
        try {
          new X509Certificate(b); // eslint-disable-line no-new
        } catch (e) {
          throw badArg(what, `not a certificate node:tls can use (${e.message})`);
        }
      }
    });
    out.ca = Array.isArray(ca) ? [...ca] : ca;
  }
  if (cert !== undefined && !isPem(cert)) throw badArg(`${name}.cert`, `must be a PEM string or a Buffer, got ${kind(cert)}`);
  if (key !== undefined && !isPem(key)) throw badArg(`${name}.key`, `must be a PEM string or a Buffer, got ${kind(key)}`);
  if (cert !== undefined && key === undefined) throw badArg(`${name}.cert`, `needs ${name}.key`);
  if (key !== undefined && cert === undefined) throw badArg(`${name}.key`, `needs ${name}.cert`);
  if (cert !== undefined) {
    try {
      tls.createSecureContext({ cert });
    } catch (e) {
      throw badArg(`${name}.cert`, `not a PEM certificate node:tls can use (${e.message})`);
    }
    try {
      tls.createSecureContext({ cert, key });
    } catch (e) {
      if (e.code === 'ERR_OSSL_X509_KEY_VALUES_MISMATCH') throw badArg(`${name}.key`, `does not match ${name}.cert`);
      throw badArg(`${name}.key`, `not a PEM private key node:tls can use (${e.message})`);
    }
    out.cert = cert;
    out.key = key;
  }
  if (servername !== undefined) {
    if (typeof servername !== 'string' || servername === '') throw badArg(`${name}.servername`, `must be a non-empty string, got ${typeof servername === 'string' ? '""' : kind(servername)}`);
    out.servername = servername;
  }
  if (rejectUnauthorized !== undefined) {
    if (typeof rejectUnauthorized !== 'boolean') throw badArg(`${name}.rejectUnauthorized`, `must be true or false, got ${kind(rejectUnauthorized)}`);
    out.rejectUnauthorized = rejectUnauthorized;
  }
  return out;
}
const BACKENDS = ['native', 'wasm'];
const ACQUIRE_OPTIONS = ['ttl', 'wait', 'autoExtend', 'token', 'fence', 'mode', 'signal', 'permits'];
const INSPECT_OPTIONS = ['signal', 'permits', 'mode'];
const MAX_PERMITS = LIMITS.permits.max;

/**
 * permitsArg checks a semaphore's permit count (`permits`): undefined for
 * the mutex, else an integer from 1 to MAX_PERMITS (0 included in what is
 * refused: leave it out for the mutex).
 */
function permitsArg(v) {
  if (v === undefined) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v)) {
    throw badArg('permits', `must be an integer from 1 to ${MAX_PERMITS}, got ${typeof v === 'number' ? v : kind(v)}`);
  }
  if (v < 1 || v > MAX_PERMITS) throw badArg('permits', `must be 1 to ${MAX_PERMITS}, got ${v}`);
  return v;
}

/**
 * The `telemetry` option (README "Metrics, traces and logs"): undefined (on
 * when @opentelemetry/api is installed), false, true, or { meterProvider,
 * tracerProvider, resourceLabel }.
 */
function telemetryArg(t, urls) {
  if (t !== undefined && typeof t !== 'boolean' && (t === null || typeof t !== 'object' || Array.isArray(t))) {
    throw badArg('telemetry', `must be true, false or an object { meterProvider, tracerProvider, resourceLabel }, got ${kind(t)}`);
  }
  if (t && typeof t === 'object') {
    for (const k of Object.keys(t)) {
      if (!['meterProvider', 'tracerProvider', 'resourceLabel'].includes(k)) {
        throw badArg('telemetry', `unknown option ${JSON.stringify(k)} (known: meterProvider, tracerProvider, resourceLabel)`);
      }
    }
    if (t.resourceLabel !== undefined && typeof t.resourceLabel !== 'function') {
      throw badArg('telemetry.resourceLabel', `must be a function (resource) => label, got ${kind(t.resourceLabel)}`);
    }
  }
  return makeTelemetry(t, urls.map(nodeAddress));
}

/** A node URL's address without its credentials (the server.address attribute). */
function nodeAddress(u) {
  try {
    const url = new URL(u);
    return url.protocol === 'unix:' ? url.pathname : url.host;
  } catch {
    return '';
  }
}

/** An inspection of a read-write lock: `readers` set, [] when it has none. */
function withReaders(i) {
  if (!i.readers) i.readers = [];
  return i;
}

// The last resource name acquire() found valid: the same name again (a
// loop over one resource) is not scanned three times more. Only a string
// that passed the checks is ever kept, so anything else is checked.
let checkedResource = Symbol('none');

/** A client over a set of independent Redis masters (Redlock). */
class Client {
  #host;
  #nodeTimeout;
  #owner;
  #wrap = (st) => new Lock(st, this);

  /**
   * @param {{nodes: (string | {url: string, tls?: TlsOptions})[], nodeTimeout?: number, driftFactor?: number, keyPrefix?: string, owner?: string, backend?: 'native'|'wasm', tls?: TlsOptions, waitReplicas?: number}} options
   */
  constructor(options) {
    if (options === undefined || options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw badArg('options', `must be an object with at least "nodes", got ${kind(options)}`);
    }
    optionsArg('options', options, CLIENT_OPTIONS);
    const cfg = {};
    const { nodes, nodeTimeout, driftFactor, keyPrefix, owner, backend } = options;
    const tlsOptions = tlsArg(options.tls);
    if (!Array.isArray(nodes)) throw badArg('nodes', `must be an array of URL strings or { url, tls } objects, got ${kind(nodes)}`);
    // A node given as { url, tls }: its tls replaces the client's for it.
    let nodeTls = null;
    cfg.nodes = nodes.map((u, i) => {
      if (u === null || typeof u !== 'object' || Array.isArray(u)) return stringArg(`nodes[${i}]`, u);
      for (const k of Object.keys(u)) {
        if (k !== 'url' && k !== 'tls') throw badArg(`nodes[${i}]`, `unknown option ${JSON.stringify(k)} (known: url, tls)`);
      }
      if (u.tls !== undefined) (nodeTls ||= [])[i] = tlsArg(u.tls, `nodes[${i}].tls`);
      return stringArg(`nodes[${i}].url`, u.url);
    });
    if (nodes.length < LIMITS.nodes.min || nodes.length > MAX_NODES) throw badArg('nodes', `must hold ${LIMITS.nodes.min} to ${MAX_NODES} URLs, got ${nodes.length}`);
    if (nodeTimeout !== undefined) cfg.node_timeout_ms = intArg('nodeTimeout', nodeTimeout, false, MIN_NODE_TIMEOUT_MS, MAX_NODE_TIMEOUT_MS);
    if (driftFactor !== undefined) {
      if (typeof driftFactor !== 'number' || !Number.isFinite(driftFactor)) {
        throw badArg('driftFactor', `must be a finite number, got ${kind(driftFactor)}`);
      }
      if (!(driftFactor >= LIMITS.drift_factor.min && driftFactor <= MAX_DRIFT_FACTOR)) {
        throw badArg('driftFactor', `must be between ${LIMITS.drift_factor.min} and ${MAX_DRIFT_FACTOR}, got ${driftFactor}`);
      }
      cfg.drift_factor = driftFactor;
    }
    if (options.waitReplicas !== undefined) {
      // WAIT behind every grant and extension (README "WAIT"): undefined is
      // the default (1 on Sentinel and Cluster nodes, off elsewhere), 0 turns it off.
      const w = options.waitReplicas;
      if (typeof w !== 'number' || !Number.isSafeInteger(w) || w < LIMITS.wait_replicas.min || w > MAX_WAIT_REPLICAS) {
        throw badArg('waitReplicas', `must be an integer between 0 (off) and ${MAX_WAIT_REPLICAS}, got ${typeof w === 'number' ? w : kind(w)}`);
      }
      cfg.wait_replicas = w;
    }
    if (keyPrefix !== undefined) cfg.key_prefix = bytesArg('keyPrefix', stringArg('keyPrefix', keyPrefix), 0, MAX_KEY_PREFIX_BYTES);
    if (owner !== undefined && owner !== '') {
      bytesArg('owner', stringArg('owner', owner), 1, MAX_OWNER_BYTES);
      if (owner.includes('/')) throw badArg('owner', "must not contain '/' (it separates the owner from the random part of the token)");
      cfg.owner = owner;
    } else if (owner === '') cfg.owner = ''; // no label, as when omitted
    if (backend !== undefined && !BACKENDS.includes(backend)) {
      throw badArg('backend', `must be ${BACKENDS.map((b) => JSON.stringify(b)).join(' or ')}, got ${typeof backend === 'string' ? JSON.stringify(backend) : kind(backend)}`);
    }
    const tel = telemetryArg(options.telemetry, cfg.nodes);
    if (tel) cfg.report = true; // the engine's REPORT actions (lib/otel.js)
    const ad = adapterFor(backend);
    const handle = ad.engineNew(JSON.stringify(cfg)); // validates the URLs: throws InvalidArgumentError
    this.#host = new Host(ad, handle, cfg.key_prefix || '', tlsOptions, nodeTls, tel);
    // A Redis Cluster node (cluster=yes): the engine derives the keys (lib/host.js keyOf).
    this.#host.clusterKeys = cfg.nodes.some((u) => /[?&]cluster=/.test(u));
    this.#nodeTimeout = nodeTimeout === undefined ? DEFAULT_NODE_TIMEOUT_MS : nodeTimeout;
    this.#owner = owner === undefined ? '' : owner;
    clientRegistry.register(this, this.#host, this.#host);
  }

  /** The longest a single node request may take, in ms (as configured, or the default 50). */
  get nodeTimeout() { return this.#nodeTimeout; }

  /** The owner label carried in the value of every lock this client takes ('' when none). */
  get owner() { return this.#owner; }

  /** Whether close() was called. */
  get closed() { return this.#host.closed; }

  /** The engine running this client's locks: 'native' (liblock.so) or 'wasm' (liblock.wasm). */
  get backend() { return this.#host.ad.backend; }

  /**
   * Takes the lock on `resource`. Waits (with randomized backoff, woken early
   * by releases through this client) for at most `wait` ms: 10000 by default
   * (DEFAULT_WAIT), 0 for a single attempt. `fence: true` asks for a fencing
   * token (Lock#fence); `token` (16..512 bytes) is used instead of a random
   * one, and re-enters the lock that token already holds (Lock#reentered).
   * `permits: N` (1..1024) takes one permit of the counting semaphore of N
   * permits on `resource` instead of its mutex (README.md, "Semaphore").
   * `mode: 'read'` or `'write'` takes a reader or the writer of the
   * resource's read-write lock instead of its mutex (not with `token`).
   * @param {string} resource
   * @param {{ttl: number, wait?: number, autoExtend?: boolean, token?: string, fence?: boolean, signal?: AbortSignal, permits?: number, mode?: 'read' | 'write'}} options
   * @returns {Promise<Lock>}
   */
  acquire(resource, options) {
    // Not an async function (one promise less per acquire), but like one:
    // every error, argument errors included, is a rejection.
    try {
      if (this.#host.closed) throw closedError('acquire');
      let set; // a multi-resource lock's further resources (lib/multi.js)
      if (Array.isArray(resource)) {
        const r = resourceList(resource, stringArg, bytesArg, MIN_RESOURCE_BYTES, MAX_RESOURCE_BYTES);
        resource = r.first;
        set = { resources: r.more };
      } else if (resource !== checkedResource) {
        bytesArg('resource', stringArg('resource', resource), MIN_RESOURCE_BYTES, MAX_RESOURCE_BYTES);
        checkedResource = resource;
      }
      if (options === undefined || options === null) throw badArg('options', 'must be an object with at least "ttl" (ms)');
      optionsArg('options', options, ACQUIRE_OPTIONS);
      const ttl = intArg('ttl', options.ttl, false, MIN_TTL_MS, MAX_TTL_MS);
      const given = intArg('wait', options.wait, true, MIN_WAIT_MS, MAX_WAIT_MS);
      const wait = given === undefined ? DEFAULT_WAIT_MS : given;
      const autoExtend = options.autoExtend;
      if (autoExtend !== undefined && typeof autoExtend !== 'boolean') {
        throw badArg('autoExtend', `must be a boolean, got ${kind(autoExtend)}`);
      }
      const token = options.token;
      if (token !== undefined) {
        bytesArg('token', stringArg('token', token), MIN_TOKEN_BYTES, MAX_TOKEN_BYTES);
      }
      const fence = options.fence;
      if (fence !== undefined && typeof fence !== 'boolean') {
        throw badArg('fence', `must be a boolean, got ${kind(fence)}`);
      }
      if (fence && token !== undefined) {
        throw badArg('fence', 'cannot be combined with token (a re-entry keeps the fence of the lock it re-enters, which this acquire cannot know)');
      }
      if (set && token !== undefined) {
        throw badArg('token', 'not supported with a list of resources (a multi-resource lock cannot be re-entered or handed over by token)');
      }
      const mode = modeArg(options.mode, token);
      if (mode && set) throw badArg('mode', 'not with a list of resources (a read-write lock is on one resource)');
      const signal = options.signal;
      if (signal !== undefined && !isAbortSignal(signal)) {
        throw badArg('signal', `must be an AbortSignal, got ${kind(signal)}`);
      }
      const permits = permitsArg(options.permits);
      const host = this.#host;
      ttlFits('ttl', ttl, this.#nodeTimeout);
      if (signal && signal.aborted) throw canceledBy(signal);
      return host.acquire({ resource, resources: set ? set.resources : null, ttl, wait, autoExtend: autoExtend === true, fence: fence === true,
        token: token === undefined ? null : token, permits: permits === undefined ? 0 : permits, mode, value: null, signal: signal || null, wrap: this.#wrap });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Looks at `resource` without taking it: whether one token holds it on a
   * quorum (`held`), how long it certainly stays held (`validity`, ms; null
   * when the key has no expiry; 0 when not held), the holder's `owner` label
   * ('' when none, or when another program set the key), and each node's
   * answer. Rejects with UnavailableError (per-node causes in `nodes`) when
   * too many nodes failed to tell. An aborted `signal` rejects it with
   * CanceledError (the engine's round still ends within the node timeout).
   * `permits: N` inspects the semaphore of N permits instead: `permits`,
   * `inUse` and `holders` ({ slot, owner, validity }), with held, validity
   * and owner those of the first holder. `mode: 'read'` or `'write'`
   * inspects the read-write lock: held, validity and owner are its
   * writer's, `readers` ({ owner, validity }) its readers on a quorum.
   * @param {string} resource
   * @param {{signal?: AbortSignal, permits?: number}} [options]
   * @returns {Promise<Inspection>}
   */
  inspect(resource, options) {
    try {
      if (this.#host.closed) throw closedError('inspect');
      bytesArg('resource', stringArg('resource', resource), MIN_RESOURCE_BYTES, MAX_RESOURCE_BYTES);
      optionsArg('options', options, INSPECT_OPTIONS);
      const signal = options ? options.signal : undefined;
      if (signal !== undefined && !isAbortSignal(signal)) {
        throw badArg('signal', `must be an AbortSignal, got ${kind(signal)}`);
      }
      const permits = permitsArg(options ? options.permits : undefined);
      const mode = modeArg(options ? options.mode : undefined, undefined);
      if (permits !== undefined && mode) throw badArg('mode', 'not with permits (a semaphore and a read-write lock are two different locks)');
      const host = this.#host;
      if (signal && signal.aborted) throw canceledBy(signal, 'inspect');
      if (permits !== undefined) return host.inspect(resource, signal, { permits });
      // A read-write lock's inspection lists its readers, [] for none.
      if (mode) return host.inspect(resource, signal, { mode }).then(withReaders);
      return host.inspect(resource, signal, undefined);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * Campaigns in the election `name`, publishing `value`, until this client
   * leads (lib/election.js): resolves with a Leadership (term, value,
   * validity, signal, resign()). Without `wait` it waits until it leads, the
   * signal aborts, or the client closes; `ttl` (ms, default 10000) is the
   * leadership's lease, extended in the background.
   * @param {string} name
   * @param {{value: string, ttl?: number, wait?: number, signal?: AbortSignal}} options
   */
  campaign(name, options) {
    return election.campaign(this, this.#host, this.#wrap, ELECTION_HELPERS, name, options);
  }

  /**
   * The leader of the election `name`: { name, value, term, owner, validity }
   * (validity in ms), or null when none is valid on a quorum.
   * @param {string} name
   * @param {{signal?: AbortSignal}} [options]
   */
  leader(name, options) {
    try {
      return election.leader(this.#host, ELECTION_HELPERS, name, options);
    } catch (e) {
      return Promise.reject(e);
    }
  }

  /**
   * An async iterator of the leader changes of the election `name`: the
   * leader now first ({ leader: null } when none), then every change once,
   * in order, pushed by pub/sub with polling as the fallback (`poll` ms,
   * default 1000). Ends when `signal` aborts, the loop breaks, or the
   * client closes.
   * @param {string} name
   * @param {{signal?: AbortSignal, poll?: number}} [options]
   */
  observe(name, options) {
    return election.observe(this.#host, ELECTION_HELPERS, name, options);
  }

  /**
   * Runs `fn` while holding the lock on `resource` (auto-extended unless
   * `autoExtend: false`), then releases it. `fn` receives an AbortSignal that
   * aborts if the lock is lost. Resolves with fn's result; rejects with fn's
   * error, or with LockLostError if the lock was lost while fn ran.
   * @template T
   * @param {string} resource
   * @param {{ttl: number, wait?: number, autoExtend?: boolean, signal?: AbortSignal}} options
   * @param {(signal: AbortSignal, lock: Lock) => Promise<T> | T} fn
   * @returns {Promise<T>}
   */
  async using(resource, options, fn) {
    if (this.#host.closed) throw closedError('using');
    if (typeof fn !== 'function') throw badArg('fn', `must be a function, got ${kind(fn)}`);
    if (options === undefined || options === null) throw badArg('options', 'must be an object with at least "ttl" (ms)');
    optionsArg('options', options, ACQUIRE_OPTIONS);
    const lock = await this.acquire(resource, { autoExtend: true, ...options });
    const signal = lock.signal;
    let value;
    try {
      value = await fn(signal, lock);
    } catch (e) {
      try { await lock.release(); } catch { /* fn's error wins */ }
      throw e;
    }
    const wasLost = signal.aborted;
    try {
      await lock.release();
    } catch (e) {
      // Lost while fn ran: that is the outcome, whatever the release found
      // (LOST, or UNAVAILABLE when the nodes that lost it are down).
      if (wasLost) throw signal.reason;
      throw e;
    }
    if (wasLost) throw signal.reason;
    return value;
  }

  /**
   * Closes the client: pending operations reject with CanceledError, locks
   * still held are released, connections are closed. Safe to call twice.
   * The returned promise resolves once the releases are done (each bounded
   * by nodeTimeout); it never rejects.
   * @returns {Promise<void>}
   */
  close() {
    clientRegistry.unregister(this.#host);
    return this.#host.close();
  }

  get [Symbol.toStringTag]() { return 'Client'; }
}

/**
 * Information about the loaded library (loads it if needed): with no
 * argument the one a client naming no backend runs (liblock.so where it
 * loads, else liblock.wasm, and then `fallbackReason` says why), or the
 * backend named ('native' or 'wasm'; liblock.wasm with its compile and
 * instantiate times).
 */
function library(backend) {
  if (backend !== undefined && !BACKENDS.includes(backend)) {
    throw badArg('backend', `must be ${BACKENDS.map((b) => JSON.stringify(b)).join(' or ')}, got ${typeof backend === 'string' ? JSON.stringify(backend) : kind(backend)}`);
  }
  const ad = adapterFor(backend);
  const info = { backend: ad.backend, path: ad.path, from: ad.from, abiVersion: ad.abi, version: ad.version() };
  if (backend === undefined) info.fallbackReason = require('./lib/backend').fallback();
  if (ad.backend === 'wasm') Object.assign(info, { size: ad.size, compileMs: ad.compileMs, instantiateMs: ad.instantiateMs });
  return info;
}

/**
 * @internal Counters of this copy of the binding, for leak tests: engines
 * (one per open client) plus locks they still hold or track (`handles`),
 * operations pending, locks tracked (`lostWatch`). The same on both
 * backends: the host keeps this bookkeeping, not the library.
 */
function _debug() {
  return {
    handles: stats.engines + stats.locks,
    pending: stats.pending,
    lostWatch: stats.locks,
    submitting: 0,
    clients: stats.engines,
    worker: false,
  };
}

module.exports = {
  Client,
  Lock,
  Leadership: election.Leadership,
  LockError,
  NotAcquiredError,
  UnavailableError,
  LockLostError,
  CanceledError,
  InvalidArgumentError,
  InvalidHandleError,
  InternalError,
  LoadError,
  ClientClosedError,
  ABI_VERSION,
  DEFAULT_WAIT: DEFAULT_WAIT_MS,
  MAX_RESOURCES,
  library,
  _debug,
};
// `import liblock from 'liblock'` compiled to CommonJS by TypeScript or Babel
// without esModuleInterop reads `.default`: it is the module itself, as the
// type declarations (index.d.ts) say.
Object.defineProperty(module.exports, 'default', { value: module.exports, enumerable: false });
