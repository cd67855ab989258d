'use strict';
// The seed's scenario: ten concurrent tasks (one Promise.all) update the same
// account. Before liblock, each did `SET account_id123 x NX PX ...` and, when
// that failed, `await sleep(100)` and tried again: slow hand-offs, no timeout,
// and a holder that stalls past the PX loses the lock silently. Here each
// task waits in the library (woken when the lock is released) and the
// read-modify-write never interleaves.
const { Client } = require('liblock');
const { nodes, log, sleep } = require('./_common');

const RESOURCE = 'account_id123';

async function main() {
  console.log(`(1) ten concurrent tasks update ${RESOURCE} on ${nodes().length} Redis nodes`);
  const client = new Client({ nodes: nodes(), nodeTimeout: 50 });
  let balance = 0; // stands for a row in a database
  let inside = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: 10 }, (_, n) => (async () => {
    const name = `task-${n}`;
    const lock = await client.acquire(RESOURCE, { ttl: 5000, wait: 30000 });
    try {
      if (++inside !== 1) throw new Error('two tasks inside at once');
      log(name, `got ${RESOURCE} (token ${lock.token.slice(0, 8)}…)`);
      const before = balance;
      await sleep(20); // a read-modify-write that must not interleave
      balance = before + 10;
      log(name, `balance ${before} -> ${balance}, releasing`);
      inside--;
    } finally {
      await lock.release();
    }
  })()));
  console.log(`  final balance ${balance} (10 deposits of 10, none lost) in ${Date.now() - t0} ms`);
  if (balance !== 100) throw new Error(`balance ${balance}`);
  await client.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
