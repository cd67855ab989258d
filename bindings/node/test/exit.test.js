'use strict';
// A process that ends normally while holding locks (with and without
// autoExtend) releases them on its way out: the keys are gone
// from every node long before their 60 s ttl; with the nodes down by then,
// the releases fail and the process still exits (each lock is tried once).
// The child (fixtures/exit-holder.js) runs with the backend under test.
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFile, spawn } = require('node:child_process');
const readline = require('node:readline');
const Redis = require('ioredis');
const { startNodes, eventually, assertNoUnhandled, BACKEND } = require('./helpers');

let nodes;
let redis;
before(async () => {
  nodes = await startNodes(3);
  redis = nodes.urls.map((u) => new Redis(u, { lazyConnect: false }));
});
after(async () => {
  for (const r of redis) r.disconnect();
  await nodes.stop();
  assertNoUnhandled(assert);
});

const valuesOf = (key) => Promise.all(redis.map((r) => r.get(key)));

function runHolder(prefix) {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [path.join(__dirname, 'fixtures', 'exit-holder.js'), nodes.urls.join(','), prefix],
      { timeout: 30000, env: { ...process.env, LIBLOCK_BACKEND: BACKEND } }, (err, stdout, stderr) => {
        if (err) reject(new Error(`the holder did not exit cleanly: ${err.message}\n${stderr}`));
        else resolve(JSON.parse(stdout.trim()));
      });
  });
}

test('a process that returns from its main holding locks (plain and autoExtend) releases them as it exits', async () => {
  const tokens = await runHolder('exit');
  assert.ok(tokens.plain && tokens.auto, JSON.stringify(tokens));
  // The ttl is 60 s: only a release made them go this soon.
  for (const key of ['exit:plain', 'exit:auto']) {
    await eventually(async () => (await valuesOf(key)).every((v) => v === null),
      { timeout: 5000, what: `${key} gone from every node (was ${JSON.stringify(await valuesOf(key))})` });
  }
});

test('with every node down at exit, the failed releases are not retried: the process still exits', async () => {
  const own = await startNodes(1);
  const child = spawn(process.execPath, [path.join(__dirname, 'fixtures', 'exit-holder.js'), own.urls[0], 'exit:down', 'wait-go'],
    { stdio: ['pipe', 'pipe', 'inherit'], env: { ...process.env, LIBLOCK_BACKEND: BACKEND } });
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  try {
    const line = await new Promise((resolve, reject) => {
      readline.createInterface({ input: child.stdout }).once('line', resolve);
      exited.then((r) => reject(new Error(`the holder exited first: ${JSON.stringify(r)}`)));
    });
    assert.ok(JSON.parse(line).plain);
    await own.kill(0);
    child.stdin.write('go\n');
    // Bounded by the node timeout (500 ms) per release round, not by the 60 s ttl.
    const r = await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve(null), 20000).unref())]);
    assert.deepEqual(r, { code: 0, signal: null }, 'the holder exits by itself, with status 0');
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await own.stop();
  }
});
