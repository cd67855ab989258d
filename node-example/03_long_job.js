'use strict';
// A job that runs longer than its lock's ttl: client.using() auto-extends the
// lock (inside liblock: no timer in JS), and hands the job an AbortSignal
// that would abort if the lock were ever lost.
const { Client, NotAcquiredError } = require('liblock');
const { nodes, log, sleep } = require('./_common');

const RESOURCE = 'reindex-catalog';

async function main() {
  console.log('(3) a 3-second job holding a lock whose ttl is 1 second, auto-extended');
  const client = new Client({ nodes: nodes(), nodeTimeout: 50 });
  const intruder = new Client({ nodes: nodes(), nodeTimeout: 50 });
  const result = await client.using(RESOURCE, { ttl: 1000 }, async (signal, lock) => {
    signal.addEventListener('abort', () => log('job', `lock lost: ${signal.reason.message} — stopping`));
    for (let step = 1; step <= 6; step++) {
      await sleep(500);
      if (signal.aborted) throw signal.reason;
      log('job', `step ${step}/6 done; lock lost=${lock.lost}, validity left ${lock.validity} ms`);
      if (step === 4) {
        try {
          await intruder.acquire(RESOURCE, { ttl: 1000, wait: 0 }); // one attempt
          log('intruder', 'got the lock?! (should not happen)');
        } catch (e) {
          if (!(e instanceof NotAcquiredError)) throw e;
          log('intruder', `tried to take it: ${e.code}, still held after 2 ttls`);
        }
      }
    }
    return 'catalog reindexed';
  });
  log('job', `${result}; lock released`);
  await intruder.close();
  await client.close();
}

main().catch((e) => { console.error(e); process.exit(1); });
