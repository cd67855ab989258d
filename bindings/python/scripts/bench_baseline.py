"""This tree's Python package beside another tree's (a baseline: the branch point, main),
in one process on the same liblock.so and liblock.wasm, pair by pair, for the APIs the
asyncio host runs: asyncio native and wasm, and the synchronous API (native: the blocking
C ABI fast path; wasm: the loop-thread host). Before/after figures for a change of the
host that bench_pyperf.py's peers would only blur. Asserts nothing.

The two packages trade places every other pair (the first pair after another library's
is slower: an A/A run measured the first of two identical packages 1.05-1.15x the
second without the swap). Per round: the median µs and the CPU per pair
(time.process_time: every thread of the process); then the ratio this/baseline per
round and its median.

  BENCH_BASELINE=/work/main/bindings/python/liblock \\
  PYTHONPATH=bindings/python LIBLOCK_PATH=build/liblock.so \\
  build/redisnodes -n 5 -- build/venv-python/bin/python bindings/python/scripts/bench_baseline.py

BENCH_NODES (5), BENCH_N pairs per variant and round (1000), BENCH_REPS rounds (3),
BENCH_APIS (a comma-separated subset of: async-native, async-wasm, sync-native, sync-wasm).
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import statistics
import sys
import time
from typing import Any, Callable, Dict, List, Tuple

import liblock

N = int(os.environ.get("BENCH_N", "1000"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
NODES = int(os.environ.get("BENCH_NODES", "5"))
APIS = os.environ.get("BENCH_APIS", "async-native,async-wasm,sync-native,sync-wasm").split(",")
WARMUP = 100


def baseline() -> Any:
    path = os.environ.get("BENCH_BASELINE")
    if not path:
        sys.exit("bench_baseline.py: set BENCH_BASELINE to another tree's bindings/python/liblock")
    spec = importlib.util.spec_from_file_location(
        "liblock_baseline", os.path.join(path, "__init__.py"), submodule_search_locations=[path])
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["liblock_baseline"] = mod
    spec.loader.exec_module(mod)
    return mod


Round = Dict[str, List[List[int]]]


def _time(got: Round, k: str, i: int, c0: int, t0: int) -> None:
    t1, c1 = time.perf_counter_ns(), time.process_time_ns()
    if i >= WARMUP:
        got[k][0].append(t1 - t0)
        got[k][1].append(c1 - c0)


def run_sync(clients: Dict[str, Any]) -> Round:
    got: Round = {k: [[], []] for k in clients}
    names = list(clients)
    pc, pt = time.perf_counter_ns, time.process_time_ns
    for i in range(WARMUP + N):
        for k in (names[::-1] if i % 2 else names):
            c0, t0 = pt(), pc()
            clients[k].acquire(f"bench:baseline:{k}", ttl=10.0).release()
            _time(got, k, i, c0, t0)
    return got


def run_async(clients: Dict[str, Any]) -> Round:
    async def go() -> Round:
        got: Round = {k: [[], []] for k in clients}
        names = list(clients)
        pc, pt = time.perf_counter_ns, time.process_time_ns
        for i in range(WARMUP + N):
            for k in (names[::-1] if i % 2 else names):
                c0, t0 = pt(), pc()
                lock = await clients[k].acquire_async(f"bench:baseline:{k}", ttl=10.0)
                await lock.release_async()
                _time(got, k, i, c0, t0)
        return got
    return asyncio.run(go())


def report(title: str, rounds: List[Round]) -> None:
    print(f"\n== {title}, {NODES} node(s): {N} pairs per variant and round, alternating pair by pair")
    for k in ("this", "baseline"):
        cells = "  ".join(f"{statistics.median(r[k][0]) / 1000:7.1f} µs (cpu {statistics.mean(r[k][1]) / 1000:6.1f})"
                          for r in rounds)
        print(f"  {k:<8}  {cells}")
    lat = [statistics.median(r["this"][0]) / statistics.median(r["baseline"][0]) for r in rounds]
    cpu = [statistics.mean(r["this"][1]) / statistics.mean(r["baseline"][1]) for r in rounds]
    print(f"  this/baseline: latency {statistics.median(lat):.3f}x (rounds "
          + ", ".join(f"{x:.3f}" for x in lat) + f"), cpu {statistics.median(cpu):.3f}x (rounds "
          + ", ".join(f"{x:.3f}" for x in cpu) + ")")


def main() -> None:
    urls = [u for u in os.environ.get("LIBLOCK_NODES", "").split(",") if u][:NODES]
    if len(urls) < NODES:
        sys.exit(f"bench_baseline.py: run under `build/redisnodes -n {NODES} -- ...` (LIBLOCK_NODES)")
    base = baseline()
    print(f"python {sys.version.split()[0]}; this: {os.path.dirname(liblock.__file__)}; "
          f"baseline: {os.path.dirname(base.__file__)}")
    runs: Dict[str, Tuple[Callable[[Dict[str, Any]], Round], str]] = {
        "async-native": (run_async, "native"), "async-wasm": (run_async, "wasm"),
        "sync-native": (run_sync, "native"), "sync-wasm": (run_sync, "wasm")}
    for api in APIS:
        if api not in runs:
            sys.exit(f"bench_baseline.py: BENCH_APIS: unknown {api} (one of {', '.join(runs)})")
        run, backend = runs[api]
        clients = {"this": liblock.Client(urls, node_timeout=0.5, backend=backend),
                   "baseline": base.Client(urls, node_timeout=0.5, backend=backend)}
        try:
            rounds = [run(clients) for _ in range(REPS)]
        finally:
            for c in clients.values():
                c.close()
        report(api, rounds)


if __name__ == "__main__":
    main()
