"""Synchronous calls driven on the caller's own thread (docs/python.md, "Architecture").

The synchronous API runs a client's host on a private loop thread (:class:`LoopThread`),
which also runs auto-extension and loss while the caller's code runs. Handing each call to
that thread and back costs two thread wake-ups per call, so a synchronous call runs its
operation itself, on the calling thread, whenever the loop thread is idle, and waits for
the replies in an ``epoll_wait`` of its own:

- **One runner at a time.** The loop thread holds :attr:`LoopThread.mu` whenever it runs
  anything and lets go of it only while it sleeps in its selector (:class:`DriveSelector`).
  A caller that takes ``mu`` is the only thread running the host until its operation is
  done; every other caller goes the old way (handed to the loop, waiting on a lock).
- **The loop thread stays asleep.** While a caller drives, the loop's selector stops
  watching the epoll set, so a reply wakes the caller alone; the loop thread is woken only
  when the caller left it work (callbacks queued, an earlier engine timer).
- **Handing over.** The caller hands the operation to the loop thread when the loop is
  needed: a connection being opened, one that is not in the epoll set, another thread's
  callback, another timer due, or an ``observe`` callback (it runs on the loop thread).
  Callbacks the host queues (``on_lost``) always run on the loop thread.
- **Ctrl-C.** On the main thread SIGINT's handler only records the signal while the caller
  drives, and raises only while it sleeps in ``epoll_wait`` (no host state half-done); the
  operation is then abandoned through the loop thread, as an interrupted wait abandons it.

``LIBLOCK_SYNC_DRIVE=loop`` turns it off (the A/B benchmark's "before").
"""

from __future__ import annotations

import asyncio
import heapq
import importlib
import os
import select
import selectors
import signal
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._errors import LockError
from ._host import _EAGER_POLLS as _SPIN_POLLS, Done, Engine, Host, OpRun, SpinCredit, _gate, submit, submit_op

# How long a caller waits for the loop thread to finish a callback before it hands its
# operation over; the longest single sleep of a driving caller (then it looks for timers).
_MU_WAIT = 0.01
_SLICE = 0.05
# An engine timer this much earlier than the loop thread's planned wake-up wakes it.
_EARLY = 0.001
# A driven request's spin and read of the late replies take the asyncio host's bounds
# (_SPIN_POLLS, a SpinCredit); LIBLOCK_SYNC_SPIN=0: neither (the A/B's "before").
_MAIN = threading.main_thread().ident
# signal.signal's C function itself: the signal module's wrapper converts to and from
# enums, 6 of the 8 µs a swap cost (twice per call)
try:
    _sig: Any = importlib.import_module("_signal")
except ImportError:  # not CPython
    _sig = signal
_SIGINT = int(_sig.SIGINT)


def enabled() -> bool:
    """Whether new loop threads let synchronous callers drive: where there is epoll and
    CPython's selector event loop (whose ``_ready``, ``_scheduled``, ``_ssock`` it reads)."""
    if os.environ.get("LIBLOCK_SYNC_DRIVE", "caller") == "loop" or not hasattr(selectors, "EpollSelector"):
        return False
    import asyncio
    return all(hasattr(asyncio.BaseEventLoop, a) for a in ("_write_to_self", "_timer_handle_cancelled")) \
        and hasattr(asyncio.SelectorEventLoop, "_read_from_self")


# (EpollSelector exists only where epoll does; elsewhere enabled() is False and the class unused)
_EpollBase: Any = getattr(selectors, "EpollSelector", selectors.DefaultSelector)


class DriveSelector(_EpollBase):  # type: ignore[misc]
    """The loop thread's selector: the thread holds ``mu`` except while it sleeps here (until
    ``sleep_until``); ``pause``/``resume`` stop and restart watching the host's epoll set."""

    def __init__(self, mu: "threading.Lock") -> None:
        super().__init__()
        self.mu = mu
        self.sleeping = False
        self.sleep_until = 0.0
        self._keys: Dict[int, Any] = getattr(self, "_fd_to_key")  # the registrations (get_key's, unchecked)

    def select(self, timeout: Optional[float] = None) -> List[Tuple[selectors.SelectorKey, int]]:
        self.sleep_until = float("inf") if timeout is None else time.monotonic() + max(timeout, 0.0)
        self.sleeping = True
        self.mu.release()
        try:
            got: List[Tuple[selectors.SelectorKey, int]] = super().select(timeout)
            return got
        finally:
            self.sleeping = False
            self.mu.acquire()

    def pause(self, fd: int) -> int:
        """Stop watching ``fd``; the events it was watched for (0: not watched)."""
        key = self._keys.get(fd)
        if key is None:
            return 0
        try:
            self._selector.modify(fd, 0)
        except (OSError, ValueError):
            return 0
        return (select.EPOLLIN if key.events & selectors.EVENT_READ else 0) | \
            (select.EPOLLOUT if key.events & selectors.EVENT_WRITE else 0)

    def resume(self, fd: int, events: int) -> None:
        """Watch ``fd`` again for ``events`` (pause's), unless it was unregistered meanwhile."""
        if self._keys.get(fd) is None:
            return
        try:
            self._selector.modify(fd, events)
        except (OSError, ValueError):
            pass


class _Interrupted(BaseException):
    """SIGINT while a driving caller sleeps (raised by the deferring handler)."""


class _Sigint:
    """The deferring SIGINT handler of one drive on the main thread."""

    __slots__ = ("prev", "pending", "waiting")

    def __init__(self) -> None:
        self.prev: Any = None
        self.pending: Optional[Tuple[int, Any]] = None
        self.waiting = False

    def __call__(self, signum: int, frame: Any) -> None:
        self.pending = (signum, frame)
        if self.waiting:
            raise _Interrupted


_MAIN_SIG = _Sigint()


# what a drive ended with
_DONE, _HANDOFF, _NOT_STARTED = 0, 1, 2


class CallerDrive:
    """One LoopThread's caller-side driver: :meth:`run_op` is ``_host.run_op`` for it."""

    def __init__(self, lt: "LoopThread", selector: DriveSelector) -> None:
        self.lt = lt
        self.mu = lt.mu
        self.sel = selector
        self.loop: Any = lt.loop
        self.driver: Optional[int] = None  # the thread driving now (under mu), if a caller
        self.spin = os.environ.get("LIBLOCK_SYNC_SPIN", "1") != "0"  # (tests: the control)
        self.late_credit = SpinCredit()  # _late's
        self._wait_ep: Any = None  # the caller's epoll: the host's epoll set and the loop's self-pipe
        self._wait_mux: Any = None
        self._mux_fd = -1
        self._ssock_fd = self.loop._ssock.fileno()
        # (descriptor, events) the loop's selector does not watch now
        self._paused: Optional[Tuple[int, int]] = None

    # ------------------------------------------------------------ the operation

    def run_op(self, host: "Host", start: Callable[["Done"], Any],
               give_up: Optional[Callable[[Any, Any], None]]) -> Any:
        """``_host.run_op``'s contract, driven on the caller's thread when the loop is idle."""
        op = OpRun(start, give_up)
        # gate[0]: the lock the caller sleeps on once the operation is not its own to run;
        # made only then, and while nothing else can run the host (no done() in between)
        box, state, gate, begin = op.box, op.state, op.gate, op.begin
        how = _NOT_STARTED
        sig: Optional[_Sigint] = None
        # (a synchronous lane's records are made in the step, on whichever thread steps)
        if (host.tel is None or host.tel.blocking) and host._mux and self.driver is None \
                and self.mu.acquire(True, _MU_WAIT):
            # (else another caller drives: this operation goes the old way)
            me = threading.get_ident()
            self.driver = me
            if me == _MAIN:
                sig = _MAIN_SIG  # (one drive at a time on the main thread)
                sig.pending = None
                try:
                    sig.prev = _sig.signal(_SIGINT, sig)
                except (ValueError, OSError):  # not the main interpreter's main thread after all
                    sig = None
                if sig is not None and not callable(sig.prev):
                    # SIG_DFL or SIG_IGN: no Python-level interrupt can happen
                    _sig.signal(_SIGINT, sig.prev)
                    sig = None
            try:
                how = self._drive(host, begin, box, state, sig)
                if not box:
                    gate[0] = _gate()  # under mu
            finally:
                self._leave(host)
                if sig is not None:
                    _sig.signal(_SIGINT, sig.prev)
        if how == _NOT_STARTED:
            if gate[0] is None:
                gate[0] = _gate()
            submit_op(host, begin)
        if sig is not None and sig.pending:
            # the previous handler, now that no host code is half-way: a raise
            # (KeyboardInterrupt) abandons the operation, even one done meanwhile
            return op.wait(host, lambda: sig.prev(*sig.pending))
        return op.wait(host)

    # ------------------------------------------------------------ driving (under mu)

    def _drive(self, host: "Host", begin: Callable[[], None], box: List[Any], state: List[Any],
               sig: Optional[_Sigint]) -> int:
        loop = self.loop
        mux = host._mux
        if not mux or loop._ready or host._connecting or host.watches or len(host._conns) != len(mux.conns):
            # the loop has work first, a connection is not the mux's, or an observe()
            # callback must run on the loop thread
            return _NOT_STARTED
        if self._wait_mux is not mux and not self._waiter(mux):
            return _NOT_STARTED
        ep, fd = self._wait_ep, self._mux_fd
        watched = self.sel.pause(fd)
        if not watched:
            return _NOT_STARTED
        self._paused = (fd, watched)
        saved_eager = host.eager
        host.eager = False  # the caller reads right after the writes anyway (and _read_now queues a callback)
        try:
            # What arrived while nobody drove and a due timer go first, as on the loop thread.
            self._catch_up(host, mux)
            if loop._ready or host._connecting or host.engine is None or (sig is not None and sig.pending):
                return _NOT_STARTED
            writes, reads = host.writes, host.reads
            begin()
            if not box and self.spin and (len(host._ops) == 1 or not host.spin_alone) \
                    and state[0] in host._ops and not host.watches:
                # The replies read at once, as the asyncio host's requests spin (_host.Host._spin):
                # the epoll_wait below would put the caller to sleep and wake it (1 node,
                # sync pair: 150-188 µs with the spin, 244-265 µs without)
                host._spin(state[0], host.writes - writes - (host.reads - reads), _SPIN_POLLS)
            while not box:
                if loop._ready or host._connecting or host.watches or host.engine is None or host._mux is not mux:
                    return _HANDOFF
                if sig is not None and sig.pending:
                    return _HANDOFF
                timeout = _SLICE
                t = host._timer
                if t is not None:
                    timeout = min(timeout, max(t.when() - loop.time(), 0.0))
                try:
                    if sig is not None:
                        sig.waiting = True
                        if sig.pending:  # arrived just before: no sleep
                            raise _Interrupted
                    events = ep.poll(timeout)
                except _Interrupted:
                    return _HANDOFF
                finally:
                    if sig is not None:
                        sig.waiting = False
                for fd, _ in events:
                    if fd == self._ssock_fd:
                        if loop._ready:
                            return _HANDOFF  # another thread's callback: the loop's turn
                        self._drain()  # only a wake-up (ours), meant for the loop thread's timer
                self._catch_up(host, mux)
                if self._other_due(host):
                    return _HANDOFF
            if self.spin and not host.watches:  # (no read of an observe()'s change here)
                self._late(host, mux, reads + host.writes - writes)
            return _DONE
        finally:
            host.eager = saved_eager

    def _late(self, host: "Host", mux: Any, end: int) -> None:
        """The operation is done on its quorum's replies: read the other nodes' too (until
        ``end`` reads), for at most _SPIN_POLLS polls, while that pays. Left for later, they
        would wake the loop thread, and the next call would wait for it (5 nodes: 40 µs a pair)."""
        if host.reads >= end or not self.late_credit.allows():
            return
        ready = mux._ready
        for _ in range(_SPIN_POLLS):
            ready()
            if host.reads >= end:
                break
        self.late_credit.paid(host.reads >= end)

    def _catch_up(self, host: "Host", mux: Any) -> None:
        """Read what the connections have and run the engine's timer if due, as the loop would."""
        try:
            mux._ready()
            t = host._timer
            if t is not None and t.when() <= self.loop.time():
                t.cancel()
                host._tick()
        except Exception as e:  # noqa: BLE001
            self.loop.call_exception_handler({"message": "liblock: a synchronous call's read failed",
                                              "exception": e})

    def _other_due(self, host: "Host") -> bool:
        """A loop timer other than the engine's is due: the loop thread must run it."""
        sched = self._clean()
        return bool(sched) and sched[0] is not host._timer and sched[0].when() <= self.loop.time()

    def _clean(self) -> Any:
        """The loop's timers without the cancelled ones at the head (as the loop's turn drops
        them; under ``mu``): the head is the earliest live timer, and the engine's replaced
        timers do not pile up while the loop thread sleeps."""
        loop = self.loop
        sched = loop._scheduled
        while sched and sched[0].cancelled():
            loop._timer_cancelled_count -= 1
            h = heapq.heappop(sched)
            h._scheduled = False
        return sched

    def _leave(self, host: "Host") -> None:
        """Watch the connections again and let go of ``mu``; wake the loop thread when it has
        callbacks queued or must wake earlier than it planned."""
        paused, self._paused = self._paused, None
        if paused is not None:
            self.sel.resume(*paused)
        loop = self.loop
        wake = bool(loop._ready)
        if not wake and self.sel.sleeping:
            sched = self._clean()
            wake = bool(sched) and sched[0].when() < self.sel.sleep_until - _EARLY
        self.driver = None
        self.mu.release()
        if wake:
            try:
                loop._write_to_self()
            except Exception:  # noqa: BLE001 - the loop is closed
                pass

    def _waiter(self, mux: Any) -> bool:
        """The caller's epoll for ``mux`` (once per set); False when the set is closed."""
        try:
            fd = mux.ep.fileno()
        except ValueError:  # closed
            return False
        if self._wait_ep is not None:
            self._wait_ep.close()
        ep = select.epoll()
        ep.register(fd, select.EPOLLIN)
        ep.register(self._ssock_fd, select.EPOLLIN)
        self._wait_ep, self._wait_mux, self._mux_fd = ep, mux, fd
        return True

    def _drain(self) -> None:
        try:
            while self.loop._ssock.recv(4096):
                pass
        except (BlockingIOError, InterruptedError, OSError):
            pass

    def close(self) -> None:
        """The loop thread ended (under mu): drop the caller's epoll."""
        if self._wait_ep is not None:
            self._wait_ep.close()
            self._wait_ep = self._wait_mux = None


class LoopThread:
    """A private event loop in one daemon thread, running one host for the synchronous API
    (auto-extension and loss run there); callers drive it while it sleeps (``CallerDrive``)."""

    def __init__(self, engine: Engine, name: str, tls: Any = None) -> None:
        self._tls = tls
        self.mu = threading.Lock()
        self._selector: Optional[DriveSelector] = None
        if enabled():
            self._selector = DriveSelector(self.mu)
            self.loop: asyncio.AbstractEventLoop = asyncio.SelectorEventLoop(self._selector)
        else:
            self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.host: Optional[Host] = None
        self._engine = engine
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.thread.start()
        self._ready.wait()
        assert self.host is not None

    def _run(self) -> None:
        self.mu.acquire()  # released only while the loop sleeps (DriveSelector) and at the end
        try:
            asyncio.set_event_loop(self.loop)
            self.host = Host(self._engine, self.loop, tls=self._tls)
            if self._selector is not None:
                try:
                    self.host.direct = CallerDrive(self, self._selector)
                except AttributeError:  # a loop without CPython's internals: every call handed over
                    self.host.direct = None
            self._ready.set()
            try:
                self.loop.run_forever()
            finally:
                self.host.free()  # callbacks submitted meanwhile fail with InvalidHandle
                for _ in range(3):
                    self.loop.call_soon(lambda: None)
                    self.loop.run_until_complete(asyncio.sleep(0))
                if self.host.direct is not None:
                    self.host.direct.close()
                self.loop.close()
        finally:
            self.mu.release()

    def stop(self, timeout: float) -> None:
        """Close the host (releasing its locks), stop the loop, join the thread."""
        host = self.host
        assert host is not None
        if threading.get_ident() == host.thread_id:  # from a callback on this loop
            self.loop.create_task(self._stop_later(timeout))
            return
        try:
            submit(host, host.close)
            host.closed.wait(timeout)
            self.loop.call_soon_threadsafe(self.loop.stop)
        except (LockError, RuntimeError):
            pass
        self.thread.join()

    async def _stop_later(self, timeout: float) -> None:
        assert self.host is not None
        await self.host.aclose(timeout)
        self.loop.stop()
