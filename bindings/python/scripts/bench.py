"""Acquire+release pairs through the liblock binding -- native backend (liblock.so)
and wasm backend (liblock.wasm under wasmtime), sync and asyncio -- beside the same
loop through redis-py (SET NX PX + EVALSHA compare-and-delete), redis-py's asyncio
Lock and pottery's AIORedlock, in the same run, on 1 and 5 nodes; 32 concurrent
independent resources on 3 nodes (errors and locks/s); pairs with one of five nodes
frozen (SIGSTOP); the wasm module's compile and instantiate times.

Run under build/redisnodes (LIBLOCK_NODES must hold 5 URLs): scripts/bench.sh.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Tuple

import redis

import liblock

N = int(os.environ.get("BENCH_N", "2000"))
ONE = {"wait": 0}  # one attempt (the default wait differs between versions of the API)
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
            lock = await client.acquire_async(resource, ttl=10.0, **ONE)
            await lock.release_async()
            samples.append(time.perf_counter_ns() - t0)
        return samples
    return asyncio.run(run())


def timed_async_fn(make: Callable[[], Callable[[], Awaitable[None]]], n: int) -> List[int]:
    """n pairs of an async pair function made (with its connections) inside the loop."""
    async def run() -> List[int]:
        pair = make()
        samples: List[int] = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            await pair()
            samples.append(time.perf_counter_ns() - t0)
        return samples
    return asyncio.run(run())


def redis_py_async_lock(url: str) -> Callable[[], Callable[[], Awaitable[None]]]:
    """redis-py's asyncio Lock (one node): acquire(blocking=False) + release."""
    def make() -> Callable[[], Awaitable[None]]:
        import redis.asyncio as aredis
        r = aredis.Redis.from_url(url)
        lock = r.lock("bench:redispy-async", timeout=10)

        async def pair() -> None:
            assert await lock.acquire(blocking=False)
            await lock.release()
        return pair
    return make


def pottery_aioredlock(urls: List[str]) -> Callable[[], Callable[[], Awaitable[None]]]:
    """pottery's AIORedlock over the same nodes: acquire(blocking=False) + release."""
    def make() -> Callable[[], Awaitable[None]]:
        import redis.asyncio as aredis
        from pottery import AIORedlock
        masters = {aredis.Redis.from_url(u) for u in urls}
        lock = AIORedlock(key="bench:pottery", masters=masters, auto_release_time=10)

        async def pair() -> None:
            assert await lock.acquire(blocking=False)
            await lock.release()
        return pair
    return make


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
    rows: List[Tuple[float, ...]] = []
    wrows: List[Tuple[float, ...]] = []
    arows: List[Tuple[Any, ...]] = []
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
            variants: Dict[str, Callable[[int], List[int]]] = {
                "sync": lambda n: timed(lambda i: client.acquire("bench:liblock", ttl=10.0, **ONE).release(), n),
                "wasm sync": lambda n: timed(lambda i: wclient.acquire("bench:wasm", ttl=10.0, **ONE).release(), n),
                "async": lambda n: timed_async(client, n),
                "wasm async": lambda n: timed_async(wclient, n),
                "redis-py": lambda n: timed(base_pair, n),
                "raw": lambda n: timed(raw, n),
                "pottery async": lambda n: timed_async_fn(pottery_aioredlock(nodes), n),
            }
            if n == 1:
                variants["redis-py async"] = lambda n: timed_async_fn(redis_py_async_lock(nodes[0]), n)
            res = compare(variants)
        rows.append((n, res["sync"], res["async"], res["raw"], res["redis-py"]))
        arows.append((n, res["async"], res["wasm async"], res.get("redis-py async"), res["pottery async"]))
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
    print(f"\n{'nodes':>5}  {'native async':>12}  {'wasm async':>10}  {'redis-py async Lock':>19}  {'native/redis-py':>15}"
          f"  {'pottery AIORedlock':>18}  {'native/pottery':>14}   (medians, µs per pair)")
    for n, na, wa, ra, pa in arows:
        rp = f"{ra:>19.1f}  {na / ra:>14.2f}x" if ra else f"{'(1 node only)':>19}  {'':>15}"
        print(f"{n:>5}  {na:>12.1f}  {wa:>10.1f}  {rp}  {pa:>18.1f}  {na / pa:>13.2f}x")
    print("redis-py's asyncio Lock is a one-node lock; pottery's AIORedlock asks the nodes one after another.")
    concurrent(urls[:3])
    frozen(urls)


def concurrent(urls: List[str], tasks: int = 32, seconds: float = 3.0) -> None:
    """32 independent resources, one asyncio task (or thread) each, single attempts,
    for `seconds`: every failure counts as an error."""
    import threading
    print(f"\n{tasks} concurrent independent resources, {len(urls)} nodes, single attempts, {seconds:g} s each:")
    for backend in ("native", "wasm"):
        with liblock.Client(urls, node_timeout=0.5, backend=backend) as client:
            async def run_async() -> Tuple[int, int]:
                stop = time.monotonic() + seconds
                counts = [0, 0]

                async def worker(i: int) -> None:
                    while time.monotonic() < stop:
                        try:
                            lock = await client.acquire_async(f"bench:c{i}", ttl=10.0, **ONE)
                            await lock.release_async()
                            counts[0] += 1
                        except liblock.LockError:
                            counts[1] += 1
                await asyncio.gather(*(worker(i) for i in range(tasks)))
                return counts[0], counts[1]
            ok, err = asyncio.run(run_async())
            print(f"  {backend:>6} asyncio ({tasks} tasks):   {ok / seconds:8.0f} locks/s, {err} errors")
            counts = [0, 0]
            guard = threading.Lock()
            stop = time.monotonic() + seconds

            def sync_worker(i: int) -> None:
                ok = err = 0
                while time.monotonic() < stop:
                    try:
                        client.acquire(f"bench:t{i}", ttl=10.0, **ONE).release()
                        ok += 1
                    except liblock.LockError:
                        err += 1
                with guard:
                    counts[0] += ok
                    counts[1] += err
            ts = [threading.Thread(target=sync_worker, args=(i,)) for i in range(tasks)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            print(f"  {backend:>6} sync ({tasks} threads):    {counts[0] / seconds:8.0f} locks/s, {counts[1]} errors")


def _pid(url: str) -> int:
    r = redis.Redis.from_url(url)
    pid = int(r.info("server")["process_id"])
    r.close()
    return pid


def frozen(urls: List[str], n: int = 200) -> None:
    """Pairs on 5 nodes with node 0 stopped (SIGSTOP), node timeout 50 ms: medians
    beside the all-healthy pair, same clients, same run."""
    import signal
    print(f"\none of five nodes frozen (SIGSTOP), node timeout 50 ms, median of {n} pairs (errors counted):")
    pid = _pid(urls[0])
    with liblock.Client(urls, node_timeout=0.05) as client, \
            liblock.Client(urls, node_timeout=0.05, backend="wasm") as wclient:
        def measure() -> Dict[str, Tuple[float, int]]:
            out: Dict[str, Tuple[float, int]] = {}
            for name, c in (("native", client), ("wasm", wclient)):
                errors = [0]

                def pair(i: int, c: liblock.Client = c) -> None:
                    try:
                        c.acquire("bench:frozen", ttl=10.0, **ONE).release()
                    except liblock.LockError:
                        errors[0] += 1
                out[f"{name} sync"] = (statistics.median(timed(pair, n)) / 1000, errors[0])

                async def run(c: liblock.Client = c) -> List[int]:
                    samples = []
                    for _ in range(n):
                        t0 = time.perf_counter_ns()
                        try:
                            lock = await c.acquire_async("bench:frozen-async", ttl=10.0, **ONE)
                            await lock.release_async()
                        except liblock.LockError:
                            errors[0] += 1
                        samples.append(time.perf_counter_ns() - t0)
                    return samples
                before = errors[0]
                out[f"{name} asyncio"] = (statistics.median(asyncio.run(run())) / 1000, errors[0] - before)
            return out
        healthy = measure()
        os.kill(pid, signal.SIGSTOP)
        try:
            stopped = measure()
        finally:
            os.kill(pid, signal.SIGCONT)
    print(f"{'variant':>15}  {'healthy':>9}  {'one frozen':>10}  {'ratio':>6}  errors")
    for name in healthy:
        h, s = healthy[name][0], stopped[name][0]
        print(f"{name:>15}  {h:>8.1f}µs {s:>9.1f}µs  {s / h:>5.2f}x  {stopped[name][1]}")


if __name__ == "__main__":
    main()
