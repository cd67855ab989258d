"""The wasm backend: one liblock.wasm instance per Client, driven in time by one thread.

* Every export call holds ``_mu`` (an instance runs one call at a time). Each call
  that can change what is scheduled is followed, under the same hold, by
  ``lock_run`` (PROTOCOL: "call lock_run after every other export call"), whose
  events finish waiting acquires and report lost locks.
* Synchronous calls run on the caller's thread. A waiting acquire starts with
  ``lock_acquire_start`` and then blocks on a ``threading.Event`` (so Ctrl-C can
  reach the main thread; the exception cancels the operation).
* The driver thread (started on first need, stopped by close) sleeps until the
  ``next_run_ms`` the last ``lock_run`` asked for, then calls ``lock_run`` again:
  retries of pending acquires, auto-extensions and expiry all happen there. It also
  runs the asyncio operations (so the event loop never waits on Redis or on
  ``_mu``), deferred frees, and the on_lost callbacks.
* asyncio waiters are futures completed with ``call_soon_threadsafe``: a thousand
  waiting tasks are a thousand futures and one pending operation each in the module.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import traceback
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from . import _lib, _wasm
from ._backend import Done
from ._errors import (
    CANCELED,
    INVALID_HANDLE,
    LOST,
    OK,
    ForkedProcessError,
    InvalidArgument,
    InvalidHandle,
    LibraryError,
    error_for,
)
from ._msgpack import decode_request, encode_response
from ._nodeurl import NodeURLError

REDIS_PIN = "redis==5.2.1"
PENDING = 8  # lock_op_result: the operation has not finished (wasm only)
EVENT_OP_DONE = 1
EVENT_LOST = 2

_CLOSED_MESSAGE = "liblock: canceled: the client was closed"

Job = Tuple[Callable[[], None], Optional[Callable[[], None]]]  # (run, abort-at-close)


class _SyncWaiter:
    """A synchronous acquire's completion: an Event plus an abandon flag, so that a
    result arriving after the waiter gave up (Ctrl-C) is released, never leaked."""

    def __init__(self, backend: "WasmBackend") -> None:
        self.event = threading.Event()
        self._gate = threading.Lock()
        self._backend = backend
        self.result: Optional[Tuple[int, int, Optional[str]]] = None
        self._abandoned = False

    def __call__(self, status: int, handle: int, msg: Optional[str]) -> None:
        with self._gate:
            if not self._abandoned:
                self.result = (status, handle, msg)
                self.event.set()
                return
        if handle:
            self._backend.release_then_free(handle)

    def abandon(self) -> Optional[Tuple[int, int, Optional[str]]]:
        with self._gate:
            self._abandoned = True
            return self.result


class WasmBackend:
    """One Client's module instance, Redis connections and driver thread."""

    name = "wasm"

    def __init__(self) -> None:
        self._pid = os.getpid()
        self._mu = threading.Lock()      # serializes every export call
        # Guards the driver state below. Reentrant: a Lock finalizer posts its free here,
        # and a garbage collection may run it on a thread that already holds _cv.
        self._cv = threading.Condition(threading.RLock())
        self._deadline: Optional[float] = None  # monotonic time of the next lock_run
        self._jobs: List[Job] = []
        self._stop = False
        self._closing = False
        self._closed = False
        self._driver: Optional[threading.Thread] = None
        self._waiters: Dict[int, Done] = {}   # op handle -> completion
        self._lost_keys: Dict[int, int] = {}  # lock handle -> _lib registry key
        self._live_locks: Set[int] = set()   # lock handles not freed yet
        self._nodes: Any = None
        self._client = 0
        self._inst: Optional[_wasm.Instance] = None
        try:  # before compiling the module (seconds): a missing redis-py fails at once
            from . import _redisio
        except ImportError as e:
            raise LibraryError(f"the wasm backend needs redis-py: pip install {REDIS_PIN} ({e})") from None
        self._redisio = _redisio
        self._inst = _wasm.Instance(self._exec)

    # ------------------------------------------------------------ plumbing

    def _usable(self) -> _wasm.Instance:
        """The instance, under _mu; raises for a closed client or a forked process."""
        if os.getpid() != self._pid:
            raise ForkedProcessError(
                f"this liblock client (wasm backend) was created in process {self._pid}; "
                f"process {os.getpid()} is a fork of it and cannot use it: its Redis "
                "connections and lock state belong to the parent. Create a new "
                "liblock.Client in the child.")
        inst = self._inst
        if inst is None or self._closing:
            raise InvalidHandle("liblock: invalid handle: the client was closed")
        return inst

    def _exec(self, request: bytes) -> bytes:
        """The liblock.exec host call (runs inside an export, under _mu)."""
        client, timeout_ms, cmds = decode_request(request)
        return encode_response(self._nodes.exec(timeout_ms, cmds))

    def _status_call(self, inst: _wasm.Instance, name: str, *args: int) -> Tuple[int, Optional[str]]:
        # No need to clear out_err first: the module writes it on every return.
        status = inst.call(name, *args)
        msg = inst.take_error() if status != OK else None
        return status, msg

    def _run(self, inst: _wasm.Instance) -> List[Callable[[], None]]:
        """lock_run until nothing is queued; re-arms the driver. Under _mu. Returns the
        completions to call once _mu is released."""
        out: List[Callable[[], None]] = []
        at = inst.out_buf + inst.RUN
        cap = 8 + 16 * inst.RUN_EVENTS
        while True:
            n = inst.call("lock_run", at, cap)
            if n < 0:
                raise error_for(7, f"liblock.wasm: lock_run returned {n}")
            raw = inst.read(at, 8 + 16 * n)
            next_ms = int.from_bytes(raw[:8], "little", signed=True)
            for i in range(n):
                ev = raw[8 + 16 * i: 24 + 16 * i]
                handle = int.from_bytes(ev[:8], "little")
                kind = int.from_bytes(ev[8:12], "little")
                if kind == EVENT_OP_DONE:
                    self._op_finished(inst, handle, out)
                elif kind == EVENT_LOST:
                    key = self._lost_keys.pop(handle, 0)
                    if key:
                        out.append(self._lost_fire(key, handle))
            if n < inst.RUN_EVENTS:
                break  # (next_ms 0 with room left: the driver runs it at once, without holding _mu here)
        self._arm(next_ms)
        return out

    def _op_finished(self, inst: _wasm.Instance, op: int, out: List[Callable[[], None]]) -> None:
        waiter = self._waiters.pop(op, None)
        if waiter is None:  # its result was taken already, or nobody waits any more
            inst.call("lock_free", op)  # frees it; releases an untaken lock
            return
        status, lock, msg = self._take_result(inst, op)
        out.append(lambda: waiter(status, lock, msg))

    def _take_result(self, inst: _wasm.Instance, op: int) -> Tuple[int, int, Optional[str]]:
        status = inst.call("lock_op_result", op, inst.out_buf + inst.OUT, inst.out_buf + inst.ERR)
        if status == OK:
            lock = inst.u64(inst.out_buf + inst.OUT)
            self._live_locks.add(lock)
            return OK, lock, None
        if status == PENDING:
            return PENDING, 0, None
        return status, 0, inst.take_error()

    def _lost_fire(self, key: int, handle: int) -> Callable[[], None]:
        """on_lost callbacks run on the driver thread, whoever saw the event."""
        def fire() -> None:
            fn = _lib.take(key)
            if fn is not None:
                fn(LOST, handle, None)
        return lambda: self._post(fire)

    @staticmethod
    def _finish(completions: List[Callable[[], None]]) -> None:
        for c in completions:
            try:
                c()
            except BaseException:  # noqa: BLE001 - a callback's bug must not stop the others
                traceback.print_exc(file=sys.stderr)

    def _locked(self, fn: Callable[[_wasm.Instance], Any], run: bool = True) -> Any:
        """fn(instance) under _mu, then lock_run; completions run after _mu is released."""
        completions: List[Callable[[], None]] = []
        if os.getpid() != self._pid:
            self._usable()  # raises; before _mu, which a parent's thread may have held at fork
        with self._mu:
            inst = self._usable()
            try:
                result = fn(inst)
            finally:
                if run and inst.dead is None:
                    completions = self._run(inst)
        self._finish(completions)
        return result

    # ------------------------------------------------------------ the driver

    def _arm(self, next_ms: int) -> None:
        """Set the driver's next lock_run. Waking the driver costs a thread switch, so it
        is woken only for an earlier deadline; a later or "nothing scheduled" (-1) answer
        leaves it to wake at its old deadline, run lock_run once for nothing, and re-arm.
        (An acquire+release pair thus wakes nobody: acquire asks for a run at the end of
        the validity, release for none.)"""
        now = time.monotonic()
        with self._cv:
            old = self._deadline
            if next_ms < 0:
                if old is not None and old <= now:
                    self._deadline = None
                return
            new = now + next_ms / 1000.0
            self._deadline = new
            if old is None or new < old:
                self._wake()

    def _post(self, run: Callable[[], None], abort: Optional[Callable[[], None]] = None) -> None:
        with self._cv:
            if not self._stop:
                self._jobs.append((run, abort))
                self._wake()
                return
        if abort is not None:
            abort()

    def _wake(self) -> None:
        """Under _cv: start the driver if needed, or wake it."""
        if self._driver is None and not self._stop:
            self._driver = threading.Thread(target=self._drive, name="liblock-wasm-driver", daemon=True)
            self._driver.start()
        self._cv.notify()

    def _drive(self) -> None:
        while True:
            with self._cv:
                while not self._stop and not self._jobs:
                    if self._deadline is not None:
                        left = self._deadline - time.monotonic()
                        if left <= 0:
                            break
                        self._cv.wait(left)
                    else:
                        self._cv.wait()
                if self._stop:
                    break
                jobs, self._jobs = self._jobs, []
                due = self._deadline is not None and self._deadline <= time.monotonic()
            for run, _ in jobs:
                try:
                    run()
                except BaseException:  # noqa: BLE001
                    traceback.print_exc(file=sys.stderr)
            if due:
                try:
                    self._locked(lambda inst: None)
                except InvalidHandle:
                    pass
                except BaseException:  # noqa: BLE001
                    traceback.print_exc(file=sys.stderr)
        if self._closing and not self._closed:
            self._close_now()  # close() was called on this thread (e.g. by a callback)

    # ------------------------------------------------------------ Backend

    def client_new(self, config: bytes) -> int:
        cfg = json.loads(config)

        def make(inst: _wasm.Instance) -> int:
            placed = inst.put(config)
            (p, n), = placed
            status, msg = self._status_call(inst, "lock_client_new", p, n, inst.out_buf + inst.OUT,
                                            inst.out_buf + inst.ERR)
            inst.release_put(placed)
            if status != OK:
                raise error_for(status, msg)
            return inst.u64(inst.out_buf + inst.OUT)

        self._client = int(self._locked(make, run=False))
        try:
            # The module checked the URLs' syntax; go-redis's further checks (the native
            # backend's: db, options, skip_verify only with rediss, ...) happen here.
            self._nodes = self._redisio.NodeSet(list(cfg["nodes"]), cfg.get("node_timeout_ms", 50) / 1000.0)
        except NodeURLError as e:
            self._close_now()
            raise InvalidArgument(f"liblock: invalid argument: {e}") from None
        except Exception as e:  # noqa: BLE001 - nothing else is expected; still no leak
            self._close_now()
            raise InvalidArgument(f"liblock: invalid argument: nodes: {e}") from None
        return self._client

    def free_client(self, handle: int) -> None:
        _lib.handle_closed()
        if os.getpid() != self._pid:
            return  # a forked child: the parent's instance and sockets are not ours
        with self._cv:
            if self._closing:
                return
            self._closing = True
            self._stop = True
            driver = self._driver
            self._cv.notify()
        if driver is threading.current_thread():
            return  # the driver closes after the job that called this
        if driver is not None:
            driver.join()
        self._close_now()

    def _close_now(self) -> None:
        with self._mu:
            if self._closed:
                return
            self._closed = True
            inst, self._inst = self._inst, None
            waiters, self._waiters = self._waiters, {}
            self._lost_keys.clear()
            self._live_locks.clear()
            with self._cv:
                jobs, self._jobs = self._jobs, []
            if inst is not None and inst.dead is None and self._client:
                try:
                    inst.call("lock_free", self._client)  # releases its locks, drops pending ops
                except Exception:  # noqa: BLE001 - closing must not raise
                    pass
            if self._nodes is not None:
                self._nodes.close()
        for w in waiters.values():
            self._finish([lambda w=w: w(CANCELED, 0, _CLOSED_MESSAGE)])  # type: ignore[misc]
        for _, abort in jobs:
            if abort is not None:
                self._finish([abort])

    def _start(self, inst: _wasm.Instance, client: int, res: bytes, ttl_ms: int,
               opts: Optional[bytes]) -> Tuple[int, int, Optional[str]]:
        """lock_acquire_start: (status, op, message)."""
        placed = inst.put(res, opts or b"")
        (rp, rn), (op_, on) = placed
        status, msg = self._status_call(
            inst, "lock_acquire_start", client, rp, rn, ttl_ms, op_ if opts else 0, on,
            inst.out_buf + inst.OUT, inst.out_buf + inst.ERR)
        inst.release_put(placed)
        op = inst.u64(inst.out_buf + inst.OUT) if status == OK else 0
        return status, op, msg

    def acquire(self, client: int, res: bytes, ttl_ms: int, opts: Optional[bytes],
                interruptible: bool) -> int:
        waiter = _SyncWaiter(self)

        def start(inst: _wasm.Instance) -> Tuple[int, int, Optional[str]]:
            status, op, msg = self._start(inst, client, res, ttl_ms, opts)
            if status == OK:
                # The lock_run after this call reports the op when its first attempt
                # settled it (the usual case), else a later one (driver) does.
                self._waiters[op] = waiter
            return status, op, msg

        result: Tuple[int, int, Optional[str]] = self._locked(start)
        status, op, msg = result
        if status != OK:
            raise error_for(status, msg)
        if waiter.result is None:
            try:
                waiter.event.wait()
            except BaseException:
                self._abandon_sync(waiter, op)
                raise
        assert waiter.result is not None
        status, handle, msg = waiter.result
        if status != OK:
            raise error_for(status, msg)
        return handle

    def _abandon_sync(self, waiter: _SyncWaiter, op: int) -> None:
        result = waiter.abandon()
        if result is not None:
            if result[1]:
                self.release_then_free(result[1])
            return
        try:
            self._locked(lambda inst: self._cancel_op(inst, op))
        except InvalidHandle:
            pass

    def _cancel_op(self, inst: _wasm.Instance, op: int) -> None:
        """Cancel a pending op nobody waits for any more (its cleanup I/O runs here)."""
        if self._waiters.pop(op, None) is not None:
            inst.call("lock_cancel", op)
            inst.call("lock_free", op)

    def acquire_async(self, client: int, res: bytes, ttl_ms: int, opts: Optional[bytes],
                      done: Done) -> Callable[[], None]:
        state: Dict[str, Any] = {"op": 0, "canceled": False}

        def start(inst: _wasm.Instance) -> Tuple[int, Optional[str]]:
            if state["canceled"]:
                return CANCELED, "liblock: canceled"
            status, op, msg = self._start(inst, client, res, ttl_ms, opts)
            if status == OK:
                self._waiters[op] = done  # completed by this or a later lock_run
                state["op"] = op
            return status, msg

        def run() -> None:
            try:
                status, msg = self._locked(start)
            except InvalidHandle as e:
                status, msg = CANCELED if self._closing else INVALID_HANDLE, str(e)
            if status != OK:
                done(status, 0, msg)

        def cancel() -> None:
            def job() -> None:
                state["canceled"] = True
                if state["op"]:
                    try:
                        self._locked(lambda inst: self._cancel_op(inst, state["op"]))
                    except InvalidHandle:
                        pass
            self._post(job)

        self._usable()
        self._post(run, lambda: done(CANCELED, 0, _CLOSED_MESSAGE))
        return cancel

    def extend(self, lock: int, ttl_ms: int) -> None:
        status, msg = self._locked(lambda inst: self._status_call(
            inst, "lock_extend", lock, ttl_ms, inst.out_buf + inst.ERR))
        if status != OK:
            raise error_for(status, msg)

    def release(self, lock: int) -> Tuple[int, Optional[str]]:
        def rel(inst: _wasm.Instance) -> Tuple[int, Optional[str]]:
            status, msg = self._status_call(inst, "lock_release", lock, inst.out_buf + inst.ERR)
            if status in (OK, LOST):  # the lock is over: free its handle now, not from the finalizer
                self._lost_keys.pop(lock, None)
                self._free(inst, lock)
            return status, msg
        try:
            result: Tuple[int, Optional[str]] = self._locked(rel)
        except InvalidHandle as e:
            return INVALID_HANDLE, str(e)
        return result

    def _async_call(self, fn: Callable[[], Tuple[int, Optional[str]]], done: Done) -> None:
        def run() -> None:
            try:
                status, msg = fn()
            except InvalidHandle as e:
                status, msg = INVALID_HANDLE, str(e)
            done(status, 0, msg)
        self._usable()
        self._post(run, lambda: done(INVALID_HANDLE, 0, "liblock: invalid handle: the client was closed"))

    def extend_async(self, lock: int, ttl_ms: int, done: Done) -> None:
        def fn() -> Tuple[int, Optional[str]]:
            return self._locked(lambda inst: self._status_call(  # type: ignore[no-any-return]
                inst, "lock_extend", lock, ttl_ms, inst.out_buf + inst.ERR))
        self._async_call(fn, done)

    def release_async(self, lock: int, done: Done) -> None:
        self._async_call(lambda: self.release(lock), done)

    def on_lost(self, lock: int, key: int) -> None:
        def reg(inst: _wasm.Instance) -> None:
            self._check_lock(inst, lock)
            self._lost_keys[lock] = key
        self._locked(reg, run=False)

    def _check_lock(self, inst: _wasm.Instance, lock: int) -> str:
        inst.clear_error()
        info_at = inst.out_buf + inst.INFO
        inst.write(info_at, b"\0" * 8)
        status = inst.call("lock_info", lock, info_at, inst.out_buf + inst.ERR)
        text = inst.take_pair(info_at)
        if status != OK:
            raise error_for(status, inst.take_error())
        return (text or b"{}").decode("utf-8", "replace")

    def info(self, lock: int) -> Optional[str]:
        result: str = self._locked(lambda inst: self._check_lock(inst, lock), run=False)
        return result

    def _free(self, inst: _wasm.Instance, lock: int) -> None:
        """lock_free (releasing it if still held), once. Under _mu."""
        if lock in self._live_locks:
            self._live_locks.discard(lock)
            self._lost_keys.pop(lock, None)
            inst.call("lock_free", lock)

    def release_then_free(self, lock: int) -> None:
        def job() -> None:
            try:
                self._locked(lambda inst: self._free(inst, lock))
            except InvalidHandle:
                pass  # the client was closed: that released it
        self._post(job)

    def free_lock(self, lock: int, lost_key: List[int]) -> None:
        """Finalizer of a Lock. Never calls into the module here (it may run inside
        a garbage collection on a thread that is inside an export): the driver does."""
        key, lost_key[0] = lost_key[0], 0
        if key:
            _lib.unregister(key)
        _lib.handle_closed()
        if os.getpid() != self._pid or self._closing or lock not in self._live_locks:
            return  # (set membership is atomic under the GIL; _free checks again under _mu)
        self.release_then_free(lock)
