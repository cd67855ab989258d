"""Contention across processes (spawn), with overlap checks. Threads contending (one shared
client, clients of their own) are the shared suite's, run through the blocking API in a
thread a request (make test-interop)."""

from __future__ import annotations

import multiprocessing
import time
from typing import List, Tuple

from conftest import Cluster, no_keys


def assert_no_overlap(spans: List[Tuple[float, float]]) -> None:
    spans = sorted(spans)
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        assert a1 <= b0, f"critical sections overlap: {(a0, a1)} and {(b0, b1)}"


def test_spawn_processes_contend(c3: Cluster, tmp_path) -> None:
    from _workers import contend

    ctx = multiprocessing.get_context("spawn")
    marker = str(tmp_path / "inside")
    with ctx.Pool(4) as pool:
        results = pool.starmap(contend, [(c3.urls, "proc-counter", 10, marker)] * 4)
    spans = [s for r in results for s in r]
    assert len(spans) == 40
    assert_no_overlap(spans)
    no_keys(c3)


def test_spawn_run_once(c3: Cluster) -> None:
    from _workers import nightly

    ctx = multiprocessing.get_context("spawn")
    procs = 4
    # every process is up and connected by then, on a loaded machine too (spawn, import
    # liblock, the wasm module's compile): one that came later than the winner's 2 s job
    # would run the job a second time
    start_at = time.time() + 5.0
    with ctx.Pool(procs) as pool:
        ran = pool.starmap(nightly, [(c3.urls, "nightly-report", start_at)] * procs)
    assert sum(ran) == 1
    no_keys(c3)
