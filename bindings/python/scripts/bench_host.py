"""The asyncio host's socket paths beside each other, in one process, pair by
pair: the same acquire+release pair through one client per variant, whose hosts differ
only in how they reach the nodes. Asserts nothing; prints per round the median µs and the
CPU per pair (time.process_time: every thread of the process) and the ratios to the first
variant ("transports" by default).

  transports  asyncio transports for every connection (as TLS connections, or loops
              without add_reader, still have them): host._mux = False
  epoll       the host's epoll set (_epoll.Mux), replies read only when the loop says
              so: host.eager = False
  eager       the epoll set, and each request reads the replies already there right
              after its writes (Host._read_now); a read goes on through every ready
              connection after one settled an operation: host.done_first = False
  done-first  as eager, but a read stops at the reply that settled an operation,
              whose continuation then runs before the late replies are read; each
              request reads the set once: host.eager_polls = 1
  pollsN      as done-first, and a request reads the set again while it is pending,
              up to N times in all, while that pays on the host (the default: N = 64,
              _host._EAGER_POLLS; Host._spin; the synchronous API's loop thread: 1):
              host.eager_polls = N

Run under build/redisnodes (5 URLs), with PYTHONPATH=bindings/python:
  build/redisnodes -n 5 -- build/venv-python/bin/python bindings/python/scripts/bench_host.py
BENCH_NODES (5), BENCH_BACKEND (native or wasm), BENCH_SYNC=1 (the synchronous API
through its loop-thread host: wasm only, native's is the blocking C ABI fast path, which
no host runs), BENCH_N pairs per variant and round (1000), BENCH_REPS rounds (3),
BENCH_VARIANTS (a comma-separated subset of the names above; ratios are to the first).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import time
from typing import Any, Dict, List

import liblock

N = int(os.environ.get("BENCH_N", "1000"))
REPS = int(os.environ.get("BENCH_REPS", "3"))
NODES = int(os.environ.get("BENCH_NODES", "5"))
BACKEND = os.environ.get("BENCH_BACKEND", "native")
SYNC = os.environ.get("BENCH_SYNC") == "1"
WARMUP = 100
NAMES = tuple(os.environ.get("BENCH_VARIANTS", "transports,epoll,eager,done-first,polls64").split(","))


def _set_up(name: str, host: Any) -> None:
    """Before the host's first connection: the socket path the variant is named after."""
    if name == "transports":
        host._mux = False
    elif name == "epoll":
        host.eager = False
        host.done_first = False
    elif name == "eager":
        host.done_first = False
        host.eager_polls = 1
    elif name == "done-first":
        host.eager_polls = 1
    elif name.startswith("polls"):
        host.eager_polls = int(name[5:])


def _report(rounds: List[Dict[str, List[List[int]]]]) -> None:
    print(f"{BACKEND} {'sync' if SYNC else 'asyncio'}, {NODES} node(s): {N} pairs per variant "
          f"and round, alternating pair by pair")
    for r, got in enumerate(rounds):
        cells = "  ".join(f"{k} {statistics.median(got[k][0]) / 1000:7.1f} µs "
                          f"(cpu {sum(got[k][1]) / len(got[k][1]) / 1000:6.1f})" for k in NAMES)
        print(f"  round {r}: {cells}")
    base = NAMES[0]
    for k in NAMES[1:]:
        lat = [statistics.median(g[k][0]) / statistics.median(g[base][0]) for g in rounds]
        cpu = [sum(g[k][1]) / sum(g[base][1]) for g in rounds]
        print(f"  {k}/{base}: latency {statistics.median(lat):.3f}x (rounds "
              + ", ".join(f"{x:.3f}" for x in lat) + f"), cpu {statistics.median(cpu):.3f}x (rounds "
              + ", ".join(f"{x:.3f}" for x in cpu) + ")")


def main() -> None:
    urls = [u for u in os.environ.get("LIBLOCK_NODES", "").split(",") if u][:NODES]
    if len(urls) < NODES:
        sys.exit(f"bench_host.py: run under `build/redisnodes -n {NODES} -- ...` (LIBLOCK_NODES)")
    clients = {k: liblock.Client(urls, node_timeout=0.5, backend=BACKEND) for k in NAMES}
    pc, pt = time.perf_counter_ns, time.process_time_ns
    rounds: List[Dict[str, List[List[int]]]] = []
    try:
        if SYNC:
            for k, c in clients.items():
                host = c._driver.sync_host()
                if not hasattr(host, "eager"):
                    sys.exit("bench_host.py: this client's synchronous API has no loop-thread host "
                             "(the native fast path)")
                _set_up(k, host)
            for i in range(WARMUP + REPS * N):
                if i >= WARMUP and (i - WARMUP) % N == 0:
                    rounds.append({k: [[], []] for k in NAMES})
                for k, c in clients.items():
                    c0, t0 = pt(), pc()
                    c.acquire(f"bench:host:{k}", ttl=10.0).release()
                    t1, c1 = pc(), pt()
                    if i >= WARMUP:
                        rounds[-1][k][0].append(t1 - t0)
                        rounds[-1][k][1].append(c1 - c0)
        else:
            async def run() -> None:
                for k, c in clients.items():
                    _set_up(k, c._driver.async_host())
                for i in range(WARMUP + REPS * N):
                    if i >= WARMUP and (i - WARMUP) % N == 0:
                        rounds.append({k: [[], []] for k in NAMES})
                    for k, c in clients.items():
                        c0, t0 = pt(), pc()
                        lock = await c.acquire_async(f"bench:host:{k}", ttl=10.0)
                        await lock.release_async()
                        t1, c1 = pc(), pt()
                        if i >= WARMUP:
                            rounds[-1][k][0].append(t1 - t0)
                            rounds[-1][k][1].append(c1 - c0)
            asyncio.run(run())
    finally:
        for c in clients.values():
            c.close()
    _report(rounds)


if __name__ == "__main__":
    main()
