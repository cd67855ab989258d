'use strict';
// A worker of the soak (core/soak_test.go, make soak): every primitive of the
// Node binding in a loop against the nodes it is given while the Go test
// injects faults, until its stdin closes. Every `every` ms, and once more
// after it closed its client, it prints one JSON line of its own samples:
//   {"t" (seconds since it started),"rss_mb","heap_mb","fds","threads","handles" (process.getActiveResourcesInfo()),
//    "ops","errors":{kind:n},"done"?}
// It times every acquire and campaign: one that returns later than wait_ms +
// allow_ms is printed at once as {"late":{"prim","took_ms","outcome","at" (Unix s),
// "stall_ms" (how late its 25 ms lag probe ran within the span)}},
// and each sample carries "timed":{prim:{"n","max_ms"}}.
// argv[2]: JSON {urls, backend ('native'|'wasm'), every (ms), prefix, wait_ms, allow_ms,
// leak?, overrun?}; leak (the soak's negative control) keeps a timer alive every 100
// operations; overrun (the overrun check's) holds every 50th reader acquire inside its
// timed span past the allowance.
const fs = require('node:fs');
const path = require('node:path');
const { Client } = require(path.join(__dirname, '..'));

const cfg = JSON.parse(process.argv[2]);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const client = new Client({ nodes: cfg.urls, nodeTimeout: 200, backend: cfg.backend, keyPrefix: cfg.prefix });

let ops = 0;
const errors = {};
let running = true;
process.stdin.on('end', () => { running = false; });
process.stdin.resume();

const leaked = [];
function note(e) {
  if (!e) {
    ops++;
    if (cfg.leak && ops % 100 === 0) leaked.push(setInterval(() => {}, 1e9));
    return;
  }
  const kind = e.code || e.name || 'other';
  errors[kind] = (errors[kind] || 0) + 1;
}

async function hold(lock) {
  if (Math.random() < 0.25) {
    try { await lock.extend(2000); } catch (e) { note(e); }
  }
  await lock.release();
}

const wait = cfg.wait_ms;
const timed = {};
// The lag probe: a 25 ms interval's lateness is time the event loop could
// not run (a loaded machine, or something blocking it). An overrun carries
// the stall within its span.
const LAG_EVERY = 25;
const lagEnds = [];
const lagLags = [];
let lagLast = performance.now();
const lagProbe = setInterval(() => {
  const now = performance.now();
  const l = now - lagLast - LAG_EVERY;
  lagLast = now;
  if (l > 1) {
    lagEnds.push(now); lagLags.push(l);
    if (lagEnds.length > 4096) { lagEnds.splice(0, 2048); lagLags.splice(0, 2048); }
  }
}, LAG_EVERY);
// The probe's lateness within [from, to], its current wake-up included when
// it is overdue at `to` (the loop may end the acquire before it runs the probe).
function stalled(from, to) {
  let sum = 0;
  const overlap = (start, end) => { if (end > from && start < to) sum += Math.min(end, to) - Math.max(start, from); };
  for (let i = 0; i < lagEnds.length; i++) overlap(lagEnds[i] - lagLags[i], lagEnds[i]);
  overlap(lagLast + LAG_EVERY, to);
  return sum;
}
// timedCall times one acquire (or campaign) of the primitive prim, whatever
// its outcome, against the wait and the allowance.
async function timedCall(prim, call) {
  const t0 = performance.now();
  const st = (timed[prim] = timed[prim] || { n: 0, max_ms: 0 });
  const n = ++st.n;
  let outcome = 'acquired';
  try {
    return await call();
  } catch (e) {
    outcome = `${e.code || e.name}: ${String(e.message).slice(0, 300)}`;
    throw e;
  } finally {
    if (cfg.overrun && prim === 'read' && n % 50 === 0) {
      await new Promise((r) => setTimeout(r, 2 * (wait + cfg.allow_ms))); // the negative control's overrun
    }
    const now = performance.now();
    const took = now - t0;
    st.max_ms = Math.max(st.max_ms, took);
    if (took > wait + cfg.allow_ms) {
      say({ late: { prim, took_ms: took, outcome, at: Date.now() / 1000, stall_ms: stalled(t0, now) } });
    }
  }
}
const acquire = (prim, res, opts) => timedCall(prim, () => client.acquire(res, opts));
const prims = [
  (i) => acquire('mutex', `m${i % 4}`, { ttl: 2000, wait }).then(hold),
  (i) => acquire('auto-extended', `a${i % 2}`, { ttl: 1000, wait, autoExtend: true }).then(hold),
  (i) => acquire('fenced', `f${i % 2}`, { ttl: 2000, wait, fence: true }).then(hold),
  () => acquire('semaphore', 's', { ttl: 2000, wait, permits: 3 }).then(hold),
  () => acquire('read', 'rw', { ttl: 2000, wait, mode: 'read' }).then(hold),
  () => acquire('write', 'rw', { ttl: 2000, wait, mode: 'write' }).then(hold),
  (i) => acquire('multi', [`x${i % 3}`, `y${i % 3}`], { ttl: 2000, wait }).then(hold),
  async (i) => {
    const ld = await timedCall('campaign', () => client.campaign('e', { value: `node-${process.pid}-${i}`, ttl: 2000, wait }));
    await ld.resign();
  },
];

function status() {
  const m = {};
  for (const line of fs.readFileSync('/proc/self/status', 'utf8').split('\n')) {
    const [k, v] = line.split(':');
    if (v) m[k] = parseFloat(v);
  }
  return m;
}

function sample(done) {
  const mu = process.memoryUsage();
  say({
    t: performance.now() / 1000, rss_mb: mu.rss / (1 << 20), heap_mb: mu.heapUsed / (1 << 20),
    fds: fs.readdirSync('/proc/self/fd').length, threads: status().Threads,
    handles: process.getActiveResourcesInfo().length, ops, errors, timed, ...(done ? { done: true } : {}),
  });
}

(async () => {
  const timer = setInterval(() => sample(false), cfg.every);
  sample(false);
  // Two loops per primitive, as the Go worker runs.
  await Promise.all(prims.flatMap((run) => [0, 1].map(async (w) => {
    for (let i = w; running; i += 2) {
      try { await run(i); note(null); } catch (e) { note(e); }
    }
  })));
  clearInterval(timer);
  clearInterval(lagProbe);
  leaked.forEach(clearInterval);
  await client.close();
  sample(true);
})().catch((e) => { console.error(e); process.exit(1); });
