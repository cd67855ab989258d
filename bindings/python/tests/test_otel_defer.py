"""Telemetry recorded after the outcome is delivered (_otel.Lane, README "Cost"): the spans
carry the times of what they describe, not of when they were made; the caller's span is
their parent; an asyncio caller's continuation runs before the records are made, a
synchronous call's are made before it returns; an SDK
set after the client was made is used from then on; a resource_label that raises loses
its own records only; without an SDK the warnings keep their resource. Real
redis-servers."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from typing import Any, Dict, Optional

import pytest
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import liblock
from conftest import BACKEND, Cluster, count_drives, eventually, eventually_async


def providers() -> Any:
    reader = InMemoryMetricReader()
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return reader, MeterProvider(metric_readers=[reader]), exporter, tp


def total(reader: InMemoryMetricReader, name: str, want: Optional[Dict[str, Any]] = None) -> float:
    n = 0.0
    data = reader.get_metrics_data()
    for rm in (data.resource_metrics if data else []):
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == name:
                    for p in m.data.data_points:
                        if all(str(p.attributes.get(k)) == str(v) for k, v in (want or {}).items()):
                            n += getattr(p, "value", None) if hasattr(p, "value") else p.count
    return n


def test_async_records_after_the_continuation_with_the_operation_times(c3: Cluster) -> None:
    reader, mp, exporter, tp = providers()

    async def main() -> None:
        client = liblock.Client(c3.urls, node_timeout=2, backend=BACKEND,
                                telemetry={"meter_provider": mp, "tracer_provider": tp})
        try:
            with tp.get_tracer("test").start_as_current_span("parent") as parent:
                t0 = time.time_ns()
                lock = await client.acquire_async("otel:defer", ttl=10)
                t1 = time.time_ns()
                # The continuation runs first: nothing recorded yet (the control that the
                # checks below are about records made later, not at once).
                assert [s.name for s in exporter.get_finished_spans()] == [], "recorded before the continuation"
                assert total(reader, "liblock.acquires") == 0
                # Hold the loop: the records are made at least this late.
                spin = time.monotonic() + 0.03
                while time.monotonic() < spin:
                    pass  # busy on purpose: delays the deferred records
                await eventually_async(lambda: exporter.get_finished_spans(), what="the acquire span")
                assert total(reader, "liblock.acquires", {"liblock.outcome": "ok"}) == 1
                acq = exporter.get_finished_spans()[0]
                assert acq.name == "liblock.acquire"
                assert t0 <= acq.start_time <= acq.end_time <= t1, (t0, acq.start_time, acq.end_time, t1)
                replies = [e for e in acq.events if e.name == "liblock.node.reply"]
                assert len(replies) >= 2
                assert all(acq.start_time <= e.timestamp <= acq.end_time for e in acq.events)
                assert acq.attributes["liblock.outcome"] == "ok" and acq.attributes["liblock.attempts"] == 1
                assert acq.parent is not None and acq.parent.span_id == parent.get_span_context().span_id
                t2 = time.time_ns()
                await lock.release_async()
                t3 = time.time_ns()
                await eventually_async(lambda: len(exporter.get_finished_spans()) == 2, what="the release span")
                rel = exporter.get_finished_spans()[1]
                assert rel.name == "liblock.release" and t2 <= rel.start_time <= rel.end_time <= t3
                assert rel.parent is not None and rel.parent.span_id == parent.get_span_context().span_id
        finally:
            client.close()
    asyncio.run(main())
    assert total(reader, "liblock.releases", {"liblock.outcome": "ok"}) == 1
    assert total(reader, "liblock.hold.duration") == 1  # its count


def test_sync_records_are_made_before_the_call_returns(c3: Cluster) -> None:
    """The synchronous API's lane records in the engine's steps (deferring gains nothing
    under the GIL): what a call did is in the SDK when it returns."""
    reader, mp, exporter, tp = providers()
    client = liblock.Client(c3.urls, node_timeout=2, backend=BACKEND,
                            telemetry={"meter_provider": mp, "tracer_provider": tp})
    other = liblock.Client(c3.urls, node_timeout=2, backend=BACKEND)
    try:
        t0 = time.time_ns()
        lock = client.acquire("otel:sync", ttl=10)
        t1 = time.time_ns()
        assert [s.name for s in exporter.get_finished_spans()] == ["liblock.acquire"]
        assert total(reader, "liblock.acquires", {"liblock.outcome": "ok"}) == 1
        lock.release()
        t2 = time.time_ns()
        assert total(reader, "liblock.releases", {"liblock.outcome": "ok"}) == 1
        held = other.acquire("otel:busy", ttl=10)
        try:
            t3 = time.time_ns()
            try:
                client.acquire("otel:busy", ttl=10, wait=0)
                raise AssertionError("acquired a held lock")
            except liblock.NotAcquired:
                pass
            t4 = time.time_ns()
        finally:
            held.release()
    finally:
        client.close()
        other.close()
    spans = {s.name + ":" + s.attributes["liblock.outcome"]: s for s in exporter.get_finished_spans()}
    assert set(spans) == {"liblock.acquire:ok", "liblock.release:ok", "liblock.acquire:not_acquired"}
    a, r, f = spans["liblock.acquire:ok"], spans["liblock.release:ok"], spans["liblock.acquire:not_acquired"]
    assert t0 <= a.start_time <= a.end_time <= t1
    assert t1 <= r.start_time <= r.end_time <= t2
    assert t3 <= f.start_time <= f.end_time <= t4
    assert f.status.status_code == trace.StatusCode.ERROR
    ex = [e for e in f.events if e.name == "exception"]
    assert len(ex) == 1 and t3 <= ex[0].timestamp <= t4
    assert total(reader, "liblock.acquires", {"liblock.outcome": "not_acquired"}) == 1
    assert total(reader, "liblock.releases", {"liblock.outcome": "ok"}) == 1


def test_a_resource_label_that_raises_loses_its_own_records_only(c1: Cluster, caplog: Any) -> None:
    reader, mp, exporter, tp = providers()

    def label(r: str) -> str:
        if r == "otel:raise":
            raise ValueError("label bug")
        return "fine"
    client = liblock.Client(c1.urls, node_timeout=2, backend=BACKEND,
                            telemetry={"meter_provider": mp, "tracer_provider": tp, "resource_label": label})
    try:
        client.acquire("otel:raise", ttl=10).release()  # its step is not broken by the label
        client.acquire("otel:fine", ttl=10).release()
    finally:
        client.close()
    assert any("telemetry" in r.getMessage() and r.exc_info and "label bug" in str(r.exc_info[1])
               for r in caplog.records if r.name == "liblock")
    assert total(reader, "liblock.acquires") == 1
    assert total(reader, "liblock.acquires", {"liblock.resource": "fine"}) == 1
    acq = [s for s in exporter.get_finished_spans() if s.name == "liblock.acquire"]
    assert sorted(str(s.attributes.get("liblock.resource")) for s in acq) == ["None", "fine"]
    assert all(s.attributes["liblock.outcome"] == "ok" for s in acq)


def test_without_an_sdk_a_loss_is_still_logged_with_its_resource(c1: Cluster, caplog: Any) -> None:
    """telemetry=True and no SDK: the lane is quiet (it skips the reports that only feed
    metrics, spans and DEBUG lines); the warnings keep what they say."""
    caplog.set_level(logging.WARNING, logger="liblock")
    client = liblock.Client(c1.urls, node_timeout=2, backend=BACKEND, telemetry=True)
    try:
        lock = client.acquire("otel:quiet", ttl=10)
        c1.do(0, "DEL", "otel:quiet")
        try:
            lock.extend(10)
            raise AssertionError("extended a deleted lock")
        except liblock.LockLost:
            pass
        # On the synchronous native fast path the line comes from lock_on_lost, on a
        # library thread: not necessarily before extend() raised.
        eventually(lambda: any(r.levelno == logging.WARNING and r.getMessage().startswith("liblock: lock lost: ")
                               and getattr(r, "liblock_resource", None) == "otel:quiet"
                               and '(extend "otel:quiet")' in r.getMessage()
                               for r in caplog.records if r.name == "liblock"), what="the loss's log line")
    finally:
        client.close()


def test_the_api_with_no_sdk_runs_synchronous_calls_on_the_callers_thread(
        c1: Cluster, caplog: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """telemetry=True with nothing recording takes the path telemetry off takes: the
    synchronous calls run on the caller's thread (_syncdrive), not handed to the loop
    thread, and a lock lost meanwhile (its validity ran out, nobody extending it) is still
    logged with its resource. With an SDK too, recording in the step (the synchronous
    lane's): the control shows the calls recorded, so the drive did not skip the lane."""
    from liblock import _syncdrive

    monkeypatch.delenv("LIBLOCK_SYNC_DRIVE", raising=False)
    if not _syncdrive.enabled():
        pytest.skip("no caller drive here (epoll, CPython's selector loop)")
    ends = count_drives(monkeypatch)
    caplog.set_level(logging.WARNING, logger="liblock")
    client = liblock.Client(c1.urls, node_timeout=0.2, backend=BACKEND, telemetry=True)
    try:
        client.acquire("otel:fast", ttl=10).release()  # (opens the connection on the loop thread)
        ends.clear()
        for _ in range(3):
            client.acquire("otel:fast", ttl=10).release()
        assert ends == [_syncdrive._DONE] * 6
        lock = client.acquire("otel:fast:expires", ttl=0.6)
        eventually(lambda: any(r.getMessage() == 'liblock: lock lost: validity ran out (hold "otel:fast:expires")'
                               for r in caplog.records if r.name == "liblock"), what="the loss's log line")
        assert lock.lost
        assert not any('"otel:fast")' in r.getMessage() for r in caplog.records)
    finally:
        client.close()
    reader, mp, exporter, tp = providers()
    client = liblock.Client(c1.urls, node_timeout=0.2, backend=BACKEND,
                            telemetry={"meter_provider": mp, "tracer_provider": tp})
    try:
        client.acquire("otel:fast", ttl=10).release()
        ends.clear()
        client.acquire("otel:fast", ttl=10).release()
        assert ends == [_syncdrive._DONE] * 2
        assert total(reader, "liblock.acquires") == 2
        assert sorted(s.name for s in exporter.get_finished_spans()).count("liblock.acquire") == 2
    finally:
        client.close()


SET_LATER = r"""
import os, sys
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import liblock

client = liblock.Client(os.environ["URLS"].split(","), node_timeout=2, backend=os.environ["BACKEND"], telemetry=True)
client.acquire("otel:later", ttl=10).release()
reader, exporter = InMemoryMetricReader(), InMemorySpanExporter()
tp = TracerProvider()
tp.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(tp)
metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
client.acquire("otel:later", ttl=10).release()
client.close()
names = sorted(s.name for s in exporter.get_finished_spans())
acquires = sum(p.value for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics
               for m in sm.metrics if m.name == "liblock.acquires" for p in m.data.data_points)
print(names, acquires)
"""


def test_an_sdk_set_after_the_client_was_made_is_used_from_then_on(c1: Cluster) -> None:
    """The global providers are set once per process: a child process of its own."""
    env = dict(os.environ, URLS=",".join(c1.urls), BACKEND=BACKEND)
    out = subprocess.run([sys.executable, "-c", SET_LATER], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # Only the second pair, made after the SDK was set: one acquire counted, two spans.
    assert out.stdout.strip() == "['liblock.acquire', 'liblock.release'] 1", out.stdout + out.stderr


def _count_reports(host: Any, counts: Dict[int, int]) -> None:
    """Spy on a host's engine output: every REPORT action (by what) it is handed."""
    from liblock import _proto_gen as G
    apply = host._apply

    def spy(buf: Any) -> Any:
        at = 0
        while at < len(buf):
            a, at = G.decode_action(buf, at)
            if a[0] == G.ACT_REPORT:
                counts[a[1]] = counts.get(a[1], 0) + 1
        return apply(buf)
    host._apply = spy


def test_a_quiet_asyncio_lane_is_handed_only_the_warnings(c1: Cluster, caplog: Any) -> None:
    """telemetry=True and no SDK: the host tells its engine (REPORTS 1) to report only
    what a quiet lane logs, so uneventful pairs bring no REPORT at all, and a loss still
    comes with its resource. Control: a client whose SDK records is handed every report."""
    from liblock import _otel
    caplog.set_level(logging.WARNING, logger="liblock")
    quiet = liblock.Client(c1.urls, node_timeout=2, backend=BACKEND, telemetry=True)
    reader, mp, exporter, tp = providers()
    loud = liblock.Client(c1.urls, node_timeout=2, backend=BACKEND,
                          telemetry={"meter_provider": mp, "tracer_provider": tp})
    seen_quiet: Dict[int, int] = {}
    seen_loud: Dict[int, int] = {}

    async def main() -> None:
        for client, seen in ((quiet, seen_quiet), (loud, seen_loud)):
            await (await client.acquire_async("otel:rq", ttl=10)).release_async()  # the host made
            _count_reports(client._driver.async_host(), seen)
            for _ in range(5):
                await (await client.acquire_async("otel:rq", ttl=10)).release_async()
        assert seen_quiet == {}, seen_quiet
        assert seen_loud.get(_otel.ACQUIRE_END) == 5 and seen_loud.get(_otel.HOLD) == 5, seen_loud
        lock = await quiet.acquire_async("otel:rq:lost", ttl=10)
        c1.do(0, "DEL", "otel:rq:lost")
        with pytest.raises(liblock.LockLost):
            await lock.extend_async(10)
        await eventually_async(lambda: any(r.getMessage().startswith("liblock: lock lost: ")
                                           and getattr(r, "liblock_resource", None) == "otel:rq:lost"
                                           for r in caplog.records if r.name == "liblock"),
                               what="the loss's log line")
        assert set(seen_quiet) == {_otel.LOST}, seen_quiet
        await lock.release_async() if not lock.lost else None
    try:
        asyncio.run(main())
    finally:
        quiet.close()
        loud.close()
