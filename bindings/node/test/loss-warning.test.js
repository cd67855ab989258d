'use strict';
// A lost lock is never silent: with nobody on the 'liblock:log' diagnostics
// channel it is a process warning (code LIBLOCK_LOCK_LOST), printed on
// stderr by default; a subscriber to the channel replaces it. The text is
// the engine's, the same in every language: the resource, the reason and
// the count. Keys deleted on 2 of 3 real nodes under an auto-extended lock.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const Redis = require('ioredis');
const { Client } = require('..');
const { startNodes, assertNoUnhandled, eventually, withBackend, BACKEND } = require('./helpers');

const LOSS = 'held on at most 1 of 3 nodes (2 answered it is gone), quorum is 2';

let nodes;
before(async () => { nodes = await startNodes(3); });
after(async () => { await nodes.stop(); assertNoUnhandled(assert); });

/** Acquires resource auto-extended, deletes its key on nodes 0 and 1, waits for the loss. */
async function loseAutoExtended(resource) {
  const client = new Client(withBackend({ nodes: nodes.urls, nodeTimeout: 1000 }));
  try {
    const lock = await client.acquire(resource, { ttl: 3000, autoExtend: true });
    // acquire() returns at a quorum: the third grant may still be on its way, and a DEL
    // that overtook it would leave the lock held on 2 of 3.
    for (const url of nodes.urls) {
      const r = new Redis(url, { maxRetriesPerRequest: 1 });
      try {
        await eventually(async () => (await r.exists(resource)) === 1, { what: `the key on ${url}`, timeout: 10000 });
      } finally { r.disconnect(); }
    }
    for (const url of nodes.urls.slice(0, 2)) {
      const r = new Redis(url, { maxRetriesPerRequest: 1 });
      try { assert.equal(await r.del(resource), 1); } finally { r.disconnect(); }
    }
    await eventually(() => lock.lost, { what: 'the lock is lost', timeout: 20000 });
    return lock.signal.reason;
  } finally {
    await client.close();
  }
}

test(`[${BACKEND}] a loss is a process warning with a stable code, naming the resource, the reason and the count`, async () => {
  const warnings = [];
  const onWarning = (w) => { if (w.name === 'LiblockWarning') warnings.push(w); };
  process.on('warning', onWarning);
  try {
    const reason = await loseAutoExtended('loss:warn');
    assert.match(reason.message, new RegExp(LOSS.replace(/[()]/g, '\\$&')));
    await eventually(() => warnings.length > 0, { what: 'the warning' });
    assert.equal(warnings.length, 1, 'one warning per loss');
    const [w] = warnings;
    assert.equal(w.code, 'LIBLOCK_LOCK_LOST');
    assert.match(w.message, /^liblock: lock lost: /);
    assert.ok(w.message.includes(LOSS), w.message);
    assert.ok(w.message.includes('"loss:warn"'), w.message);
  } finally {
    process.off('warning', onWarning);
  }
});

test(`[${BACKEND}] a subscriber to the liblock:log channel replaces the process warning`, async () => {
  const records = [];
  const warnings = [];
  const onRecord = (r) => records.push(r);
  const onWarning = (w) => { if (w.name === 'LiblockWarning') warnings.push(w); };
  dc.subscribe('liblock:log', onRecord);
  process.on('warning', onWarning);
  try {
    await loseAutoExtended('loss:channel');
    await eventually(() => records.some((r) => r.msg === 'liblock: lock lost'), { what: 'the record' });
    const lost = records.filter((r) => r.msg === 'liblock: lock lost');
    assert.equal(lost.length, 1, 'one record per loss');
    assert.equal(lost[0].level, 'warn');
    assert.equal(lost[0].resource, 'loss:channel');
    assert.ok(lost[0].error.includes(LOSS), lost[0].error);
    // A lost auto-extension is told once, by the loss.
    assert.equal(records.filter((r) => r.msg === 'liblock: auto-extension failed').length, 0);
    // (process warnings are emitted on the next tick: one would be there by now)
    await new Promise((r) => setImmediate(r));
    assert.equal(warnings.length, 0, 'no process warning with a subscriber');
  } finally {
    dc.unsubscribe('liblock:log', onRecord);
    process.off('warning', onWarning);
  }
});
