'use strict';
// node-example/demo.sh (what `make demo` runs) keeps working and tells its
// story: it starts its own 3 nodes through build/redisnodes when
// LIBLOCK_NODES is unset. The counterpart of bindings/python/tests/test_examples.py.
const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const os = require('node:os');
const fs = require('node:fs');
const { execFile } = require('node:child_process');
const { ROOT, BACKEND } = require('./helpers');

// The demo runs on the default backend; it does not exercise wasm.
test('node-example/demo.sh runs every example, 05_fencing included', { skip: BACKEND !== 'native' && 'the demo runs on the native backend' }, async () => {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('LIBLOCK_')));
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'll-demo-'));
  try {
    const { code, out } = await new Promise((resolve) => {
      execFile('bash', [path.join(ROOT, 'node-example', 'demo.sh')], { cwd, env, maxBuffer: 16 << 20, timeout: 110000 },
        (err, stdout, stderr) => resolve({ code: err ? (err.code ?? err.signal) : 0, out: stdout + stderr }));
    });
    assert.equal(code, 0, out);
    // 05: the paused holder's late write is refused, the hand-over re-enters, the old lock is LOST.
    assert.match(out, /\(5\) fencing tokens/, out);
    // Fences are large (at least the servers' clock in µs): compare them.
    const fa = out.match(/worker-a\s+holds it with fence (\d+), wrote/);
    assert.ok(fa, out);
    assert.match(out, /worker-b\s+inspect: held=true by 'worker-a'/, out);
    const fb = out.match(/worker-b\s+acquired after a's lock expired, fence (\d+)/);
    assert.ok(fb && BigInt(fb[1]) > BigInt(fa[1]), out);
    assert.ok(out.includes(`stale fence refused: fence ${fa[1]} < ${fb[1]}`), out);
    assert.doesNotMatch(out, /should not happen/, out);
    assert.match(out, /reentered=true/, out);
    assert.match(out, /worker\s+released; inspect: held=false/, out);
    assert.match(out, /worker-a\s+release: LOST/, out);
    // 01..04 still tell theirs.
    assert.match(out, /final balance 100/, out);
    assert.match(out, /the report ran 1 time\(s\) out of 5 starts/, out);
    assert.match(out, /catalog reindexed/, out);
    assert.match(out, /50\/50 rounds with node 0 dead/, out);
    assert.match(out, /UNAVAILABLE/, out);
  } finally {
    fs.rmSync(cwd, { recursive: true, force: true });
  }
});
