'use strict';
// Leader election: Client#campaign, #leader and #observe (index.js calls
// these with the client's host). The engine does the work: a campaign is an
// ACQUIRE with the ELECTION flag (fenced and auto-extended; the term is the
// fence), leader() an INSPECT with it, and observe() a WATCH whose LEADER
// actions (pushed by pub/sub, polled as the fallback) become an async iterator.

const E = require('./errors');
const P = require('./protocol');
const { hold, drain, fits, ROOM } = require('./host');
const { badArg, stringArg, optionsArg } = require('./args');

const { EV } = P;
const DEFAULT_TTL_MS = P.DEFAULTS.campaignTtl; // the spec's (docs/defaults.md)

/** This client's leadership of an election, from Client#campaign. */
class Leadership {
  #lock;
  #name;
  #value;

  /** @internal */
  constructor(lock, name, value) {
    this.#lock = lock;
    this.#name = name;
    this.#value = value;
  }

  get name() { return this.#name; }
  get value() { return this.#value; }
  /** The lock's fence. */
  get term() { return this.#lock.fence; }
  get validity() { return this.#lock.validity; }
  get lost() { return this.#lock.lost; }
  get signal() { return this.#lock.signal; }
  get lock() { return this.#lock; }
  /** Deletes the election key where this leadership holds it: observers learn it at once. */
  resign() { return this.#lock.release(); }
  async [Symbol.asyncDispose]() { return this.#lock[Symbol.asyncDispose](); }
  get [Symbol.toStringTag]() { return 'Leadership'; }
}

/**
 * Campaigns until this client leads `name` (no wait bound by default: it
 * waits until it leads, the signal aborts, or the client closes).
 */
async function campaign(client, host, wrap, name, options) {
  if (host.closed) throw E.closedError('campaign');
  stringArg('name', name);
  if (options === undefined || options === null) throw badArg('options', 'must be an object with at least "value"');
  optionsArg('options', options, 'CampaignOptions');
  const { value, wait, signal } = options;
  if (value === undefined) throw badArg('value', 'missing: what observers see while this client leads');
  const ttl = options.ttl === undefined ? DEFAULT_TTL_MS : options.ttl;
  if (signal && signal.aborted) throw E.canceledBy(signal, 'campaign');
  for (;;) {
    try {
      const lock = await host.acquire({ resource: name, resources: null, ttl, wait: wait === undefined ? P.LIMITS.wait.max : wait, autoExtend: true, fence: true,
        token: null, permits: 0, mode: 0, value, signal: signal || null, wrap });
      return new Leadership(lock, name, value);
    } catch (e) {
      // Unbounded: a wait that ran out (the engine's longest) starts over.
      if (wait !== undefined || (e.code !== 'NOT_ACQUIRED' && e.code !== 'UNAVAILABLE') || (signal && signal.aborted) || host.closed) throw e;
    }
  }
}

/** The leader of `name`: { name, value, term, owner, validity }, or null. */
async function leader(host, name, options) {
  if (host.closed) throw E.closedError('leader');
  stringArg('name', name);
  const { signal } = optionsArg('options', options, 'LeaderOptions');
  if (signal && signal.aborted) throw E.canceledBy(signal, 'leader');
  const r = await host.inspect(name, signal, { election: true });
  const l = r.held && r.term ? { value: r.value, term: r.term, owner: r.owner, validity: r.validity } : null;
  return l ? { name, ...l } : null;
}

/**
 * An async iterator of the leader changes of `name`: first the leader now
 * ({ name, leader: null } when none), then each change once, in order.
 * Ends when the signal aborts, the iterator is returned (break), or the
 * client closes.
 */
function observe(host, name, options) {
  if (host.closed) throw E.closedError('observe');
  stringArg('name', name);
  const { signal, poll } = optionsArg('options', options, 'ObserveOptions');
  if (signal && signal.aborted) throw E.canceledBy(signal, 'observe');
  const queue = [];
  const waiting = [];
  let ended = false;
  let failure = null;
  const push = (item) => {
    const w = waiting.shift();
    if (w) w.resolve({ value: item, done: false });
    else queue.push(item);
  };
  const finish = (err) => {
    if (ended) return;
    ended = true;
    failure = err;
    if (signal) signal.removeEventListener('abort', onAbort);
    for (const w of waiting.splice(0)) {
      if (err) w.reject(err);
      else w.resolve({ value: undefined, done: true });
    }
  };
  const op = host.watch(name, poll || 0, {
    // leader: the Leader (as Client#leader gives it) or null, as Go's and
    // Python's observe give theirs; its fields stay on the item too.
    changed: (l) => push({ name, ...(l || {}), leader: l ? { name, ...l } : null }),
    ended: (err) => finish(err && err.code !== 'CANCELED' ? err : null),
  });
  const stop = () => {
    if (!ended) host.unwatch(op);
    finish(null);
  };
  const onAbort = () => stop();
  if (signal) signal.addEventListener('abort', onAbort, { once: true });
  const it = {
    next() {
      if (queue.length > 0) return Promise.resolve({ value: queue.shift(), done: false });
      if (ended) return failure ? Promise.reject(failure) : Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return() {
      stop();
      queue.length = 0;
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() { return it; },
  };
  return it;
}

/** Host methods of elections, added to the Host (lib/host.js). */
function install(Host) {
  /** Starts a WATCH; `on.changed(leader|null)` per LEADER, `on.ended(err)` at its DONE. */
  Host.prototype.watch = function watch(name, pollMs, on) {
    const ad = this.ad;
    if (P.strMax(name) + ROOM > ad.inCap) fits('name', name, P.LIMITS.resource.max);
    const op = this.request(P.encWatch(ad.mem(), ad.inOff, name, pollMs));
    this.ops.set(op, { kind: EV.WATCH, changed: on.changed, ended: on.ended, resolve() {}, reject() {} });
    hold(1); // a watch keeps the process alive, as a server's socket would
    drain();
    return op;
  };
  /** UNWATCH: its DONE ends it. */
  Host.prototype.unwatch = function unwatch(op) {
    if (this.dead || !this.ops.has(op)) return;
    this.event(P.encUnwatch, op);
  };
  /** A LEADER action. */
  Host.prototype.leaderChanged = function leaderChanged(op, leader) {
    const p = this.ops.get(op);
    if (p && p.kind === EV.WATCH) p.changed(leader);
  };
}

module.exports = { Leadership, campaign, leader, observe, install };
