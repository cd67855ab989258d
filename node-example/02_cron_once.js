'use strict';
// A "nightly report" cron job starts on several machines (here: processes)
// at the same moment; the lock makes it run once, the others skip.
// (A real job would also record that tonight's report is done, for starters
// that arrive after it finished; the lock covers the overlap.)
const { spawn } = require('node:child_process');
const { Client, NotAcquiredError } = require('liblock');
const { nodes, log, sleep, setOrigin } = require('./_common');

const RESOURCE = 'nightly-report:2026-11-22';

async function job(startAt) {
  const me = `pid ${process.pid}`;
  setOrigin(startAt - 1000);
  const client = new Client({ nodes: nodes(), nodeTimeout: 50 });
  await (await client.acquire(`warm-up:${process.pid}`, { ttl: 1000 })).release(); // connect before the race
  await sleep(Math.max(0, startAt - Date.now()));
  let lock;
  try {
    // A short wait only lets simultaneous starters retry a split vote; it is
    // far shorter than the job, so nobody runs it after the winner.
    lock = await client.acquire(RESOURCE, { ttl: 30000, wait: 200 });
  } catch (e) {
    if (!(e instanceof NotAcquiredError)) throw e;
    log(me, 'report already taken by another process: skipping');
    await client.close();
    return 0;
  }
  log(me, 'got the lock: generating the nightly report …');
  await sleep(1000);
  await lock.release();
  log(me, 'report done, lock released');
  await client.close();
  return 1;
}

async function main() {
  if (process.argv[2] === '--job') {
    process.exitCode = 10 + await job(Number(process.argv[3]));
    return;
  }
  const procs = 5;
  console.log(`(2) the nightly report job starts in ${procs} processes at once`);
  const startAt = Date.now() + 1000;
  const codes = await Promise.all(Array.from({ length: procs }, () => new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [__filename, '--job', String(startAt)], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => resolve(code));
  })));
  const ran = codes.filter((c) => c === 11).length;
  const failed = codes.filter((c) => c !== 10 && c !== 11).length;
  console.log(`  the report ran ${ran} time(s) out of ${procs} starts`);
  if (ran !== 1 || failed) throw new Error(`ran ${ran}, failed ${failed}`);
}

main().catch((e) => { console.error(e); process.exit(1); });
