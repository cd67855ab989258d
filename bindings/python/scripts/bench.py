"""Acquire+release pairs through the liblock binding -- native backend (liblock.so)
and wasm backend (liblock.wasm under wasmtime) -- beside the same loop through
redis-py (SET NX PX + EVALSHA compare-and-delete), in the same run, on 1 and 5 nodes;
plus the wasm module's compile and instantiate times.

Run under build/redisnodes (LIBLOCK_NODES must hold 5 URLs): scripts/bench.sh.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import time
from typing import Callable, Dict, List

import redis

import liblock

N = int(os.environ.get("BENCH_N", "2000"))
WARMUP = 200
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


BLOCKS = 10  # variants alternate in blocks, so that load changes hit them alike


def timed(pair: Callable[[int], None], n: int) -> List[int]:
    samples: List[int] = []
    for i in range(n):
        t0 = time.perf_counter_ns()
        pair(i)
        samples.append(time.perf_counter_ns() - t0)
    return samples


def timed_async(client: liblock.Client, n: int) -> List[int]:
    resource = f"bench:async:{client.backend}"

    async def run() -> List[int]:
        samples: List[int] = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            lock = await client.acquire_async(resource, ttl=10.0)
            await lock.release_async()
            samples.append(time.perf_counter_ns() - t0)
        return samples
    return asyncio.run(run())


def raw_pair(client: liblock.Client) -> Callable[[int], None]:
    """The same pair as bare ctypes calls: what the library itself costs."""
    from ctypes import byref, c_uint64, c_void_p
    from liblock import _lib
    dll = _lib.lib()
    handle = client.handle

    def pair(i: int) -> None:
        out, err = c_uint64(), c_void_p()
        if dll.lock_acquire(handle, b"bench:raw", 10000, None, byref(out), byref(err)) != 0:
            raise RuntimeError(_lib.take_string(err))
        if dll.lock_release(out.value, byref(err)) != 0:
            raise RuntimeError(_lib.take_string(err))
        dll.lock_free(out.value)
    return pair


def compare(variants: Dict[str, Callable[[int], List[int]]]) -> Dict[str, float]:
    """Median µs per variant; each callable runs n pairs and returns their ns."""
    for run in variants.values():
        run(WARMUP)
    samples: Dict[str, List[int]] = {name: [] for name in variants}
    for _ in range(BLOCKS):
        for name, run in variants.items():
            samples[name].extend(run(N // BLOCKS))
    return {name: statistics.median(v) / 1000.0 for name, v in samples.items()}


def redis_py_pair(conns: List["redis.Redis"], sha: str) -> Callable[[int], None]:
    quorum = len(conns) // 2 + 1

    def pair(i: int) -> None:
        token = secrets.token_hex(16)
        granted = sum(1 for r in conns if r.set("bench:redispy", token, nx=True, px=10000))
        assert granted >= quorum
        for r in conns:
            r.evalsha(sha, 1, "bench:redispy", token)
    return pair


def wasm_start_times() -> Dict[str, float]:
    """Seconds: compile without cache (fresh process), compile from wasmtime's
    on-disk cache (fresh process), and instantiate (median of 20 new clients)."""
    import subprocess
    code = ("import liblock._wasm as w, time; t = time.perf_counter(); c = w.compiled(); "
            "print(c.compile_seconds)")
    out: Dict[str, float] = {}
    for name, cache in (("compile, no cache", "0"), ("compile, cached", "1")):
        env = dict(os.environ, LIBLOCK_WASM_CACHE=cache)
        p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        out[name] = float(p.stdout.strip())
    from liblock import _wasm
    _wasm.compiled()
    times = []
    for _ in range(20):
        t0 = time.perf_counter()
        client = liblock.Client(["redis://127.0.0.1:1"], backend="wasm")
        times.append(time.perf_counter() - t0)
        client.close()
    out["instantiate + _initialize + client"] = statistics.median(times)
    return out


def main() -> None:
    urls = [u for u in os.environ.get("LIBLOCK_NODES", "").split(",") if u]
    if len(urls) < 5:
        sys.exit("bench.py: run under `build/redisnodes -n 5 -- ...` (LIBLOCK_NODES needs 5 URLs)")
    print(f"acquire+release pairs, median of {N} per variant (after {WARMUP} warm-up; variants alternate"
          f" in {BLOCKS} blocks), one client, one resource, loopback")
    from importlib.metadata import version
    print(f"python {sys.version.split()[0]}, redis-py {redis.__version__}, wasmtime {version('wasmtime')}, "
          f"liblock ABI {liblock.abi_version()}")
    starts = wasm_start_times()
    print("liblock.wasm start-up: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in starts.items()))
    rows = []
    wrows = []
    for n in (1, 5):
        nodes = urls[:n]
        conns = [redis.Redis.from_url(u) for u in nodes]
        sha = conns[0].script_load(RELEASE)
        for r in conns[1:]:
            r.script_load(RELEASE)
        with liblock.Client(nodes, node_timeout=0.5) as client, \
                liblock.Client(nodes, node_timeout=0.5, backend="wasm") as wclient:
            base_pair = redis_py_pair(conns, sha)
            raw = raw_pair(client)
            res = compare({
                "sync": lambda n: timed(lambda i: client.acquire("bench:liblock", ttl=10.0).release(), n),
                "wasm sync": lambda n: timed(lambda i: wclient.acquire("bench:wasm", ttl=10.0).release(), n),
                "async": lambda n: timed_async(client, n),
                "wasm async": lambda n: timed_async(wclient, n),
                "redis-py": lambda n: timed(base_pair, n),
                "raw": lambda n: timed(raw, n),
            })
        rows.append((n, res["sync"], res["async"], res["raw"], res["redis-py"]))
        wrows.append((n, res["sync"], res["wasm sync"], res["async"], res["wasm async"]))
        for r in conns:
            r.close()
    print(f"{'nodes':>5}  {'liblock sync':>12}  {'liblock asyncio':>15}  {'bare ctypes':>11}"
          f"  {'redis-py':>8}  {'sync/redis-py':>13}   (medians, µs per pair)")
    for n, b, a, raw, r in rows:
        print(f"{n:>5}  {b:>12.1f}  {a:>15.1f}  {raw:>11.1f}  {r:>8.1f}  {b / r:>12.2f}x")
    print("redis-py on 5 nodes talks to the nodes one after another (its sync API has no fan-out);"
          " liblock asks all nodes at once.\n'bare ctypes' is the same pair as three ctypes calls"
          " with no Lock object: the binding's own cost is the difference to 'liblock sync'.")
    print(f"\n{'nodes':>5}  {'native sync':>11}  {'wasm sync':>9}  {'wasm/native':>11}  {'native async':>12}"
          f"  {'wasm async':>10}  {'wasm/native':>11}   (medians, µs per pair)")
    for n, ns, ws, na, wa in wrows:
        print(f"{n:>5}  {ns:>11.1f}  {ws:>9.1f}  {ws / ns:>10.2f}x  {na:>12.1f}  {wa:>10.1f}  {wa / na:>10.2f}x")


if __name__ == "__main__":
    main()
