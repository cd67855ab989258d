'use strict';
// The wasm backend's Redis I/O, on the main thread: one ioredis connection
// per node per client, made from the client's `nodes` URLs, and the exec
// step of wasm/PROTOCOL.md §3: send each node its command, all nodes at
// once, every exchange (connect included) bounded by the request's
// timeout_ms, and answer one entry per node.
//
// Connections follow the core's transport: no reconnect loop of their own
// (a connection that failed, closed or timed out is dropped, and the next
// request dials once more, so a dead node costs a refused dial and a
// restarted one is used again at once), no offline queue, no retries (the
// module retries), and sockets unref()'d so an idle open client does not
// keep the process alive (the worker is ref()'d while a call is pending).
// A new client starts dialing its nodes at once, in the background.

let Redis = null; // ioredis, loaded on first use of the wasm backend

function loadRedis() {
  if (!Redis) Redis = require('ioredis');
  return Redis;
}

/** ioredis options for one node URL (the module has validated its syntax). */
function optionsFor(url) {
  const u = new URL(url);
  const base = {
    lazyConnect: true,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    autoResubscribe: false,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 0, // bounded by the exchange's own timer
  };
  if (u.protocol === 'unix:') return { ...base, path: decodeURIComponent(u.pathname) };
  const o = { ...base, host: u.hostname.replace(/^\[(.*)\]$/, '$1'), port: Number(u.port || 6379) };
  if (u.username) o.username = decodeURIComponent(u.username);
  if (u.password) o.password = decodeURIComponent(u.password);
  const db = u.pathname.replace(/^\//, '');
  if (db) o.db = Number(db);
  if (u.protocol === 'rediss:') o.tls = { servername: o.host };
  return o;
}

/** One node of one client: at most one live ioredis connection. */
class NodeConn {
  constructor(url) {
    this.url = url;
    this.options = null;
    this.redis = null;
    this.ready = null; // Promise of the dial in progress
  }

  #drop() {
    const r = this.redis;
    this.redis = null;
    this.ready = null;
    if (r) r.disconnect();
  }

  #dial() {
    if (!this.options) this.options = optionsFor(this.url);
    const R = loadRedis();
    const r = new R(this.options);
    // ioredis rejects a failed dial with "Connection is closed."; the
    // socket's own error (ECONNREFUSED …) says more, so it is kept.
    this.lastError = null;
    r.on('error', (e) => { if (this.redis === r) this.lastError = e; });
    r.on('end', () => { if (this.redis === r) { this.redis = null; this.ready = null; } });
    r.on('ready', () => { if (r.stream && r.stream.unref) r.stream.unref(); });
    this.redis = r;
    this.ready = r.connect();
    return this.ready;
  }

  /**
   * Sends one command. Resolves with a response entry ([kind, value]),
   * never rejects; `expired` tells whether the exchange's deadline passed.
   * @param {string[]} args
   * @param {{expired: boolean}} deadline
   */
  async send(args, deadline) {
    try {
      if (!this.redis || this.redis.status === 'end' || this.redis.status === 'close') this.#dial();
      if (this.redis.status !== 'ready') await this.ready;
      if (deadline.expired) return [3, 'i/o timeout'];
      const v = await this.redis.call(args[0], ...args.slice(1));
      if (deadline.expired) return [3, 'i/o timeout'];
      return entryOf(v);
    } catch (e) {
      if (deadline.expired) return [3, 'i/o timeout'];
      // A Redis error reply (ReplyError) keeps the connection; anything else
      // (refused, reset, closed) drops it: the next request dials again.
      if (e && e.name === 'ReplyError') return [3, errorText(e)];
      const cause = this.lastError || e;
      this.#drop();
      return [3, errorText(cause)];
    }
  }

  /**
   * Dials in the background (errors ignored: the first request dials again),
   * so that the first exchange, bounded by the node timeout, does not also
   * pay for the dial in a process whose code paths are still cold.
   */
  warm() {
    if (this.redis) return;
    this.#dial().catch(() => { /* the next request dials again */ });
  }

  /** Drops the connection after a timeout (a late answer must not be read as the next one's). */
  timedOut() { this.#drop(); }

  close() { this.#drop(); }
}

function entryOf(v) {
  if (v === null || v === undefined) return [0, null];
  if (typeof v === 'number') return [1, v];
  if (typeof v === 'string') return [2, v];
  if (Buffer.isBuffer(v)) return [2, v.toString('utf8')];
  return [3, `unexpected reply of type ${Array.isArray(v) ? 'array' : typeof v}`];
}

// The text of a failed exchange: a Redis error reply verbatim (it starts with
// the error code, e.g. NOSCRIPT, which the module relies on), otherwise the
// error's message (ECONNREFUSED …): never a URL, so never a password.
function errorText(e) {
  if (!e) return 'unknown error';
  const msg = e.message || String(e);
  return msg || (e.code ? String(e.code) : 'unknown error');
}

/** The connections of one client, in the config's node order. */
class NodeSet {
  constructor(urls) {
    this.conns = urls.map((u) => new NodeConn(u));
  }

  /** Starts dialing every node in the background. */
  warm() {
    for (const c of this.conns) c.warm();
  }

  /**
   * One exec step: cmds[i] (an array of strings, or null) to node i, all at
   * once, within timeoutMs. Resolves with one entry per node (null where
   * nothing was sent).
   * @param {number} timeoutMs
   * @param {(string[]|null)[]} cmds
   */
  exec(timeoutMs, cmds) {
    const deadline = { expired: false };
    const out = new Array(cmds.length).fill(null);
    let left = 0;
    return new Promise((resolve) => {
      let timer = null;
      const finish = () => {
        if (timer) clearTimeout(timer);
        left = 0;
        resolve(out);
      };
      for (let i = 0; i < cmds.length; i++) {
        const c = cmds[i];
        if (!c) continue;
        if (i >= this.conns.length) { out[i] = [3, 'no such node']; continue; }
        left++;
        this.conns[i].send(c, deadline).then((e) => {
          if (deadline.expired) return;
          out[i] = e;
          if (--left === 0) finish();
        });
      }
      if (left === 0) { resolve(out); return; }
      // When the timer fires, answers may already wait in the sockets (a
      // main-thread stall — a long GC, a busy callback — delays timers and
      // I/O alike, and timers run first): setImmediate runs after this
      // loop's I/O callbacks, so those answers count and only silent nodes
      // time out.
      timer = setTimeout(() => setImmediate(expire), timeoutMs);
      const expire = () => {
        if (left === 0) return;
        deadline.expired = true;
        for (let i = 0; i < cmds.length; i++) {
          if (cmds[i] && out[i] === null) {
            out[i] = [3, 'i/o timeout'];
            this.conns[i].timedOut();
          }
        }
        resolve(out);
      };
    });
  }

  close() {
    for (const c of this.conns) c.close();
  }
}

module.exports = { NodeSet, optionsFor };
