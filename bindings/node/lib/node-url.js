'use strict';
// How the wasm backend reads a node URL: exactly what the native backend
// does with it. The native backend (core's RESP transport) parses every URL
// with go-redis v9.23.0's ParseURL (Go's net/url underneath) and uses the
// address, user name, password, database, TLS settings (skip_verify) and
// client_name; go-redis's pool, retry and timeout parameters are checked
// and ignored. This file ports that: parseNodeURL returns the same
// connection settings, or throws go-redis's very message for a URL it
// rejects. WHATWG `new URL()` is not used: it reads several forms
// differently (credentials on unix URLs, IPv6 zones, percent-escapes in
// hosts, ports above 65535), and the URLs here are the ones liblock.wasm
// has already accepted, which are exactly those Go's url.Parse accepts.

/** A URL go-redis rejects; the message is go-redis's. */
class NodeURLError extends Error {}

// ---------------------------------------------------------------- net/url

const isHex = (c) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

// Go's url.unescape: %XX to bytes ('+' to a space in a query component).
// The URL has passed url.Parse, so escapes are well formed outside the
// query; in the query a bad escape drops the pair (url.ParseQuery).
function unescape(s, query) {
  const b = Buffer.from(s, 'utf8');
  const out = Buffer.alloc(b.length);
  let n = 0;
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c === 0x25) {
      if (i + 2 >= b.length || !isHex(b[i + 1]) || !isHex(b[i + 2])) return null;
      out[n++] = parseInt(String.fromCharCode(b[i + 1], b[i + 2]), 16);
      i += 2;
    } else if (c === 0x2b && query) {
      out[n++] = 0x20;
    } else {
      out[n++] = c;
    }
  }
  return out.subarray(0, n);
}
const text = (buf) => buf.toString('utf8');

// url.getScheme: the scheme, or '' when the URL has none.
function splitScheme(raw) {
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (/[a-zA-Z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) { if (i === 0) return ['', raw]; continue; }
    if (c === ':') return [raw.slice(0, i), raw.slice(i + 1)];
    return ['', raw];
  }
  return ['', raw];
}

/**
 * Go's url.Parse, reduced to the fields go-redis reads: scheme, user
 * (username, password as bytes; hasUser), hostname, port, path (decoded),
 * rawQuery.
 */
function goURL(raw) {
  const u = { scheme: '', hasUser: false, username: Buffer.alloc(0), password: Buffer.alloc(0), host: '', hostname: '', port: '', path: '', rawQuery: '' };
  let rest = raw.split('#')[0];
  let scheme;
  [scheme, rest] = splitScheme(rest);
  u.scheme = scheme.toLowerCase();
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    rest = rest.slice(0, -1);
  } else {
    const q = rest.indexOf('?');
    if (q >= 0) { u.rawQuery = rest.slice(q + 1); rest = rest.slice(0, q); }
  }
  if (!rest.startsWith('/')) return u; // opaque: no host, no path
  if ((u.scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    let authority = rest.slice(2);
    rest = '';
    const slash = authority.indexOf('/');
    if (slash >= 0) { rest = authority.slice(slash); authority = authority.slice(0, slash); }
    const at = authority.lastIndexOf('@');
    u.host = text(unescape(authority.slice(at + 1)) || Buffer.alloc(0));
    [u.hostname, u.port] = splitHostPort(u.host);
    if (at >= 0) {
      const userinfo = authority.slice(0, at);
      const colon = userinfo.indexOf(':');
      u.hasUser = true;
      if (colon < 0) {
        u.username = unescape(userinfo) || Buffer.alloc(0);
      } else {
        u.username = unescape(userinfo.slice(0, colon)) || Buffer.alloc(0);
        u.password = unescape(userinfo.slice(colon + 1)) || Buffer.alloc(0);
      }
    }
  }
  u.path = text(unescape(rest) || Buffer.alloc(0));
  return u;
}

const validPort = (p) => p === '' || /^:[0-9]*$/.test(p);

// url.URL's Hostname() and Port().
function splitHostPort(hostPort) {
  let host = hostPort;
  let port = '';
  const colon = host.lastIndexOf(':');
  if (colon !== -1 && validPort(host.slice(colon))) { port = host.slice(colon + 1); host = host.slice(0, colon); }
  if (host.startsWith('[') && host.endsWith(']')) host = host.slice(1, -1);
  return [host, port];
}

// url.ParseQuery (errors ignored, as url.URL.Query() does): key -> values.
function parseQuery(raw) {
  const m = new Map();
  for (const pair of raw.split('&')) {
    if (pair.includes(';') || pair === '') continue;
    const eq = pair.indexOf('=');
    const k = unescape(eq < 0 ? pair : pair.slice(0, eq), true);
    const v = unescape(eq < 0 ? '' : pair.slice(eq + 1), true);
    if (k === null || v === null) continue;
    const key = text(k);
    if (!m.has(key)) m.set(key, []);
    m.get(key).push(text(v));
  }
  return m;
}

// ---------------------------------------------------------------- strconv, time

// strconv.Quote, for the messages: ASCII exactly, other printable runes
// kept, the rest escaped.
function goQuote(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else if (c === 7) out += '\\a';
    else if (c === 8) out += '\\b';
    else if (c === 12) out += '\\f';
    else if (c === 10) out += '\\n';
    else if (c === 13) out += '\\r';
    else if (c === 9) out += '\\t';
    else if (c === 11) out += '\\v';
    else if (c === 0xfffd) out += '\\x' + [...Buffer.from(ch)].map((b) => b.toString(16).padStart(2, '0')).join('\\x');
    else if (c >= 0x80 && /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch)) out += ch;
    else if (c < 0x80) out += '\\x' + c.toString(16).padStart(2, '0');
    else if (c < 0x10000) out += '\\u' + c.toString(16).padStart(4, '0');
    else out += '\\U' + c.toString(16).padStart(8, '0');
  }
  return out + '"';
}

// time's own quote (time: invalid duration "…"): non-ASCII and control
// bytes as \xNN.
function timeQuote(s) {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0);
    if (c >= 0x80 || c < 0x20) out += [...Buffer.from(ch)].map((b) => '\\x' + b.toString(16).padStart(2, '0')).join('');
    else out += (ch === '"' || ch === '\\' ? '\\' : '') + ch;
  }
  return out + '"';
}

const INT64_MAX = (1n << 63n) - 1n;

/** strconv.Atoi: [value, null] or [0, error text]. */
function atoi(s) {
  const syntax = `strconv.Atoi: parsing ${goQuote(s)}: invalid syntax`;
  if (!/^[+-]?[0-9]+$/.test(s)) return [0, syntax];
  const v = BigInt(s);
  if (v > INT64_MAX || v < -INT64_MAX - 1n) return [0, `strconv.Atoi: parsing ${goQuote(s)}: value out of range`];
  return [Number(v), null];
}

const UNITS = { ns: 1n, us: 1000n, 'µs': 1000n, 'μs': 1000n, ms: 1000000n, s: 1000000000n, m: 60000000000n, h: 3600000000000n };

/** time.ParseDuration's acceptance: null when valid, else its error text. */
function parseDurationError(orig) {
  const bad = `time: invalid duration ${timeQuote(orig)}`;
  let s = orig;
  let neg = false;
  if (s !== '' && (s[0] === '-' || s[0] === '+')) { neg = s[0] === '-'; s = s.slice(1); }
  if (s === '0') return null;
  if (s === '') return bad;
  let total = 0n;
  while (s !== '') {
    const m = /^([0-9]*)(?:\.([0-9]*))?/.exec(s);
    const int = m[1];
    const frac = m[2];
    if (int === '' && (frac === undefined || frac === '')) return bad;
    s = s.slice(m[0].length);
    const whole = BigInt(int || '0');
    if (whole > (1n << 63n)) return bad; // leadingInt's overflow, before the unit is read
    if (!/^[^0-9.]/.test(s)) return `time: missing unit in duration ${timeQuote(orig)}`;
    const u = /^[^0-9.]*/.exec(s)[0];
    if (!(u in UNITS)) return `time: unknown unit ${timeQuote(u)} in duration ${timeQuote(orig)}`;
    s = s.slice(u.length);
    const unit = UNITS[u];
    if (whole > (1n << 63n) / unit) return bad;
    let v = whole * unit;
    if (frac) v += (BigInt(frac) * unit) / 10n ** BigInt(frac.length);
    total += v;
    if (total > (1n << 63n)) return bad;
  }
  if (total > INT64_MAX && !neg) return bad;
  return null;
}

// ---------------------------------------------------------------- go-redis ParseURL

// go-redis's queryOptions: each read removes the key, so that what is left
// is reported as unexpected; the first bad value is the error.
class Query {
  constructor(raw) { this.q = parseQuery(raw); this.err = null; }
  has(k) { return (this.q.get(k) || []).length > 0; }
  string(k) {
    const vs = this.q.get(k);
    if (!vs || vs.length === 0) return '';
    this.q.delete(k);
    return vs[vs.length - 1];
  }
  int(k) {
    const s = this.string(k);
    if (s === '') return 0;
    const [v, e] = atoi(s);
    if (e && !this.err) this.err = `redis: invalid ${k} number: ${e}`;
    return v;
  }
  duration(k) {
    const s = this.string(k);
    if (s === '' || !atoi(s)[1]) return;
    const e = parseDurationError(s);
    if (e && !this.err) this.err = `redis: invalid ${k} duration: ${e}`;
  }
  bool(k) {
    const s = this.string(k);
    if (s === 'true' || s === '1') return true;
    if (s === 'false' || s === '0' || s === '') return false;
    if (!this.err) this.err = `redis: invalid ${k} boolean: expected true/false/1/0 or an empty string, got ${goQuote(s)}`;
    return false;
  }
  remaining() { return [...this.q.keys()].sort(); }
}

function connParams(u, o) {
  const q = new Query(u.rawQuery);
  const db = q.string('db');
  if (db !== '') {
    const [v, e] = atoi(db);
    if (e) throw new NodeURLError(`redis: invalid database number: ${e}`);
    o.db = v;
  }
  q.int('protocol'); // the RESP transport speaks RESP2 whatever this says
  o.clientName = q.string('client_name');
  // Checked like go-redis does, and ignored: the node timeout governs
  // every exchange, and there is one connection per node.
  q.int('max_retries');
  for (const k of ['min_retry_backoff', 'max_retry_backoff', 'dial_timeout', 'read_timeout', 'write_timeout']) q.duration(k);
  q.bool('pool_fifo');
  q.int('pool_size');
  q.duration('pool_timeout');
  for (const k of ['min_idle_conns', 'max_idle_conns', 'max_active_conns', 'max_concurrent_dials',
    'pipeline_pool_size', 'pipeline_read_buffer_size', 'pipeline_write_buffer_size']) q.int(k);
  q.duration(q.has('conn_max_idle_time') ? 'conn_max_idle_time' : 'idle_timeout');
  q.duration(q.has('conn_max_lifetime') ? 'conn_max_lifetime' : 'max_conn_age');
  if (q.has('conn_max_lifetime_jitter')) q.duration('conn_max_lifetime_jitter');
  if (o.tls && q.has('skip_verify')) o.tls.skipVerify = q.bool('skip_verify');
  if (q.err) throw new NodeURLError(q.err);
  const left = q.remaining();
  if (left.length > 0) throw new NodeURLError(`redis: unexpected option: ${left.join(', ')}`);
  return o;
}

/**
 * What the native backend connects to for one node URL (one that
 * liblock.wasm accepted): { network: 'tcp'|'unix', host, port, path, addr,
 * username, password (Buffers: the bytes the URL encodes), db, clientName,
 * tls: null | { servername, skipVerify } }. Throws NodeURLError with
 * go-redis's message for a URL that go-redis rejects.
 * @param {string} raw
 */
function parseNodeURL(raw) {
  const u = goURL(raw);
  const o = { network: 'tcp', host: '', port: 0, path: '', addr: '', username: u.username, password: u.password, db: 0, clientName: '', tls: null };
  switch (u.scheme) {
    case 'redis':
    case 'rediss': {
      const host = u.hostname || 'localhost';
      const port = u.port || '6379';
      o.host = host;
      o.port = Number(port); // Go dials the number as written: 65536 and up fail at dial
      o.portText = port;
      o.addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
      const f = u.path.split('/').filter((x) => x !== '');
      if (f.length === 1) {
        const [v, e] = atoi(f[0]);
        if (e) throw new NodeURLError(`redis: invalid database number: ${goQuote(f[0])}`);
        o.db = v;
      } else if (f.length > 1) {
        throw new NodeURLError(`redis: invalid URL path: ${u.path}`);
      }
      if (u.scheme === 'rediss') o.tls = { servername: host, skipVerify: false };
      return connParams(u, o);
    }
    case 'unix':
      if (u.path.trim() === '') throw new NodeURLError('redis: empty unix socket path');
      o.network = 'unix';
      o.path = u.path;
      o.addr = u.path;
      return connParams(u, o);
    default:
      throw new NodeURLError(`redis: invalid URL scheme: ${u.scheme}`);
  }
}

/** core's scrub: a URL's password replaced by xxxxx in a message that might repeat it. */
function scrub(msg, raw) {
  const i = raw.indexOf('://');
  if (i < 0) return msg;
  const rest = raw.slice(i + 3);
  const at = rest.lastIndexOf('@');
  if (at < 0) return msg;
  const colon = rest.slice(0, at).indexOf(':');
  if (colon < 0) return msg;
  const pw = rest.slice(colon + 1, at);
  return pw === '' ? msg : msg.split(pw).join('xxxxx');
}

/**
 * The commands a new connection sends before its first use, as the native
 * backend's: AUTH, SELECT, CLIENT SETNAME as the URL asks, else PING (a
 * frozen node still accepts connections; a command must not be queued on
 * one before it has answered anything).
 * @returns {Array<Array<string|Buffer>>}
 */
function handshakeSteps(o) {
  const steps = [];
  if (o.password.length > 0 && o.username.length > 0) steps.push(['AUTH', o.username, o.password]);
  else if (o.password.length > 0) steps.push(['AUTH', o.password]);
  if (o.db !== 0) steps.push(['SELECT', String(o.db)]);
  if (o.clientName !== '') steps.push(['CLIENT', 'SETNAME', o.clientName]);
  if (steps.length === 0) steps.push(['PING']);
  return steps;
}

module.exports = { parseNodeURL, handshakeSteps, scrub, NodeURLError, goQuote };
