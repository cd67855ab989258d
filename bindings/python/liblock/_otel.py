"""Metrics, traces and logs (docs/python.md): the engine's REPORT actions mapped onto
OpenTelemetry's API (the instruments, attributes and spans of ``core/otel.go`` and Node's
``lib/otel.js``) and onto ``logging.getLogger("liblock")``. ``opentelemetry-api`` (the
``otel`` extra) is imported only when a client turns telemetry on. The reports carry no
token or password. Every method runs on the host's loop thread."""

from __future__ import annotations

import logging
import sys
import threading
import time
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

log = logging.getLogger("liblock")

OUTCOMES = ("ok", "not_acquired", "lost", "invalid_argument", "invalid_handle",
            "unavailable", "canceled", "internal")
NODE_ERRORS = (None, "timeout", "connection", "error_reply")

# The report kinds (core/engine/report.go).
ACQUIRE_START, ACQUIRE_END, WAIT_START, WAIT_END, HAND_OFF = 1, 2, 3, 4, 5
EXTEND_START, EXTEND_END, RELEASE_START, RELEASE_END = 6, 7, 8, 9
LOST, HOLD, NODE, FENCE = 10, 11, 12, 13

SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]


# Each host's :class:`Lane` queues its OpenTelemetry calls as ``(fn, x, y)`` entries:
# - an asyncio lane makes them after the outcome was delivered, once none of its operations
#   is in flight and the caller's continuation ran up to its next ``await`` (two call_soon
#   hops), as Node's binding does; at the latest LATE_S after they were queued, as soon as
#   LATE_N wait, and when the host closes;
# - the synchronous API's lane at once, in the step (a :class:`_Now`): with one thread
#   holding the GIL, deferring gains nothing there (bench_otel.py measured it slower).
# Spans carry the times taken when the engine reported and the caller's context captured
# at the request, whenever they are made. Log lines are always synchronous.
# A quiet lane (no SDK records, no DEBUG lines) has its engine report the warnings alone
# (REPORTS 1) and keeps its locks' resources by their requests' DONE.
LATE_S = 0.02
LATE_N = 256


def outcome_name(status: int) -> str:
    return OUTCOMES[status] if 0 <= status < len(OUTCOMES) else "internal"


class _Op:
    """A caller's operation in flight and its span's record (``ctx``, ``start`` until made)."""
    __slots__ = ("span", "kind", "resource", "lock", "outcome", "attempts", "dur", "ctx", "start", "traced")

    def __init__(self, kind: str, resource: Optional[str], lock: int = 0) -> None:
        self.kind, self.resource, self.lock = kind, resource, lock
        self.outcome, self.attempts, self.dur = 0, 0, 0.0
        self.span: Any = None
        self.ctx: Any = None
        self.start = 0
        self.traced = False  # a span is made for it (by the flush)


class Telemetry:
    """One client's instruments, shared by its hosts (each has its :class:`Lane`)."""

    def __init__(self, nodes: List[str], meter_provider: Any = None, tracer_provider: Any = None,
                 resource_label: Optional[Callable[[str], str]] = None) -> None:
        self.nodes = nodes
        self.label = resource_label
        self.on = False
        self._lanes: "weakref.WeakSet[Lane]" = weakref.WeakSet()
        self._lanes_mu = threading.Lock()
        # Whether an SDK records, asked per operation: the API's global providers are
        # no-op proxies until an SDK is set, maybe after the client was made.
        self._metered: Callable[[], bool] = lambda: False
        self._traced: Callable[[], bool] = lambda: False
        try:
            from opentelemetry import metrics, trace
        except ImportError:
            if meter_provider is not None or tracer_provider is not None:
                raise
            return  # logs only: the API is not installed
        self.on = True
        self._trace = trace
        from opentelemetry import context as otel_context
        self.get_context = otel_context.get_current
        self._metered = _sdk_check(meter_provider, metrics.get_meter_provider, metrics.NoOpMeterProvider,
                                   _proxy_class("opentelemetry.metrics._internal", "_ProxyMeterProvider"),
                                   "opentelemetry.metrics._internal", "_METER_PROVIDER")
        self._traced = _sdk_check(tracer_provider, trace.get_tracer_provider, trace.NoOpTracerProvider,
                                  getattr(trace, "ProxyTracerProvider", None), "opentelemetry.trace", "_TRACER_PROVIDER")
        mp = meter_provider or metrics.get_meter_provider()
        tp = tracer_provider or trace.get_tracer_provider()
        m = mp.get_meter("liblock")
        self.tracer = tp.get_tracer("liblock")
        self.client_kind = trace.SpanKind.CLIENT

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
        self.fence_ev = [{"liblock.outcome": o} for o in OUTCOMES]

    def attrs(self, outcome: int, resource: Optional[str], auto: bool = False) -> Dict[str, Any]:
        if self.label is None:
            return (self.auto_ext if auto else self.by_outcome)[outcome if 0 <= outcome < len(OUTCOMES) else 7]
        a: Dict[str, Any] = {"liblock.outcome": outcome_name(outcome),
                             "liblock.resource": str(self.label(resource or ""))}
        if auto:
            a["liblock.auto"] = True
        return a

    def lane(self, loop: Any, blocking: bool = False) -> "Lane":
        """The lane of a host on ``loop``; ``blocking``: the synchronous API's host."""
        lane = Lane(self, loop, blocking)
        with self._lanes_mu:
            self._lanes.add(lane)
        return lane

    def flush_now(self, timeout: float = 5.0) -> None:
        """Record what every lane queued, on its loop thread, and wait (for tests, benchmarks)."""
        with self._lanes_mu:
            lanes = list(self._lanes)
        for lane in lanes:
            if not lane.deferred or not lane.q:
                continue
            loop = lane.loop
            if loop is None or loop.is_closed() or _running_loop() is loop:
                lane.flush()
                continue
            done = threading.Event()

            def run(lane: Lane = lane, done: threading.Event = done) -> None:
                try:
                    lane.flush()
                finally:
                    done.set()
            try:
                loop.call_soon_threadsafe(run)
            except RuntimeError:  # closed meanwhile
                continue
            done.wait(timeout)


def _proxy_class(module: str, name: str) -> Any:
    try:
        return getattr(__import__(module, fromlist=[name]), name)
    except (ImportError, AttributeError):
        return None


def _sdk_check(given: Any, get_global: Callable[[], Any], noop: Any, proxy: Any,
               module: str, name: str) -> Callable[[], bool]:
    """Whether calls on a provider can record: a given one unless the API's no-op; the
    global one once it is neither the API's proxy nor its no-op (asked per operation)."""
    if given is not None:
        on = not isinstance(given, noop)
        return lambda: on
    if proxy is None:  # an API this does not know: assume it records
        return lambda: True
    p = get_global()
    if not isinstance(p, proxy):  # set before the client was made (for good: it cannot be unset)
        on = not isinstance(p, noop)
        return lambda: on
    # The SDK set is kept in a module global, read without get_global()'s environ lookup.
    mod = sys.modules.get(module)
    if mod is None or not hasattr(mod, name):
        def check() -> bool:
            g = get_global()
            return not isinstance(g, proxy) and not isinstance(g, noop)
        return check

    def fast() -> bool:
        g = getattr(mod, name)
        return g is not None and not isinstance(g, noop)
    return fast


def _running_loop() -> Any:
    import asyncio
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class _Now:
    """A synchronous lane's queue: each call is made as it is appended."""
    __slots__ = ()

    def append(self, e: Tuple[Callable[[Any, Any], None], Any, Any]) -> None:
        try:
            e[0](e[1], e[2])
        except Exception:  # noqa: BLE001 - an SDK's or resource_label's bug loses its record only
            log.warning("liblock: telemetry: a record failed", exc_info=True)


class Lane:
    """One host's side of a client's telemetry: its operations in flight, its locks'
    resources and the queue of OpenTelemetry calls (``flush`` also when the loop is gone)."""

    def __init__(self, tel: Telemetry, loop: Any, blocking: bool = False) -> None:
        self.t = tel
        self.loop = loop
        self.blocking = blocking
        self.nodes = tel.nodes
        self.ops: Dict[int, _Op] = {}
        self.locks: Dict[int, Optional[str]] = {}  # lock -> resource, for labels and log lines
        self.pending: Optional[_Op] = None  # the request being stepped (Host._request)
        # A quiet lane keeps only each lock's resource: (kind, resource, lock) of the request
        # being stepped, then by op the acquires' resources and releases' locks until DONE.
        self.qnow: Optional[Tuple[str, Optional[str], int]] = None
        self.qres: Dict[int, Optional[str]] = {}
        self.qrel: Dict[int, int] = {}
        # the deferred calls; a synchronous lane's are made as they are queued
        self.deferred = not blocking
        self.q: Any = [] if self.deferred else _Now()
        self._handle: Any = None  # the call_soon or call_later that flushes q
        self._soon_armed = False  # _handle is a call_soon
        self._flush_cb = self._flushed
        self._hop_cb = self._hop
        self._idle_cb = self._idle
        # What the SDK (if any) records, as of the last operation's start (begin).
        self.metered = False
        self.traced = False
        self.quiet = False  # neither, and no DEBUG log lines
        if tel.on:
            t = tel
            self._acq_rec, self._acq_add = t.acquire_dur.record, t.acquires.add
            self._hold_rec, self._node_rec = t.hold_dur.record, t.node_dur.record
            self._ext_add, self._rel_add, self._loss_add = t.extends.add, t.releases.add, t.losses.add
            self._wait_add, self._handoff_add = t.waiters.add, t.handoffs.add
            self._nerr_add, self._fence_add = t.node_errors.add, t.fence_rounds.add

    # ------------------------------------------------------------ the queue

    def _arm_soon(self, cb: Callable[[], None]) -> None:
        """cb in the loop's next turn, in place of a later flush (unless one is armed)."""
        h = self._handle
        if h is not None:
            if self._soon_armed:
                return
            h.cancel()
        self._soon_armed = True
        self._handle = self.loop.call_soon(cb)

    def _later(self) -> None:
        """After queueing: the flush within LATE_S (soon with LATE_N waiting; at once if blocking)."""
        if self.blocking:
            self.flush()
            return
        if len(self.q) >= LATE_N:
            self._arm_soon(self._flush_cb)
        elif self._handle is None:
            self._soon_armed = False
            self._handle = self.loop.call_later(LATE_S, self._flush_cb)

    def _flushed(self) -> None:
        self._handle = None
        self.flush()

    def _delivered(self) -> None:
        """An outcome is being delivered, none left in flight: flush after the continuation."""
        self._arm_soon(self._hop_cb)

    def _hop(self) -> None:
        self._handle = self.loop.call_soon(self._idle_cb)

    def _idle(self) -> None:
        """The continuation ran: flush, unless it started another operation."""
        self._handle = None
        if (self.ops or self.pending is not None) and len(self.q) < LATE_N:
            self._later()
        else:
            self.flush()

    def flush(self) -> None:
        """Make the queued OpenTelemetry calls, in the order the engine reported."""
        if not self.deferred:
            return
        h, self._handle = self._handle, None
        if h is not None:
            h.cancel()
        q = self.q
        if not q:
            return
        self.q = []
        for fn, x, y in q:
            try:
                fn(x, y)
            except Exception:  # noqa: BLE001 - an SDK's or resource_label's bug loses its record only
                log.warning("liblock: telemetry: a record failed", exc_info=True)

    close = flush  # the host is gone: what is queued is recorded now

    # ------------------------------------------------------------ deferred calls

    def _metric(self, fn: Callable[..., Any], value: Any, outcome: int, resource: Optional[str],
                auto: bool = False) -> None:
        t = self.t
        if t.label is None:
            self.q.append((fn, value, (t.auto_ext if auto else t.by_outcome)[outcome if 0 <= outcome < 8 else 7]))
        else:
            self.q.append((self._labeled, (fn, value), (outcome, resource, auto)))

    def _labeled(self, fv: Tuple[Any, Any], ora: Tuple[int, Optional[str], bool]) -> None:
        fv[0](fv[1], self.t.attrs(*ora))

    def _start_span(self, op: _Op, _: Any) -> None:
        t = self.t
        span = t.tracer.start_span("liblock." + op.kind, context=op.ctx, kind=t.client_kind,
                                   start_time=op.start)
        op.ctx = None
        op.span = span
        if t.label is not None and span.is_recording():
            span.set_attribute("liblock.resource", str(t.label(op.resource or "")))

    def _event(self, op: _Op, ev: Tuple[str, Any, int]) -> None:
        span = op.span
        if span is not None and span.is_recording():
            span.add_event(ev[0], ev[1], ev[2])

    def _node_event(self, op: _Op, ev: Tuple[int, Optional[str], int, int]) -> None:
        span = op.span
        if span is not None and span.is_recording():
            node, bad, dur_us, when = ev
            attrs: Dict[str, Any] = {"liblock.node": node, "server.address": self.nodes[node],
                                     "liblock.duration_ms": dur_us / 1000}
            if bad is not None:
                attrs["error.type"] = bad
            span.add_event("liblock.node.reply", attrs, when)

    def _end(self, op: _Op, end: Tuple[int, Any, int]) -> None:
        s = op.span
        if s is None:
            return
        outcome, err, when = end
        if s.is_recording():
            if op.kind == "acquire":
                s.set_attributes({"liblock.outcome": outcome_name(outcome), "liblock.attempts": op.attempts})
            else:
                s.set_attribute("liblock.outcome", outcome_name(outcome))
            if err:
                from ._host import exception
                e = exception(err)
                s.record_exception(e, timestamp=when)
                s.set_status(self.t._trace.Status(self.t._trace.StatusCode.ERROR, str(e)))
        s.end(end_time=when)

    def _refused(self, op: _Op, ew: Tuple[BaseException, int]) -> None:
        s = op.span
        if s is None:
            return
        err, when = ew
        s.record_exception(err, timestamp=when)
        s.set_status(self.t._trace.Status(self.t._trace.StatusCode.ERROR, str(err)))
        s.end(end_time=when)

    # ------------------------------------------------------------ operations

    def refresh(self) -> bool:
        """Whether an SDK records now, before each request (Host._check); whether quiet."""
        t = self.t
        metered = self.metered = t._metered()
        traced = self.traced = t._traced()
        self.quiet = q = not metered and not traced and not log.isEnabledFor(logging.DEBUG)
        return q

    def begin(self, kind: str, resource: Optional[str], lock: int = 0) -> None:
        """A caller's request is about to be stepped: its span starts now (a child of the
        caller's context); the op is bound by its start report or by ``started``."""
        t = self.t
        op = _Op(kind, resource, lock)
        if self.traced:
            op.traced = True
            op.ctx = t.get_context()  # the caller's (run_op/run_async carry it here)
            op.start = time.time_ns()
            self.q.append((self._start_span, op, None))
        self.pending = op

    def wants_context(self) -> bool:
        """Whether a span may be made: then the caller's context goes to the loop thread."""
        return self.t._traced()

    def started(self, op: int) -> None:
        """After the request's step: binds an op whose start was not reported yet."""
        p, self.pending = self.pending, None
        if p is not None:
            self.ops[op] = p
        if self.deferred and self.q:
            self._later()

    def refused(self, err: BaseException) -> None:
        """The request was refused at once: its span ends with the error."""
        p, self.pending = self.pending, None
        if p is not None and p.traced:
            self.q.append((self._refused, p, (err, time.time_ns())))
            if self.deferred:
                self._later()

    def report(self, a: Any, names: Dict[int, str]) -> None:
        """One REPORT action; ``names``: the host's resource of each Lock object's lock."""
        _, what, outcome, opid, lock, node, attempts, dur_us = a
        if what == ACQUIRE_START or what == EXTEND_START or what == RELEASE_START:
            if self.pending is not None and opid:
                self.ops[opid], self.pending = self.pending, None
            return
        op = self.ops.get(opid) if opid else None
        resource = op.resource if op is not None else self.locks.get(lock)
        if resource is None and lock:
            resource = names.get(lock)
        secs = dur_us / 1e6
        m = self.metered
        q = self.q
        n = len(q) if self.deferred else 0
        if what == NODE:
            if node >= len(self.nodes):
                return
            bad = NODE_ERRORS[outcome] if 0 < outcome < len(NODE_ERRORS) else None
            if bad is not None:
                log.debug("liblock: node %d (%s) request failed: %s", node, self.nodes[node], bad)
            if m:
                t = self.t
                if bad is not None:
                    at = t.node_bad[node][outcome]
                    q.append((self._nerr_add, 1, at))
                else:
                    at = t.node_ok[node]
                q.append((self._node_rec, secs, at))
            if op is not None and op.traced:
                q.append((self._node_event, op, (node, bad, dur_us, time.time_ns())))
        elif what == ACQUIRE_END:
            if m:
                self._metric(self._acq_rec, secs, outcome, resource)
                self._metric(self._acq_add, 1, outcome, resource)
            if op is not None:
                op.outcome, op.attempts, op.dur = outcome, attempts, secs
            if lock:
                self.locks[lock] = resource
        elif what == RELEASE_END:
            if m:
                self._metric(self._rel_add, 1, outcome, resource)
            if op is not None:
                op.outcome, op.dur = outcome, secs
        elif what == HOLD:
            if m:
                self._metric(self._hold_rec, secs, outcome, resource)
            self.locks.pop(lock, None)
        elif what == WAIT_START:
            if m:
                q.append((self._wait_add, 1, None))
            if op is not None and op.traced:
                q.append((self._event, op, ("liblock.wait", None, time.time_ns())))
        elif what == WAIT_END:
            if m:
                q.append((self._wait_add, -1, None))
        elif what == HAND_OFF:
            if m:
                q.append((self._handoff_add, 1, None))
        elif what == EXTEND_END:
            if m:
                self._metric(self._ext_add, 1, outcome, resource, opid == 0)
            # a failed auto-extension that lost the lock is told by the loss's record;
            # one that could not tell (nodes failing) here
            if opid == 0 and outcome != 0 and outcome != 2:
                log.warning("liblock: auto-extension failed: %s", resource,
                            extra={"liblock_resource": resource, "liblock_outcome": outcome_name(outcome)})
            if op is not None:
                op.outcome, op.dur = outcome, secs
        elif what == LOST:
            if m:
                self._metric(self._loss_add, 1, 2, resource)
            # (its log record is the host's, from the engine's LOST: _host.warn_lost)
        elif what == FENCE:
            if m:
                self._metric(self._fence_add, 1, outcome, resource)
            if op is not None and op.traced:
                q.append((self._event, op, ("liblock.fence", self.t.fence_ev[outcome if 0 <= outcome < 8 else 7],
                                            time.time_ns())))
        if self.deferred and len(q) != n:
            self._later()

    def quiet_started(self, op: int) -> None:
        """After a quiet request's step: what it keeps, by its op."""
        q, self.qnow = self.qnow, None
        if q is not None:
            if q[0] == "acquire":
                self.qres[op] = q[1]
            elif q[0] == "release":
                self.qrel[op] = q[2]

    def done(self, opid: int, err: Any, lock: int = 0) -> None:
        """An operation's DONE: its span ends, its log line; the map of locks to resources
        is kept here too (a quiet lane gets no ACQUIRE_END or HOLD report)."""
        if opid in self.qres:
            resource = self.qres.pop(opid)
            if lock and err is None:
                self.locks[lock] = resource
            return
        if opid in self.qrel:
            self.locks.pop(self.qrel.pop(opid), None)
            return
        q = self.qnow
        if q is not None and opid not in self.ops:  # a quiet request's DONE in its own step
            self.qnow = None
            if q[0] == "acquire" and lock and err is None:
                self.locks[lock] = q[1]
            elif q[0] == "release":
                self.locks.pop(q[2], None)
            return
        op = self.ops.pop(opid, None)
        if op is None:
            return
        if lock and err is None and op.kind == "acquire":
            self.locks[lock] = op.resource
        elif op.kind == "release" and op.lock:
            self.locks.pop(op.lock, None)
        outcome = err[0] if err else 0
        if log.isEnabledFor(logging.DEBUG):
            log.debug("liblock: %s %s: %s (%d attempts, %.6f s)", op.kind, op.resource,
                      outcome_name(outcome), op.attempts, op.dur)
        if op.traced:
            self.q.append((self._end, op, (outcome, err, time.time_ns())))
        if self.deferred and self.q:
            if self.ops:
                self._later()
            else:
                self._delivered()

