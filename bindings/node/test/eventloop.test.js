'use strict';
// 1,000 concurrent waiting acquires occupy no host thread: a timer keeps
// ticking on the event loop, and the libuv thread pool stays free for others.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { setMaxListeners } = require('node:events');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, eventually, withBackend, debug } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

test('1,000 waiting acquires: the event loop keeps ticking and the thread pool stays free', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 100 }));
  const holder = await client.acquire('loop:r', { ttl: 60000, wait: 0 });
  let last = performance.now();
  let phase = 'submitting';
  let ticks = 0;
  const gaps = []; // [ms, phase]
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push([now - last, phase]);
    last = now;
    ticks++;
  }, 10);
  const ac = new AbortController();
  setMaxListeners(2000, ac.signal); // one signal for 1,000 acquires
  const all = Promise.allSettled(Array.from({ length: 1000 }, (_, i) =>
    client.acquire('loop:r', { ttl: 60000, wait: 120000, signal: ac.signal })));
  // All 1,000 are accepted by the library and waiting.
  await eventually(() => debug().submitting === 0, { what: 'submissions' });
  phase = 'waiting';
  // The thread pool is not parked on the waits: 8 file reads (4 pool
  // threads) finish while the 1,000 wait. Were each wait a blocking call on a
  // pool thread, they could not finish before the waits end (120 s): a
  // deadline far below that, not a speed bound.
  let readsDone = 0;
  for (let i = 0; i < 8; i++) fs.promises.readFile(__filename, 'utf8').then(() => { readsDone++; });
  await eventually(() => readsDone === 8, { timeout: 30000, what: 'file reads while 1,000 acquires wait' });
  // The event loop keeps running timers while they wait: 20 more ticks of
  // the 10 ms interval (a loop blocked on a wait would give none before it ends).
  const ticks0 = ticks;
  await eventually(() => ticks - ticks0 >= 20, { timeout: 30000, what: 'timer ticks while 1,000 acquires wait' });
  assert.equal(debug().pending >= 1000, true, 'the 1,000 acquires were still waiting');
  phase = 'canceling';
  ac.abort();
  const results = await all;
  clearInterval(timer);
  assert.ok(results.every((r) => r.status === 'rejected' && r.reason.code === 'CANCELED'),
    'every waiter was canceled');
  // Diagnostics, not assertions (speed is measured by make bench): the
  // longest gaps between ticks.
  gaps.sort((a, b) => b[0] - a[0]);
  const [worst, worstAt] = gaps[0];
  const [p99, p99At] = gaps[Math.floor(gaps.length / 100)];
  console.log(`tick gaps: worst ${worst.toFixed(1)} ms (while ${worstAt}), p99 ${p99.toFixed(1)} ms (while ${p99At})`);
  await holder.release();
  await client.close();
  assert.deepEqual(await nodes.keys(), [[], [], []]);
  const d = debug();
  assert.equal(d.pending, 0);
});

test('100 waiters are all served, one at a time, when released in turn', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 100 }));
  let inside = 0;
  let maxInside = 0;
  let served = 0;
  const N = 100;
  await Promise.all(Array.from({ length: N }, async () => {
    const lock = await client.acquire('loop:served', { ttl: 10000, wait: 120000 });
    inside++;
    maxInside = Math.max(maxInside, inside);
    inside--;
    served++;
    await lock.release();
  }));
  assert.equal(served, N);
  assert.equal(maxInside, 1);
  await client.close();
});
