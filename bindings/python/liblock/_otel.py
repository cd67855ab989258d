"""Metrics, traces and logs (README "Metrics, traces and logs").

The engine reports what it does as REPORT actions (only to a host whose configuration
says ``"report": true``); :class:`Telemetry` maps them onto OpenTelemetry's API — the
same instruments, attributes and spans as the Go core (``core/otel.go``) and the Node
binding (``lib/otel.js``) — and onto ``logging.getLogger("liblock")``.

``opentelemetry-api`` is an optional extra (``pip install liblock[otel]``), imported only
when a client turns telemetry on; only the API is used (with no SDK it is a no-op).
Nothing here sees a token or a password: the reports carry none.

Every method runs on the host's event loop thread, as the host's own code does.
"""

from __future__ import annotations

import logging
from typing import Any, Callable, Dict, List, Optional

log = logging.getLogger("liblock")

OUTCOMES = ("ok", "not_acquired", "lost", "invalid_argument", "invalid_handle",
            "unavailable", "canceled", "internal")
NODE_ERRORS = (None, "timeout", "connection", "error_reply")

# The report kinds (core/engine/report.go).
ACQUIRE_START, ACQUIRE_END, WAIT_START, WAIT_END, HAND_OFF = 1, 2, 3, 4, 5
EXTEND_START, EXTEND_END, RELEASE_START, RELEASE_END = 6, 7, 8, 9
LOST, HOLD, NODE, FENCE = 10, 11, 12, 13

SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]


def outcome_name(status: int) -> str:
    return OUTCOMES[status] if 0 <= status < len(OUTCOMES) else "internal"


class _Op:
    __slots__ = ("span", "kind", "resource", "outcome", "attempts", "dur")

    def __init__(self, span: Any, kind: str, resource: Optional[str]) -> None:
        self.span, self.kind, self.resource = span, kind, resource
        self.outcome, self.attempts, self.dur = 0, 0, 0.0


class Telemetry:
    """One client's instruments, spans in flight and log lines."""

    def __init__(self, nodes: List[str], meter_provider: Any = None, tracer_provider: Any = None,
                 resource_label: Optional[Callable[[str], str]] = None) -> None:
        self.nodes = nodes
        self.label = resource_label
        self.ops: Dict[int, _Op] = {}
        self.locks: Dict[int, Optional[str]] = {}  # lock -> resource, for labels and log lines
        self.pending: Optional[_Op] = None  # the request being stepped (Host._request)
        self.on = False
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            if meter_provider is not None or tracer_provider is not None:
                raise
            return  # logs only: the API is not installed
        self.on = True
        self._trace = trace
        mp = meter_provider or metrics.get_meter_provider()
        tp = tracer_provider or trace.get_tracer_provider()
        m = mp.get_meter("liblock")
        self.tracer = tp.get_tracer("liblock")

        def hist(name: str, desc: str, bounds: List[float]) -> Any:
            try:
                return m.create_histogram(name, unit="s", description=desc,
                                          explicit_bucket_boundaries_advisory=bounds)
            except TypeError:  # an API before 1.23: no advice
                return m.create_histogram(name, unit="s", description=desc)

        self.acquire_dur = hist("liblock.acquire.duration",
                                "Duration of lock acquires, from the request to the outcome, waits included.", SECONDS)
        self.hold_dur = hist("liblock.hold.duration",
                             "How long locks were held, from the acquire's success to their release or loss.",
                             [0.001, 0.01, 0.1, 1, 10, 60, 300, 1800, 3600])
        self.node_dur = hist("liblock.node.request.duration", "Duration of single requests to one Redis node.", SECONDS)
        self.acquires = m.create_counter("liblock.acquires", unit="{acquire}", description="Acquires ended, by outcome.")
        self.extends = m.create_counter("liblock.extends", unit="{extend}",
                                        description="Extensions ended (the caller's and auto-extensions), by outcome.")
        self.releases = m.create_counter("liblock.releases", unit="{release}", description="Releases ended, by outcome.")
        self.losses = m.create_counter("liblock.losses", unit="{lock}", description="Locks lost while held.")
        self.handoffs = m.create_counter("liblock.handoffs", unit="{handoff}",
                                         description="Releases that handed the key straight to a waiter of the same client.")
        self.node_errors = m.create_counter("liblock.node.errors", unit="{error}",
                                            description="Failed requests to one Redis node, by node and kind.")
        self.fence_rounds = m.create_counter("liblock.fence.rounds", unit="{round}",
                                             description="Fence rounds (the second round of a fenced acquire), by outcome.")
        self.waiters = m.create_up_down_counter("liblock.acquire.waiters", unit="{acquire}",
                                                description="Acquires waiting now.")
        # Attribute dicts made once.
        self.by_outcome = [{"liblock.outcome": o} for o in OUTCOMES]
        self.auto_ext = [{"liblock.outcome": o, "liblock.auto": True} for o in OUTCOMES]
        self.node_ok = [{"liblock.node": i, "server.address": a} for i, a in enumerate(nodes)]
        self.node_bad = [[None if e is None else {"liblock.node": i, "server.address": a, "error.type": e}
                          for e in NODE_ERRORS] for i, a in enumerate(nodes)]

    def attrs(self, outcome: int, resource: Optional[str], auto: bool = False) -> Dict[str, Any]:
        if self.label is None:
            return (self.auto_ext if auto else self.by_outcome)[outcome if 0 <= outcome < len(OUTCOMES) else 7]
        a: Dict[str, Any] = {"liblock.outcome": outcome_name(outcome),
                             "liblock.resource": str(self.label(resource or ""))}
        if auto:
            a["liblock.auto"] = True
        return a

    # ------------------------------------------------------------ operations

    def begin(self, kind: str, resource: Optional[str]) -> None:
        """A caller's request is about to be stepped: its span starts (a child of the
        current context: the caller's, carried to the loop thread by run_op/run_async)
        and is bound to the op by its start report, in the step itself."""
        span = None
        if self.on:
            span = self.tracer.start_span("liblock." + kind, kind=self._trace.SpanKind.CLIENT)
            if self.label is not None and span.is_recording():
                span.set_attribute("liblock.resource", str(self.label(resource or "")))
        self.pending = _Op(span, kind, resource)

    def started(self, op: int) -> None:
        """After the request's step: binds an op whose start was not reported yet (an
        extension or release queued behind the lock's round in flight)."""
        p, self.pending = self.pending, None
        if p is not None:
            self.ops[op] = p

    def refused(self, err: BaseException) -> None:
        """The request was refused at once: its span ends with the error."""
        p, self.pending = self.pending, None
        if p is not None and p.span is not None:
            p.span.record_exception(err)
            p.span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(err)))
            p.span.end()

    def report(self, a: Any) -> None:
        """One REPORT action: (kind, what, outcome, op, lock, node, attempts, duration_us)."""
        _, what, outcome, opid, lock, node, attempts, dur_us = a
        if what in (ACQUIRE_START, EXTEND_START, RELEASE_START):
            if self.pending is not None and opid:
                self.ops[opid], self.pending = self.pending, None
            return
        op = self.ops.get(opid) if opid else None
        resource = op.resource if op is not None else self.locks.get(lock)
        secs = dur_us / 1e6
        on = self.on
        if what == ACQUIRE_END:
            if on:
                at = self.attrs(outcome, resource)
                self.acquire_dur.record(secs, at)
                self.acquires.add(1, at)
            if op is not None:
                op.outcome, op.attempts, op.dur = outcome, attempts, secs
            if lock:
                self.locks[lock] = resource
        elif what == WAIT_START:
            if on:
                self.waiters.add(1)
                if op is not None and op.span is not None:
                    op.span.add_event("liblock.wait")
        elif what == WAIT_END:
            if on:
                self.waiters.add(-1)
        elif what == HAND_OFF:
            if on:
                self.handoffs.add(1)
        elif what == EXTEND_END:
            if on:
                self.extends.add(1, self.attrs(outcome, resource, opid == 0))
            if opid == 0 and outcome != 0:
                log.warning("liblock: auto-extension failed: %s", resource,
                            extra={"liblock_resource": resource, "liblock_outcome": outcome_name(outcome)})
            if op is not None:
                op.outcome, op.dur = outcome, secs
        elif what == RELEASE_END:
            if on:
                self.releases.add(1, self.attrs(outcome, resource))
            if op is not None:
                op.outcome, op.dur = outcome, secs
        elif what == LOST:
            if on:
                self.losses.add(1, self.attrs(2, resource))
            log.warning("liblock: lock lost: %s", resource, extra={"liblock_resource": resource})
        elif what == HOLD:
            if on:
                self.hold_dur.record(secs, self.attrs(outcome, resource))
            self.locks.pop(lock, None)
        elif what == NODE:
            if node >= len(self.nodes):
                return
            bad = NODE_ERRORS[outcome] if 0 < outcome < len(NODE_ERRORS) else None
            if bad is not None:
                log.debug("liblock: node %d (%s) request failed: %s", node, self.nodes[node], bad)
            if not on:
                return
            at = self.node_bad[node][outcome] if bad is not None else self.node_ok[node]
            if bad is not None:
                self.node_errors.add(1, at)
            self.node_dur.record(secs, at)
            if op is not None and op.span is not None and op.span.is_recording():
                ev: Dict[str, Any] = {"liblock.node": node, "server.address": self.nodes[node],
                                      "liblock.duration_ms": dur_us / 1000}
                if bad is not None:
                    ev["error.type"] = bad
                op.span.add_event("liblock.node.reply", ev)
        elif what == FENCE:
            if on:
                self.fence_rounds.add(1, self.attrs(outcome, resource))
                if op is not None and op.span is not None:
                    op.span.add_event("liblock.fence", {"liblock.outcome": outcome_name(outcome)})

    def done(self, opid: int, err: Any) -> None:
        """An operation's DONE (``err``: the engine's error record, or None): its span
        ends, and its log line."""
        op = self.ops.pop(opid, None)
        if op is None:
            return
        outcome = err[0] if err else 0
        if log.isEnabledFor(logging.DEBUG):
            log.debug("liblock: %s %s: %s (%d attempts, %.6f s)", op.kind, op.resource,
                      outcome_name(outcome), op.attempts, op.dur)
        s = op.span
        if s is None:
            return
        if s.is_recording():
            s.set_attribute("liblock.outcome", outcome_name(outcome))
            if op.kind == "acquire":
                s.set_attribute("liblock.attempts", op.attempts)
            if err:
                from ._host import exception
                e = exception(err)
                s.record_exception(e)
                s.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(e)))
        s.end()
