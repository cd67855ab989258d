// The same as types.mts for a CommonJS consumer (require through import =).
import liblock = require('liblock');

export async function use(nodes: string[]): Promise<boolean> {
  const client = new liblock.Client({ nodes, backend: 'wasm' });
  try {
    await (await client.acquire('r', { ttl: 1000 })).release();
  } catch (e) {
    if (e instanceof liblock.LoadError || e instanceof liblock.default.LoadError) return false;
    throw e;
  } finally {
    await client.close();
  }
  return liblock.default.DEFAULT_WAIT === liblock.DEFAULT_WAIT;
}
