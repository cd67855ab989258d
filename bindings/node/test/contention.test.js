'use strict';
// Mutual exclusion across processes. Within one process, over one client and
// two, it is core/testkit/locktest's (SeedContention, TurnsAcrossClients, ...),
// run on both backends through bindings/interop/children/suite.js (make test-interop).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { execFile } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { startNodes, assertNoUnhandled } = require('./helpers');

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

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
