'use strict';
// One of the Redis nodes is killed (SIGKILL) in the middle of the run: with a
// majority still up, locks keep being granted and a held lock keeps
// extending. Then a second node is frozen: no majority, and the answer is a
// prompt UnavailableError, not a hang. Run this one last: it kills a node.
const { Client, UnavailableError } = require('liblock');
const { nodes, pids, alive, log, sleep } = require('./_common');

async function rounds(client, n) {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    await client.using('orders:42', { ttl: 2000, wait: 2000 }, async () => { ok++; });
  }
  return ok;
}

async function main() {
  const urls = nodes();
  const ps = pids();
  console.log(`(4) ${urls.length} nodes; one is killed mid-run and locking goes on`);
  if (ps.length !== urls.length || urls.length < 3 || !ps.every(alive)) {
    throw new Error('needs LIBLOCK_NODE_PIDS of at least 3 live nodes (node-example/demo.sh sees to it)');
  }
  const client = new Client({ nodes: urls, nodeTimeout: 50 });
  let t0 = Date.now();
  log('main', `${await rounds(client, 50)}/50 acquire+release rounds with all nodes up (${Date.now() - t0} ms)`);
  const held = await client.acquire('long-lived', { ttl: 1000, autoExtend: true });
  held.signal.addEventListener('abort', () => log('main', `long-lived lock lost: ${held.signal.reason.message}`));
  // Locking is going on while the node dies.
  const during = rounds(client, 100);
  await sleep(20);
  process.kill(ps[0], 'SIGKILL');
  log('main', `SIGKILL sent to node 0 (${urls[0]}, pid ${ps[0]}) while rounds run`);
  t0 = Date.now();
  log('main', `${await during}/100 rounds across the kill (${Date.now() - t0} ms)`);
  t0 = Date.now();
  log('main', `${await rounds(client, 50)}/50 rounds with node 0 dead (${Date.now() - t0} ms)`);
  await sleep(2000);
  log('main', `lock taken before the kill, 2 ttls later: lost=${held.lost}, validity ${held.validity} ms`);
  await held.release();
  log('main', 'released it on the 2 surviving nodes');
  process.kill(ps[1], 'SIGSTOP');
  try {
    t0 = Date.now();
    await client.acquire('orders:42', { ttl: 2000, wait: 0 }); // one attempt: report the outage at once
    log('main', 'acquired with a majority down?! (should not happen)');
  } catch (e) {
    if (!(e instanceof UnavailableError)) throw e;
    log('main', `node 1 frozen too: ${e.code} after ${Date.now() - t0} ms (${e.message.slice(0, 70)}…)`);
  } finally {
    process.kill(ps[1], 'SIGCONT');
  }
  await client.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
