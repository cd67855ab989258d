"""Contention across threads and across processes (spawn), with overlap checks."""

from __future__ import annotations

import multiprocessing
import threading
import time
from typing import List, Tuple

import pytest

import liblock
from conftest import BACKEND, Cluster, no_keys


def assert_no_overlap(spans: List[Tuple[float, float]]) -> None:
    spans = sorted(spans)
    for (a0, a1), (b0, b1) in zip(spans, spans[1:]):
        assert a1 <= b0, f"critical sections overlap: {(a0, a1)} and {(b0, b1)}"


@pytest.mark.parametrize("nodes", [1, 3, 5])
def test_threads_contend(request, nodes: int) -> None:
    cluster: Cluster = request.getfixturevalue(f"c{nodes}")
    threads_n, rounds = 8, 15
    inside = 0
    max_inside = 0
    spans: List[Tuple[float, float]] = []
    guard = threading.Lock()
    errors: List[BaseException] = []

    def worker(client: liblock.Client) -> None:
        nonlocal inside, max_inside
        try:
            for _ in range(rounds):
                with client.lock("counter", ttl=10.0, wait=60.0):
                    t0 = time.monotonic()
                    with guard:
                        inside += 1
                        max_inside = max(max_inside, inside)
                    time.sleep(0.0005)
                    with guard:
                        inside -= 1
                    spans.append((t0, time.monotonic()))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    # half the threads share one client, the others have their own
    shared = liblock.Client(cluster.urls, node_timeout=0.5, backend=BACKEND)
    own = [liblock.Client(cluster.urls, node_timeout=0.5, backend=BACKEND) for _ in range(threads_n // 2)]
    clients = [shared] * (threads_n - len(own)) + own
    ts = [threading.Thread(target=worker, args=(c,)) for c in clients]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    for c in own + [shared]:
        c.close()
    assert not errors, errors
    assert max_inside == 1
    assert len(spans) == threads_n * rounds
    assert_no_overlap(spans)
    no_keys(cluster)


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
    start_at = time.time() + 3.0  # every process is up and connected by then
    with ctx.Pool(procs) as pool:
        ran = pool.starmap(nightly, [(c3.urls, "nightly-report", start_at)] * procs)
    assert sum(ran) == 1
    no_keys(c3)
