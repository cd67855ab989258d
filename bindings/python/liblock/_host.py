"""The one driver: an asyncio host that carries out what liblock's engine asks (open,
write, close connections; one timer) and hands it what happens (connected, bytes
received, connection failed, timer fired), one ``step`` per event
(core/hostabi/PROTOCOL.md). The engine decides everything else.

It drives either engine adapter (:class:`Engine`): ``_native.NativeEngine`` (liblock.so
through ctypes) or ``_wasm.WasmEngine`` (liblock.wasm under wasmtime). One :class:`Host`
per event loop a client is used on; the synchronous API's runs on a private loop thread
(``_syncdrive.LoopThread``), whose calls run on the caller's thread while that loop
sleeps. Connections are in one epoll set per host (``_epoll.Mux``, Linux), else asyncio
transports (:class:`_Conn`); either way a read lands in the engine's input buffer and is
stepped as one RECEIVED. Completions (``done(error, result)``) run on the host's loop
thread after the step that produced them was fully decoded, so they may start new
operations.
"""

from __future__ import annotations

import asyncio
import collections
import contextvars
import os
import struct
import sys
import threading
import traceback
import weakref
from functools import partial
from typing import Any, Callable, Deque, Dict, List, Optional, Protocol, Tuple

from . import _epoll, _tls
from . import _protocol as P
from ._args import Request
from ._errors import CLOSED_MESSAGE, InternalError, InvalidHandle, LockError, check_fork, error_for

# done(error or None, result): the lock handle (acquire) or 0; an inspect's INSPECTED fields
Done = Callable[[Optional[LockError], Any], None]

# Repeat a step with empty input when less than this was left free in its output (the
# engine keeps what does not fit; its largest action is under 64 KiB).
_FULL_MARGIN = 64 * 1024
_all: "weakref.WeakSet[Host]" = weakref.WeakSet()  # every live host (pending_count)
# Requests that may read their replies at once (Host._read_now) between two loop turns.
_EAGER_RUN = P.SPIN_EAGER_RUN  # the spec's "spin", shared with the Node host
# At most how many reads of the epoll set (epoll_wait(0), under 1 µs each) such a request
# spins for while pending: a reply read in the spin is awaited without a turn of the loop
# (select, wake-up, callbacks), which costs more. A host spins only while it pays: a spin
# that settled its request adds one to its credit (at most _SPIN_CREDIT), one that did not
# takes one; with none left, only every _SPIN_PROBE-th request spins.
_EAGER_POLLS = P.SPIN_POLLS
_SPIN_CREDIT = P.SPIN_CREDIT
_SPIN_PROBE = P.SPIN_PROBE


class SpinCredit:
    """Whether spinning pays where it is kept (a host's request spins, a driven call's read
    of the late replies, _syncdrive.py): the rule above."""

    __slots__ = ("left", "skipped")

    def __init__(self) -> None:
        self.left = _SPIN_CREDIT
        self.skipped = 0

    def allows(self) -> bool:
        if self.left > 0:
            return True
        self.skipped += 1
        if self.skipped < _SPIN_PROBE:
            return False
        self.skipped = 0
        return True

    def paid(self, yes: bool) -> None:
        left = self.left
        if yes:
            self.left = min(left + 1, _SPIN_CREDIT) if left > 0 else 1
        else:
            self.left = left - 1 if left > 0 else 0


# WRITE's head (u32 conn, u32 length) after its kind byte, and RECEIVED's head (u8 kind,
# u32 conn, u32 length), read and written in place on the hot paths; checked against the
# generated codec at import.
_ACT_WRITE = P.ACT_WRITE
_WRITE_HEAD = struct.Struct("<II")
_WRITE_HEAD_SIZE = 1 + _WRITE_HEAD.size
_RECV_HEAD = _epoll.RECV_HEAD
_RECV_AT = P.RECEIVED_OVERHEAD


def _write_head() -> None:
    sample = bytes([P.ACT_WRITE]) + _WRITE_HEAD.pack(7, 3) + b"abc"
    try:
        same = P.decode_action(sample, 0) == ((P.ACT_WRITE, 7, b"abc"), len(sample))
    except Exception:  # noqa: BLE001 - the codec could not even read it
        same = False
    if not same:
        raise InternalError("liblock: _host's WRITE fast path disagrees with the generated codec")


def _recv_head() -> None:
    data = b"+OK\r\n"
    want = bytearray(64)
    n = P.received(want, 7, data)
    got = bytearray(64)
    got[_RECV_AT:_RECV_AT + len(data)] = data
    _RECV_HEAD.pack_into(got, 0, P.EV_RECEIVED, 7, len(data))
    if _RECV_HEAD.size != _RECV_AT or n != _RECV_AT + len(data) or got[:n] != want[:n]:
        raise InternalError("liblock: _host's RECEIVED fast path disagrees with the generated codec")


_write_head()
_recv_head()


class Engine(Protocol):
    """An engine adapter: ``inbuf`` takes one event, ``step`` hands it over and returns the
    actions (valid until the next step), ``free`` drops the engine."""

    inbuf: Any
    in_cap: int
    out_cap: int

    def step(self, n: int) -> Any: ...

    def free(self) -> None: ...


# The spec's limits by the names the engine gives them ("ttl", "ttl_ms"): the Python name.
_PY_NAMES: Dict[str, str] = {}
for _name, _l in P.LIMITS.items():
    _PY_NAMES[str(_l["c"])] = str(_l["python"])
    _PY_NAMES.setdefault(_name, str(_l["python"]))


def _amount(v: int, unit: str) -> str:
    if unit == "ms":
        return f"{v / 1000:.12g} s"  # 86400001 ms is 86400.001 s, not 86400
    return f"{v} {unit}" if unit and unit != "count" else str(v)


def bound_reason(b: str, bound: str, limit: int, unit: str, got: int) -> str:
    """An out-of-range argument's reason in Python's units (seconds for durations); the
    engine's own reason ``b`` for any other rejection."""
    if bound not in ("min", "max"):
        return b
    if bound == "min" and limit == 1 and got == 0 and unit == "bytes":
        return "must not be empty"
    word = "at least" if bound == "min" else "at most"
    utf8 = " of UTF-8" if unit == "bytes" else ""
    return f"must be {word} {_amount(limit, unit)}{utf8}, got {_amount(got, unit)}"


def warn_lost(lost: Optional[LockError], resource: str) -> None:
    """A lock's loss, at WARNING on the ``liblock`` logger (never silent), in the engine's
    words. Run by the loop after the step."""
    import logging

    logging.getLogger("liblock").warning(
        "%s", lost if lost is not None else "liblock: lock lost",
        extra={"liblock_resource": resource, "liblock_outcome": "lost"})


def exception(err: P.Error) -> LockError:
    """The exception for an engine error: an InvalidArgument names the Python parameter."""
    status, message, a, b, nodes = err[:5]
    if status == P.STATUS_INVALID_ARGUMENT and a and len(err) > 5:
        bound, limit, unit, got = err[5:9]
        message = f"liblock: invalid argument: {_PY_NAMES.get(a, a)}: {bound_reason(b, bound, limit, unit, got)}"
    if not message:
        message = ": ".join(x for x in (a, b) if x)
    if nodes and not all(cause in message for _, _, cause in nodes):
        message += " (" + "; ".join(f"node {i} ({addr}): {cause}" for i, addr, cause in nodes) + ")"
    return error_for(status, message, nodes)


class _Conn(asyncio.BufferedProtocol):
    """A connection as an asyncio transport. A BufferedProtocol: the transport reads
    straight into the engine's input buffer after RECEIVED's head (``data_received`` would
    cost a bytes object per read, and asyncio's 256 KiB reads an mmap each)."""

    __slots__ = ("host", "cid", "transport")

    def __init__(self, host: "Host", cid: int) -> None:
        self.host = host
        self.cid = cid
        self.transport: Optional[asyncio.Transport] = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.host._opened(self)

    def write_view(self, data: Any) -> None:
        """A WRITE's data (a view of the engine's output buffer): copied, as the transport
        may keep it."""
        if self.transport is not None:
            self.transport.write(bytes(data))

    def get_buffer(self, sizehint: int) -> Any:
        view = self.host._recv_view
        return view if view is not None else bytearray(4096)  # the engine is gone: discarded

    def buffer_updated(self, nbytes: int) -> None:
        host = self.host
        engine = host.engine
        cid = self.cid
        if engine is None or cid not in host._conns or host._recv_view is None:
            return  # closed by the engine meanwhile: what the node still sent is dropped
        _RECV_HEAD.pack_into(engine.inbuf, 0, P.EV_RECEIVED, cid, nbytes)
        host._step(_RECV_AT + nbytes)

    def eof_received(self) -> None:
        # The node closed its side: the connection goes now, not a loop turn later, after a
        # request may have written to it.
        self.host._lost_conn(self, None)

    def connection_lost(self, exc: Optional[Exception]) -> None:
        self.host._lost_conn(self, exc)


class Host:
    """One engine driven on one event loop."""

    # Class defaults (also for a Host made without __init__: tests/test_pyperf.py).
    tel: Any = None  # the client's telemetry lane (_otel.Lane) or None
    _recv_view: Optional[memoryview] = None
    _mux: Any = None
    # eager: requests read their replies at once (_read_now); _eager_left: how many more
    # may before the loop's next turn. eager_polls: a request's reads while pending, at most
    # (1: no spin). spin_alone: only a request alone in flight spins. (The A/B benchmarks
    # and the tests' controls turn them off.)
    eager = True
    _eager_left = 0
    _eager_reset_due = False
    eager_polls = _EAGER_POLLS
    spin_alone = True
    # WRITEs carried out and reads that got bytes: a spin ends once its nodes all answered
    writes = 0
    reads = 0
    # completions run so far: _epoll.Mux stops reading at one it sees run, so that the
    # settled operation's continuation runs before the other nodes' late replies are read
    # (done_first False: all are read in the same turn)
    settled = 0
    done_first = True
    # a LoopThread's host: its synchronous calls run on the caller's thread while the loop
    # thread is idle (_syncdrive.CallerDrive); None: every call is handed to the loop
    direct: Any = None

    def __init__(self, engine: Engine, loop: asyncio.AbstractEventLoop,
                 on_free: Optional[Callable[["Host"], None]] = None, tls: Any = None) -> None:
        self.engine: Optional[Engine] = engine
        # where reads go: the engine's input buffer after RECEIVED's head (None once dropped)
        self._recv_view: Optional[memoryview] = memoryview(engine.inbuf)[_RECV_AT:engine.in_cap]
        self.tls = tls  # the client's _tls.ClientTLS, or None
        self._spin_credit = SpinCredit()
        self._on_free = on_free
        self._closed_fut: "Optional[asyncio.Future[None]]" = None
        self._guard: Any = None
        self.loop = loop
        self.thread_id = threading.get_ident()  # the loop's thread (the host is made there)
        self.pid = os.getpid()
        self._conns: Dict[int, Any] = {}  # conn id -> _Conn or _epoll.MuxConn
        self._mux: Any = None  # the epoll set, made at the first connection; False: none here
        self._eager_left = _EAGER_RUN
        self._connecting: Dict[int, "asyncio.Task[Any]"] = {}
        self._ops: Dict[int, Done] = {}
        self.lost_keys: Dict[int, Callable[[Optional[LockError]], None]] = {}
        self.lock_names: Dict[int, str] = {}  # each Lock object's resource (any thread), for warn_lost
        self._timer: Optional[asyncio.TimerHandle] = None
        self._starting: Optional[Done] = None  # the completion of the request being stepped
        self._done: Deque[Tuple[Done, Optional[LockError], Any]] = collections.deque()
        # the completions of acquires that got their lock: settled before self._done (_apply)
        self._won: Deque[Tuple[Done, Optional[LockError], Any]] = collections.deque()
        # (fence, reentered) of the locks whose acquire asked for a fence or gave a token
        self.fences: Dict[int, Tuple[int, bool]] = {}
        self.watches: Dict[int, Done] = {}  # an election's watches: op -> its LEADER completion
        self._draining = False
        self.closing = False
        self.closed = threading.Event()  # set once the engine said CLOSED (or was dropped)
        self.gone = CLOSED_MESSAGE  # why the engine is gone, for InvalidHandle
        self.tel: Any = None  # the client's _otel.Lane, set by the Driver before any request
        self._quiet = False  # the engine was told the lane is quiet (REPORTS 1, else 2: all)
        _all.add(self)

    # ------------------------------------------------------------ stepping

    def _step(self, n: int) -> Optional[Tuple[Any, ...]]:
        """Hand the event in ``engine.inbuf[:n]`` to the engine and carry out its actions;
        the reply to a request (STARTED, REJECTED, CANCELED, INFO)."""
        engine = self.engine
        if engine is None:
            raise InvalidHandle(self.gone)
        try:
            out = engine.step(n)
        except LockError as e:  # the engine is unusable (a wasm trap): fail what waits on it
            if e.status not in (P.STATUS_INVALID_ARGUMENT, None):
                self.free(e)
            raise
        if not out:  # most replies ask for nothing
            return None
        reply = self._apply(out)
        while len(out) > engine.out_cap - _FULL_MARGIN:
            out = engine.step(0)
            if not len(out):
                break
            reply = self._apply(out) or reply
        if not self._draining and (self._won or self._done):
            self._draining = True
            try:
                while self._won or self._done:
                    fn, err, lock = (self._won or self._done).popleft()
                    self.settled += 1
                    try:
                        fn(err, lock)
                    except BaseException:  # noqa: BLE001 - one completion's bug must not stop the others
                        traceback.print_exc(file=sys.stderr)
            finally:
                self._draining = False
        return reply

    def _apply(self, buf: Any) -> Optional[Tuple[Any, ...]]:
        reply: Optional[Tuple[Any, ...]] = None
        at, end = 0, len(buf)
        decode_action = P.decode_action
        conns = self._conns
        while at < end:
            if buf[at] == _ACT_WRITE:
                # Most actions are WRITEs: read in place, without decode_action's tuple.
                conn, n = _WRITE_HEAD.unpack_from(buf, at + 1)
                at += _WRITE_HEAD_SIZE
                if at + n > end:
                    raise P.ProtocolError(f"data of {n} bytes past the end of the actions")
                c = conns.get(conn)
                if c is not None:
                    c.write_view(buf[at:at + n])  # a view: the connection copies what it keeps
                    self.writes += 1
                at += n
                continue
            a, at = decode_action(buf, at)
            kind = a[0]
            if kind == P.ACT_REPORT:
                if self.tel is not None:
                    self.tel.report(a, self.lock_names)
            elif kind == P.ACT_DONE:
                _, op, lock, fence, reentered, err = a
                if self.tel is not None:
                    self.tel.done(op, err, lock)
                if lock and (fence or reentered):  # kept for the Lock object
                    self.fences[lock] = (fence, bool(reentered))
                fn = self._ops.pop(op, None)
                if fn is not None:
                    if lock and err is None:
                        # An acquire that got its lock goes before the step's other completions:
                        # its task enters the section while the releaser's only goes on.
                        self._won.append((fn, None, lock))
                    else:
                        self._done.append((fn, exception(err) if err else None, lock))
                elif lock and err is None:  # an acquire nobody waits for any more
                    self._done.append((self._orphan, None, lock))
            elif kind == P.ACT_TIMER:
                if self._timer is not None:
                    self._timer.cancel()
                self._timer = self.loop.call_later(max(a[1], 0) / 1e6, self._tick)
            elif kind == P.ACT_STARTED:
                reply = a
                if self._starting is not None:  # before this step's DONE of it
                    self._ops[a[1]] = self._starting
                    self._starting = None
            elif kind == P.ACT_OPEN:
                _, conn, node, flags, network, addr, server_name = a
                self._connecting[conn] = self.loop.create_task(
                    self._connect(conn, node, flags, network, addr, server_name))
            elif kind == P.ACT_CLOSE:
                self._close_conn(a[1])
            elif kind == P.ACT_LOST:
                _, lock, err = a
                fire = self.lost_keys.pop(lock, None)
                lost = exception(err) if err else None
                self.loop.call_soon(warn_lost, lost, self.lock_names.get(lock, ""))
                if fire is not None:
                    self.loop.call_soon(fire, lost)
            elif kind in (P.ACT_REJECTED, P.ACT_CANCELED, P.ACT_INFO):
                reply = a
            elif kind == P.ACT_INSPECTED:
                fn = self._ops.pop(a[1], None)
                if fn is not None:
                    self._done.append((fn, None, a[2:]))
            elif kind == P.ACT_LEADER:  # an election's watch (_election.py)
                fn = self.watches.get(a[1])
                if fn is not None:
                    self._done.append((fn, None, a[2:]))
            elif kind == P.ACT_CLOSED:
                self.loop.call_soon(self.free)  # every connection is closed: free the engine
            else:
                raise InternalError(f"liblock: engine sent an unexpected action {kind}")
        return reply

    def _read_now(self, op: int = 0, sent: int = 0) -> None:
        """Right after a request's writes, read what the nodes sent already (one
        ``epoll_wait(0)``), and spin while the request ``op`` (written to ``sent`` nodes) is
        pending (``_spin``): a node on this machine often answers while the host is still
        writing, so ``await`` goes on without a turn of the loop. At most _EAGER_RUN
        requests in a row do so between two turns of the loop (others must run too)."""
        self._eager_left -= 1
        if not self._eager_reset_due:
            self._eager_reset_due = True
            self.loop.call_soon(self._eager_reset)
        try:
            reads = self.reads
            self._mux.poll()
            # No spin for a request started within a read, nor beside other operations in
            # flight (contended waiters: the loop has work a spin would hold up).
            if op and op in self._ops and self.eager_polls > 1 and self.reads - reads < sent \
                    and not self._mux.reading and (len(self._ops) == 1 or not self.spin_alone):
                self._spin(op, sent - (self.reads - reads))
        except Exception as e:  # noqa: BLE001 - reported as the loop's read callback would
            self.loop.call_exception_handler({"message": "liblock: reading the nodes' replies failed",
                                              "exception": e})

    def _spin(self, op: int, left: int, polls: int = 0) -> None:
        """Read the epoll set again, up to ``eager_polls - 1`` times (or ``polls``), until the
        request ``op`` is settled or ``left`` more reads got bytes (every node answered: the
        request goes on later, and a spin would wait for nothing), while spinning pays."""
        credit = self._spin_credit
        if not credit.allows():
            return
        ops = self._ops
        poll = self._mux.poll
        end = self.reads + left
        for _ in range(polls or self.eager_polls - 1):
            poll()
            if op not in ops:
                credit.paid(True)
                return
            if self.reads >= end:
                return  # every node answered, and the request goes on later: no verdict
        credit.paid(False)

    def _eager_reset(self) -> None:
        self._eager_reset_due = False
        self._eager_left = _EAGER_RUN

    def _tick(self) -> None:
        self._timer = None
        if self.engine is not None:
            self._step(P.simple(self.engine.inbuf, P.EV_TICK))

    # ------------------------------------------------------------ connections

    async def _connect(self, cid: int, node: int, flags: int, network: str, addr: str,
                       server_name: str) -> None:
        ctx = None
        if flags & P.OPEN_TLS:
            verify = not flags & P.OPEN_SKIP_VERIFY
            tls = self.tls.for_node(node) if self.tls is not None else None
            ctx = tls.context(verify) if tls is not None else _tls.default(verify)
            if tls is not None and tls.server_name:
                server_name = tls.server_name  # the client's ssl_server_name wins
        try:
            if self._mux is not False:
                if self._mux is None:
                    self._mux = _epoll.make(self) or False
                if self._mux:
                    c = await self._mux.connect(cid, network, addr, ctx, server_name)
                    self._opened(c)
                    return
            if network == "unix":
                await self.loop.create_unix_connection(
                    lambda: _Conn(self, cid), addr, ssl=ctx,
                    server_hostname=(server_name or "localhost") if ctx else None)
            else:
                host, _, port = addr.rpartition(":")
                host = host[1:-1] if host.startswith("[") else host
                await self.loop.create_connection(
                    lambda: _Conn(self, cid), host, int(port), ssl=ctx,
                    server_hostname=(server_name or host) if ctx else None)
        except asyncio.CancelledError:
            # by the engine's CLOSE (then no longer in _connecting), or by a loop shutting
            # down, which cancels every task: then the engine must know
            if self._connecting.pop(cid, None) is not None and self.engine is not None:
                self._step(P.conn_failed(self.engine.inbuf, cid, b"connect canceled"))
            raise
        except BaseException as e:  # noqa: BLE001 - every failure goes to the engine
            if self._connecting.pop(cid, None) is not None and self.engine is not None:
                msg = (str(e) or type(e).__name__).encode("utf-8", "replace")[:4096]
                self._step(P.conn_failed(self.engine.inbuf, cid, msg))

    def _opened(self, c: Any) -> None:
        if self._connecting.pop(c.cid, None) is None or self.engine is None:
            if c.transport is not None:
                c.transport.abort()
            return
        self._conns[c.cid] = c
        self._step(P.opened(self.engine.inbuf, c.cid))

    def _lost_conn(self, c: Any, exc: Optional[Exception]) -> None:
        if self._conns.get(c.cid) is not c:
            return  # closed by the engine's CLOSE
        del self._conns[c.cid]
        if self.engine is not None:
            msg = (str(exc) if exc else "connection closed by the node").encode("utf-8", "replace")[:4096]
            self._step(P.conn_failed(self.engine.inbuf, c.cid, msg))

    def _close_conn(self, cid: int) -> None:
        c = self._conns.pop(cid, None)
        if c is not None and c.transport is not None:
            c.transport.abort()  # nothing left to send: the engine has forgotten it
        task = self._connecting.pop(cid, None)
        if task is not None:
            task.cancel()

    # ------------------------------------------------------------ operations (loop thread)

    def _check(self, op: bool = False) -> Engine:
        """The engine, unless gone; ``op``: before an acquire, extend or release, whose
        telemetry lane is refreshed first."""
        check_fork(self.pid)
        engine = self.engine
        if engine is None or self.closing:
            raise InvalidHandle(self.gone)
        tel = self.tel
        if op and tel is not None and tel.refresh() is not self._quiet:
            # A quiet lane (no SDK records, no DEBUG lines) needs the warnings' reports alone.
            self._quiet = tel.quiet
            self._step(P.enc_reports(engine.inbuf, 1 if tel.quiet else 2))
        return engine

    def _request(self, n: int, done: Done, kind: str = "", resource: Optional[str] = None,
                 lock: int = 0, eager: bool = True) -> int:
        """Step a request whose outcome ``done`` receives; its op handle. ``kind``: its span's
        name (acquire, extend, release) when telemetry is on. ``eager`` False: the caller keys
        something by the op handle (an election's watch), so no reply is read before it returns."""
        tel = self.tel if kind else None
        quiet = False
        if tel is not None:
            if tel.quiet:  # no span, no metric: only the lock's resource is kept
                quiet, tel.qnow = True, (kind, resource, lock)
            else:
                tel.begin(kind, resource, lock)
        self._starting = done
        writes = self.writes
        try:
            reply = self._step(n)
        except BaseException as e:
            if tel is not None and not quiet:
                tel.refused(e)
            raise
        finally:
            self._starting = None
        if reply is not None and reply[0] == P.ACT_STARTED:
            op: int = reply[1]
            if quiet:
                tel.quiet_started(op)
            elif tel is not None:
                tel.started(op)
            if eager and self._mux and self._eager_left and self.eager:
                self._read_now(op, self.writes - writes)
            return op
        err: BaseException = InternalError(f"liblock: the engine answered a request with {reply!r}")
        if reply is not None and reply[0] == P.ACT_REJECTED and reply[1] is not None:
            err = exception(reply[1])
        if tel is not None and not quiet:
            tel.refused(err)
        raise err

    def start_acquire(self, req: Request, done: Done) -> int:
        """Start an acquire (or an election's campaign: ``req.value``); its op handle."""
        engine = self._check(True)
        res = req.resource
        return self._request(P.acquire(engine.inbuf, *req), done, "" if req.value else "acquire",
                             res.decode("utf-8", "replace") if isinstance(res, bytes) else res)

    def start_inspect(self, res: bytes, done: Done, permits: int = 0, mode: int = 0,
                      election: bool = False) -> int:
        """Start an inspection; ``done`` gets the INSPECTED fields (or the error)."""
        engine = self._check()
        return self._request(P.inspect(engine.inbuf, res, permits, mode, election), done)

    def start_extend(self, lock: int, ttl_ms: int, done: Done) -> int:
        engine = self._check(True)
        return self._request(P.extend(engine.inbuf, lock, ttl_ms), done, "extend",
                             self._resource_of(lock), lock)

    def start_release(self, lock: int, done: Done) -> int:
        engine = self._check(True)
        self.fences.pop(lock, None)  # the Lock object read it when it was made
        return self._request(P.handle_event(engine.inbuf, P.EV_RELEASE, lock), done, "release",
                             self._resource_of(lock), lock)

    def _resource_of(self, lock: int) -> Optional[str]:
        """A lock's resource for its telemetry: the lane's record, else the Lock object's."""
        tel = self.tel
        if tel is None:
            return None
        return tel.locks.get(lock) or self.lock_names.get(lock)

    def cancel(self, op: int) -> None:
        """Cancel a pending acquire whose waiter gave up (a lock granted meanwhile is released)."""
        if self._ops.pop(op, None) is not None and self.engine is not None:
            self._step(P.handle_event(self.engine.inbuf, P.EV_CANCEL, op))

    def info(self, lock: int) -> Dict[str, Any]:
        """What the engine knows of a lock, as the C ABI's lock_info JSON has it."""
        engine = self._check()
        reply = self._step(P.handle_event(engine.inbuf, P.EV_LOCK_INFO, lock))
        if reply is None or reply[0] != P.ACT_INFO:
            if reply is not None and reply[0] == P.ACT_REJECTED and reply[1] is not None:
                raise exception(reply[1])
            raise InternalError(f"liblock: the engine answered LOCK_INFO with {reply!r}")
        _, resource, key, token, ttl_ms, validity_ms, flags, err = reply
        fence, reentered = self.fences.get(lock, (0, False))
        return {"resource": resource, "key": key, "token": token, "ttl_ms": ttl_ms,
                "validity_ms": validity_ms, "auto_extend": bool(flags & P.INFO_AUTO_EXTEND),
                "released": bool(flags & P.INFO_RELEASED), "lost": err is not None,
                "fence": fence, "reentered": reentered}

    def _orphan(self, err: Optional[LockError], lock: int) -> None:
        """A lock nobody will own (its acquire was abandoned): release it."""
        if self.engine is not None and not self.closing:
            try:
                self.start_release(lock, lambda e, _: None)
            except LockError:
                pass

    def drop(self, lock: int, release: bool) -> None:
        """A Lock object was freed: release it if still held, else forget it. Loop thread."""
        self.lost_keys.pop(lock, None)
        self.lock_names.pop(lock, None)
        self.fences.pop(lock, None)
        if self.engine is None or self.closing:
            return
        if release:
            try:
                self.start_release(lock, lambda e, _: None)
                return
            except LockError:
                pass
        if self.tel is not None:
            self.tel.locks.pop(lock, None)  # (a quiet lane gets no HOLD report)
        self._step(P.handle_event(self.engine.inbuf, P.EV_FORGET, lock))

    # ------------------------------------------------------------ a Client's and its Locks' calls

    async def acquire(self, req: Request) -> int:
        """An acquire awaited on this host's loop; cancelling the waiter cancels it."""
        fut: "asyncio.Future[int]" = self.loop.create_future()

        def done(err: Optional[LockError], lock: int) -> None:
            if fut.done():  # the waiter was cancelled as the answer came
                if lock:
                    self._orphan(None, lock)
            elif err is not None:
                fut.set_exception(err)
            else:
                fut.set_result(lock)

        op = self.start_acquire(req, done)
        try:
            return await fut
        except asyncio.CancelledError:
            self.cancel(op)
            raise

    def acquire_sync(self, req: Request) -> Tuple[int, Dict[str, Any]]:
        """A blocking acquire: (lock, its info, read on the loop thread before the caller
        wakes). Ctrl-C cancels it (a lock granted meanwhile is released)."""
        def start(done: Done) -> int:
            def got(err: Optional[LockError], lock: int) -> None:
                try:
                    done(err, (lock, self.info(lock) if lock and err is None else None))
                except LockError as e:
                    done(e, (lock, None))
            return self.start_acquire(req, got)

        def give_up(op: Any, result: Any) -> None:
            if result is not None and result[0]:
                self._orphan(None, result[0])
            elif op:
                self.cancel(op)
        lock, info = run_op(self, start, give_up)
        return lock, info

    def inspect_sync(self, res: bytes, permits: int = 0, mode: int = 0, election: bool = False) -> Any:
        return run_op(self, lambda done: self.start_inspect(res, done, permits, mode, election))

    async def inspect_async(self, res: bytes, permits: int = 0, mode: int = 0, election: bool = False) -> Any:
        return await run_async(self, lambda done: self.start_inspect(res, done, permits, mode, election))

    def extend_sync(self, lock: int, ttl_ms: int) -> None:
        run_op(self, lambda done: self.start_extend(lock, ttl_ms, done))

    def release_sync(self, lock: int) -> None:
        run_op(self, lambda done: self.start_release(lock, done))

    async def extend_async(self, lock: int, ttl_ms: int) -> None:
        await run_async(self, lambda done: self.start_extend(lock, ttl_ms, done))

    async def release_async(self, lock: int) -> None:
        await run_async(self, lambda done: self.start_release(lock, done))

    def lock_info(self, lock: int) -> Dict[str, Any]:
        return dict(call(self, self.info, lock))

    def watch(self, lock: int, fire: Optional[Callable[[Optional[LockError]], None]]) -> Any:
        """Call ``fire(error)`` (on the loop) once when the lock is lost; with None, stop
        watching: returns the function registered (None if it fired or none was)."""
        check_fork(self.pid)
        if fire is None:
            return self.lost_keys.pop(lock, None)
        if self.engine is None:
            raise InvalidHandle(self.gone)
        self.lost_keys[lock] = fire
        return None

    def free_lock(self, lock: int, released: bool) -> None:
        """Finalizer of a Lock: release it (unless ``released``) without waiting. Never
        raises; touches nothing in a forked child."""
        self.lost_keys.pop(lock, None)
        self.lock_names.pop(lock, None)
        if released or self.engine is None or os.getpid() != self.pid:
            return
        try:
            # the host is read now: by the callback's time the client may be closed (then
            # drop() does nothing)
            submit(self, lambda: self.drop(lock, True))
        except LockError:
            pass

    # ------------------------------------------------------------ closing

    def close(self) -> None:
        """Release what is held, fail pending acquires (Canceled); the engine is freed once
        it has said CLOSED. Loop thread."""
        if self.closing or self.engine is None:
            return
        self.closing = True
        self._step(P.simple(self.engine.inbuf, P.EV_CLOSE))

    def free(self, why: Optional[LockError] = None) -> None:
        """Drop the engine at once (keys it still held stay until their ttl); pending
        operations fail with ``why`` (default: Canceled). Any thread when the loop is gone;
        else the loop thread."""
        engine, self.engine = self.engine, None
        self._recv_view = None
        self.closing = True
        if self.tel is not None:  # queued telemetry is recorded now
            self.tel.close()
        for cid in list(self._conns) + list(self._connecting):
            try:
                self._close_conn(cid)
            except RuntimeError:  # the loop is closed
                pass
        if self._mux:
            self._mux.close()
            self._mux = False
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        for fn in list(self._ops.values()):
            self._done.append((fn, why or error_for(P.STATUS_CANCELED, "liblock: canceled: the client was closed"), 0))
        self._ops.clear()
        self.lost_keys.clear()
        self.lock_names.clear()
        self.fences.clear()
        while self._won or self._done:
            fn, err, lock = (self._won or self._done).popleft()
            try:
                fn(err, lock)
            except BaseException:  # noqa: BLE001
                traceback.print_exc(file=sys.stderr)
        if engine is not None and os.getpid() == self.pid:
            engine.free()
        self.closed.set()
        fut = self._closed_fut
        if fut is not None and not fut.done() and not self.loop.is_closed():
            fut.set_result(None)
        if self._on_free is not None:
            self._on_free(self)

    def watch_loop_shutdown(self) -> None:
        """Close this host when its loop shuts down (``loop.shutdown_asyncgens()``, as
        asyncio.run calls): the loop closes the async generators it has seen, and this one's
        ``finally`` releases what the engine holds and waits for CLOSED. Loop thread."""
        async def guard() -> Any:
            try:
                yield
            finally:
                self.gone = ("liblock: invalid handle: the event loop this lock was acquired on has "
                             "shut down, and its locks were released then")
                await self.aclose(10.0)

        agen = guard()
        self._guard = agen  # the loop keeps only a weak reference
        step = agen.__anext__()  # registers it with the running loop (firstiter hook)
        try:
            step.send(None)
        except StopIteration:
            pass

    async def aclose(self, timeout: float) -> None:
        """close() and wait for CLOSED (at most ``timeout`` seconds; then drop the engine)."""
        if self.engine is None:
            return
        if self._closed_fut is None:
            self._closed_fut = self.loop.create_future()
        fut = self._closed_fut
        self.close()
        try:
            await asyncio.wait_for(asyncio.shield(fut), timeout)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self.free()


# ---------------------------------------------------------------- from other threads

def submit(host: Host, fn: Callable[[], None]) -> None:
    """Run fn on the host's loop thread soon (from any thread)."""
    if host.engine is None:
        raise InvalidHandle(host.gone)
    try:
        # One loop turn later: it then goes after the socket events of the same wake-up (a
        # node's EOF on an idle connection, which fn's request would otherwise write to).
        host.loop.call_soon_threadsafe(host.loop.call_soon, fn)
    except RuntimeError:  # the loop is closed
        raise InvalidHandle(host.gone) from None


def submit_op(host: Host, begin: Callable[[], None]) -> None:
    """submit, in a copy of the caller's context (contextvars) when telemetry may make a
    span: the operation's span is then a child of the caller's current one."""
    if host.tel is not None and host.tel.wants_context():
        ctx = contextvars.copy_context()
        submit(host, lambda: ctx.run(begin))
    else:
        submit(host, begin)


def _settle(fut: "asyncio.Future[Any]", err: Optional[BaseException], result: Any) -> None:
    if not fut.done():
        fut.set_exception(err) if err is not None else fut.set_result(result)


def call(host: Host, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) on the host's loop thread; its result (or exception). Any thread."""
    if threading.get_ident() == host.thread_id:
        check_fork(host.pid)
        return fn(*args)
    return run_op(host, lambda done: done(None, fn(*args)))


class OpRun:
    """One blocking call's operation, shared by run_op and _syncdrive.CallerDrive.run_op: its
    outcome (``box``), its op handle and whether the caller abandoned it (``state``), and
    the lock the caller sleeps on (``gate[0]``; None: nobody sleeps)."""

    def __init__(self, start: Callable[[Done], Any], give_up: Optional[Callable[[Any, Any], None]]) -> None:
        self.start, self.give_up = start, give_up
        self.box: List[Tuple[Optional[BaseException], Any]] = []
        self.state: List[Any] = [None, False]  # the op handle, abandoned
        self.gate: List[Any] = [None]

    def done(self, err: Optional[BaseException], result: Any) -> None:
        if self.state[1]:  # abandoned: a lock granted meanwhile is given up
            if self.give_up is not None:
                self.give_up(None, result)
            return
        self.box.append((err, result))
        if self.gate[0] is not None:
            self.gate[0].release()

    def begin(self) -> None:
        try:
            self.state[0] = self.start(self.done)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            self.done(e, None)

    def abandon(self) -> None:
        self.state[1] = True
        if self.give_up is not None:
            box = self.box
            self.give_up(None if box else self.state[0], box[0][1] if box else None)

    def wait(self, host: Host, first: Optional[Callable[[], None]] = None) -> Any:
        """Sleep on the gate until done (interruptible: an exception, in ``first`` too,
        abandons the operation on the loop thread); the result, or raise its error."""
        try:
            if first is not None:
                first()
            if not self.box:
                self.gate[0].acquire()
        except BaseException:
            try:
                submit(host, self.abandon)
            except Exception:  # noqa: BLE001 - the host is gone: nothing left to abandon
                pass
            raise
        err, result = self.box[0]
        if err is not None:
            raise err
        return result


def _gate() -> "threading.Lock":
    g = threading.Lock()
    g.acquire()
    return g


def run_op(host: Host, start: Callable[[Done], Any],
           give_up: Optional[Callable[[Any, Any], None]] = None) -> Any:
    """Start an operation on the host's loop (``start(done)`` returns its op handle) and
    block until ``done(error, result)``; its result. An exception in the wait (Ctrl-C)
    calls ``give_up(op, result or None)`` on the loop thread. Not on the loop's own
    running thread (it would wait for that loop forever)."""
    check_fork(host.pid)
    if host.engine is None:
        raise InvalidHandle(host.gone)
    if threading.get_ident() == host.thread_id:
        if host.loop.is_running():
            raise RuntimeError(
                "liblock: a blocking call on a lock that belongs to the event loop running in this "
                "thread would wait for that loop forever; use the _async methods here")
        fut: "asyncio.Future[Any]" = host.loop.create_future()  # its loop, idle here: run it
        start(partial(_settle, fut))
        return host.loop.run_until_complete(fut)
    if host.direct is not None:  # on the caller's thread when the loop thread is idle (_syncdrive.py)
        return host.direct.run_op(host, start, give_up)
    op = OpRun(start, give_up)
    op.gate[0] = _gate()
    submit_op(host, op.begin)
    return op.wait(host)


async def run_async(host: Host, start: Callable[[Done], Any]) -> Any:
    """An operation awaited on the running loop: stepped directly when the host is this
    loop's, else handed to the host's loop thread. A cancelled waiter leaves it running."""
    loop = asyncio.get_running_loop()
    fut: "asyncio.Future[Any]" = loop.create_future()
    settle = partial(_settle, fut)
    if loop is host.loop:
        host._check()
        start(settle)
    else:
        check_fork(host.pid)

        def done(err: Optional[BaseException], result: Any) -> None:  # the host's thread
            try:
                loop.call_soon_threadsafe(settle, err, result)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass

        def begin() -> None:
            try:
                start(done)
            except LockError as e:
                done(e, None)
        submit_op(host, begin)
    return await fut


def pending_count() -> int:
    """on_lost registrations of live hosts (a debugging aid for the tests)."""
    return sum(len(h.lost_keys) for h in list(_all))
