"""The synchronous native fast path: liblock.so's blocking C ABI (``lock_acquire``,
``lock_release``, ...) behind the same interface as the engine host's (``_host.Host``:
``acquire_sync``, ``extend_sync``, ``lock_info``, ``watch``, ...), so that ``_client``
does not know which one runs a lock.

Why it exists (issue 19 allows it only so): in ``make bench`` the synchronous native
pair through the engine host on its loop thread costs far more than 1.1x this path,
where liblock.so's Go driver reads the reply on the calling thread. A client uses it
for its synchronous calls on the native backend unless it has an ``ssl.SSLContext``
(which cannot cross to Go) or ``LIBLOCK_NATIVE_SYNC=host`` is set (the one driver).
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import sys
import threading
import traceback
from ctypes import POINTER, byref, c_char_p, c_int32, c_int64, c_uint64, c_void_p
from typing import Any, Callable, Dict, Optional, Tuple

from . import _lib
from ._errors import OK, LockError, NotAcquired, Unavailable, error_for

# void (*lock_callback)(void *user_data, int32_t status, uint64_t handle, const char *err)
CALLBACK = ctypes.CFUNCTYPE(None, c_void_p, c_int32, c_uint64, c_char_p)
CDone = Callable[[int, int, Optional[str]], None]
_dll: Any = None
log = logging.getLogger("liblock")


def _declare() -> Any:
    global _dll
    if _dll is None or _lib.forked():
        dll = _lib.lib()  # raises in a forked child
        u64p, errp = POINTER(c_uint64), POINTER(c_void_p)
        for name, args in {
            "lock_client_new": [c_char_p, u64p, errp],
            "lock_acquire": [c_uint64, c_char_p, c_int64, c_char_p, u64p, errp],
            "lock_acquire_async": [c_uint64, c_char_p, c_int64, c_char_p, CALLBACK, c_void_p, u64p, errp],
            "lock_extend": [c_uint64, c_int64, errp],
            "lock_extend_async": [c_uint64, c_int64, CALLBACK, c_void_p, errp],
            "lock_release": [c_uint64, errp],
            "lock_release_async": [c_uint64, CALLBACK, c_void_p, errp],
            "lock_cancel": [c_uint64], "lock_free": [c_uint64],
            "lock_on_lost": [c_uint64, CALLBACK, c_void_p, errp],
            "lock_client_on_lost": [c_uint64, CALLBACK, c_void_p, errp],
            "lock_info": [c_uint64, errp, errp], "lock_inspect": [c_uint64, c_char_p, errp, errp],
            "lock_inspect_ex": [c_uint64, c_char_p, c_char_p, errp, errp],
        }.items():
            fn = getattr(dll, name)
            fn.restype, fn.argtypes = c_int32, args
        _dll = dll
    return _dll


def _take(ptr: c_void_p) -> Optional[str]:
    """Copy a library-allocated C string and free it."""
    if not ptr.value:
        return None
    try:
        return ctypes.string_at(ptr.value).decode("utf-8", "replace")
    finally:
        _lib.lib().lock_string_free(ptr)


def _call(fn: Any, *args: Any) -> None:
    """Call a C function whose last parameter is ``char **err``; raise on failure."""
    err = c_void_p()
    status = fn(*args, byref(err))
    msg = _take(err)
    if status != OK:
        raise error_for(status, msg)


# One CFUNCTYPE object for the life of the process; user_data is the address of a 1-byte
# ctypes buffer kept in _pending (the Go runtime rejects pointer-typed values below 4096).
_pending: Dict[int, Tuple[CDone, Any]] = {}
_pending_lock = threading.RLock()  # a finalizer may run under it (gc on this thread)


def _register(fn: CDone) -> int:
    anchor = ctypes.c_char()
    with _pending_lock:
        _pending[ctypes.addressof(anchor)] = (fn, anchor)
    return ctypes.addressof(anchor)


def _unregister(key: int) -> Optional[CDone]:
    with _pending_lock:
        entry = _pending.pop(key, None)
    return entry[0] if entry is not None else None


def _trampoline(user_data: Optional[int], status: int, handle: int, err: Optional[bytes]) -> None:
    try:  # a thread of the Go runtime: nothing may escape into C
        fn = _unregister(user_data or 0)
        if fn is not None:
            fn(status, handle, err.decode("utf-8", "replace") if err else None)
    except BaseException:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)


C_CALLBACK = CALLBACK(_trampoline)

# lock_client_on_lost's callback (called once per lost lock, so not through the one-shot
# _pending): user_data is the key of a warning host in _warned, for the life of the process.
_warned: Dict[int, "BlockingHost"] = {}


def _client_lost(user_data: Optional[int], status: int, handle: int, err: Optional[bytes]) -> None:
    try:  # a thread of the Go runtime: nothing may escape into C
        host = _warned.get(user_data or 0)
        if host is not None:
            host._log_lost(handle)
    except BaseException:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)


C_CLIENT_LOST = CALLBACK(_client_lost)


def _async(fn: Any, done: CDone, *args: Any) -> None:
    key = _register(done)
    try:
        _call(fn, *args, C_CALLBACK, key)
    except BaseException:
        _unregister(key)
        raise


def _options(res: bytes, wait_ms: int, auto_extend: bool, fence: bool, token: bytes,
             permits: int = 0, mode: int = 0) -> Optional[bytes]:
    """lock_acquire's options JSON (None, NULL, for one plain attempt); a multi-resource
    acquire's further resources (``_multi.ResourceSet``) as its "resources"; a read-write
    lock's side (``mode``: 1 read, 2 write) as its "mode"."""
    more = getattr(res, "more", ())
    if not (wait_ms or auto_extend or fence or token or more or permits or mode):
        return None
    if not (token or more):
        # Only integers and fixed words: formatted directly (json.dumps costs more than the
        # rest of this function), and only the keys that differ from the defaults (a missing
        # key is its default: hostabi.ParseOptions), so that Go parses less too.
        o_b = b'{"wait_ms":%d' % wait_ms
        if auto_extend:
            o_b += b',"auto_extend":true'
        if fence:
            o_b += b',"fence":true'
        if mode:
            o_b += b',"mode":"read"' if mode == 1 else b',"mode":"write"'
        if permits:
            o_b += b',"permits":%d' % permits
        return o_b + b"}"
    o: Dict[str, Any] = {"wait_ms": wait_ms, "auto_extend": auto_extend, "fence": fence}
    if mode:
        o["mode"] = "read" if mode == 1 else "write"
    if token:
        o["token"] = token.decode("utf-8")
    if permits:
        o["permits"] = permits
    if more:
        o["resources"] = [m.decode("utf-8") for m in more]
    return json.dumps(o).encode("utf-8")


class BlockingHost:
    """A client of liblock.so's Go driver (``lock_client_new``) with the host's interface."""

    thread_id = -1

    def __init__(self, config: bytes, warn: bool = False) -> None:
        out = c_uint64()
        _call(_declare().lock_client_new, config, byref(out))
        self.handle = int(out.value)
        self.pid = os.getpid()
        self._lost: Dict[int, Tuple[int, Callable[[Optional[LockError]], None]]] = {}
        # A client with telemetry runs here only while its lane would be quiet (no SDK
        # records, the liblock logger below DEBUG: _driver.Driver.sync_host); what a quiet
        # lane still does is log a lock's loss (_otel.Lane's LOST), which this path learns
        # from lock_client_on_lost, with the resource kept per lock for the line.
        self.warn = warn
        self._resource: Dict[int, str] = {}
        if warn:
            self._anchor = ctypes.c_char()  # its address: a user_data the Go runtime accepts
            key = ctypes.addressof(self._anchor)
            _warned[key] = self
            try:
                _call(_declare().lock_client_on_lost, self.handle, C_CLIENT_LOST, key)
            except BaseException:
                del _warned[key]
                self.close()
                raise

    def close(self) -> None:
        """lock_free of the client: releases its locks, cancels its pending acquires."""
        handle, self.handle = self.handle, 0
        if handle and not _lib.forked():
            _dll.lock_free(handle)  # no lock_client_on_lost call after it returned
        if self.warn:
            _warned.pop(ctypes.addressof(self._anchor), None)

    def acquire_sync(self, req: Tuple[Any, ...]) -> Tuple[int, Dict[str, Any]]:
        res, ttl_ms, wait_ms, auto_extend, fence, token, permits, mode = req[:8]  # (the resources ride on res)
        dll = _declare()
        out = c_uint64()
        if wait_ms == 0 or threading.current_thread() is not threading.main_thread():
            opts = _options(res, wait_ms, auto_extend, fence, token, permits, mode)
            _call(dll.lock_acquire, self.handle, res, ttl_ms, opts, byref(out))
            return self._acquired(int(out.value))
        # A wait in the main thread stays interruptible (Ctrl-C cancels it), which costs a
        # hand-off from a library thread: first one plain attempt (bounded by the node
        # timeout), and only if it fails the interruptible wait for what is left.
        import time

        start = time.monotonic()
        try:
            return self.acquire_sync((res, ttl_ms, 0) + tuple(req[3:]))
        except (NotAcquired, Unavailable) as e:
            failed: Optional[LockError] = e
        left = wait_ms - int((time.monotonic() - start) * 1000)
        if left <= 0:
            assert failed is not None
            raise failed
        failed = None  # not raised "during handling" of the first attempt's error
        opts = _options(res, left, auto_extend, fence, token, permits, mode)
        event, gate = threading.Event(), threading.Lock()
        state: Dict[str, Any] = {"abandoned": False, "result": None}

        def done(status: int, handle: int, msg: Optional[str]) -> None:  # library thread
            with gate:
                if not state["abandoned"]:
                    state["result"] = (status, handle, msg)
                    event.set()
                    return
            if handle:
                self.free_lock(handle, False)  # nobody will own it: release and free

        key = _register(done)
        try:
            _call(dll.lock_acquire_async, self.handle, res, ttl_ms, opts, C_CALLBACK, key, byref(out))
        except BaseException:
            _unregister(key)
            raise
        try:
            event.wait()
        except BaseException:
            with gate:
                result, state["abandoned"] = state["result"], True
            if result is None:
                dll.lock_cancel(out.value)
            elif result[1]:
                self.free_lock(result[1], False)
            raise
        status, handle, msg = state["result"]
        if status != OK:
            raise error_for(status, msg)
        return self._acquired(int(handle))

    def _acquired(self, lock: int) -> Tuple[int, Dict[str, Any]]:
        info = self.lock_info(lock)
        if self.warn:
            self._resource[lock] = str(info.get("resource", ""))
        return lock, info

    def _log_lost(self, lock: int) -> None:
        """lock_client_on_lost's call (on a library thread): the quiet lane's loss line,
        from a thread of Python's own: a LogRecord asks for the current thread's name,
        which on a Go thread would register a threading._DummyThread that is never
        removed (daemon given: Thread() would ask for it too)."""
        resource = self._resource.get(lock, "")
        threading.Thread(target=log.warning, args=("liblock: lock lost: %s", resource),
                         kwargs={"extra": {"liblock_resource": resource}},
                         name="liblock-lost", daemon=True).start()

    def inspect_sync(self, res: bytes, permits: int = 0, mode: int = 0) -> Tuple[Any, ...]:
        """lock_inspect's JSON (lock_inspect_ex's for a semaphore) as the engine's
        INSPECTED fields (``_inspection.from_engine``)."""
        out = c_void_p()
        try:
            if permits or mode:
                opts = b'{"permits":%d}' % permits if permits else b'{"mode":"%s"}' % (b"read" if mode == 1 else b"write")
                _call(_declare().lock_inspect_ex, self.handle, res, opts, byref(out))
            else:
                _call(_declare().lock_inspect, self.handle, res, byref(out))
        finally:
            text = _take(out)
        i = json.loads(text or "{}")
        nodes = [(n.get("node", k), n.get("addr", ""), bool(n.get("locked")) | bool(n.get("holder")) << 1,
                  n.get("owner", ""), -1 if n.get("ttl_ms") is None else n["ttl_ms"], n.get("error") or "")
                 for k, n in enumerate(i.get("nodes") or [])]
        validity = i.get("validity_ms", 0)
        holders = [(h.get("slot", 0), h.get("owner", ""), -1 if h.get("validity_ms") is None else h["validity_ms"], 0)
                   for h in i.get("holders") or []]
        # A read-write lock's readers, as the protocol's holders of mode 1 (read).
        holders += [(0, r.get("owner", ""), -1 if r.get("validity_ms") is None else r["validity_ms"], 1)
                    for r in i.get("readers") or []]
        return (i.get("held", False), -1 if validity is None else validity, i.get("owner", ""), nodes,
                i.get("permits", 0), holders)

    def extend_sync(self, lock: int, ttl_ms: int) -> None:
        _call(_declare().lock_extend, lock, ttl_ms)

    def release_sync(self, lock: int) -> None:
        _call(_declare().lock_release, lock)

    async def _await(self, fn: Any, *args: Any) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        fut: "asyncio.Future[None]" = loop.create_future()

        def settle(status: int, msg: Optional[str]) -> None:
            if not fut.done():
                fut.set_result(None) if status == OK else fut.set_exception(error_for(status, msg))

        def done(status: int, handle: int, msg: Optional[str]) -> None:  # library thread
            try:
                loop.call_soon_threadsafe(settle, status, msg)
            except RuntimeError:  # the loop is closed: nobody is waiting any more
                pass
        _async(fn, done, *args)
        await fut  # a cancelled waiter leaves the operation running

    async def extend_async(self, lock: int, ttl_ms: int) -> None:
        await self._await(_declare().lock_extend_async, lock, ttl_ms)

    async def release_async(self, lock: int) -> None:
        await self._await(_declare().lock_release_async, lock)

    def lock_info(self, lock: int) -> Dict[str, Any]:
        out = c_void_p()
        try:
            _call(_declare().lock_info, lock, byref(out))
        finally:
            text = _take(out)
        info: Dict[str, Any] = json.loads(text or "{}")
        return info

    def watch(self, lock: int, fire: Optional[Callable[[Optional[LockError]], None]]) -> Any:
        """Call ``fire(None)`` (on a library thread) once when the lock is lost; with None,
        stop watching: returns the function registered (None if it fired or none was)."""
        old = self._lost.pop(lock, None)
        if old is not None and _unregister(old[0]) is None:
            old = None  # it has fired
        if fire is not None:
            key = _register(lambda status, h, msg: fire(None))
            try:
                _call(_declare().lock_on_lost, lock, C_CALLBACK, key)
            except BaseException:
                _unregister(key)
                raise
            self._lost[lock] = (key, fire)
        return old[1] if old is not None else None

    def free_lock(self, lock: int, released: bool) -> None:
        """Finalizer of a Lock: drop its on_lost registration, release it (unless
        ``released``) without waiting, free its handle. Never raises; nothing after fork."""
        old = self._lost.pop(lock, None)
        if old is not None:
            _unregister(old[0])
        self._resource.pop(lock, None)
        if _lib.forked() or not lock or os.getpid() != self.pid:
            return
        try:
            if released:
                _dll.lock_free(lock)
                return
            key = _register(lambda status, h, msg: _dll.lock_free(lock))
            if _dll.lock_release_async(lock, C_CALLBACK, key, None) != OK:
                _unregister(key)
                _dll.lock_free(lock)
        except Exception:  # noqa: BLE001 - finalizers must not raise
            pass


def pending_count() -> int:
    """Registered callbacks not called yet (a debugging aid for the tests)."""
    with _pending_lock:
        return len(_pending)

