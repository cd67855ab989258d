'use strict';
// A worker of the soak (core/soak_test.go, make soak): every primitive of the
// Node binding in a loop against the nodes it is given while the Go test
// injects faults, until its stdin closes. Every `every` ms, and once more
// after it closed its client, it prints one JSON line of its own samples:
//   {"t" (seconds since it started),"rss_mb","heap_mb","fds","threads","handles" (process.getActiveResourcesInfo()),
//    "ops","errors":{kind:n},"done"?}
// argv[2]: JSON {urls, backend ('native'|'wasm'), every (ms), prefix, leak?}; leak
// (the soak's negative control) keeps a timer alive every 100 operations.
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

const wait = 500;
const prims = [
  (i) => client.acquire(`m${i % 4}`, { ttl: 2000, wait }).then(hold),
  (i) => client.acquire(`a${i % 2}`, { ttl: 1000, wait, autoExtend: true }).then(hold),
  (i) => client.acquire(`f${i % 2}`, { ttl: 2000, wait, fence: true }).then(hold),
  () => client.acquire('s', { ttl: 2000, wait, permits: 3 }).then(hold),
  () => client.acquire('rw', { ttl: 2000, wait, mode: 'read' }).then(hold),
  () => client.acquire('rw', { ttl: 2000, wait, mode: 'write' }).then(hold),
  (i) => client.acquire([`x${i % 3}`, `y${i % 3}`], { ttl: 2000, wait }).then(hold),
  async (i) => {
    const ld = await client.campaign('e', { value: `node-${process.pid}-${i}`, ttl: 2000, wait });
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
    handles: process.getActiveResourcesInfo().length, ops, errors, ...(done ? { done: true } : {}),
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
  leaked.forEach(clearInterval);
  await client.close();
  sample(true);
})().catch((e) => { console.error(e); process.exit(1); });
