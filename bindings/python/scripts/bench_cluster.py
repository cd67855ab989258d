"""make bench, Python part on a Redis Cluster: liblock beside redis-py's RedisCluster.lock.

Starts (and stops) its own clusters through build/redisnodes -cluster, and measures the
uncontended acquire+release pair: BENCH_N (2000) pairs per variant after 200 of warm-up, the
variants of one API taking turns pair by pair in a random order each cycle (the synchronous ones
in this thread, the asyncio ones on one event loop), so that the drift of a shared machine hits
them alike (blocks of consecutive pairs would let it favour whoever ran in a
fast stretch); each row is the median of all its pairs:

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
WARMUP = 200
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


SyncPair = Callable[[str], None]
AsyncMake = Callable[[], Tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[None]]]]


def liblock_sync(client: liblock.Client, kw: Dict[str, Any]) -> Tuple[str, Any]:
    def pair(res: str) -> None:
        client.acquire(res, ttl=10.0, **kw).release()
    return "sync", pair


def liblock_async(client: liblock.Client, kw: Dict[str, Any]) -> Tuple[str, Any]:
    def make() -> Tuple[Callable[[str], Awaitable[None]], Callable[[], Awaitable[None]]]:
        async def pair(res: str) -> None:
            lock = await client.acquire_async(res, ttl=10.0, **kw)
            await lock.release_async()

        async def close() -> None:
            pass
        return pair, close
    return "asyncio", make


def redispy_sync(rc: RedisCluster, blocking: bool) -> Tuple[str, Any]:
    def pair(res: str) -> None:
        lock = rc.lock(res, timeout=10)
        assert lock.acquire() if blocking else lock.acquire(blocking=False)
        lock.release()
    return "sync", pair


def redispy_async(ports: List[int], blocking: bool) -> Tuple[str, Any]:
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
    return "asyncio", make


def interleaved(names: List[str], run: Callable[[str, str], Any]) -> Dict[str, List[int]]:
    """The sync variants' samples: N cycles, each running every variant's pair once in a
    random order (so that the machine's drift hits all alike), after WARMUP cycles."""
    import random
    samples: Dict[str, List[int]] = {name: [] for name in names}
    order = list(names)
    for i in range(WARMUP + N):
        random.shuffle(order)
        res = f"bench:{i % 16}"  # 16 resources, spread over the slots
        for k, name in enumerate(order):
            t0 = time.perf_counter_ns()
            run(name, f"{res}:{k}")
            if i >= WARMUP:
                samples[name].append(time.perf_counter_ns() - t0)
    return samples


async def interleaved_async(names: List[str], makes: Dict[str, AsyncMake]) -> Dict[str, List[int]]:
    """interleaved for the asyncio variants, all on one event loop."""
    import random
    made = {name: makes[name]() for name in names}
    samples: Dict[str, List[int]] = {name: [] for name in names}
    order = list(names)
    try:
        for i in range(WARMUP + N):
            random.shuffle(order)
            res = f"bench:{i % 16}"
            for k, name in enumerate(order):
                t0 = time.perf_counter_ns()
                await made[name][0](f"{res}:{k}")
                if i >= WARMUP:
                    samples[name].append(time.perf_counter_ns() - t0)
    finally:
        for name in names:
            await made[name][1]()
    return samples


def measure(title: str, variants: Dict[str, Tuple[str, Any]], group: str = "", record_peers: bool = True) -> None:
    names = list(variants)
    sync_names = [n for n in names if variants[n][0] == "sync"]
    async_names = [n for n in names if variants[n][0] == "asyncio"]
    samples = interleaved(sync_names, lambda name, res: variants[name][1](res))
    samples.update(asyncio.run(interleaved_async(async_names, {n: variants[n][1] for n in async_names})))
    med = {name: statistics.median(samples[name]) / 1e3 for name in names}
    best = {api: min(med[n] for n in names if variants[n][0] == api and not n.startswith("liblock"))
            for api in ("sync", "asyncio")}
    print(f"\n{title}{group}: {N} pairs per variant, the variants of each API taking turns pair by pair, medians")
    print(f"{'':52}{'µs':>10}{'/ redis-py':>12}")
    for name in names:
        api = variants[name][0]
        print(f"{name:52}{med[name]:10.1f}{med[name] / best[api]:11.2f}x")
        if record_peers or name.startswith("liblock"):
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

    def peers(v: Dict[str, Tuple[str, Any]]) -> Dict[str, Tuple[str, Any]]:
        v["redis-py RedisCluster.lock, defaults"] = redispy_sync(rc, True)
        v["redis-py RedisCluster.lock, blocking=False"] = redispy_sync(rc, False)
        v["redis-py asyncio RedisCluster.lock, defaults"] = redispy_async(dep.ports, True)
        v["redis-py asyncio RedisCluster.lock, blocking=False"] = redispy_async(dep.ports, False)
        return v
    title = f"Redis Cluster pair, 3 primaries, {'a replica each' if replicas else 'no replicas'}"
    try:
        v: Dict[str, Tuple[str, Any]] = {}
        if replicas == 0:
            # Each backend beside the peers in a run of its own: the wasm backend's
            # synchronous API runs its engine on a loop thread of its own, which in the same
            # process slowed every other synchronous pair (native: 1.36x redis-py beside it,
            # 1.02-1.05x without it), an artefact no program using one backend sees.
            for backend in ("native", "wasm"):
                c = client(backend, 0)
                v = {f"liblock {backend} sync, defaults": liblock_sync(c, {}),
                     f"liblock {backend} sync, wait=0": liblock_sync(c, {"wait": 0}),
                     f"liblock {backend} asyncio, defaults": liblock_async(c, {}),
                     f"liblock {backend} asyncio, wait=0": liblock_async(c, {"wait": 0})}
                measure(title, peers(v), f" ({backend})", record_peers=backend == "native")
                c.close()
            return
        else:
            d, z = client("native", None), client("native", 0)
            v["liblock native sync, defaults (WAIT 1)"] = liblock_sync(d, {})
            v["liblock native sync, wait_replicas=0"] = liblock_sync(z, {})
            v["liblock native asyncio, defaults (WAIT 1)"] = liblock_async(d, {})
            v["liblock native asyncio, wait_replicas=0"] = liblock_async(z, {})
        measure(title, peers(v))
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
