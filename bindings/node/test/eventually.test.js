'use strict';
// The tests' one wait for a condition (helpers.eventually): it polls until
// the condition holds, and fails, naming it, when it never does (the
// negative control: a helper that passed anyway would hide every timeout).
const { test } = require('node:test');
const assert = require('node:assert/strict');
const { eventually } = require('./helpers');

test('eventually polls until the condition holds and returns its value', async () => {
  let checks = 0;
  const t0 = Date.now();
  const v = await eventually(() => (++checks >= 3 ? 'done' : null), { interval: 5, timeout: 2000 });
  assert.equal(v, 'done');
  assert.equal(checks, 3);
  assert.ok(Date.now() - t0 < 2000);
});

test('eventually awaits an async condition', async () => {
  let checks = 0;
  assert.equal(await eventually(async () => ++checks === 2, { interval: 1 }), true);
});

test('eventually fails, naming what it waited for, when the condition never holds', async () => {
  const t0 = Date.now();
  await assert.rejects(eventually(() => false, { timeout: 30, interval: 5, what: 'the thing' }),
    /timed out after 30 ms waiting for the thing/);
  assert.ok(Date.now() - t0 >= 30, 'gave up before the deadline');
});
