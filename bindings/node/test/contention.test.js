'use strict';
// Mutual exclusion under contention, within one process and across processes.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, withBackend } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

test('one process: 10 tasks x 20 sections on one resource never overlap', async () => {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 100 }));
  let inside = 0;
  let maxInside = 0;
  let sections = 0;
  const order = [];
  await Promise.all(Array.from({ length: 10 }, async (_, task) => {
    for (let i = 0; i < 20; i++) {
      const lock = await client.acquire('contended', { ttl: 5000, wait: 30000 });
      inside++;
      maxInside = Math.max(maxInside, inside);
      order.push(task);
      await new Promise((r) => setTimeout(r, 1));
      inside--;
      sections++;
      await lock.release();
    }
  }));
  assert.equal(maxInside, 1);
  assert.equal(sections, 200);
  assert.equal(new Set(order).size, 10, 'every task got its turns');
  await client.close();
  assert.deepEqual(await nodes.keys(), [[], [], []]);
});

test('one process, two clients (no shared wake-ups) never overlap', async () => {
  const a = new Client(withBackend({ nodes: nodes.urls }));
  const b = new Client(withBackend({ nodes: nodes.urls }));
  let inside = 0;
  let maxInside = 0;
  await Promise.all([a, b, a, b].map(async (c) => {
    for (let i = 0; i < 15; i++) {
      await c.using('contended2', { ttl: 5000, wait: 30000 }, async () => {
        inside++;
        maxInside = Math.max(maxInside, inside);
        await new Promise((r) => setTimeout(r, 1));
        inside--;
      });
    }
  }));
  assert.equal(maxInside, 1);
  await a.close();
  await b.close();
});

test('four processes contending never overlap', async () => {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'liblock-node-')), 'inside');
  const worker = path.join(__dirname, 'fixtures', 'worker.js');
  const run = () => new Promise((resolve, reject) => {
    execFile(process.execPath, [worker, nodes.urls.join(','), 'xproc', marker, '25'], { timeout: 60000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`worker failed: ${err.message}\n${stderr}`));
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
  const results = await Promise.all([run(), run(), run(), run()]);
  for (const r of results) {
    assert.equal(r.overlaps, 0);
    assert.equal(r.done, 25);
  }
  // Every release and close has returned, and close() waits for every node
  // request in flight: no node may hold the key. If one does, say whose
  // token it is (which process, which section, when) and its PTTL.
  const left = await nodes.keys();
  if (left.some((k) => k.length)) {
    const Redis = require('ioredis');
    const vals = await Promise.all(nodes.urls.map(async (u) => {
      const r = new Redis(u, { maxRetriesPerRequest: 1 });
      try { return [await r.get('xproc'), await r.pttl('xproc')]; } finally { r.disconnect(); }
    }));
    const whose = vals.map(([v]) => {
      for (const r of results) {
        const i = r.tokens.findIndex((t) => t[0] === v);
        if (i >= 0) return `pid ${r.pid} section ${i} (acquire ${r.tokens[i][1]}..${r.tokens[i][2]} ms, released ${r.tokens[i][3]} ms)`;
      }
      return v === null ? '-' : 'an unknown token';
    });
    assert.fail(`keys left: ${JSON.stringify(vals)}: ${whose.join('; ')}`);
  }
});
