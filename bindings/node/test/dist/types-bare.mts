// Type-checked by scripts/test-dist.sh with `tsc --strict` (no skipLibCheck)
// against the installed tarball in a project WITHOUT @types/node (the package
// does not install it: an optional peer dependency), with lib es2022 alone and
// with the DOM lib. Uses no Node global of its own. Never run.
import liblock, { Client, Lock, LoadError, ClientClosedError, UnavailableError, DEFAULT_WAIT, type AcquireOptions, type LockAbortSignal } from 'liblock';

export async function use(nodes: string[], signal?: LockAbortSignal): Promise<number> {
  const client = new Client({ nodes, nodeTimeout: 50, backend: 'wasm' });
  const opts: AcquireOptions = { ttl: 10000, wait: DEFAULT_WAIT, ...(signal ? { signal } : {}) };
  let lock: Lock;
  try {
    lock = await client.acquire('orders:42', opts);
  } catch (e) {
    if (e instanceof UnavailableError) return (e.nodes ?? []).map((n) => n.node + n.addr.length + n.cause.length).length;
    if (e instanceof LoadError || e instanceof ClientClosedError) return 0;
    throw e;
  }
  const held: LockAbortSignal = lock.signal;
  held.addEventListener('abort', () => undefined, { once: true });
  const aborted: boolean = held.aborted;
  await lock.extend(10000);
  await lock[Symbol.asyncDispose]();
  const n = await client.using('orders:42', { ttl: 1000 }, async (s, l) => (s.aborted ? 0 : l.validity));
  await client.close();
  const code: 'CLOSED' = new liblock.ClientClosedError().code;
  return n + (aborted ? 1 : 0) + code.length + lock.fence;
}
