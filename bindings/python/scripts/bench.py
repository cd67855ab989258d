"""Acquire+release pairs through the liblock binding beside the same loop through
redis-py (SET NX PX + EVALSHA compare-and-delete), in the same run, on 1 and 5 nodes.

Run under build/redisnodes (LIBLOCK_NODES must hold 5 URLs): scripts/bench.sh.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import time
from typing import Callable, List

import redis

import liblock

N = int(os.environ.get("BENCH_N", "2000"))
WARMUP = 200
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


def measure(pair: Callable[[int], None]) -> float:
    for i in range(WARMUP):
        pair(i)
    samples: List[int] = []
    for i in range(N):
        t0 = time.perf_counter_ns()
        pair(i)
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1000.0


def measure_async(client: liblock.Client) -> float:
    async def run() -> float:
        samples: List[int] = []
        for i in range(WARMUP + N):
            t0 = time.perf_counter_ns()
            lock = await client.acquire_async("bench:async", ttl=10.0)
            await lock.release_async()
            if i >= WARMUP:
                samples.append(time.perf_counter_ns() - t0)
        return statistics.median(samples) / 1000.0
    return asyncio.run(run())


def redis_py_pair(conns: List["redis.Redis"], sha: str) -> Callable[[int], None]:
    quorum = len(conns) // 2 + 1

    def pair(i: int) -> None:
        token = secrets.token_hex(16)
        granted = sum(1 for r in conns if r.set("bench:redispy", token, nx=True, px=10000))
        assert granted >= quorum
        for r in conns:
            r.evalsha(sha, 1, "bench:redispy", token)
    return pair


def main() -> None:
    urls = [u for u in os.environ.get("LIBLOCK_NODES", "").split(",") if u]
    if len(urls) < 5:
        sys.exit("bench.py: run under `build/redisnodes -n 5 -- ...` (LIBLOCK_NODES needs 5 URLs)")
    print(f"acquire+release pairs, median of {N} (after {WARMUP} warm-up), one client, loopback")
    print(f"python {sys.version.split()[0]}, redis-py {redis.__version__}, liblock ABI {liblock.abi_version()}")
    rows = []
    for n in (1, 5):
        nodes = urls[:n]
        conns = [redis.Redis.from_url(u) for u in nodes]
        sha = conns[0].script_load(RELEASE)
        for r in conns[1:]:
            r.script_load(RELEASE)
        baseline = measure(redis_py_pair(conns, sha))
        with liblock.Client(nodes, node_timeout=0.5) as client:
            binding = measure(lambda i: client.acquire("bench:liblock", ttl=10.0).release())
            async_ = measure_async(client)
        for r in conns:
            r.close()
        rows.append((n, binding, async_, baseline))
    print(f"{'nodes':>5}  {'liblock sync µs':>15}  {'liblock asyncio µs':>18}  {'redis-py µs':>11}  {'sync/redis-py':>13}")
    for n, b, a, r in rows:
        print(f"{n:>5}  {b:>15.1f}  {a:>18.1f}  {r:>11.1f}  {b / r:>12.2f}x")
    print("redis-py on 5 nodes talks to the nodes one after another (its sync API has no fan-out);"
          " liblock asks all nodes at once.")


if __name__ == "__main__":
    main()
