"""The OpenTelemetry Python SDK's own cost for the records of one pair, with no liblock
code at all (README "Metrics, traces and logs", Cost): the calls the instrumentation
makes for one acquire + release on one node — two spans (the acquire's and the
release's), each with one node event, three histogram records (acquire duration, hold
duration, node request duration twice counted as two) and two counter adds — against
an SDK with an InMemoryMetricReader and a TracerProvider that records every span
(the bench_otel.py configuration), and the metrics alone. Prints the CPU per pair
(time.process_time), best and median of five rounds of BENCH_N (20000) pairs.

This is the floor any synchronous Python driver pays on the caller's thread for a
pair with that SDK: compare it with a synchronous pair's own latency (bench_otel.py's
"off", the C ABI fast path) to see why the issue's 1.15x cannot be reached there.

    build/venv-python/bin/python bindings/python/scripts/bench_sdk_floor.py
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Callable, List

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

N = int(os.environ.get("BENCH_N", "20000"))


def main() -> None:
    reader = InMemoryMetricReader()
    meter = MeterProvider(metric_readers=[reader]).get_meter("liblock")
    tracer = TracerProvider().get_tracer("liblock")
    acquire_s = meter.create_histogram("liblock.acquire.duration", unit="s")
    hold_s = meter.create_histogram("liblock.hold.duration", unit="s")
    node_s = meter.create_histogram("liblock.node.request.duration", unit="s")
    acquires = meter.create_counter("liblock.acquires")
    releases = meter.create_counter("liblock.releases")
    outcome = {"liblock.outcome": "ok"}
    node = {"liblock.node": "redis://127.0.0.1:6379"}

    def metrics() -> None:
        acquire_s.record(0.0001, outcome)
        acquires.add(1, outcome)
        node_s.record(0.00005, node)
        hold_s.record(0.0001, outcome)
        releases.add(1, outcome)
        node_s.record(0.00005, node)

    def pair() -> None:
        span = tracer.start_span("liblock.acquire")
        span.add_event("liblock.node.reply", node)
        span.end()
        span = tracer.start_span("liblock.release")
        span.add_event("liblock.node.reply", node)
        span.end()
        metrics()

    def rounds(fn: Callable[[], None]) -> List[float]:
        for _ in range(N // 10):
            fn()
        out = []
        for _ in range(5):
            t0 = time.process_time()
            for _ in range(N):
                fn()
            out.append((time.process_time() - t0) / N * 1e6)
        return out

    for name, fn in (("spans + metrics", pair), ("metrics only", metrics)):
        r = rounds(fn)
        print(f"{name}: CPU µs per pair best {min(r):.1f}, median {statistics.median(r):.1f}")


if __name__ == "__main__":
    main()
