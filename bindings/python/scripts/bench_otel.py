"""The cost of metrics and traces (README "Metrics, traces and logs"): clients on the
same nodes take turns pair by pair (acquire + release), so that all see the same
machine. Synchronous: off (the default: the blocking C ABI fast path), off-host
(LIBLOCK_NATIVE_SYNC=host's path, the one a client with telemetry takes), api
(telemetry=True, no SDK: the API's no-op) and sdk (the SDK with an
InMemoryMetricReader and a TracerProvider recording every span into no processor);
asyncio: off, api, sdk. Prints medians and ratios; asserts nothing.

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


def main() -> None:
    urls = os.environ["LIBLOCK_NODES"].split(",")
    for n in (1, 3):
        nodes = urls[:n]
        reader = InMemoryMetricReader()
        sdk = {"meter_provider": MeterProvider(metric_readers=[reader]), "tracer_provider": TracerProvider()}
        os.environ["LIBLOCK_NATIVE_SYNC"] = "host"
        off_host = liblock.Client(nodes)
        del os.environ["LIBLOCK_NATIVE_SYNC"]
        sync: Dict[str, Any] = {"off": liblock.Client(nodes), "off-host": off_host,
                                "api": liblock.Client(nodes, telemetry=True),
                                "sdk": liblock.Client(nodes, telemetry=sdk)}
        lat: Dict[str, List[float]] = {k: [] for k in sync}
        names = list(sync)
        for i in range((200 + N) * len(names)):
            k = names[i % len(names)]
            t0 = time.perf_counter()
            sync[k].acquire("bench", ttl=10, wait=0).release()
            if i >= 200 * len(names):
                lat[k].append(time.perf_counter() - t0)
        p50 = {k: statistics.median(v) * 1e6 for k, v in lat.items()}
        print(f"sync  nodes={n} " + " ".join(f"{k}-p50-µs={v:.1f}" for k, v in p50.items())
              + f" api-x={p50['api'] / p50['off-host']:.3f} sdk-x={p50['sdk'] / p50['off-host']:.3f}"
              + f" (against the fast path: api-x={p50['api'] / p50['off']:.3f})")

        async def run_async() -> Dict[str, float]:
            clients = {k: sync[k] for k in ("off-host", "api", "sdk")}
            alat: Dict[str, List[float]] = {k: [] for k in clients}
            ks = list(clients)
            for i in range((200 + N) * len(ks)):
                k = ks[i % len(ks)]
                t0 = time.perf_counter()
                lock = await clients[k].acquire_async("bench", ttl=10, wait=0)
                await lock.release_async()
                if i >= 200 * len(ks):
                    alat[k].append(time.perf_counter() - t0)
            return {k: statistics.median(v) * 1e6 for k, v in alat.items()}
        a = asyncio.run(run_async())
        print(f"async nodes={n} " + " ".join(f"{k.replace('-host', '')}-p50-µs={v:.1f}" for k, v in a.items())
              + f" api-x={a['api'] / a['off-host']:.3f} sdk-x={a['sdk'] / a['off-host']:.3f}")
        for c in sync.values():
            c.close()


if __name__ == "__main__":
    main()
