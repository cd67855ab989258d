'use strict';
// lib/dropped.js: a new Lock is registered with the dropped-lock
// FinalizationRegistry only if it is still unreleased DELAY_MS later; a
// lock released sooner never touches the registry. Against a recording
// registry (no engine, no node: the tracker only sees lock states); the
// real registry's release of a dropped lock is cleanup.test.js's.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { tracker } = require('../lib/dropped');
const { eventually } = require('./helpers');

/** A registry that records its calls. */
function recorder() {
  const calls = [];
  return {
    calls,
    register(target, held, token) { calls.push(['register', target, held, token]); },
    unregister(token) { calls.push(['unregister', token]); return true; },
  };
}

const state = (name) => ({ name, released: false, registered: false });

test('a lock released before the delay is never registered; one still held is, and its release unregisters it once', async () => {
  const reg = recorder();
  const t = tracker(reg);
  const quick = state('quick');
  const held = state('held');
  const quickLock = {};
  const heldLock = {};
  t.track(quickLock, quick);
  t.track(heldLock, held);
  // The quick lock's release completes (the host sets released, then calls forget).
  quick.released = true;
  t.forget(quick);
  assert.deepEqual(reg.calls, [], 'nothing registered or unregistered yet');
  // One batch, one flush: once the held lock is registered, the quick one was passed over.
  await eventually(() => reg.calls.length > 0, { what: 'the flush' });
  assert.deepEqual(reg.calls, [['register', heldLock, held, held]]);
  assert.equal(held.registered, true);
  assert.equal(quick.registered, false);
  held.released = true;
  t.forget(held);
  t.forget(held); // a second forget (close after a release) does nothing
  assert.deepEqual(reg.calls.slice(1), [['unregister', held]]);
  assert.equal(held.registered, false);
});

test('a lost (unreleased) lock is registered like a held one; every batch gets its own flush', async () => {
  const reg = recorder();
  const t = tracker(reg);
  const lost = { ...state('lost'), lost: true };
  t.track({}, lost);
  await eventually(() => reg.calls.length === 1, { what: 'the first flush' });
  assert.equal(lost.registered, true);
  const next = state('next');
  t.track({}, next);
  await eventually(() => reg.calls.length === 2, { what: 'the second flush' });
  assert.equal(next.registered, true);
});
