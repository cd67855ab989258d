"""Metrics, traces and logs (README "Metrics, traces and logs"): the engine's REPORT
actions mapped onto opentelemetry-api, checked with the real SDK (an InMemoryMetricReader
and an InMemorySpanExporter, test requirements) against what the test did on real
redis-servers: ten acquires, seven granted (one after a wait, one fenced), three refused,
one lock lost, one extended, a node killed, the rest released."""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any, Dict, Optional

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import liblock
from conftest import BACKEND, Cluster, eventually


class Metrics:
    def __init__(self, reader: InMemoryMetricReader) -> None:
        self.points: Dict[str, Any] = {}
        data = reader.get_metrics_data()
        for rm in (data.resource_metrics if data else []):
            for sm in rm.scope_metrics:
                for m in sm.metrics:
                    self.points.setdefault(m.name, []).extend(m.data.data_points)

    def _match(self, p: Any, want: Optional[Dict[str, Any]]) -> bool:
        return all(str(p.attributes.get(k)) == str(v) for k, v in (want or {}).items())

    def sum(self, name: str, want: Optional[Dict[str, Any]] = None) -> int:
        return sum(p.value for p in self.points.get(name, []) if self._match(p, want))

    def count(self, name: str, want: Optional[Dict[str, Any]] = None) -> int:
        return sum(p.count for p in self.points.get(name, []) if self._match(p, want))


def providers() -> Any:
    reader = InMemoryMetricReader()
    exporter = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return reader, MeterProvider(metric_readers=[reader]), exporter, tp


def test_metrics_spans_and_logs_match_what_was_done(c3: Cluster, caplog: Any) -> None:
    reader, mp, exporter, tp = providers()
    client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND,
                            telemetry={"meter_provider": mp, "tracer_provider": tp})
    other = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
    caplog.set_level(logging.DEBUG, logger="liblock")
    tokens = []
    parent = tp.get_tracer("test").start_span("parent")
    token = otel_context.attach(trace.set_span_in_context(parent))
    try:
        # One acquire that waits, counted as a waiter while it does.
        blocker = other.acquire("otel:wait", ttl=10)
        got: Dict[str, Any] = {}
        ctx = otel_context.get_current()

        def waiter() -> None:
            t = otel_context.attach(ctx)
            try:
                got["lock"] = client.acquire("otel:wait", ttl=10, wait=10)
            finally:
                otel_context.detach(t)
        th = threading.Thread(target=waiter)
        th.start()
        eventually(lambda: Metrics(reader).sum("liblock.acquire.waiters") == 1, what="a waiter")
        blocker.release()
        th.join(20)
        w = got["lock"]
        tokens.append(w.token)
        w.release()  # at once: it may hold only a quorum, and a node is killed below
        assert Metrics(reader).sum("liblock.acquire.waiters") == 0

        # Node 2 dies before the grants below, so each of them is on nodes 0 and 1 (a
        # quorum of 3 with one dead), and every release below finds its key on both live
        # nodes. Killed after them, a grant that returned at a quorum with node 2 could be
        # missing from node 0 or 1 for good, and its release could not tell.
        c3.kill(2)
        held = [client.acquire(r, ttl=10) for r in ("otel:0", "otel:1", "otel:2", "otel:3", "otel:4")]
        held.append(client.acquire("otel:fenced", ttl=10, fence=True))
        tokens += [l.token for l in held]

        busy = []
        for r in ("otel:busy:0", "otel:busy:1", "otel:busy:2"):
            busy.append(other.acquire(r, ttl=10))
            with pytest.raises(liblock.NotAcquired):
                client.acquire(r, ttl=10, wait=0)

        # One lost: its key deleted on both live nodes, found out by an extension (with node 2
        # refusing connects, the engine waits for both live nodes' answers: LOST, not
        # Unavailable).
        for i in (0, 1):
            c3.do(i, "DEL", "otel:0")
        with pytest.raises(liblock.LockLost):
            held[0].extend(10)
        held[1].extend(10)

        # The lost lock's release says LOST: the engine knows it was lost.
        with pytest.raises(liblock.LockLost):
            held[0].release()
        for l in held[1:]:
            l.release()
        for b in busy:
            b.release()
    finally:
        otel_context.detach(token)
        parent.end()
        client.close()
        other.close()

    m = Metrics(reader)
    ok, refused, lost = {"liblock.outcome": "ok"}, {"liblock.outcome": "not_acquired"}, {"liblock.outcome": "lost"}
    assert m.sum("liblock.acquires", ok) == 7
    assert m.sum("liblock.acquires", refused) == 3
    assert m.sum("liblock.acquires") == 10
    assert m.count("liblock.acquire.duration", ok) == 7
    assert m.count("liblock.acquire.duration", refused) == 3
    assert m.sum("liblock.losses") == 1
    assert m.sum("liblock.extends", ok) == 1
    assert m.sum("liblock.extends", lost) == 1
    assert m.sum("liblock.extends", {"liblock.outcome": "unavailable"}) == 0
    assert m.sum("liblock.releases", ok) == 6
    assert m.sum("liblock.releases", lost) == 1
    assert m.count("liblock.hold.duration", ok) == 6
    assert m.count("liblock.hold.duration", lost) == 1
    assert m.sum("liblock.fence.rounds", ok) == 1
    assert m.sum("liblock.acquire.waiters") == 0
    for i in (0, 1):
        assert m.sum("liblock.node.errors", {"liblock.node": i}) == 0
        assert m.count("liblock.node.request.duration", {"liblock.node": i}) > 0
    assert m.sum("liblock.node.errors", {"liblock.node": 2, "error.type": "connection"}) > 0

    spans = exporter.get_finished_spans()
    by = lambda name: [s for s in spans if s.name == name]  # noqa: E731
    assert len(by("liblock.acquire")) == 10
    assert len(by("liblock.extend")) == 2
    assert len(by("liblock.release")) == 7
    for s in spans:
        if s.name != "parent":
            assert s.parent is not None and s.parent.span_id == parent.get_span_context().span_id, s.name
    acq = by("liblock.acquire")
    assert sum(1 for s in acq if s.status.status_code == trace.StatusCode.ERROR) == 3
    assert sum(1 for s in acq if any(e.name == "liblock.wait" for e in s.events)) == 1
    assert all(sum(1 for e in s.events if e.name == "liblock.node.reply") >= 2 for s in acq)

    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "liblock")
    assert any(r.levelno == logging.WARNING and r.getMessage().startswith("liblock: lock lost: ")
               and '"otel:0")' in r.getMessage() and getattr(r, "liblock_resource", None) == "otel:0"
               for r in caplog.records)
    for t in tokens:
        assert t not in text


def test_async_spans_have_the_current_span_as_parent(c1: Cluster) -> None:
    reader, mp, exporter, tp = providers()

    async def main() -> None:
        client = liblock.Client(c1.urls, backend=BACKEND, telemetry={"meter_provider": mp, "tracer_provider": tp})
        try:
            with tp.get_tracer("test").start_as_current_span("parent"):
                lock = await client.acquire_async("otel:async", ttl=1)
                await lock.release_async()
        finally:
            client.close()
    asyncio.run(main())
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["liblock.acquire"].parent.span_id == spans["parent"].context.span_id
    assert spans["liblock.release"].parent.span_id == spans["parent"].context.span_id
    assert Metrics(reader).sum("liblock.acquires", {"liblock.outcome": "ok"}) == 1


def test_an_election_first_keeps_the_sync_locks_telemetry(c1: Cluster) -> None:
    """A client whose first synchronous call is an election's: its locks taken after are
    still recorded (the election's calls run on the same synchronous host, with its lane)."""
    reader, mp, exporter, tp = providers()
    client = liblock.Client(c1.urls, backend=BACKEND, telemetry={"meter_provider": mp, "tracer_provider": tp})
    try:
        assert client.leader("otel:el") is None
        client.acquire("otel:after-election", ttl=1).release()
    finally:
        client.close()
    assert Metrics(reader).sum("liblock.acquires", {"liblock.outcome": "ok"}) == 1
    assert {s.name for s in exporter.get_finished_spans()} == {"liblock.acquire", "liblock.release"}


def test_off_by_default_and_bad_arguments(c1: Cluster) -> None:
    reader, mp, exporter, tp = providers()
    off = liblock.Client(c1.urls, backend=BACKEND)
    off.acquire("otel:off", ttl=1).release()
    off.close()
    assert Metrics(reader).points == {} and exporter.get_finished_spans() == ()
    # The negative control: on, the same is seen.
    on = liblock.Client(c1.urls, backend=BACKEND, telemetry={"meter_provider": mp, "tracer_provider": tp,
                                                             "resource_label": lambda r: r.split(":")[0]})
    on.acquire("otel:off", ttl=1).release()
    on.close()
    assert Metrics(reader).sum("liblock.acquires", {"liblock.resource": "otel"}) == 1
    assert len(exporter.get_finished_spans()) == 2
    with pytest.raises(liblock.InvalidArgument, match="telemetry: unknown key 'meter'"):
        liblock.Client(c1.urls, telemetry={"meter": 1})
    with pytest.raises(TypeError, match="telemetry must be"):
        liblock.Client(c1.urls, telemetry="yes")
    with pytest.raises(TypeError, match="resource_label"):
        liblock.Client(c1.urls, telemetry={"resource_label": 3})


def test_without_the_api_installed(c1: Cluster, monkeypatch: Any, caplog: Any) -> None:
    """opentelemetry-api is an optional extra: without it, telemetry=True still gives the
    log lines, and asking for providers names the missing package."""
    for name in [m for m in list(__import__("sys").modules) if m == "opentelemetry" or m.startswith("opentelemetry.")]:
        monkeypatch.delitem(__import__("sys").modules, name)
    monkeypatch.setitem(__import__("sys").modules, "opentelemetry", None)  # import fails
    caplog.set_level(logging.DEBUG, logger="liblock")
    client = liblock.Client(c1.urls, backend=BACKEND, telemetry=True)
    try:
        client.acquire("otel:noapi", ttl=1).release()
    finally:
        client.close()
    assert any("acquire otel:noapi: ok" in r.getMessage() for r in caplog.records if r.name == "liblock")
    with pytest.raises(liblock.InvalidArgument, match=r"liblock\[otel\]"):
        liblock.Client(c1.urls, backend=BACKEND, telemetry={"meter_provider": object()})
