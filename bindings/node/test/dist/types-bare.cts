// types-bare.mts for a CommonJS consumer without @types/node (require through import =).
import liblock = require('liblock');

export async function use(nodes: string[]): Promise<boolean> {
  const client = new liblock.Client({ nodes, backend: 'wasm' });
  try {
    const lock = await client.acquire('r', { ttl: 1000 });
    const signal: liblock.LockAbortSignal = lock.signal;
    await lock.release();
    return signal.aborted;
  } catch (e) {
    if (e instanceof liblock.ClientClosedError || e instanceof liblock.default.LoadError) return false;
    throw e;
  } finally {
    await client.close();
  }
}
