'use strict';
// liblock for Node.js: the public API (Client, Lock, errors; docs/node.md,
// index.d.ts) over one host (lib/host.js) that runs the engine, liblock.so
// (lib/native.js) or liblock.wasm (lib/wasm.js), on the main event loop.
// This file checks the types of the arguments (the engine judges their
// values) and maps outcomes to promises, Locks and AbortSignals.

const E = require('./lib/errors');
const { Host, stats, markLost, hooks, fits } = require('./lib/host');
const { makeTelemetry } = require('./lib/otel');
const { LIMITS, DEFAULTS, ABI_VERSION } = require('./lib/protocol');
const { kind, badArg, intArg, stringArg, optionsArg, permitsArg, OPTIONS } = require('./lib/args');
const election = require('./lib/election');

election.install(Host);

const { LockError, NotAcquiredError, UnavailableError, LockLostError, CanceledError,
  InvalidArgumentError, InvalidHandleError, InternalError, LoadError, ClientClosedError, canceledBy, closedError } = E;

// The adapters are loaded with the first client that needs one: loading
// the package never requires koffi nor reads liblock.so or liblock.wasm.
function adapterFor(backend) {
  if (backend === undefined) return require('./lib/backend').auto();
  return backend === 'wasm' ? require('./lib/wasm').load() : require('./lib/native').load();
}

const MAX_TTL_MS = LIMITS.ttl.max;
const MAX_RESOURCES = LIMITS.resources.max;
const DEFAULT_WAIT_MS = DEFAULTS.wait; // the spec's (docs/defaults.md)
/** Lock#mode by the engine's number: the spec lists the modes in that order. */
const MODES = OPTIONS.AcquireOptions.mode;


// Locks and clients that are garbage-collected without release()/close():
// a dropped lock is released, a dropped client closed (which releases its
// locks), in the background. A Lock keeps its Client alive; the host and
// the lock states never reference either, so both can be collected while
// their sockets and timer live on.
const lockRegistry = new FinalizationRegistry((st) => st.host.releaseDropped(st));
// A new Lock is registered only if still unreleased some ms later (lib/dropped.js).
const dropped = require('./lib/dropped').tracker(lockRegistry);
hooks.released = dropped.forget;
const clientRegistry = new FinalizationRegistry((host) => { host.close(); });

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

  get resource() { return this.#st.resource; }
  get resources() { return this.#st.resources ? [...this.#st.resources] : [this.#st.resource]; }
  get key() { return this.#st.key; }
  /** A random token is read from the engine once, when asked for. */
  get token() {
    const st = this.#st;
    if (st.token === null) {
      const info = st.host.info(st);
      if (info) st.token = info.token;
    }
    return st.token;
  }
  get fence() { return this.#st.fence; }
  get reentered() { return this.#st.reentered; }
  get mode() { return MODES[this.#st.mode]; }
  get autoExtend() { return this.#st.autoExtend; }
  get released() { return this.#st.released; }
  get lost() {
    const st = this.#st;
    if (st.lost) return true;
    if (st.released) return false;
    const info = st.host.info(st);
    if (info && info.err) markLost(st, E.errorOf(info.err));
    return st.lost;
  }
  get validity() {
    const st = this.#st;
    if (st.released || st.lost) return 0;
    const info = st.host.info(st);
    return info ? Math.max(0, info.validity) : 0;
  }
  get signal() {
    const st = this.#st;
    if (!st.controller) {
      st.controller = new AbortController();
      if (st.lost) st.controller.abort(st.lostReason || new LockLostError('liblock: lock lost'));
    }
    return st.controller.signal;
  }

  async extend(ttl) {
    const st = this.#st;
    if (st.host.closed) throw closedError('extend');
    intArg('ttl', ttl);
    if (st.released) throw new LockLostError('liblock: extend: already released');
    await st.host.extend(st, ttl);
  }

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

  /** Releases, ignoring LOST. */
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
  if (v === null) throw badArg(name, 'must be an object, got null');
  optionsArg(name, v, 'TlsOptions');
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

/** A node URL's address without its credentials (the server.address attribute). */
function nodeAddress(u) {
  try {
    const url = new URL(u);
    return url.protocol === 'unix:' ? url.pathname : url.host;
  } catch {
    return '';
  }
}

// The last resource name acquire() found valid: the same name again (a
// loop over one resource) is not scanned again. Only a string that passed
// the checks is ever kept, so anything else is checked.
let checkedResource = Symbol('none');

/** A client over a set of independent Redis masters (Redlock). */
class Client {
  #host;
  #nodeTimeout;
  #owner;
  #wrap = (st) => new Lock(st, this);

  constructor(options) {
    if (options === undefined || options === null || typeof options !== 'object' || Array.isArray(options)) {
      throw badArg('options', `must be an object with at least "nodes", got ${kind(options)}`);
    }
    optionsArg('options', options, 'ClientOptions');
    const { nodes, nodeTimeout, driftFactor, waitReplicas, keyPrefix, owner, backend, telemetry } = options;
    const tlsOptions = tlsArg(options.tls);
    if (!Array.isArray(nodes)) throw badArg('nodes', `must be an array of URL strings or { url, tls } objects, got ${kind(nodes)}`);
    // A node given as { url, tls }: its tls replaces the client's for it.
    let nodeTls = null;
    const cfg = { nodes: nodes.map((u, i) => {
      if (u === null || typeof u !== 'object' || Array.isArray(u)) return stringArg(`nodes[${i}]`, u);
      optionsArg(`nodes[${i}]`, u, 'NodeOptions');
      if (u.tls !== undefined) (nodeTls ||= [])[i] = tlsArg(u.tls, `nodes[${i}].tls`);
      return stringArg(`nodes[${i}].url`, u.url);
    }) };
    if (nodes.length < LIMITS.nodes.min || nodes.length > LIMITS.nodes.max) throw badArg('nodes', `must hold ${LIMITS.nodes.min} to ${LIMITS.nodes.max} URLs, got ${nodes.length}`);
    if (nodeTimeout !== undefined) cfg.node_timeout_ms = intArg('nodeTimeout', nodeTimeout, LIMITS.node_timeout.min, LIMITS.node_timeout.max);
    if (driftFactor !== undefined) cfg.drift_factor = driftFactor;
    if (waitReplicas !== undefined) cfg.wait_replicas = waitReplicas;
    if (keyPrefix !== undefined) cfg.key_prefix = keyPrefix;
    if (owner !== undefined) cfg.owner = owner;
    if (telemetry === null) throw badArg('telemetry', 'must be true, false or an object { meterProvider, tracerProvider, resourceLabel }, got null');
    if (typeof telemetry !== 'boolean') optionsArg('telemetry', telemetry, 'TelemetryOptions', 'telemetry.');
    const tel = makeTelemetry(telemetry, cfg.nodes.map(nodeAddress));
    if (tel) cfg.report = true; // the engine's REPORT actions (lib/otel.js)
    const ad = adapterFor(backend);
    const handle = ad.engineNew(JSON.stringify(cfg)); // judges the values and URLs: throws InvalidArgumentError
    this.#host = new Host(ad, handle, cfg.key_prefix || '', tlsOptions, nodeTls, tel);
    // A Redis Cluster node (cluster=yes): the engine derives the keys (lib/host.js keyOf).
    this.#host.clusterKeys = cfg.nodes.some((u) => /[?&]cluster=/.test(u));
    this.#nodeTimeout = nodeTimeout === undefined ? DEFAULTS.nodeTimeout : nodeTimeout;
    this.#owner = owner === undefined ? '' : owner;
    clientRegistry.register(this, this.#host, this.#host);
  }

  get nodeTimeout() { return this.#nodeTimeout; }
  get owner() { return this.#owner; }
  get closed() { return this.#host.closed; }
  get backend() { return this.#host.ad.backend; }

  acquire(resource, options) {
    // Not an async function (one promise less per acquire), but like one:
    // every error, argument errors included, is a rejection.
    try {
      if (this.#host.closed) throw closedError('acquire');
      let resources = null; // a multi-resource lock's further resources
      if (Array.isArray(resource)) {
        // Bounded here (the event must fit the engine's input buffer); the engine judges the names.
        if (resource.length === 0) throw badArg('resources', 'must name at least one resource');
        if (resource.length > MAX_RESOURCES) throw badArg('resources', `at most ${MAX_RESOURCES} resources in one lock, got ${resource.length}`);
        resource.forEach((r, i) => stringArg(`resources[${i}]`, r));
        // A list of one is sent as its resource: its length is judged here, named as the list's.
        if (resource.length === 1) fits('resources[0]', resource[0], LIMITS.resource.max, LIMITS.resource.min);
        else resources = resource.slice(1);
        resource = resource[0];
      } else if (resource !== checkedResource) {
        checkedResource = stringArg('resource', resource);
      }
      if (options === undefined || options === null) throw badArg('options', 'must be an object with at least "ttl" (ms)');
      optionsArg('options', options, 'AcquireOptions');
      const { ttl, wait, token, signal, mode } = options;
      if (ttl === undefined) throw badArg('ttl', 'missing: the lease, an integer number of milliseconds');
      if (resources && token !== undefined) {
        throw badArg('token', 'not supported with a list of resources (a multi-resource lock cannot be re-entered or handed over by token)');
      }
      // (Before the ttl rule, which would otherwise speak first.)
      if (mode !== undefined && mode !== 'exclusive' && token !== undefined) throw badArg('mode', 'a read-write lock does not take a caller\'s token');
      const permits = permitsArg(options.permits);
      if (signal && signal.aborted) throw canceledBy(signal);
      return this.#host.acquire({ resource, resources, ttl, wait: wait === undefined ? DEFAULT_WAIT_MS : wait, autoExtend: options.autoExtend === true,
        fence: options.fence === true, token: token === undefined ? null : token, permits, mode: mode === undefined ? 0 : MODES.indexOf(mode),
        value: null, signal: signal || null, wrap: this.#wrap });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  inspect(resource, options) {
    try {
      if (this.#host.closed) throw closedError('inspect');
      stringArg('resource', resource);
      const { signal, mode } = optionsArg('options', options, 'InspectOptions');
      const permits = permitsArg(options ? options.permits : undefined);
      if (signal && signal.aborted) throw canceledBy(signal, 'inspect');
      const m = mode === undefined ? 0 : MODES.indexOf(mode);
      if (permits === 0 && m === 0) return this.#host.inspect(resource, signal, undefined);
      const p = this.#host.inspect(resource, signal, { permits, mode: m });
      // A read-write lock's inspection lists its readers, [] for none.
      return m === 0 ? p : p.then((i) => { i.readers ||= []; return i; });
    } catch (e) {
      return Promise.reject(e);
    }
  }

  campaign(name, options) {
    return election.campaign(this, this.#host, this.#wrap, name, options);
  }

  leader(name, options) {
    return election.leader(this.#host, name, options);
  }

  observe(name, options) {
    return election.observe(this.#host, name, options);
  }

  async using(resource, options, fn) {
    if (this.#host.closed) throw closedError('using');
    if (typeof fn !== 'function') throw badArg('fn', `must be a function, got ${kind(fn)}`);
    if (options === undefined || options === null) throw badArg('options', 'must be an object with at least "ttl" (ms)');
    optionsArg('options', options, 'AcquireOptions');
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

  /** Never rejects: pending operations end with CanceledError, held locks are released. */
  close() {
    clientRegistry.unregister(this.#host);
    return this.#host.close();
  }

  get [Symbol.toStringTag]() { return 'Client'; }
}

function library(backend) {
  optionsArg('options', { backend }, 'ClientOptions');
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
