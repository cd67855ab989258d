"""The cost of metrics and traces (README "Metrics, traces and logs"): clients on the
same nodes take turns pair by pair (acquire + release), so that all see the same
machine, the order of the sides turning round by round. Synchronous and asyncio: off (the
default), api (telemetry=True, no SDK: the API's no-op) and sdk (the SDK with an
InMemoryMetricReader and a TracerProvider recording every span into no processor).

Per pair: the caller's latency (from the acquire call until the release returned) and
the process's CPU time (time.process_time: every thread, the loop thread's too).
A synchronous client records its telemetry in the engine's steps on its loop thread
(_otel.py: deferring it gains nothing under the GIL); an asyncio client after the
outcome is delivered, once none of its operations is in flight, which the bench lets
happen (a direct flush, on this thread) before the next pair, whatever the side, so
that no side's telemetry runs inside another side's pair, and counts in the CPU figure. Prints medians of the
latency, mean CPU per pair, and the ratios to off(-host); asserts nothing.

Run under build/redisnodes: build/redisnodes -n 3 -- build/venv-python/bin/python
bindings/python/scripts/bench_otel.py (LIBLOCK_NODES: the URLs; BENCH_N pairs)."""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from typing import Any, Callable, Dict, List

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

import liblock

N = int(os.environ.get("BENCH_N", "2000"))
WARM = 200


def settler(client: Any) -> Callable[[], None]:
    """What records an asyncio client's deferred telemetry now (its lane on this thread's
    loop); nothing for a client without telemetry, or a liblock that records it at once."""
    tel = getattr(client._driver, "tel", None)
    flush = getattr(tel, "flush_now", None)
    if flush is None:
        return lambda: None
    return lambda: flush()


def report(kind: str, n: int, lat: Dict[str, List[float]], cpu: Dict[str, List[float]], base: str) -> None:
    p50 = {k: statistics.median(v) * 1e6 for k, v in lat.items()}
    c = {k: statistics.fmean(v) * 1e6 for k, v in cpu.items()}
    line = f"{kind} nodes={n} " + " ".join(f"{k}-p50-µs={v:.1f}" for k, v in p50.items())
    line += f" api-x={p50['api'] / p50[base]:.3f} sdk-x={p50['sdk'] / p50[base]:.3f}"
    line += " | cpu-µs/pair (mean) " + " ".join(f"{k}={v:.1f}" for k, v in c.items())
    line += f" api-cpu-x={c['api'] / c[base]:.3f} sdk-cpu-x={c['sdk'] / c[base]:.3f}"
    print(line, flush=True)


def main() -> None:
    urls = os.environ["LIBLOCK_NODES"].split(",")
    for n in (1, 3):
        nodes = urls[:n]
        reader = InMemoryMetricReader()
        sdk = {"meter_provider": MeterProvider(metric_readers=[reader]), "tracer_provider": TracerProvider()}
        # node_timeout well above a loaded machine's stalls: a timed-out release would
        # leave its key and fail the next pair with NotAcquired.
        nt = 2.0
        sync: Dict[str, Any] = {"off": liblock.Client(nodes, node_timeout=nt),
                                "api": liblock.Client(nodes, node_timeout=nt, telemetry=True),
                                "sdk": liblock.Client(nodes, node_timeout=nt, telemetry=sdk)}
        lat: Dict[str, List[float]] = {k: [] for k in sync}
        cpu: Dict[str, List[float]] = {k: [] for k in sync}
        names = list(sync)
        for i in range((WARM + N) * len(names)):
            k = names[(i + i // len(names)) % len(names)]
            c0 = time.process_time()
            t0 = time.perf_counter()
            sync[k].acquire("bench:" + k, ttl=10).release()
            t1 = time.perf_counter()
            c1 = time.process_time()
            if i >= WARM * len(names):
                lat[k].append(t1 - t0)
                cpu[k].append(c1 - c0)
        report("sync ", n, lat, cpu, "off")

        async def run_async() -> None:
            clients = {k: sync[k] for k in ("off", "api", "sdk")}
            alat: Dict[str, List[float]] = {k: [] for k in clients}
            acpu: Dict[str, List[float]] = {k: [] for k in clients}
            ks = list(clients)
            asettle = {k: settler(c) for k, c in clients.items()}
            for i in range((WARM + N) * len(ks)):
                k = ks[(i + i // len(ks)) % len(ks)]
                c0 = time.process_time()
                t0 = time.perf_counter()
                lock = await clients[k].acquire_async("bench:" + k, ttl=10)
                await lock.release_async()
                t1 = time.perf_counter()
                asettle[k]()
                c1 = time.process_time()
                if i >= WARM * len(ks):
                    alat[k].append(t1 - t0)
                    acpu[k].append(c1 - c0)
            report("async", n, alat, acpu, "off")
        asyncio.run(run_async())
        for c in sync.values():
            c.close()


if __name__ == "__main__":
    main()
