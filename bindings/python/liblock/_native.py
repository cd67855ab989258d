"""The native backend: liblock.so through ctypes (``_lib``), behind ``_backend.Backend``.

Synchronous calls use the C ABI's blocking functions (the GIL is released while
they wait). The asyncio forms run on the asyncio host (``_host``), one engine of
liblock.so (``lock_engine_*``) per event loop."""

from __future__ import annotations

import json
import threading
from ctypes import byref, c_uint64, c_void_p
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _lib
from ._backend import Done
from ._errors import OK, InvalidArgument, error_for


def _call(fn: Callable[..., int], *args: Any) -> None:
    """Call a C function whose last parameter is ``char **err`` and raise on failure."""
    err = c_void_p()
    status = fn(*args, byref(err))
    _lib.check(status, err)


def _free_raw(handle: int) -> None:
    if not _lib.forked() and handle:
        try:
            _lib.lib().lock_free(handle)
        except Exception:  # noqa: BLE001
            pass


_hosts_lock = threading.Lock()


class NativeBackend:
    """One Client's: its C ABI handle lives in the one liblock.so of the process, its
    asyncio hosts (made on first use) here."""

    name = "native"

    def __init__(self) -> None:
        self._hosts: Any = None
        self._config = b""
        self._tls: Any = None
        self._refused: Optional[str] = None  # why the synchronous API cannot run

    def client_new(self, config: bytes, tls: Any = None) -> int:
        out = c_uint64()
        capi = config
        if tls is not None:
            # the Go driver of lock_client_new reads the files itself (tls_* keys);
            # lock_engine_new (the asyncio hosts' engines) takes config without them
            # (a liblock.Node's as the object form of its nodes item)
            capi = json.dumps(tls.capi_config(json.loads(config))).encode("utf-8")
            if tls.user_context:
                from ._tls import SYNC_NATIVE_REFUSED
                self._refused = SYNC_NATIVE_REFUSED
        _call(_lib.lib().lock_client_new, capi, byref(out))
        self._config = config
        self._tls = tls
        return int(out.value)

    def _sync(self) -> None:
        if self._refused is not None:
            raise InvalidArgument(self._refused)

    def async_host(self) -> Any:
        """The asyncio host of the running loop."""
        if _lib.forked():
            _lib.lib()  # raises ForkedProcessError
        if self._hosts is None:  # asyncio only with the first asyncio call
            from ._host import Hosts
            config = self._config
            timeout = json.loads(config).get("node_timeout_ms", 50) / 1000.0
            with _hosts_lock:
                if self._hosts is None:
                    self._hosts = Hosts(lambda: _lib.NativeEngine(config), 2.0 + 4 * timeout,
                                        self._tls)
        return self._hosts.get()

    def free_client(self, handle: int) -> None:
        if self._hosts is not None and not _lib.forked():
            self._hosts.close_all()
        _lib.free_handle(handle)

    def acquire(self, client: int, res: bytes, ttl_ms: int, opts: Optional[bytes],
                interruptible: bool) -> int:
        self._sync()
        dll = _lib.lib()
        if interruptible:
            return self._acquire_interruptible(dll, client, res, ttl_ms, opts)
        out = c_uint64()
        _call(dll.lock_acquire, client, res, ttl_ms, opts, byref(out))
        return int(out.value)

    def _acquire_interruptible(self, dll: Any, client: int, res: bytes, ttl_ms: int,
                               opts: Optional[bytes]) -> int:
        """lock_acquire_async + an Event: the main thread waits in Python, where a
        signal (KeyboardInterrupt) can reach it; the exception cancels the acquire."""
        event = threading.Event()
        gate = threading.Lock()
        state: Dict[str, Any] = {"abandoned": False, "result": None}

        def done(status: int, handle: int, msg: Optional[str]) -> None:  # library thread
            with gate:
                if not state["abandoned"]:
                    state["result"] = (status, handle, msg)
                    event.set()
                    return
            if handle:
                _free_raw(handle)  # nobody will own it: release and free

        op = _start_acquire(dll, client, res, ttl_ms, opts, done)
        try:
            event.wait()
        except BaseException:
            with gate:
                result = state["result"]
                state["abandoned"] = True
            if result is None:
                dll.lock_cancel(op)
            elif result[1]:
                _free_raw(result[1])
            raise
        status, handle, msg = state["result"]
        if status != OK:
            raise error_for(status, msg)
        return int(handle)

    def extend(self, lock: int, ttl_ms: int) -> None:
        _call(_lib.lib().lock_extend, lock, ttl_ms)

    def release(self, lock: int) -> Tuple[int, Optional[str]]:
        err = c_void_p()
        status = _lib.lib().lock_release(lock, byref(err))
        return int(status), _lib.take_string(err)

    def _async(self, fn: Any, done: Done, *args: Any) -> None:
        key = _lib.register(done)
        err = c_void_p()
        status = fn(*args, _lib.C_CALLBACK, key, byref(err))
        if status != OK:
            _lib.unregister(key)
        _lib.check(status, err)

    def extend_async(self, lock: int, ttl_ms: int, done: Done) -> None:
        self._async(_lib.lib().lock_extend_async, done, lock, ttl_ms)

    def release_async(self, lock: int, done: Done) -> None:
        self._async(_lib.lib().lock_release_async, done, lock)

    def on_lost(self, lock: int, key: int) -> None:
        err = c_void_p()
        status = _lib.lib().lock_on_lost(lock, _lib.C_CALLBACK, key, byref(err))
        _lib.check(status, err)

    def info(self, lock: int) -> Optional[str]:
        out = c_void_p()
        err = c_void_p()
        status = _lib.lib().lock_info(lock, byref(out), byref(err))
        text = _lib.take_string(out)
        _lib.check(status, err)
        return text

    def inspect(self, client: int, res: bytes, permits: int = 0) -> Optional[str]:
        """lock_inspect (lock_inspect_ex for a semaphore): the inspection as JSON."""
        self._sync()
        out = c_void_p()
        err = c_void_p()
        if permits:
            status = _lib.inspect_ex_function()(client, res, b'{"permits":%d}' % permits, byref(out), byref(err))
        else:
            status = _lib.inspect_function()(client, res, byref(out), byref(err))
        text = _lib.take_string(out)
        _lib.check(status, err)
        return text

    def release_then_free(self, lock: int) -> None:
        dll = _lib.lib()
        key = _lib.register(lambda status, h, msg: _free_raw(lock))
        status = dll.lock_release_async(lock, _lib.C_CALLBACK, key, None)
        if status != OK:
            _lib.unregister(key)
            _free_raw(lock)

    def free_lock(self, lock: int, lost_key: List[int]) -> None:
        _lib.free_lock(lock, lost_key)


def _start_acquire(dll: Any, client: int, res: bytes, ttl_ms: int, opts: Optional[bytes],
                   done: Done) -> int:
    """lock_acquire_async with ``done`` as its completion; returns the operation handle.
    Raises (and unregisters ``done``) when the library refuses the call."""
    key = _lib.register(done)
    op = c_uint64()
    err = c_void_p()
    status = dll.lock_acquire_async(client, res, ttl_ms, opts, _lib.C_CALLBACK, key,
                                    byref(op), byref(err))
    if status != OK:
        _lib.unregister(key)
    _lib.check(status, err)
    return int(op.value)
