'use strict';
// The GC-pause story (Martin Kleppmann's critique of Redlock), fixed with
// fencing tokens: a holder paused past its lock's validity wakes up and
// writes, and the storage refuses it, because its successor's fence is
// higher. Plus inspect (who holds it, for how long) and a hand-over by token.
// The port of python-example/05_fencing.py.
const { Client, LockLostError } = require('liblock');
const { nodes, log } = require('./_common');

// Not python-example's 'invoice-store': make demo runs both demos on one node
// set, and fence counters never expire, so each story keeps its own resource.
const RESOURCE = 'invoice-store-js';

class StaleFenceError extends Error {}

/**
 * The resource the lock protects. It keeps the highest fence it has seen and
 * refuses any write carrying a lower one: that is all a storage needs to do.
 */
class Storage {
  highest = 0;
  data = [];

  write(fence, value) {
    if (fence < this.highest) throw new StaleFenceError(`fence ${fence} < ${this.highest}`);
    this.highest = fence;
    this.data.push(value);
  }
}

async function main() {
  console.log('(5) fencing tokens: a paused holder\'s late write is refused');
  const storage = new Storage();
  const a = new Client({ nodes: nodes(), nodeTimeout: 250, owner: 'worker-a' });
  const b = new Client({ nodes: nodes(), nodeTimeout: 250, owner: 'worker-b' });
  try {
    const lockA = await a.acquire(RESOURCE, { ttl: 1000, fence: true });
    storage.write(lockA.fence, 'a: first half');
    log('worker-a', `holds it with fence ${lockA.fence}, wrote; now a long GC pause begins`);

    const seen = await b.inspect(RESOURCE);
    log('worker-b', `inspect: held=${seen.held} by '${seen.owner}', for ${(seen.validity / 1000).toFixed(2)}s more`);
    const lockB = await b.acquire(RESOURCE, { ttl: 10000, wait: 5000, fence: true }); // gets it once a's ttl ran out
    log('worker-b', `acquired after a's lock expired, fence ${lockB.fence}`);
    storage.write(lockB.fence, 'b: whole job');
    log('worker-b', 'wrote');

    try { // worker-a wakes up, still believing it holds the lock
      storage.write(lockA.fence, 'a: second half');
      log('storage', 'accepted a\'s late write?! (should not happen)');
    } catch (e) {
      if (!(e instanceof StaleFenceError)) throw e;
      log('storage', `stale fence refused: ${e.message}`);
    }

    // worker-b hands its lock to a worker by token: that one re-enters it.
    const worker = new Client({ nodes: nodes(), nodeTimeout: 250 });
    try {
      const handed = await worker.acquire(RESOURCE, { ttl: 10000, token: lockB.token, wait: 0 });
      log('worker', `re-entered b's lock by its token: reentered=${handed.reentered}`);
      await handed.release(); // releases it for every holder of the token
    } finally {
      await worker.close();
    }
    log('worker', `released; inspect: held=${(await b.inspect(RESOURCE)).held}`);
    try {
      await lockA.release();
      log('worker-a', 'release succeeded?! (should not happen)');
    } catch (e) {
      if (!(e instanceof LockLostError)) throw e;
      log('worker-a', `release: ${e.code} (it had expired long ago)`);
    }
  } finally {
    await a.close();
    await b.close();
  }
  if (JSON.stringify(storage.data) !== JSON.stringify(['a: first half', 'b: whole job'])) {
    throw new Error(`storage holds ${JSON.stringify(storage.data)}`);
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
