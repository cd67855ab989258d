// Type-checked by scripts/test-dist.sh with `tsc --strict` (no skipLibCheck,
// no @types/node of its own, no DOM lib unless the tsconfig adds it) against
// the installed tarball, as an ES module. Never run.
import liblock, { Client, Lock, LoadError, LockError, NotAcquiredError, DEFAULT_WAIT, type AcquireOptions } from 'liblock';

export async function use(nodes: string[]): Promise<number> {
  let client: Client;
  try {
    client = new Client({ nodes, nodeTimeout: 50 });
  } catch (e) {
    if (!(e instanceof LoadError) || e.code !== 'LOAD_FAILED') throw e;
    client = new liblock.Client({ nodes, backend: 'wasm' });
  }
  const opts: AcquireOptions = { ttl: 10000, wait: DEFAULT_WAIT, signal: AbortSignal.timeout(5000) };
  const lock: Lock = await client.acquire('orders:42', opts);
  lock.signal.addEventListener('abort', () => console.log(lock.signal.reason));
  try {
    await lock.extend(10000);
  } finally {
    await lock.release();
  }
  const n = await client.using('orders:42', { ttl: 1000, wait: 0 }, async (signal, held) => (signal.aborted ? 0 : held.validity));
  await lock[Symbol.asyncDispose]();
  await client.close();
  const errors: Array<typeof LockError> = [liblock.LoadError, liblock.NotAcquiredError, NotAcquiredError, liblock.LockLostError];
  const code: 'LOAD_FAILED' = new liblock.LoadError().code;
  return n + errors.length + code.length + liblock.ABI_VERSION + liblock.library().abiVersion + liblock.DEFAULT_WAIT;
}
