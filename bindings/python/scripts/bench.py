"""make bench, Python part. Parts (BENCH_ONLY=pairs,concurrent,frozen,contention,wake,primitives selects some):

pairs       acquire+release pairs through the liblock binding -- native backend (liblock.so)
            and wasm backend (liblock.wasm under wasmtime), sync and asyncio -- beside the same
            loop through redis-py (SET NX PX + EVALSHA compare-and-delete), redis-py's asyncio
            Lock and pottery's AIORedlock, in the same run, on 1 and 5 nodes; the wasm module's
            compile and instantiate times. Those rows make one attempt (wait=0, blocking=False);
            the "defaults" rows call every library as a user does who passes no wait argument
            (liblock: its 10 s wait; redis-py's Lock and pottery's Redlock / AIORedlock:
            acquire() blocking with no timeout), uncontended, in the same run, with same-run
            ratios (liblock's default against its wait=0; liblock asyncio's default against
            redis-py's asyncio Lock's on 1 node and pottery's AIORedlock's on 5).
            BENCH_N (2000) pairs per variant.
concurrent  32 concurrent independent resources on 3 nodes (errors and locks/s).
frozen      pairs with one of five nodes frozen (SIGSTOP).
contention  10 contenders on one resource, 1 ms critical sections (asyncio.sleep(0.001); threads:
            time.sleep(0.001); both floors are measured and printed), 3 nodes: in one process
            (10 asyncio tasks, or threads) and split over two processes (5 + 5) that start
            together and contend until one has done its half of BENCH_SECTIONS (300), in
            BENCH_REPS (3) rounds with the libraries alternating (each row: the median round); ms per
            section, hand-offs between the processes (of all sections), the least-served
            contender's share (fair: 0.10) and each process's p99 wait (start of the acquire to
            entering the section; waits still pending at the end count as long as they were).
            Sections overlapping within a process (counted live) or between processes (from
            the merged wall-clock logs) are printed and make the bench exit 1. Each run is cut
            at BENCH_CAP (20) s. Libraries: liblock native and wasm, asyncio and sync (threads),
            liblock native on 1 node, redis-py's asyncio Lock (1 node, blocking, its default
            sleep of 0.1 s), pottery's AIORedlock (blocking) and python-redis-lock (1 node, sync
            only: threads; woken through BLPOP on its signal list).
primitives  the primitives beyond the mutex (semaphore, read-write lock, multi-resource lock) beside liblock's
            own mutex pair, native, sync and asyncio, 1 and 5 nodes, with ratios
            (scripts/bench_primitives.py; BENCH_N pairs per variant).
wake        release->acquire across processes: process A holds, process B starts a blocking
            acquire and says so, A waits 20 ms, takes the wall time and releases; B takes the
            wall time when its acquire returns; BENCH_ROUNDS (50) hand-overs, roles alternating;
            median, p90 and max per library (the same libraries and nodes).

BENCH_LIBS="liblock native,python-redis-lock" limits contention and wake to some libraries;
BENCH_LIBS="no lock" (or "no lock sync") runs a pseudo-library that does not lock at all, to
see the overlap checks fail the bench (never run otherwise).
The cross-process parts run each library in children of this script (`bench.py contend JSON`,
`bench.py relay JSON`) spoken to in JSON lines over stdin/stdout.

Run under build/redisnodes (LIBLOCK_NODES must hold 5 URLs): scripts/bench.sh.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import statistics
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple

import redis

import bench_results  # scripts/, beside this file
import liblock

N = int(os.environ.get("BENCH_N", "2000"))
REPS = int(os.environ.get("BENCH_REPS", "3"))  # rounds of the contention part; its rows are the median round
ONE: Dict[str, Any] = {"wait": 0}  # one attempt (the default wait differs between versions of the API)
DEFAULT: Dict[str, Any] = {}  # no wait argument: liblock.DEFAULT_WAIT (10 s), what a user gets
WARMUP = 200
RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end"


BLOCKS = 10  # variants alternate in blocks, so that load changes hit them alike
PARTS = ("pairs", "concurrent", "frozen", "contention", "wake", "primitives")  # BENCH_ONLY selects some (comma-separated)


def timed(pair: Callable[[int], None], n: int) -> List[int]:
    samples: List[int] = []
    for i in range(n):
        t0 = time.perf_counter_ns()
        pair(i)
        samples.append(time.perf_counter_ns() - t0)
    return samples


def timed_async(client: liblock.Client, n: int, kw: Dict[str, Any] = ONE) -> List[int]:
    resource = f"bench:async:{client.backend}:{'one' if kw else 'default'}"

    async def run() -> List[int]:
        samples: List[int] = []
        for _ in range(n):
            t0 = time.perf_counter_ns()
            lock = await client.acquire_async(resource, ttl=10.0, **kw)
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


def redis_py_async_lock_default(url: str) -> Callable[[], Callable[[], Awaitable[None]]]:
    """redis-py's asyncio Lock (one node) with its defaults: acquire() blocks, no timeout."""
    def make() -> Callable[[], Awaitable[None]]:
        import redis.asyncio as aredis
        r = aredis.Redis.from_url(url)
        lock = r.lock("bench:redispy-async-default", timeout=10)

        async def pair() -> None:
            assert await lock.acquire()
            await lock.release()
        return pair
    return make


def redis_py_lock_default(url: str) -> Callable[[int], None]:
    """redis-py's Lock (sync, one node) with its defaults: acquire() blocks, no timeout."""
    r = redis.Redis.from_url(url)
    lock = r.lock("bench:redispy-default", timeout=10)

    def pair(i: int) -> None:
        assert lock.acquire()
        lock.release()
    return pair


def pottery_redlock_default(urls: List[str]) -> Callable[[int], None]:
    """pottery's Redlock (sync) over the same nodes with its defaults: acquire() blocks, no timeout."""
    from pottery import Redlock
    masters = {redis.Redis.from_url(u) for u in urls}
    lock = Redlock(key="bench:pottery-sync-default", masters=masters, auto_release_time=10)

    def pair(i: int) -> None:
        assert lock.acquire()
        lock.release()
    return pair


def pottery_aioredlock_default(urls: List[str]) -> Callable[[], Callable[[], Awaitable[None]]]:
    """pottery's AIORedlock with its defaults: acquire() blocks, no timeout."""
    def make() -> Callable[[], Awaitable[None]]:
        import redis.asyncio as aredis
        from pottery import AIORedlock
        masters = {aredis.Redis.from_url(u) for u in urls}
        lock = AIORedlock(key="bench:pottery-default", masters=masters, auto_release_time=10)

        async def pair() -> None:
            assert await lock.acquire()
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


def raw_pair(nodes: List[str]) -> Callable[[int], None]:
    """The same pair as bare ctypes calls of the C ABI's blocking functions (lock_acquire,
    lock_release, lock_free on a lock_client_new client): what the binding's synchronous
    native path cost before it ran on the engine host, less its Python objects."""
    import ctypes
    import json
    from ctypes import POINTER, byref, c_char_p, c_int32, c_int64, c_uint64, c_void_p
    from liblock import _native
    dll = _native.lib()
    u64p, errp = POINTER(c_uint64), POINTER(c_void_p)
    for name, args in (("lock_client_new", [c_char_p, u64p, errp]),
                       ("lock_acquire", [c_uint64, c_char_p, c_int64, c_char_p, u64p, errp]),
                       ("lock_release", [c_uint64, errp]), ("lock_free", [c_uint64])):
        fn = getattr(dll, name)
        fn.restype, fn.argtypes = c_int32, args
    out, err = c_uint64(), c_void_p()
    if dll.lock_client_new(json.dumps({"nodes": nodes, "node_timeout_ms": 500}).encode(), byref(out), byref(err)):
        raise RuntimeError(ctypes.string_at(err.value).decode())
    handle = out.value

    def pair(i: int) -> None:
        out, err = c_uint64(), c_void_p()
        if dll.lock_acquire(handle, b"bench:raw", 10000, None, byref(out), byref(err)) != 0:
            raise RuntimeError(ctypes.string_at(err.value).decode())
        if dll.lock_release(out.value, byref(err)) != 0:
            raise RuntimeError(ctypes.string_at(err.value).decode())
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
    only = [s.strip() for s in os.environ.get("BENCH_ONLY", ",".join(PARTS)).split(",") if s.strip()]
    unknown = [s for s in only if s not in PARTS]
    if unknown:
        sys.exit(f"bench.py: BENCH_ONLY: unknown part(s) {', '.join(unknown)} (parts: {', '.join(PARTS)})")
    from importlib.metadata import version
    print(f"python {sys.version.split()[0]}, redis-py {redis.__version__}, wasmtime {version('wasmtime')}, "
          f"pottery {version('pottery')}, python-redis-lock {version('python-redis-lock')}, "
          f"liblock ABI {liblock.abi_version()}; parts: {', '.join(only)}")
    if "pairs" in only:
        pairs(urls)
    if "concurrent" in only:
        concurrent(urls[:3])
    if "frozen" in only:
        frozen(urls)
    if "contention" in only:
        contention(urls[:3])
    if "wake" in only:
        wake(urls[:3])
    if "primitives" in only:
        from bench_primitives import primitives  # scripts/, beside this file
        primitives(urls, compare)
    bench_results.write("python")
    if FAILURES:
        print("\nbench.py: WRONG RESULTS:\n  " + "\n  ".join(FAILURES), file=sys.stderr)
        sys.exit(1)


def pairs(urls: List[str]) -> None:
    print(f"acquire+release pairs, median of {N} per variant (after {WARMUP} warm-up; variants alternate"
          f" in {BLOCKS} blocks), one client, one resource, loopback")
    starts = wasm_start_times()
    print("liblock.wasm start-up: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in starts.items()))
    rows: List[Tuple[float, ...]] = []
    wrows: List[Tuple[float, ...]] = []
    arows: List[Tuple[Any, ...]] = []
    drows: List[Dict[str, Any]] = []
    for n in (1, 5):
        nodes = urls[:n]
        conns = [redis.Redis.from_url(u) for u in nodes]
        sha = conns[0].script_load(RELEASE)
        for r in conns[1:]:
            r.script_load(RELEASE)
        with liblock.Client(nodes, node_timeout=0.5) as client, \
                liblock.Client(nodes, node_timeout=0.5, backend="wasm") as wclient:
            base_pair = redis_py_pair(conns, sha)
            raw = raw_pair(nodes)
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
            # every library with its defaults (no wait / blocking argument), same run
            pottery_sync = pottery_redlock_default(nodes)
            variants.update({
                "sync default": lambda n: timed(
                    lambda i: client.acquire("bench:liblock-default", ttl=10.0, **DEFAULT).release(), n),
                "wasm sync default": lambda n: timed(
                    lambda i: wclient.acquire("bench:wasm-default", ttl=10.0, **DEFAULT).release(), n),
                "async default": lambda n: timed_async(client, n, DEFAULT),
                "wasm async default": lambda n: timed_async(wclient, n, DEFAULT),
                "pottery default": lambda n: timed(pottery_sync, n),
                "pottery async default": lambda n: timed_async_fn(pottery_aioredlock_default(nodes), n),
            })
            if n == 1:
                redis_py_sync = redis_py_lock_default(nodes[0])
                variants["redis-py Lock default"] = lambda n: timed(redis_py_sync, n)
                variants["redis-py async default"] = lambda n: timed_async_fn(
                    redis_py_async_lock_default(nodes[0]), n)
            res = compare(variants)
            bench_results.record_pairs(n, res)
            drows.append(dict(res, n=n))
        rows.append((n, res["sync"], res["async"], res["raw"], res["redis-py"]))
        arows.append((n, res["async"], res["wasm async"], res.get("redis-py async"), res["pottery async"]))
        wrows.append((n, res["sync"], res["wasm sync"], res["async"], res["wasm async"], res["raw"]))
        for r in conns:
            r.close()
    print(f"{'nodes':>5}  {'liblock sync':>12}  {'liblock asyncio':>15}  {'blocking C ABI':>14}  {'sync/C ABI':>10}"
          f"  {'redis-py':>8}  {'sync/redis-py':>13}   (medians, µs per pair)")
    for n, b, a, raw, r in rows:
        print(f"{n:>5}  {b:>12.1f}  {a:>15.1f}  {raw:>14.1f}  {b / raw:>9.2f}x  {r:>8.1f}  {b / r:>12.2f}x")
    print("redis-py on 5 nodes talks to the nodes one after another (its sync API has no fan-out);"
          " liblock asks all nodes at once.\n'blocking C ABI' is the same pair as three bare ctypes calls of"
          " liblock.so's blocking functions (its Go driver); 'liblock sync' is the binding's synchronous native"
          " path: the engine host's one driver, run on the caller's thread (_syncdrive.py).")
    print(f"\n{'nodes':>5}  {'native sync':>11}  {'wasm sync':>9}  {'wasm/native':>11}  {'native async':>12}"
          f"  {'wasm async':>10}  {'wasm/native':>11}  {'blocking C ABI':>14}  {'native sync/C ABI':>17}"
          f"   (medians, µs per pair)")
    for n, ns, ws, na, wa, raw in wrows:
        print(f"{n:>5}  {ns:>11.1f}  {ws:>9.1f}  {ws / ns:>10.2f}x  {na:>12.1f}  {wa:>10.1f}  {wa / na:>10.2f}x"
              f"  {raw:>14.1f}  {ns / raw:>16.2f}x")
    print("native and wasm sync: the same one engine driver (_syncdrive.py), either engine; 'blocking C ABI':"
          " the pair through liblock.so's blocking functions (three bare ctypes calls), which the binding"
          " does not use (it would be kept only if the one driver cost more than 1.1x it).")
    print(f"\n{'nodes':>5}  {'native async':>12}  {'wasm async':>10}  {'redis-py async Lock':>19}  {'native/redis-py':>15}"
          f"  {'pottery AIORedlock':>18}  {'native/pottery':>14}   (medians, µs per pair)")
    for n, na, wa, ra, pa in arows:
        rp = f"{ra:>19.1f}  {na / ra:>14.2f}x" if ra else f"{'(1 node only)':>19}  {'':>15}"
        print(f"{n:>5}  {na:>12.1f}  {wa:>10.1f}  {rp}  {pa:>18.1f}  {na / pa:>13.2f}x")
    print("redis-py's asyncio Lock is a one-node lock; pottery's AIORedlock asks the nodes one after another.")
    print("\ndefaults: no wait argument (liblock: wait 10 s, uncontended) beside the rows above (wait=0), same run")
    print(f"{'nodes':>5}  {'native sync':>11}  {'default/wait=0':>14}  {'wasm sync':>9}  {'default/wait=0':>14}"
          f"  {'native async':>12}  {'default/wait=0':>14}  {'wasm async':>10}  {'default/wait=0':>14}"
          f"   (medians, µs per pair)")
    for d in drows:
        print(f"{d['n']:>5}  {d['sync default']:>11.1f}  {d['sync default'] / d['sync']:>13.2f}x"
              f"  {d['wasm sync default']:>9.1f}  {d['wasm sync default'] / d['wasm sync']:>13.2f}x"
              f"  {d['async default']:>12.1f}  {d['async default'] / d['async']:>13.2f}x"
              f"  {d['wasm async default']:>10.1f}  {d['wasm async default'] / d['wasm async']:>13.2f}x")
    print(f"\n{'nodes':>5}  {'native async':>12}  {'redis-py Lock':>13}  {'redis-py async Lock':>19}"
          f"  {'pottery Redlock':>15}  {'pottery AIORedlock':>18}  {'native async/peer':>17}"
          f"   (defaults: acquire() blocking, no timeout; medians, µs per pair)")
    for d in drows:
        peer, name = ((d["redis-py async default"], "redis-py async Lock") if d["n"] == 1
                      else (d["pottery async default"], "pottery AIORedlock"))
        rl = f"{d['redis-py Lock default']:>13.1f}" if "redis-py Lock default" in d else f"{'—':>13}"
        ra = f"{d['redis-py async default']:>19.1f}" if "redis-py async default" in d else f"{'—':>19}"
        print(f"{d['n']:>5}  {d['async default']:>12.1f}  {rl}  {ra}  {d['pottery default']:>15.1f}"
              f"  {d['pottery async default']:>18.1f}  {d['async default'] / peer:>16.2f}x   (vs {name})")
    print("redis-py's Lock is a one-node lock (— on 5 nodes); the ratio compares liblock asyncio with"
          " redis-py's asyncio Lock on 1 node and pottery's AIORedlock on 5, each with its defaults.")


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
            if not err:
                bench_results.record("32 concurrent resources", "locks/s (3 nodes, single attempts)",
                                     f"liblock {backend} asyncio", ok / seconds, True)
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
            if not counts[1]:
                bench_results.record("32 concurrent resources", "locks/s (3 nodes, single attempts)",
                                     f"liblock {backend} sync", counts[0] / seconds, True)


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
        bench_results.record("pair, 5 nodes, one frozen", "µs per acquire+release pair (median)",
                             f"liblock {name}", s)



# ---------------------------------------------------------------------------
# Cross-process parts: contention (one process and two) and release->acquire.
# Each library runs in child processes (`bench.py contend ...` / `bench.py relay ...`)
# that speak JSON lines with the parent over their stdin/stdout.

SECTIONS = int(os.environ.get("BENCH_SECTIONS", "300"))  # per contention run (two processes: half each)
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "50"))  # release->acquire hand-overs per library
CAP = float(os.environ.get("BENCH_CAP", "20"))  # seconds: a run that crawls or livelocks is cut here
REDISPY_SLEEP = 0.1  # redis-py Lock's default `sleep` between attempts (what users get)
# library -> (kind, nodes used of the 3): asyncio tasks or threads
LIBS: Dict[str, Tuple[str, int]] = {
    "liblock native": ("async", 3),
    "liblock wasm": ("async", 3),
    "liblock native sync": ("sync", 3),
    "liblock wasm sync": ("sync", 3),
    "liblock native 1 node": ("async", 1),  # beside the one-node peers
    "redis-py Lock": ("async", 1),
    "pottery AIORedlock": ("async", 3),
    "python-redis-lock": ("sync", 1),
}
PEERS = ("redis-py Lock", "pottery AIORedlock", "python-redis-lock")
# Run only when named in BENCH_LIBS: no locking at all, to see the overlap checks fail the bench.
SELF_TEST: Dict[str, Tuple[str, int]] = {"no lock": ("async", 1), "no lock sync": ("sync", 1)}
LIBS.update(SELF_TEST)


def selected_libs() -> List[str]:
    only = [s.strip() for s in os.environ.get("BENCH_LIBS", "").split(",") if s.strip()]
    unknown = [s for s in only if s not in LIBS]
    if unknown:
        sys.exit(f"bench.py: BENCH_LIBS: unknown {', '.join(unknown)} (libraries: {', '.join(LIBS)})")
    return [name for name in LIBS if name in only or (not only and name not in SELF_TEST)]


class Holder:
    """One contender's handle on the resource: acquire (waiting) and release."""

    async def acquire_async(self) -> None:
        raise NotImplementedError

    async def release_async(self) -> None:
        raise NotImplementedError

    def acquire(self) -> None:
        raise NotImplementedError

    def release(self) -> None:
        raise NotImplementedError


def make_lib(name: str, urls: List[str]) -> Tuple[Callable[[str], Holder], Callable[[], None]]:
    """(holder factory, close) for library `name` over `urls`; call inside the child's event loop."""
    if name.startswith("liblock"):
        backend = "wasm" if "wasm" in name else "native"
        client = liblock.Client(urls, node_timeout=0.5, backend=backend)

        class LL(Holder):
            def __init__(self, res: str) -> None:
                self.res = res
                self.lock: Optional[liblock.Lock] = None

            async def acquire_async(self) -> None:
                self.lock = await client.acquire_async(self.res, ttl=10.0, wait=60.0)

            async def release_async(self) -> None:
                assert self.lock is not None
                await self.lock.release_async()

            def acquire(self) -> None:
                self.lock = client.acquire(self.res, ttl=10.0, wait=60.0)

            def release(self) -> None:
                assert self.lock is not None
                self.lock.release()
        return LL, client.close
    if name == "redis-py Lock":
        import redis.asyncio as aredis
        r = aredis.Redis.from_url(urls[0])

        class RP(Holder):
            def __init__(self, res: str) -> None:
                self.lock = r.lock(res, timeout=10)  # blocking=True, sleep=0.1: the defaults

            async def acquire_async(self) -> None:
                assert await self.lock.acquire()

            async def release_async(self) -> None:
                await self.lock.release()
        return RP, lambda: None
    if name == "pottery AIORedlock":
        import redis.asyncio as aredis
        from pottery import AIORedlock
        masters = {aredis.Redis.from_url(u) for u in urls}

        class PO(Holder):
            def __init__(self, res: str) -> None:
                self.lock = AIORedlock(key=res, masters=masters, auto_release_time=10)

            async def acquire_async(self) -> None:
                assert await self.lock.acquire()  # blocking=True, timeout=-1: retries after uniform(0, 0.2) s

            async def release_async(self) -> None:
                await self.lock.release()
        return PO, lambda: None
    if name == "python-redis-lock":
        import redis_lock
        sr = redis.Redis.from_url(urls[0])

        class PRL(Holder):
            def __init__(self, res: str) -> None:
                self.lock = redis_lock.Lock(sr, res, expire=10)

            def acquire(self) -> None:
                assert self.lock.acquire(blocking=True)  # SET NX, else BLPOP on the signal list

            def release(self) -> None:
                self.lock.release()  # compare-and-delete + LPUSH to the signal list
        return PRL, sr.close
    if name in SELF_TEST:
        class NoLock(Holder):
            def __init__(self, res: str) -> None:
                pass

            async def acquire_async(self) -> None:
                await asyncio.sleep(0)

            async def release_async(self) -> None:
                pass

            def acquire(self) -> None:
                pass

            def release(self) -> None:
                pass
        return NoLock, lambda: None
    raise ValueError(name)


def _proto_out() -> Callable[[Dict[str, Any]], None]:
    """The child's protocol channel: the real stdout; anything else printed goes to stderr."""
    import json
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    def send(msg: Dict[str, Any]) -> None:
        out.write(json.dumps(msg) + "\n")
        out.flush()
    return send


def _stdin_lines(on_line: Callable[[str], None]) -> None:
    """Calls on_line(line) from a daemon thread for every line of stdin ('' at EOF)."""
    import threading

    def run() -> None:
        for line in sys.stdin:
            on_line(line.strip())
        on_line("")
    threading.Thread(target=run, daemon=True).start()


def void(_: Any) -> None:
    pass


def _p99(xs: List[float]) -> float:
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[max(0, -(-len(s) * 99 // 100) - 1)]


async def warm_up(make: Callable[[str], Holder], kind: str, res: str) -> None:
    """Connects before 'ready': an acquire, a second acquire waiting for it (pub/sub
    subscribed, pools grown), the release, the waiter's acquire and release."""
    loop = asyncio.get_running_loop()
    a, b = make(res), make(res)
    if kind == "async":
        await a.acquire_async()
        waiter = asyncio.ensure_future(b.acquire_async())
        await asyncio.sleep(0.02)
        await a.release_async()
        await waiter
        await b.release_async()
    else:
        await loop.run_in_executor(None, a.acquire)
        blocked = loop.run_in_executor(None, b.acquire)
        await asyncio.sleep(0.02)
        await loop.run_in_executor(None, a.release)
        await blocked
        await loop.run_in_executor(None, b.release)


def contend_child(args: Dict[str, Any]) -> None:
    """`bench.py contend JSON`: args lib, urls, res, tasks, quota. Connects, warms up,
    says ready, waits for 'go', contends until `quota` sections are done here, 'stop'
    arrives, or CAP seconds pass; answers {done, log: [[t_in, t_out, task, wait_s]],
    overlaps, errors, go, reason}."""
    import threading
    send = _proto_out()
    name, res, tasks, quota = args["lib"], args["res"], args["tasks"], args["quota"]
    kind = LIBS[name][0]
    stop = threading.Event()
    go = threading.Event()
    reason: List[str] = []

    def on_line(line: str) -> None:
        if line == "go":
            go.set()
        elif line in ("stop", ""):
            reason.append("stopped" if line else "parent gone")
            go.set()
            stop.set()
    st: Dict[str, Any] = {"inside": 0, "overlaps": 0, "done": 0, "errors": 0, "first_error": None}
    log: List[Tuple[float, float, int, float]] = []
    since: Dict[int, float] = {}  # task -> wall time its pending acquire started
    unfinished: List[float] = []  # waits still pending when the run stopped, as long as they were then
    guard = threading.Lock()

    def stopped() -> None:
        now = time.time()
        with guard:
            unfinished.extend(now - t0 for t0 in since.values())

    def entered(task: int) -> float:
        with guard:
            since.pop(task, None)
            st["inside"] += 1
            if st["inside"] > 1:
                st["overlaps"] += 1
        return time.time()

    def left(t0: float, t_in: float, task: int) -> None:
        t_out = time.time()
        with guard:
            st["inside"] -= 1
            log.append((t_in, t_out, task, t_in - t0))
            st["done"] += 1
            if st["done"] >= quota and not stop.is_set():
                reason.append("quota")
                stop.set()

    def failed(e: BaseException) -> None:
        with guard:
            st["errors"] += 1
            st["first_error"] = st["first_error"] or f"{type(e).__name__}: {e}"[:120]

    async def main() -> float:
        make, close = make_lib(name, args["urls"])
        await warm_up(make, kind, f"{res}:warm:{os.getpid()}")
        _stdin_lines(on_line)
        send({"ready": True})
        while not go.is_set():
            await asyncio.sleep(0.001)
        t_go = time.time()
        if kind == "async":
            async def worker(task: int) -> None:
                h = make(res)
                while not stop.is_set():
                    t0 = since[task] = time.time()
                    try:
                        await h.acquire_async()
                    except Exception as e:  # noqa: BLE001 (counted and shown)
                        since.pop(task, None)
                        failed(e)
                        await asyncio.sleep(0.01)
                        continue
                    try:
                        if stop.is_set():
                            break
                        t_in = entered(task)
                        await asyncio.sleep(0.001)
                        left(t0, t_in, task)
                    finally:
                        try:
                            await h.release_async()
                        except Exception as e:  # noqa: BLE001
                            failed(e)
            ws = [asyncio.ensure_future(worker(k)) for k in range(tasks)]
            end = t_go + CAP
            while not stop.is_set() and time.time() < end and not all(w.done() for w in ws):
                await asyncio.sleep(0.005)
            if not stop.is_set():
                reason.append("cap" if time.time() >= end else "tasks ended")
                stop.set()
            stopped()
            _, pending = await asyncio.wait(ws, timeout=1.0)  # grace: waiters take their turn and leave
            for w in pending:
                w.cancel()
            await asyncio.wait(ws, timeout=1.0)
        else:
            def tworker(task: int) -> None:
                h = make(res)
                while not stop.is_set():
                    with guard:
                        t0 = since[task] = time.time()
                    try:
                        h.acquire()
                    except Exception as e:  # noqa: BLE001
                        with guard:
                            since.pop(task, None)
                        failed(e)
                        time.sleep(0.01)
                        continue
                    try:
                        if stop.is_set():
                            break
                        t_in = entered(task)
                        time.sleep(0.001)
                        left(t0, t_in, task)
                    finally:
                        try:
                            h.release()
                        except Exception as e:  # noqa: BLE001
                            failed(e)
            ts = [threading.Thread(target=tworker, args=(k,), daemon=True) for k in range(tasks)]
            for t in ts:
                t.start()
            if not stop.wait(CAP):
                reason.append("cap")
                stop.set()
            stopped()
            end = time.time() + 1.0
            for t in ts:
                t.join(max(0.0, end - time.time()))
        # liblock: close() cancels acquires still waiting; the peers' are left behind (os._exit)
        try:
            close()
        except Exception:  # noqa: BLE001
            pass
        return t_go
    t_go = asyncio.run(main())  # (the sync libraries' set-up too; their contention is threads)
    with guard:
        send({"done": st["done"], "log": log, "unfinished": unfinished, "overlaps": st["overlaps"], "errors": st["errors"],
              "first_error": st["first_error"], "go": t_go, "reason": reason[0] if reason else "?"})
    os._exit(0)


def relay_child(args: Dict[str, Any]) -> None:
    """`bench.py relay JSON`: args lib, urls, res. Commands on stdin: 'hold' (acquire, answer
    {held}), 'wait' (start a waiting acquire, answer {waiting} at once and {acquired: t}
    when it returns), 'release' (wait 20 ms, answer {released: t} with the wall time taken
    just before releasing), 'quit'."""
    send = _proto_out()
    name, res = args["lib"], args["res"]
    kind = LIBS[name][0]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        queue: "asyncio.Queue[str]" = asyncio.Queue()
        make, close = make_lib(name, args["urls"])
        h = make(res)

        async def acquire(x: Holder) -> float:
            if kind == "async":
                await x.acquire_async()
                return time.time()

            def run() -> float:
                x.acquire()
                return time.time()
            return await loop.run_in_executor(None, run)

        async def release(x: Holder) -> float:
            if kind == "async":
                t = time.time()
                await x.release_async()
                return t

            def run() -> float:
                t = time.time()
                x.release()
                return t
            return await loop.run_in_executor(None, run)

        await warm_up(make, kind, f"{res}:warm:{os.getpid()}")
        _stdin_lines(lambda line: void(loop.call_soon_threadsafe(queue.put_nowait, line)))
        send({"ready": True})
        waiting: List["asyncio.Future[Any]"] = []

        async def wait_acquire() -> None:
            try:
                t = await acquire(h)
                send({"acquired": t})
            except Exception as e:  # noqa: BLE001
                send({"error": f"{type(e).__name__}: {e}"[:120]})
        while True:
            cmd = await queue.get()
            if cmd == "hold":
                await acquire(h)
                send({"held": True})
            elif cmd == "wait":
                waiting.append(asyncio.ensure_future(wait_acquire()))
                await asyncio.sleep(0)  # the acquire has started
                send({"waiting": True})
            elif cmd == "release":
                await asyncio.sleep(0.02)  # the waiter is subscribed (or polling) by now
                send({"released": await release(h)})
            else:
                break
        try:
            close()
        except Exception:  # noqa: BLE001
            pass
    asyncio.run(main())
    os._exit(0)


class Kid:
    """A child process of this script, spoken to in JSON lines."""

    def __init__(self, proc: Any) -> None:
        self.proc = proc

    @classmethod
    async def start(cls, mode: str, args: Dict[str, Any]) -> "Kid":
        import json
        proc = await asyncio.create_subprocess_exec(
            sys.executable, os.path.abspath(__file__), mode, json.dumps(args),
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=1 << 24)
        return cls(proc)

    async def send(self, line: str) -> None:
        try:
            self.proc.stdin.write((line + "\n").encode())
            await self.proc.stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass

    async def recv(self, timeout: float) -> Dict[str, Any]:
        import json
        line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        if not line:
            raise EOFError(f"child exited ({await self.proc.wait()})")
        return json.loads(line)

    async def finish(self) -> None:
        try:
            self.proc.stdin.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            await asyncio.wait_for(self.proc.wait(), 5)
        except asyncio.TimeoutError:
            self.proc.kill()
            await self.proc.wait()


async def contention_run(name: str, urls: List[str], procs: int, tasks: int, quota: int, res: str) -> List[Dict[str, Any]]:
    """procs children with `tasks` contenders each; the first to finish its quota stops the others."""
    kids = [await Kid.start("contend", {"lib": name, "urls": urls, "res": res, "tasks": tasks, "quota": quota})
            for _ in range(procs)]
    try:
        await asyncio.gather(*(k.recv(60) for k in kids))
        for k in kids:
            await k.send("go")
        results: List[Optional[Dict[str, Any]]] = [None] * procs
        pending = {asyncio.ensure_future(k.recv(CAP + 15)): i for i, k in enumerate(kids)}
        while pending:
            done, _ = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for f in done:
                results[pending.pop(f)] = f.result()
            for i in pending.values():
                await kids[i].send("stop")
        return [r for r in results if r is not None]
    finally:
        await asyncio.gather(*(k.finish() for k in kids))


def contention_figures(results: List[Dict[str, Any]], contenders: int) -> Dict[str, Any]:
    """ms per section, hand-offs between processes, least share, p99 wait per process,
    overlaps (within a process, and between processes from the merged logs)."""
    merged = sorted((t_in, t_out, p, task) for p, r in enumerate(results) for t_in, t_out, task, _ in r["log"])
    done = len(merged)
    cross = sum(1 for a, b in zip(merged, merged[1:]) if a[2] != b[2])
    per: Dict[Tuple[int, int], int] = {}
    for _, _, p, task in merged:
        per[(p, task)] = per.get((p, task), 0) + 1
    least = (min(per.values()) if len(per) == contenders else 0) / done if done else 0.0
    overlaps = sum(r["overlaps"] for r in results)  # counted live within each process
    cross_overlaps = 0  # from the merged logs: an entry before another process's earlier section has exited
    last_out = [float("-inf")] * len(results)
    for t_in, t_out, p, _ in merged:
        if any(t_in < out for q, out in enumerate(last_out) if q != p):
            cross_overlaps += 1
        last_out[p] = max(last_out[p], t_out)
    start = min(r["go"] for r in results)
    span = (max(t_out for _, t_out, _, _ in merged) - start) if merged else 0.0
    return {
        "done": done, "ms": span * 1000 / done if done else float("nan"), "cross": cross, "least": least,
        # waits still pending at the end count with their length then (a starved contender shows)
        "p99": [_p99([w * 1000 for *_, w in r["log"]] + [w * 1000 for w in r["unfinished"]]) for r in results],
        "starved": contenders - len(per),
        "overlaps": overlaps, "cross_overlaps": cross_overlaps,
        "errors": sum(r["errors"] for r in results),
        "first_error": next((r["first_error"] for r in results if r["first_error"]), None),
        "reasons": [r["reason"] for r in results],
    }


def median_round(rounds: List[Dict[str, Any]]) -> Dict[str, Any]:
    """The figures of the median round (by ms per section), with what went wrong
    (starved contenders, cut runs, errors, overlaps) counted over every round."""
    f = sorted(rounds, key=lambda r: r["ms"])[(len(rounds) - 1) // 2]
    return {**f, "starved": max(r["starved"] for r in rounds),
            "reasons": [x for r in rounds for x in r["reasons"]],
            "errors": sum(r["errors"] for r in rounds),
            "first_error": next((r["first_error"] for r in rounds if r["first_error"]), None),
            "overlaps": sum(r["overlaps"] for r in rounds),
            "cross_overlaps": sum(r["cross_overlaps"] for r in rounds)}


def sleep_floor(n: int = 300) -> Tuple[float, float]:
    """Mean ms of asyncio.sleep(0.001) and of time.sleep(0.001) here, now."""
    async def run() -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            await asyncio.sleep(0.001)
        return (time.perf_counter() - t0) * 1000 / n
    a = asyncio.run(run())
    t0 = time.perf_counter()
    for _ in range(n):
        time.sleep(0.001)
    return a, (time.perf_counter() - t0) * 1000 / n


FAILURES: List[str] = []  # wrong results (overlapping sections): printed, and the bench exits 1


def contention(urls: List[str]) -> None:
    """10 contenders on one resource, 1 ms sections: in one process, and 5 + 5 in two."""
    afloor, tfloor = sleep_floor()
    libs = selected_libs()
    print(f"\ncontention: 10 contenders on one resource, 1 ms critical sections, {SECTIONS} sections per run,"
          f" each run capped at {CAP:g} s, the median of {REPS} rounds;\n  asyncio tasks (sync libraries: threads); 3 nodes (redis-py Lock and"
          f" python-redis-lock: 1 node); the section's floor here: asyncio.sleep(0.001) {afloor:.2f} ms,"
          f" time.sleep(0.001) {tfloor:.2f} ms (means)")
    print("  two processes: 5 contenders in each, both contend until one has done its half; hand-offs between"
          " the processes\n  (of all sections) and the least-served contender's share (fair: 0.10); wait = start"
          " of the acquire to entering the section\n  (p99 of each process's waits; waits still pending at the"
          " end count as long as they were then)")
    print(f"  redis-py Lock: blocking acquire with its default sleep {REDISPY_SLEEP:g} s between attempts; pottery"
          " AIORedlock: blocking acquire (retries after uniform(0, 0.2) s);\n  python-redis-lock: 5 threads per"
          " process (sync only), woken through its signal list (BLPOP)")
    hdr = (f"{'library':<22}{'1 proc ms/sec':>14}{'least':>7}{'p99 wait':>9}  {'2 procs ms/sec':>14}"
           f"{'hand-offs':>11}{'least':>7}{'p99 wait A':>11}{'p99 wait B':>11}")
    print(hdr)
    two: Dict[str, Dict[str, Any]] = {}
    # REPS rounds, the libraries alternating within each: a library's row is its median
    # round (each part by its ms per section), as this machine's speed drifts from one
    # second to the next. Overlaps, errors and starvation count from every round.
    runs: Dict[str, List[Tuple[Dict[str, Any], Dict[str, Any]]]] = {name: [] for name in libs}
    for _ in range(REPS):
        for name in libs:
            nodes = urls[:LIBS[name][1]]
            tag = secrets.token_hex(3)
            one = contention_figures(asyncio.run(contention_run(name, nodes, 1, 10, SECTIONS, f"bench:c1:{tag}")), 10)
            f2 = contention_figures(asyncio.run(contention_run(name, nodes, 2, 5, SECTIONS // 2, f"bench:c2:{tag}")), 10)
            runs[name].append((one, f2))
    for name in libs:
        one, f2 = median_round([r[0] for r in runs[name]]), median_round([r[1] for r in runs[name]])
        two[name] = f2
        bench_results.record("contention, one process", "ms per section (10 contenders, 1 ms sections)", name, one["ms"])
        bench_results.record("contention, two processes", "ms per section (5 contenders in each, 1 ms sections)",
                             name, f2["ms"])
        rounds = " ".join(f"{r[1]['ms']:.2f}" for r in runs[name])
        print(f"{name:<22}{one['ms']:>14.2f}{one['least']:>7.3f}{one['p99'][0]:>8.1f}ms  {f2['ms']:>14.2f}"
              f"{str(f2['cross']) + '/' + str(f2['done']):>11}{f2['least']:>7.3f}"
              + "".join(f"{p:>9.1f}ms" for p in f2["p99"])
              + (f"   (median of {len(runs[name])}: {rounds})" if len(runs[name]) > 1 else ""))
        notes = []
        for label, f in (("one process", one), ("two processes", f2)):
            if f["starved"]:
                notes.append(f"{label}: {f['starved']} of 10 contenders never entered")
            if "cap" in f["reasons"]:
                notes.append(f"{label}: cut at {CAP:g} s after {f['done']} sections")
            if f["errors"]:
                notes.append(f"{label}: {f['errors']} errors (first: {f['first_error']})")
            if f["overlaps"] or f["cross_overlaps"]:
                msg = (f"{name}, {label}: OVERLAPPING SECTIONS: {f['overlaps']} within a process,"
                       f" {f['cross_overlaps']} between processes")
                notes.append(msg)
                FAILURES.append(msg)
        for n in notes:
            print(f"{'':<22}!! {n}")
    ll = two.get("liblock native")
    peers = {p: two[p] for p in PEERS if p in two}
    if ll:
        vs = ", ".join(f"{p} {f['ms']:.2f}" + (" (starves contenders)" if f["starved"] else "")
                       + (" ahead of liblock" if f["ms"] <= ll["ms"] else "") for p, f in peers.items())
        print(f"  liblock native, two processes: {ll['ms']:.2f} ms per section (target ≤ 1.3; the floor {afloor:.2f});"
              f" peers: {vs or 'none run'};\n  p99 wait {' / '.join(f'{p:.1f}' for p in ll['p99'])} ms"
              f" (target ≤ 50 in both); hand-offs {ll['cross']}/{ll['done']}, least share {ll['least']:.3f}")


async def relay_run(name: str, urls: List[str], rounds: int, res: str) -> Tuple[List[float], int, Optional[str]]:
    """Release->acquire latencies (ms) between two processes, roles alternating."""
    kids = [await Kid.start("relay", {"lib": name, "urls": urls, "res": res}) for _ in range(2)]
    lat: List[float] = []
    timeouts = 0
    err: Optional[str] = None
    try:
        await asyncio.gather(*(k.recv(60) for k in kids))
        await kids[0].send("hold")
        await kids[0].recv(10)
        holder = 0
        end = time.monotonic() + CAP
        while len(lat) + timeouts < rounds and time.monotonic() < end:
            h, w = kids[holder], kids[1 - holder]
            await w.send("wait")
            assert (await w.recv(10)).get("waiting")
            await h.send("release")
            t_rel = (await h.recv(10))["released"]
            try:
                got = await w.recv(5)
            except asyncio.TimeoutError:
                timeouts += 1
                break
            if "error" in got:
                err = got["error"]
                break
            lat.append((got["acquired"] - t_rel) * 1000)
            holder = 1 - holder
        for k in kids:
            await k.send("quit")
        return lat, timeouts, err
    finally:
        await asyncio.gather(*(k.finish() for k in kids))


def wake(urls: List[str]) -> None:
    print(f"\nrelease->acquire across processes: process A holds, process B waits in a blocking acquire, A waits"
          f" 20 ms,\n  takes the wall time and releases; B takes the wall time when its acquire returns;"
          f" {ROUNDS} hand-overs, roles alternating (ms)")
    print(f"{'library':<22}{'nodes':>6}{'median':>9}{'p90':>9}{'max':>9}{'n':>5}")
    for name in selected_libs():
        nodes = urls[:LIBS[name][1]]
        lat, timeouts, err = asyncio.run(relay_run(name, nodes, ROUNDS, f"bench:relay:{secrets.token_hex(3)}"))
        early = sum(1 for x in lat if x < 0)
        if early:  # the waiter got in while the holder still held
            FAILURES.append(f"{name}, release->acquire: {early} of {len(lat)} acquires returned BEFORE the release")
            print(f"{'':<22}!! {FAILURES[-1]}")
        if lat:
            s = sorted(lat)
            p90 = s[max(0, -(-len(s) * 9 // 10) - 1)]
            bench_results.record("release to acquire across processes", "ms (median hand-over)", name,
                                 statistics.median(s))
            print(f"{name:<22}{len(nodes):>6}{statistics.median(s):>9.2f}{p90:>9.2f}{s[-1]:>9.2f}{len(s):>5}"
                  + (f"   ({timeouts} not woken within 5 s)" if timeouts else "")
                  + (f"   (cut at {CAP:g} s)" if len(lat) + timeouts < ROUNDS and not err and not timeouts else "")
                  + (f"   error: {err}" if err else ""))
        else:
            print(f"{name:<22}{len(nodes):>6}   no hand-over measured" + (f": {err}" if err else ""))
    print(f"  redis-py Lock retries every {REDISPY_SLEEP:g} s (its default: here its second attempt, ≈ 0.1 s after the"
          " first, comes ≈ 80 ms after a release made 20 ms in),\n  pottery after uniform(0, 0.2) s;"
          " python-redis-lock is woken through BLPOP; liblock through pub/sub (polling as the fallback)")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] in ("contend", "relay"):
        import json
        (contend_child if sys.argv[1] == "contend" else relay_child)(json.loads(sys.argv[2]))
    main()
