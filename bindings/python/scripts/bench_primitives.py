"""make bench, Python part "primitives" (BENCH_ONLY=primitives): the primitives beyond the mutex beside
liblock's own mutex pair, native backend, sync and asyncio, on 1 and 5 nodes, in the same run.

Each variant is one uncontended acquire+release pair on its own resource, called as users write
it (no wait argument: the 10 s default wait, unused here): the mutex (``acquire(r, ttl=10)``), a
permit of a 3-permit semaphore (``permits=3``), a reader and the writer of a read-write lock
(``mode="read"`` / ``"write"``) and a two-resource lock (``acquire([a, b], ttl=10)``). The
variants alternate in blocks (bench.py's ``compare``); each row is the median µs per pair, with
its ratio to the mutex pair of the same API and run (the aim: at most 1.2x). Python has
no peer offering these over a quorum; pottery's and redis-py's locks are mutexes (bench.py's
pairs part).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, Callable, Dict, List

import liblock

TTL = 10.0
FORMS: Dict[str, Dict[str, Any]] = {
    "mutex": {},
    "semaphore3": {"permits": 3},
    "reader": {"mode": "read"},
    "writer": {"mode": "write"},
    "multi2": {},  # over a list of two resources
}


def _resource(form: str, tag: str) -> Any:
    base = f"bench:prim:{tag}:{form}"
    return [f"{base}:a", f"{base}:b"] if form == "multi2" else base


def primitives(urls: List[str], compare: Callable[[Dict[str, Callable[[int], List[int]]]], Dict[str, float]]) -> None:
    print("\nprimitives: acquire+release pairs through the native backend, defaults (no wait"
          " argument),\n  uncontended, medians µs per pair; ratio to the mutex pair of the same API, same run"
          " (target ≤ 1.2x)")
    print(f"{'nodes':>5}  {'variant':<12}{'sync':>9}{'/mutex':>8}{'asyncio':>10}{'/mutex':>8}")
    for n in (1, 5):
        with liblock.Client(urls[:n], node_timeout=0.5) as client:
            def sync(form: str) -> Callable[[int], List[int]]:
                res, kw = _resource(form, f"s{n}"), FORMS[form]

                def run(count: int) -> List[int]:
                    out: List[int] = []
                    for _ in range(count):
                        t0 = time.perf_counter_ns()
                        client.acquire(res, ttl=TTL, **kw).release()
                        out.append(time.perf_counter_ns() - t0)
                    return out
                return run

            def aio(form: str) -> Callable[[int], List[int]]:
                res, kw = _resource(form, f"a{n}"), FORMS[form]

                def run(count: int) -> List[int]:
                    async def go() -> List[int]:
                        out: List[int] = []
                        for _ in range(count):
                            t0 = time.perf_counter_ns()
                            lock = await client.acquire_async(res, ttl=TTL, **kw)
                            await lock.release_async()
                            out.append(time.perf_counter_ns() - t0)
                        return out
                    return asyncio.run(go())
                return run

            variants: Dict[str, Callable[[int], List[int]]] = {}
            for form in FORMS:
                variants[f"sync {form}"] = sync(form)
                variants[f"async {form}"] = aio(form)
            res = compare(variants)
        for form in FORMS:
            s, a = res[f"sync {form}"], res[f"async {form}"]
            print(f"{n:>5}  {form:<12}{s:>9.1f}{s / res['sync mutex']:>7.2f}x{a:>10.1f}{a / res['async mutex']:>7.2f}x")
