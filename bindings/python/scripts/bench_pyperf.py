"""The Python drivers' speed targets in one focused run: the pairs that
make bench's tables compare, each beside what it is measured against, alternating pair by
pair in one process (so that the load of other jobs hits all of them alike), BENCH_REPS
(3) rounds; per round the median µs per pair and the CPU per pair (time.process_time over
the pair: every thread of the process, the Go runtime's and the loop thread's included),
and the ratios; the summary line takes the median ratio over the rounds. Asserts nothing.

Groups (BENCH_GROUPS=async,wasm,sem selects some):

async  liblock native asyncio with its defaults (no wait argument) beside redis-py's
       asyncio Lock on 1 node (target <= 1.0x) and pottery's AIORedlock on 5 (target <= 0.5x).
wasm   liblock wasm beside liblock native, sync and asyncio, one attempt (wait=0, make
       bench's wasm/native table) and defaults, on 1 and 5 nodes (target <= 1.3x).
sem    a permit of a 3-permit semaphore beside the mutex, native, defaults, sync and
       asyncio, 1 node (target <= 1.2x).

Run under build/redisnodes (5 URLs):
  build/redisnodes -n 5 -- build/venv-python/bin/python bindings/python/scripts/bench_pyperf.py
with PYTHONPATH=bindings/python (BENCH_N pairs per variant and round, default 1000).
BENCH_BASELINE=<another checkout>/bindings/python/liblock adds, to the async group (asyncio)
and the wasm group (native sync), that tree's package (imported as liblock_baseline, on the
same liblock.so) beside this one: before/after in one run.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from typing import Any, Awaitable, Callable, Dict, List, Tuple

import liblock

N = int(os.environ.get("BENCH_N", "1000"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
WARMUP = 100
ONE: Dict[str, Any] = {"wait": 0}
DEFAULT: Dict[str, Any] = {}

SyncPair = Callable[[], None]
AsyncPair = Callable[[], Awaitable[None]]


def _stats(lat: Dict[str, List[int]], cpu: Dict[str, List[int]]) -> Dict[str, Tuple[float, float]]:
    """(median µs, mean CPU µs) per variant."""
    return {k: (statistics.median(lat[k]) / 1000, sum(cpu[k]) / len(cpu[k]) / 1000) for k in lat}


def run_sync(variants: Dict[str, SyncPair]) -> Dict[str, Tuple[float, float]]:
    """Every variant's pair in turn, N times (after WARMUP turns)."""
    names = list(variants)
    lat: Dict[str, List[int]] = {k: [] for k in names}
    cpu: Dict[str, List[int]] = {k: [] for k in names}
    pc, pt = time.perf_counter_ns, time.process_time_ns
    for i in range(WARMUP + N):
        for k in names:
            c0, t0 = pt(), pc()
            variants[k]()
            t1, c1 = pc(), pt()
            if i >= WARMUP:
                lat[k].append(t1 - t0)
                cpu[k].append(c1 - c0)
    return _stats(lat, cpu)


def run_async(make: Callable[[], Dict[str, AsyncPair]], swap: bool = False) -> Dict[str, Tuple[float, float]]:
    """The same on one event loop (the pairs made inside it, with their connections).
    ``swap``: the first two variants trade places every other turn (a variant's pair is
    slower right after a peer's, whose late replies it reads: an A/A run of two liblock
    packages measured the first one 1.05-1.15x the second)."""
    async def go() -> Dict[str, Tuple[float, float]]:
        variants = make()
        names = list(variants)
        swapped = [names[1], names[0]] + names[2:] if swap and len(names) > 2 else names
        lat: Dict[str, List[int]] = {k: [] for k in names}
        cpu: Dict[str, List[int]] = {k: [] for k in names}
        pc, pt = time.perf_counter_ns, time.process_time_ns
        for i in range(WARMUP + N):
            for k in (swapped if i % 2 else names):
                c0, t0 = pt(), pc()
                await variants[k]()
                t1, c1 = pc(), pt()
                if i >= WARMUP:
                    lat[k].append(t1 - t0)
                    cpu[k].append(c1 - c0)
        return _stats(lat, cpu)
    return asyncio.run(go())


def ll_async(client: liblock.Client, res: str, **kw: Any) -> AsyncPair:
    async def pair() -> None:
        lock = await client.acquire_async(res, ttl=10.0, **kw)
        await lock.release_async()
    return pair


def ll_sync(client: liblock.Client, res: str, **kw: Any) -> SyncPair:
    def pair() -> None:
        client.acquire(res, ttl=10.0, **kw).release()
    return pair


def redis_py_async_default(url: str) -> AsyncPair:
    import redis.asyncio as aredis
    lock = aredis.Redis.from_url(url).lock("bench:pyperf:redispy", timeout=10)

    async def pair() -> None:
        assert await lock.acquire()
        await lock.release()
    return pair


def pottery_async_default(urls: List[str]) -> AsyncPair:
    import redis.asyncio as aredis
    from pottery import AIORedlock
    lock = AIORedlock(key="bench:pyperf:pottery", masters={aredis.Redis.from_url(u) for u in urls},
                      auto_release_time=10)

    async def pair() -> None:
        assert await lock.acquire()
        await lock.release()
    return pair


Round = Dict[str, Tuple[float, float]]


def report(title: str, rounds: List[Round], ratios: List[Tuple[str, str, str]]) -> None:
    """Each round's medians and CPU, then each ratio (num/den) per round and its median."""
    print(f"\n== {title}: {N} pairs per variant and round, alternating pair by pair")
    names = list(rounds[0])
    w = max(len(k) for k in names)
    for k in names:
        cells = "  ".join(f"{r[k][0]:7.1f} µs (cpu {r[k][1]:6.1f})" for r in rounds)
        print(f"  {k:<{w}}  {cells}")
    for label, num, den in ratios:
        lat = [r[num][0] / r[den][0] for r in rounds]
        cpu = [r[num][1] / r[den][1] for r in rounds]
        print(f"  {label}: latency {statistics.median(lat):.2f}x (rounds "
              + ", ".join(f"{x:.2f}" for x in lat) + f"), cpu {statistics.median(cpu):.2f}x (rounds "
              + ", ".join(f"{x:.2f}" for x in cpu) + ")")


def _baseline() -> Any:
    """BENCH_BASELINE's package as liblock_baseline, or None."""
    path = os.environ.get("BENCH_BASELINE")
    if not path:
        return None
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "liblock_baseline", os.path.join(path, "__init__.py"), submodule_search_locations=[path])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["liblock_baseline"] = mod
    spec.loader.exec_module(mod)
    return mod


def group_async(urls: List[str]) -> None:
    base = _baseline()
    for n in (1, 5):
        nodes = urls[:n]
        with liblock.Client(nodes, node_timeout=0.5) as client:
            old = base.Client(nodes, node_timeout=0.5) if base is not None else None

            def make() -> Dict[str, AsyncPair]:
                v = {"liblock native asyncio default": ll_async(client, f"bench:pyperf:a{n}")}
                if old is not None:
                    v["baseline native asyncio default"] = ll_async(old, f"bench:pyperf:b{n}")
                if n == 1:
                    v["redis-py asyncio Lock default"] = redis_py_async_default(nodes[0])
                else:
                    v["pottery AIORedlock default"] = pottery_async_default(nodes)
                return v
            try:
                rounds = [run_async(make, old is not None) for _ in range(REPS)]
            finally:
                if old is not None:
                    old.close()
        peer = "redis-py asyncio Lock default" if n == 1 else "pottery AIORedlock default"
        short = peer.split(" default")[0]
        ratios = [(f"liblock/{short}", "liblock native asyncio default", peer)]
        if old is not None:
            ratios += [(f"baseline/{short}", "baseline native asyncio default", peer),
                       ("liblock/baseline", "liblock native asyncio default", "baseline native asyncio default")]
        report(f"asyncio defaults, {n} node(s)", rounds, ratios)


def group_wasm(urls: List[str]) -> None:
    base = _baseline()
    for n in (1, 5):
        nodes = urls[:n]
        old = base.Client(nodes, node_timeout=0.5) if base is not None else None
        with liblock.Client(nodes, node_timeout=0.5) as native, \
                liblock.Client(nodes, node_timeout=0.5, backend="wasm") as wasm:
            sync_rounds: List[Round] = []
            async_rounds: List[Round] = []
            for _ in range(REPS):
                v = {
                    "native sync wait=0": ll_sync(native, f"bench:pyperf:ns{n}", **ONE),
                    "wasm sync wait=0": ll_sync(wasm, f"bench:pyperf:ws{n}", **ONE),
                    "native sync default": ll_sync(native, f"bench:pyperf:nsd{n}"),
                    "wasm sync default": ll_sync(wasm, f"bench:pyperf:wsd{n}"),
                }
                if old is not None:
                    v["baseline native sync default"] = ll_sync(old, f"bench:pyperf:bsd{n}")
                sync_rounds.append(run_sync(v))
                async_rounds.append(run_async(lambda: {
                    "native async wait=0": ll_async(native, f"bench:pyperf:na{n}", **ONE),
                    "wasm async wait=0": ll_async(wasm, f"bench:pyperf:wa{n}", **ONE),
                    "native async default": ll_async(native, f"bench:pyperf:nad{n}"),
                    "wasm async default": ll_async(wasm, f"bench:pyperf:wad{n}"),
                }))
        if old is not None:
            old.close()
        report(f"wasm/native sync, {n} node(s)", sync_rounds,
               [("wasm/native sync wait=0", "wasm sync wait=0", "native sync wait=0"),
                ("wasm/native sync default", "wasm sync default", "native sync default")]
               + ([("native/baseline native sync default", "native sync default",
                    "baseline native sync default")] if old is not None else []))
        report(f"wasm/native asyncio, {n} node(s)", async_rounds,
               [("wasm/native async wait=0", "wasm async wait=0", "native async wait=0"),
                ("wasm/native async default", "wasm async default", "native async default")])


def group_sem(urls: List[str]) -> None:
    nodes = urls[:1]
    with liblock.Client(nodes, node_timeout=0.5) as client:
        sync_rounds: List[Round] = []
        async_rounds: List[Round] = []
        for _ in range(REPS):
            sync_rounds.append(run_sync({
                "sync mutex": ll_sync(client, "bench:pyperf:sm"),
                "sync semaphore3": ll_sync(client, "bench:pyperf:ss", permits=3),
            }))
            async_rounds.append(run_async(lambda: {
                "async mutex": ll_async(client, "bench:pyperf:am"),
                "async semaphore3": ll_async(client, "bench:pyperf:as", permits=3),
            }))
    report("semaphore/mutex sync, 1 node", sync_rounds,
           [("semaphore3/mutex sync", "sync semaphore3", "sync mutex")])
    report("semaphore/mutex asyncio, 1 node", async_rounds,
           [("semaphore3/mutex async", "async semaphore3", "async mutex")])


GROUPS = {"async": group_async, "sem": group_sem, "wasm": group_wasm}


def main() -> None:
    urls = [u for u in os.environ.get("LIBLOCK_NODES", "").split(",") if u]
    if len(urls) < 5:
        sys.exit("bench_pyperf.py: run under `build/redisnodes -n 5 -- ...` (LIBLOCK_NODES needs 5 URLs)")
    only = [g.strip() for g in os.environ.get("BENCH_GROUPS", ",".join(GROUPS)).split(",") if g.strip()]
    for g in only:
        if g not in GROUPS:
            sys.exit(f"bench_pyperf.py: BENCH_GROUPS: unknown group {g} (groups: {', '.join(GROUPS)})")
    print(f"python {sys.version.split()[0]}; BENCH_N={N}, BENCH_REPS={REPS}; groups: {', '.join(only)}")
    for g in only:
        GROUPS[g](urls)


if __name__ == "__main__":
    main()
