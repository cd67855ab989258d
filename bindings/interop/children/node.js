'use strict';
// One side of the cross-runtime re-entry tests (bindings/interop/reenter.test.js), in
// Node. Every child (node.js, python.py, go/main.go) speaks the same protocol:
//
//   argv[2]: JSON {urls, resource, ttl (ms), backend ('native'|'wasm'),
//                  token? (re-enter with it), owner? (the client's owner label)}
//   It acquires once (no wait) and prints one JSON line:
//     {"ok":true,"token":...,"reentered":...,"fence":...,"validity":ms,"runtime":"node","backend":...}
//     or {"ok":false,"code":...,"message":...}
//   Then one JSON line per command read on stdin:
//     inspect -> {"held":...,"owner":...,"validity":ms|null}
//     release -> {"released":true} or {"released":false,"code":...}
//     close   -> {"closed":true}, then it exits 0 (closing releases a lock
//                the client still holds, as every binding's close does)
const readline = require('node:readline');
const path = require('node:path');
const { Client } = require(path.join(__dirname, '..', '..', 'node'));

const cfg = JSON.parse(process.argv[2]);
const say = (o) => process.stdout.write(JSON.stringify(o) + '\n');

(async () => {
  const client = new Client({ nodes: cfg.urls, nodeTimeout: 500, backend: cfg.backend, ...(cfg.owner ? { owner: cfg.owner } : {}) });
  let lock = null;
  try {
    lock = await client.acquire(cfg.resource, { ttl: cfg.ttl, wait: 0, ...(cfg.token ? { token: cfg.token } : {}) });
    say({ ok: true, runtime: 'node', backend: cfg.backend, token: lock.token, reentered: lock.reentered, fence: lock.fence, validity: lock.validity });
  } catch (e) {
    say({ ok: false, code: e.code || String(e), message: String(e.message || e) });
  }
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const cmd = line.trim();
    if (cmd === 'inspect') {
      const got = await client.inspect(cfg.resource);
      say({ held: got.held, owner: got.owner, validity: got.validity });
    } else if (cmd === 'release') {
      try {
        await lock.release();
        say({ released: true });
      } catch (e) {
        say({ released: false, code: e.code || String(e) });
      }
    } else if (cmd === 'close') {
      break;
    } else {
      say({ error: `unknown command ${JSON.stringify(cmd)}` });
    }
  }
  await client.close();
  say({ closed: true });
  process.exit(0);
})().catch((e) => { console.error(e); process.exit(1); });
