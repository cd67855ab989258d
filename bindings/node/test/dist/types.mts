// Type-checked by scripts/test-dist.sh with `tsc --strict` (no skipLibCheck,
// with the consumer's @types/node, no DOM lib unless the tsconfig adds it)
// against the installed tarball, as an ES module. Never run.
import liblock, { Client, Lock, LoadError, LockError, NotAcquiredError, DEFAULT_WAIT, type AcquireOptions, type Inspection, type NodeState, type PermitHolder, type Reader } from 'liblock';

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
  const nodeSignal: AbortSignal = lock.signal; // the project's own AbortSignal type, not liblock's minimal one
  nodeSignal.throwIfAborted();
  try {
    await lock.extend(10000);
  } finally {
    await lock.release();
  }
  const n = await client.using('orders:42', { ttl: 1000, wait: 0 }, async (signal, held) => (signal.aborted ? 0 : held.validity));
  await lock[Symbol.asyncDispose]();
  const fenced = await client.acquire('orders:42', { ttl: 1000, fence: true });
  const fence: number = fenced.fence;
  const again = await new Client({ nodes, owner: 'worker-7' }).acquire('orders:42', { ttl: 1000, token: fenced.token });
  const reentered: boolean = again.reentered;
  const seen: Inspection = await client.inspect('orders:42', { signal: AbortSignal.timeout(1000) });
  const validity: number | null = seen.validity;
  const first: NodeState | undefined = seen.nodes[0];
  const cause: string | null = first ? first.error : null;
  const owner: string = client.owner + seen.owner;
  const permit: Lock = await client.acquire('api', { ttl: 1000, permits: 3 }); // a counting semaphore's permit
  const pool: Inspection = await client.inspect('api', { permits: 3 });
  const holders: PermitHolder[] = pool.holders ?? [];
  const inUse: number = (pool.inUse ?? 0) + holders.length + (holders[0]?.slot ?? 0);
  await permit.release();
  const rw: Inspection = await client.inspect('doc', { mode: 'read' }); // a read-write lock: its readers
  const readers: Reader[] = rw.readers ?? [];
  const readerValidity: number = readers.reduce((t, r) => t + (r.validity ?? 0) + r.owner.length, 0);
  await client.close();
  const errors: Array<typeof LockError> = [liblock.LoadError, liblock.NotAcquiredError, NotAcquiredError, liblock.LockLostError];
  const code: 'LOAD_FAILED' = new liblock.LoadError().code;
  if (reentered && validity === null && cause === null) return fence + owner.length;
  return inUse + readerValidity + n + errors.length + code.length + liblock.ABI_VERSION + liblock.library().abiVersion + liblock.DEFAULT_WAIT;
}
