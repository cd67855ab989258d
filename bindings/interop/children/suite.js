'use strict';
// The Node side of the shared behaviour suite (core/testkit/locktest, run
// through core/testkit/locktest/remote by bindings/interop/suite_test.go):
// clients and locks of the Node binding driven by JSON lines on stdin, one
// answer line per request on stdout, and a {"event":"lost"} line when a lock
// is lost. The protocol is described in core/testkit/locktest/remote/remote.go.
//
//   node suite.js native|wasm
//
// Requests run concurrently (each is a promise); a cancel line aborts an
// acquire's AbortSignal. At the end of its input it closes every client and
// exits.
const readline = require('node:readline');
const path = require('node:path');
const { Client } = require(path.join(__dirname, '..', '..', 'node'));

const backend = process.argv[2] || 'native';
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');

const clients = new Map(); // id -> Client
const locks = new Map(); // id -> { lock, ttl, reported }
const aborts = new Map(); // request id -> AbortController of a pending acquire
let nextId = 0;

// The engine's name of an argument (locktest's ArgumentError.Arg) from the
// binding's message, which speaks the caller's names (nodeTimeout, ...).
const ENGINE_NAMES = { nodeTimeout: 'node_timeout', keyPrefix: 'key_prefix', driftFactor: 'drift_factor', autoExtend: 'auto_extend' };
function wireError(e) {
  if (!e || typeof e.code !== 'string') return { code: 'FOREIGN', message: String(e && e.stack || e) }; // not the binding's
  const out = { code: e.code, message: String(e.message) };
  if (e.code === 'INVALID_ARGUMENT') {
    const m = /^liblock: invalid argument: ([^:\s]+):/.exec(e.message);
    out.arg = m ? (ENGINE_NAMES[m[1]] || m[1]) : '';
  }
  if (e.code === 'UNAVAILABLE' && e.nodes) out.nodes = e.nodes.map((n) => ({ node: n.node, addr: n.addr, cause: n.cause }));
  return out;
}

// Reports a loss the binding knows of, once, before the answer that may
// report it (a LOST extend, release).
function noteLost(id) {
  const l = locks.get(id);
  if (l && !l.reported && l.lock.lost) {
    l.reported = true;
    say({ event: 'lost', lock: id });
  }
}

// track keeps a lock under a fresh id and reports its loss.
function track(lock, ttl) {
  const id = ++nextId;
  locks.set(id, { lock, ttl, reported: false });
  lock.signal.addEventListener('abort', () => noteLost(id), { once: true });
  return id;
}

const observers = new Map(); // observer id (the Go side's) -> AbortController

function lockOf(req) {
  const l = locks.get(req.lock);
  if (!l) throw new Error(`unknown lock ${req.lock}`);
  return l;
}

const ops = {
  async client(req) {
    const opts = { nodes: req.nodes, backend };
    if (req.nodeTimeout !== undefined) opts.nodeTimeout = req.nodeTimeout;
    if (req.driftFactor !== undefined) opts.driftFactor = req.driftFactor;
    if (req.keyPrefix) opts.keyPrefix = req.keyPrefix;
    if (req.owner) opts.owner = req.owner;
    const id = ++nextId;
    clients.set(id, new Client(opts));
    return { client: id };
  },
  async acquire(req) {
    const client = clients.get(req.client);
    const ac = new AbortController();
    aborts.set(req.id, ac);
    try {
      const opts = { ttl: req.ttl, wait: req.wait, signal: ac.signal };
      if (req.autoExtend) opts.autoExtend = true;
      if (req.fence) opts.fence = true;
      if (req.token) opts.token = req.token;
      if (req.permits !== undefined) opts.permits = req.permits;
      if (req.mode !== undefined) opts.mode = req.mode;
      const lock = await client.acquire(req.resources !== undefined ? req.resources : req.resource, opts);
      const id = track(lock, req.ttl);
      // No slot: the binding's Lock does not expose a permit's slot.
      return { lock: id, key: lock.key, token: lock.token, ttl: req.ttl, validity: lock.validity, fence: lock.fence, reentered: lock.reentered };
    } finally {
      aborts.delete(req.id);
    }
  },
  async extend(req) {
    const l = lockOf(req);
    try {
      await l.lock.extend(req.ttl);
    } finally {
      noteLost(req.lock);
    }
    l.ttl = req.ttl;
    return { validity: l.lock.validity };
  },
  async release(req) {
    try {
      await lockOf(req).lock.release();
    } finally {
      noteLost(req.lock);
    }
    return {};
  },
  async validity(req) {
    noteLost(req.lock);
    return { validity: lockOf(req).lock.validity };
  },
  async inspect(req) {
    const got = await clients.get(req.client).inspect(req.resource, req.permits !== undefined ? { permits: req.permits } : undefined);
    const out = { held: got.held, validity: got.validity, owner: got.owner, nodes: got.nodes || [] };
    if (got.holders) out.holders = got.holders.map((h) => ({ slot: h.slot, owner: h.owner, validity: h.validity }));
    return out;
  },
  async campaign(req) {
    const client = clients.get(req.client);
    const ac = new AbortController();
    aborts.set(req.id, ac);
    try {
      const opts = { value: req.value, ttl: req.ttl, signal: ac.signal };
      if (req.wait !== undefined) opts.wait = req.wait;
      const ld = await client.campaign(req.name, opts);
      return { lock: track(ld.lock, req.ttl), term: ld.term, value: ld.value };
    } finally {
      aborts.delete(req.id);
    }
  },
  async observe(req) {
    const ac = new AbortController();
    const it = clients.get(req.client).observe(req.name, { signal: ac.signal, poll: 500 });
    observers.set(req.observer, ac);
    (async () => {
      try {
        for await (const l of it) {
          say({ event: 'leader', observer: req.observer, name: req.name, term: l.term || 0, value: l.value || '', owner: l.owner || '', validity: l.leader ? l.validity : null });
        }
      } catch (e) {
        // ended by the client's close
      }
      observers.delete(req.observer);
      say({ event: 'observed', observer: req.observer });
    })();
    return {};
  },
  async unobserve(req) {
    observers.get(req.observer)?.abort();
    return {};
  },
  async close(req) {
    await clients.get(req.client).close();
    return {};
  },
};

async function serve(req) {
  let out;
  try {
    out = await ops[req.op](req);
  } catch (e) {
    out = { error: wireError(e) };
  }
  say({ id: req.id, ...out });
}

const pending = new Set();
const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  const req = JSON.parse(line);
  if (req.op === 'cancel') {
    aborts.get(req.id)?.abort(new Error('canceled by the Go side'));
    return;
  }
  if (!ops[req.op]) {
    say({ id: req.id, error: { code: 'PROTOCOL', message: `unknown op ${JSON.stringify(req.op)}` } });
    return;
  }
  const p = serve(req).catch((e) => { console.error(e); process.exit(1); });
  pending.add(p);
  p.finally(() => pending.delete(p));
});
rl.on('close', async () => {
  await Promise.all(pending);
  await Promise.all([...clients.values()].map((c) => c.close()));
  process.exit(0);
});
