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

const net = require('node:net');
const { parseNodeURL, handshakeSteps, scrub } = require('./node-url');

/**
 * ioredis options for one node: where to connect and how (TLS), from the
 * settings the native backend reads from the same URL (lib/node-url.js).
 * ioredis itself sends nothing on a new connection (no AUTH, SELECT, CLIENT
 * SETINFO or ready check): NodeConn runs the native backend's handshake.
 */
function optionsFor(spec) {
  const base = {
    lazyConnect: true,
    enableOfflineQueue: false,
    enableReadyCheck: false,
    disableClientInfo: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    autoResubscribe: false,
    autoResendUnfulfilledCommands: false,
    connectTimeout: 0, // bounded by the exchange's own timer
  };
  if (spec.network === 'unix') return { ...base, path: spec.path };
  const o = { ...base, host: spec.host, port: spec.port };
  if (spec.tls) {
    // go-redis: tls.Config{ServerName: host, MinVersion: TLS 1.2,
    // InsecureSkipVerify: skip_verify}. Node checks the certificate against
    // servername, else host; an IP address is not a server name (RFC 6066),
    // so for one only host is given, and Node checks the IP SANs as Go does.
    o.tls = { minVersion: 'TLSv1.2', rejectUnauthorized: !spec.tls.skipVerify };
    if (!net.isIP(spec.host)) o.tls.servername = spec.tls.servername;
  }
  return o;
}

/** One node of one client: at most one live ioredis connection. */
class NodeConn {
  /** @param {string} url  @param {object} spec what parseNodeURL made of it */
  constructor(url, spec) {
    this.url = url;
    this.spec = spec;
    this.options = null;
    this.redis = null;
    this.ready = null; // Promise of the dial (connect, then handshake) in progress
    this.up = false; // the current connection's handshake has succeeded
  }

  #drop() {
    const r = this.redis;
    this.redis = null;
    this.ready = null;
    this.up = false;
    if (r) r.disconnect();
  }

  #dial() {
    if (!this.options) this.options = optionsFor(this.spec);
    const R = loadRedis();
    const r = new R(this.options);
    // ioredis rejects a failed dial with "Connection is closed."; the
    // socket's own error (ECONNREFUSED …) says more, so it is kept.
    this.lastError = null;
    r.on('error', (e) => { if (this.redis === r) this.lastError = e; });
    r.on('end', () => { if (this.redis === r) { this.redis = null; this.ready = null; this.up = false; } });
    r.on('ready', () => { if (r.stream && r.stream.unref) r.stream.unref(); });
    this.redis = r;
    this.ready = r.connect().then(() => this.#handshake(r));
    return this.ready;
  }

  // The native backend's handshake (core/resp_conn.go): each command
  // answered before the next, a refusal fails the dial ("AUTH refused:
  // WRONGPASS …", the connection dropped), and nothing else is sent before.
  async #handshake(r) {
    for (const step of handshakeSteps(this.spec)) {
      try {
        await r.call(step[0], ...step.slice(1));
      } catch (e) {
        const err = new Error(scrub(`${step[0]} refused: ${errorText(e)}`, this.url));
        if (this.redis === r) {
          this.#drop(); // never used after a failed AUTH or SELECT
          this.lastError = err;
        } else {
          r.disconnect();
        }
        throw err;
      }
    }
    if (this.redis === r) this.up = true;
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
      // Not ioredis's 'ready': that comes before the handshake has run.
      if (!this.up) await this.ready;
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
      return [3, scrub(errorText(cause), this.url)];
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
  /**
   * @param {string[]} urls the client's node URLs
   * @param {object[]} specs parseNodeURL of each (the caller reports a bad one)
   */
  constructor(urls, specs) {
    this.conns = urls.map((u, i) => new NodeConn(u, specs[i]));
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

module.exports = { NodeSet, optionsFor, parseNodeURL };
