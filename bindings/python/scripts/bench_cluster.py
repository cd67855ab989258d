"""make bench, Python part on a Redis Cluster: liblock beside redis-py's RedisCluster.lock.

Starts (and stops) its own clusters through build/redisnodes -cluster, and measures the
uncontended acquire+release pair: BENCH_N (2000) pairs per variant in BENCH_BLOCKS (20) blocks,
the variants alternating block by block (who goes first rotates), so that a burst of load on the
shared machine hits them alike; each row is the median of all its pairs:

replicas=0  one cluster of 3 primaries without replicas; liblock's WAIT off (wait_replicas=0),
            since redis-py's Lock sends no WAIT: like with like. liblock native and wasm, sync
            and asyncio, with defaults (no wait argument: a 10 s budget an uncontended pair
            never uses) and one attempt (wait=0); redis-py's RedisCluster(...).lock(...), sync
            and asyncio (redis.asyncio.cluster.RedisCluster), acquire() with its defaults
            (blocking, no timeout) and acquire(blocking=False).
replicas=1  3 primaries with a replica each: liblock native with its default (WAIT 1 after each
            grant on a cluster node, what users get) and with wait_replicas=0, beside the same
            redis-py Locks (still no WAIT).

Each row's ratio is to the fastest redis-py variant of the same API (sync rows to the sync
Lock, asyncio rows to the asyncio Lock). Rows also go to $LIBLOCK_BENCH_JSON
(build/bench/python-cluster.json under make bench). Run by scripts/bench.sh.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Tuple

import redis
from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import ClusterNode, RedisCluster

import bench_results  # scripts/, beside this file
import liblock

ROOT = Path(__file__).resolve().parents[3]
N = int(os.environ.get("BENCH_N", "2000"))
BLOCKS = int(os.environ.get("BENCH_BLOCKS", "20"))
WARMUP = 200
BLOCK_WARMUP = 20  # an asyncio block's own warm-up (redis-py's asyncio clients are made per block)
UNIT = "µs per acquire+release pair (median)"

class Deployment:
    """build/redisnodes -cluster: 3 primaries (nodes 0-2), `replicas` replicas each."""

    def __init__(self, replicas: int) -> None:
        self.proc = subprocess.Popen(
            [str(ROOT / "build" / "redisnodes"), "-n", "3", "-cluster", "-replicas", str(replicas)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        if not first:
            raise RuntimeError(f"build/redisnodes -cluster did not start (exit {self.proc.wait()})")
        info = json.loads(first)
        self.url: str = info["cluster_url"]
        self.ports: List[int] = [n["port"] for n in info["nodes"][:3]]

    def stop(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def sync_variant(pair: Callable[[str], None]) -> Callable[[int, int], List[int]]:
    def run(n: int, tag: int) -> List[int]:
        samples: List[int] = []
        for i in range(n):
            res = f"bench:{tag}:{i % 16}"  # 16 resources, spread over the slots
            t0 = time.perf_counter_ns()
            pair(res)
            samples.append(time.perf_counter_ns() - t0)
        return samples
    return run


def async_variant(make: Callable[[], Tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[None]]]]
                  ) -> Callable[[int, int], List[int]]:
    """make() builds (pair, close) inside the block's event loop (redis-py's asyncio clients are
    bound to one); each block warms its connections up before it measures."""
    def run(n: int, tag: int) -> List[int]:
        async def go() -> List[int]:
            pair, close = make()
            try:
                for i in range(BLOCK_WARMUP):
                    await pair(f"bench:{tag}:{i % 16}")
                samples: List[int] = []
                for i in range(n):
                    res = f"bench:{tag}:{i % 16}"
                    t0 = time.perf_counter_ns()
                    await pair(res)
                    samples.append(time.perf_counter_ns() - t0)
                return samples
            finally:
                await close()
        return asyncio.run(go())
    return run


def liblock_sync(client: liblock.Client, kw: Dict[str, Any]) -> Callable[[int, int], List[int]]:
    def pair(res: str) -> None:
        client.acquire(res, ttl=10.0, **kw).release()
    return sync_variant(pair)


def liblock_async(client: liblock.Client, kw: Dict[str, Any]) -> Callable[[int, int], List[int]]:
    def make() -> Tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[None]]]:
        async def pair(res: str) -> None:
            lock = await client.acquire_async(res, ttl=10.0, **kw)
            await lock.release_async()

        async def close() -> None:
            pass
        return pair, close
    return async_variant(make)


def redispy_sync(rc: RedisCluster, blocking: bool) -> Callable[[int, int], List[int]]:
    def pair(res: str) -> None:
        lock = rc.lock(res, timeout=10)
        assert lock.acquire() if blocking else lock.acquire(blocking=False)
        lock.release()
    return sync_variant(pair)


def redispy_async(ports: List[int], blocking: bool) -> Callable[[int, int], List[int]]:
    def make() -> Tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[None]]]:
        from redis.asyncio.cluster import ClusterNode as AsyncClusterNode
        arc = AsyncRedisCluster(startup_nodes=[AsyncClusterNode("127.0.0.1", p) for p in ports])

        async def pair(res: str) -> None:
            lock = arc.lock(res, timeout=10)
            assert await (lock.acquire() if blocking else lock.acquire(blocking=False))
            await lock.release()

        async def close() -> None:
            await arc.aclose()
        return pair, close
    return async_variant(make)


def measure(title: str, variants: Dict[str, Tuple[str, Callable[[int, int], List[int]]]]) -> None:
    names = list(variants)
    for k, name in enumerate(names):  # warm up: connections, scripts, slot maps
        variants[name][1](WARMUP, k)
    samples: Dict[str, List[int]] = {name: [] for name in names}
    per_block = max(1, N // BLOCKS)
    for r in range(BLOCKS):
        for j in range(len(names)):
            k = (r + j) % len(names)  # rotate who goes first
            name = names[k]
            samples[name] += variants[name][1](per_block, k)
    med = {name: statistics.median(samples[name]) / 1e3 for name in names}
    best = {api: min(med[n] for n in names if variants[n][0] == api and not n.startswith("liblock"))
            for api in ("sync", "asyncio")}
    print(f"\n{title}: {per_block * BLOCKS} pairs per variant in {BLOCKS} alternating blocks, medians")
    print(f"{'':52}{'µs':>10}{'/ redis-py':>12}")
    for name in names:
        api = variants[name][0]
        print(f"{name:52}{med[name]:10.1f}{med[name] / best[api]:11.2f}x")
        bench_results.record(title, UNIT, name, med[name])


def part(replicas: int) -> None:
    dep = Deployment(replicas)
    clients: List[liblock.Client] = []
    rc = RedisCluster(startup_nodes=[ClusterNode("127.0.0.1", p) for p in dep.ports])

    def client(backend: str, wait_replicas: Any) -> liblock.Client:
        kw = {} if wait_replicas is None else {"wait_replicas": wait_replicas}
        c = liblock.Client([dep.url], node_timeout=1.0, backend=backend, **kw)
        clients.append(c)
        return c
    try:
        v: Dict[str, Tuple[str, Callable[[int, int], List[int]]]] = {}
        if replicas == 0:
            for backend in ("native", "wasm"):
                c = client(backend, 0)
                v[f"liblock {backend} sync, defaults"] = ("sync", liblock_sync(c, {}))
                v[f"liblock {backend} sync, wait=0"] = ("sync", liblock_sync(c, {"wait": 0}))
                v[f"liblock {backend} asyncio, defaults"] = ("asyncio", liblock_async(c, {}))
                v[f"liblock {backend} asyncio, wait=0"] = ("asyncio", liblock_async(c, {"wait": 0}))
        else:
            d, z = client("native", None), client("native", 0)
            v["liblock native sync, defaults (WAIT 1)"] = ("sync", liblock_sync(d, {}))
            v["liblock native sync, wait_replicas=0"] = ("sync", liblock_sync(z, {}))
            v["liblock native asyncio, defaults (WAIT 1)"] = ("asyncio", liblock_async(d, {}))
            v["liblock native asyncio, wait_replicas=0"] = ("asyncio", liblock_async(z, {}))
        v["redis-py RedisCluster.lock, defaults"] = ("sync", redispy_sync(rc, True))
        v["redis-py RedisCluster.lock, blocking=False"] = ("sync", redispy_sync(rc, False))
        v["redis-py asyncio RedisCluster.lock, defaults"] = ("asyncio", redispy_async(dep.ports, True))
        v["redis-py asyncio RedisCluster.lock, blocking=False"] = ("asyncio", redispy_async(dep.ports, False))
        measure(f"Redis Cluster pair, 3 primaries, {'a replica each' if replicas else 'no replicas'}", v)
    finally:
        for c in clients:
            c.close()
        rc.close()
        dep.stop()


def main() -> None:
    print(f"python {sys.version.split()[0]}, redis-py {redis.__version__}, liblock ABI {liblock.abi_version()}")
    for replicas in (0, 1):
        part(replicas)
    bench_results.write("Python, Redis Cluster")


if __name__ == "__main__":
    main()
