"""Client and Lock: thin Python objects over liblock.so handles."""

from __future__ import annotations

import asyncio
import datetime
import json
import math
import numbers
import threading
import weakref
from types import TracebackType
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Type, Union

from . import _lib
from ._backend import Backend, check_backend_name
from ._errors import (
    OK,
    LOST,
    ArgumentTypeError,
    InvalidArgument,
    InvalidHandle,
    LockLost,
    error_for,
)

Seconds = Union[int, float, datetime.timedelta]
OnLost = Callable[["Lock"], Any]

# Past this the library would see garbage in an int64; it rejects anything
# this large with its own message (ttl/wait limits are 24 h).
_MS_CLAMP = 2**62


def _ms(name: str, value: Any) -> int:
    """Seconds (int, float or timedelta) -> integer milliseconds for the C ABI."""
    if type(value) is float and -1e15 < value < 1e15:  # fast path; excludes NaN/inf
        return round(value * 1000)
    if isinstance(value, datetime.timedelta):
        value = value.total_seconds()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ArgumentTypeError(
            f"{name} must be a number of seconds (int, float or timedelta), "
            f"not {type(value).__name__}")
    f = float(value)
    if not math.isfinite(f):
        raise InvalidArgument(f"{name} must be a finite number of seconds, got {value!r}")
    if isinstance(value, numbers.Integral):
        ms = int(value) * 1000
    else:
        ms = round(f * 1000)
    return max(-_MS_CLAMP, min(_MS_CLAMP, ms))


def _text(name: str, value: Any) -> bytes:
    """A str argument as NUL-terminated UTF-8 (the library checks length and emptiness)."""
    if not isinstance(value, str):
        raise ArgumentTypeError(f"{name} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise InvalidArgument(f"{name} must not contain NUL characters")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidArgument(f"{name} is not valid Unicode text: {e}") from None


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be a bool, not {type(value).__name__}")
    return value


def _callable(name: str, value: Any) -> Optional[Callable[..., Any]]:
    if value is not None and not callable(value):
        raise ArgumentTypeError(f"{name} must be callable or None, not {type(value).__name__}")
    fn: Optional[Callable[..., Any]] = value
    return fn


def _future_from_callback(
    loop: asyncio.AbstractEventLoop,
) -> Tuple["asyncio.Future[Tuple[int, int, Optional[str]]]", Callable[[int, int, Optional[str]], None]]:
    """A future and a library-thread callback that completes it on the loop."""
    fut: "asyncio.Future[Tuple[int, int, Optional[str]]]" = loop.create_future()

    def settle(result: Tuple[int, int, Optional[str]]) -> None:
        if not fut.done():
            fut.set_result(result)

    def done(status: int, handle: int, msg: Optional[str]) -> None:  # any thread
        if asyncio._get_running_loop() is loop:  # the host of this loop: no hand-off
            settle((status, handle, msg))
            return
        try:
            loop.call_soon_threadsafe(settle, (status, handle, msg))
        except RuntimeError:  # the loop is closed: nobody is waiting any more
            pass

    return fut, done


class Lock:
    """A held (or formerly held) distributed lock.

    Obtained from :meth:`Client.acquire` / :meth:`Client.acquire_async` or the
    ``with client.lock(...)`` / ``async with client.lock(...)`` forms. Usable as a
    (async) context manager itself: leaving the block releases it.

    A dropped Lock is released and freed by its finalizer.
    """

    resource: str
    key: str
    token: str
    auto_extend: bool

    def __init__(
        self,
        client: "Client",
        handle: int,
        *,
        on_lost: Optional[OnLost] = None,
        loop: Optional[asyncio.AbstractEventLoop] = None,
        backend: Optional[Backend] = None,
        info: Optional[Dict[str, Any]] = None,
    ) -> None:
        _lib.handle_opened()
        self._backend: Backend = backend or client._backend
        self._lost_key = [0]  # on_lost registration, shared with the finalizer
        self._finalizer = weakref.finalize(self, self._backend.free_lock, handle, self._lost_key)
        self._client = client  # keeps the client (and so the handle's owner) alive
        self._handle = handle
        self._loop = loop
        self._lost = False
        self._released = False
        self._state_lock = threading.Lock()
        if info is None:
            info = self.info()
        self.resource = str(info.get("resource", ""))
        self.key = str(info.get("key", ""))
        self.token = str(info.get("token", ""))
        self.auto_extend = bool(info.get("auto_extend", False))
        if on_lost is not None or self.auto_extend:
            self.on_lost(on_lost)

    # ------------------------------------------------------------ state

    @property
    def handle(self) -> int:
        """The C ABI lock handle (for debugging)."""
        return self._handle

    @property
    def released(self) -> bool:
        """True once :meth:`release` was called (whatever its outcome)."""
        return self._released

    def info(self) -> Dict[str, Any]:
        """The library's description of the lock (``lock_info``) as a dict."""
        text = self._backend.info(self._handle)
        if isinstance(text, dict):  # an engine's (asyncio host, wasm)
            return text
        info: Dict[str, Any] = json.loads(text or "{}")
        return info

    @property
    def validity(self) -> float:
        """Seconds of validity left by the local monotonic clock (0.0 when expired or released)."""
        if self._released:
            return 0.0
        try:
            return float(self.info().get("validity_ms", 0)) / 1000.0
        except InvalidHandle:
            return 0.0

    @property
    def lost(self) -> bool:
        """True when the library knows the lock is no longer held (expired, taken, or extension failed)."""
        if self._lost:
            return True
        if self._released:
            return False
        try:
            lost = bool(self.info().get("lost", False))
        except InvalidHandle:
            return self._lost
        if lost:
            self._lost = True
        return lost

    # ------------------------------------------------------------ loss

    def on_lost(self, callback: Optional[OnLost]) -> None:
        """Register ``callback(lock)``, called at most once when the lock is lost.

        It runs on a library thread for locks acquired synchronously, and on the
        event loop for locks acquired with ``acquire_async`` / ``async with``.
        Not called after a successful release. Replaces an earlier callback.
        """
        _callable("on_lost", callback)
        ref = weakref.ref(self)
        loop = self._loop

        def fire(status: int, handle: int, msg: Optional[str]) -> None:
            lock = ref()
            if lock is None:
                return
            lock._lost = True
            if callback is None:
                return
            if loop is not None:
                try:
                    loop.call_soon_threadsafe(callback, lock)
                    return
                except RuntimeError:  # loop closed: call it here rather than never
                    pass
            callback(lock)

        key = _lib.register(fire)
        try:
            self._backend.on_lost(self._handle, key)
        except BaseException:
            _lib.unregister(key)
            raise
        with self._state_lock:
            old, self._lost_key[0] = self._lost_key[0], key
        if old:
            _lib.unregister(old)
        # A loss that happened before registration must not go unnoticed.
        try:
            lost_already = bool(self.info().get("lost", False))
        except InvalidHandle:
            lost_already = False
        if lost_already:
            fn = _lib.take(key)
            if fn is not None:
                fn(LOST, self._handle, None)

    def _drop_on_lost(self) -> None:
        with self._state_lock:
            key, self._lost_key[0] = self._lost_key[0], 0
        if key:
            _lib.unregister(key)

    # ------------------------------------------------------------ operations

    def extend(self, ttl: Seconds) -> None:
        """Reset the lock's expiry to ``ttl`` seconds from now. Raises :class:`LockLost` if it expired."""
        ttl_ms = _ms("ttl", ttl)
        try:
            self._backend.extend(self._handle, ttl_ms)
        except LockLost:
            self._lost = True
            raise

    def release(self) -> None:
        """Release the lock and free its handle.

        Raises :class:`LockLost` when it was no longer held on a quorum (nothing
        another owner holds is touched), :class:`InvalidHandle` when already released.
        """
        status, msg = self._backend.release(self._handle)
        self._finish_release(status)
        if status != OK:
            raise error_for(status, msg)

    def _finish_release(self, status: int) -> None:
        if status in (OK, LOST):
            self._released = True
            if status == LOST:
                self._lost = True
            self._drop_on_lost()
            self._finalizer()  # lock_free: local, the lock is no longer held

    async def extend_async(self, ttl: Seconds) -> None:
        """Like :meth:`extend`, without blocking the event loop."""
        ttl_ms = _ms("ttl", ttl)
        loop = asyncio.get_running_loop()
        fut, done = _future_from_callback(loop)
        self._backend.extend_async(self._handle, ttl_ms, done)
        status, _, msg = await fut  # a cancelled waiter leaves the operation running
        if status == LOST:
            self._lost = True
        if status != OK:
            raise error_for(status, msg)

    async def release_async(self) -> None:
        """Like :meth:`release`, without blocking the event loop."""
        loop = asyncio.get_running_loop()
        fut, done = _future_from_callback(loop)
        self._backend.release_async(self._handle, done)
        status, _, msg = await fut  # a cancelled waiter leaves the operation running
        self._finish_release(status)
        if status != OK:
            raise error_for(status, msg)

    # ------------------------------------------------------------ context managers

    def _exit_release(self, exc_type: Optional[type], raise_on_lost: bool) -> None:
        if self._released:
            return
        try:
            self.release()
        except LockLost:
            if raise_on_lost and exc_type is None:
                raise

    async def _aexit_release(self, exc_type: Optional[type], raise_on_lost: bool) -> None:
        if self._released:
            return
        try:
            await self.release_async()
        except LockLost:
            if raise_on_lost and exc_type is None:
                raise

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self._exit_release(exc_type, True)

    async def __aenter__(self) -> "Lock":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        await self._aexit_release(exc_type, True)

    def __repr__(self) -> str:
        state = "released" if self._released else ("lost" if self._lost else "held")
        return f"<liblock.Lock {self.resource!r} {state}>"


class LockContext:
    """What :meth:`Client.lock` returns: use it with ``with`` or ``async with``.

    Entering acquires (raising :class:`NotAcquired`, :class:`Unavailable`, ...
    when it cannot), leaving releases. Leaving a block on a lock that was lost
    raises :class:`LockLost` unless ``raise_on_lost=False`` (an exception raised
    by the block itself always takes precedence).
    """

    def __init__(self, client: "Client", resource: str, ttl: Seconds, wait: Seconds,
                 auto_extend: bool, on_lost: Optional[OnLost], raise_on_lost: bool) -> None:
        self._client = client
        self._args = (resource, ttl)
        self._kwargs: Dict[str, Any] = dict(wait=wait, auto_extend=auto_extend, on_lost=on_lost)
        self._raise_on_lost = _bool("raise_on_lost", raise_on_lost)
        self._lock: Optional[Lock] = None

    @property
    def lock(self) -> Optional[Lock]:
        return self._lock

    def __enter__(self) -> Lock:
        self._lock = self._client.acquire(*self._args, **self._kwargs)
        return self._lock

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        assert self._lock is not None
        lock, self._lock = self._lock, None
        lock._exit_release(exc_type, self._raise_on_lost)

    async def __aenter__(self) -> Lock:
        self._lock = await self._client.acquire_async(*self._args, **self._kwargs)
        return self._lock

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        assert self._lock is not None
        lock, self._lock = self._lock, None
        await lock._aexit_release(exc_type, self._raise_on_lost)


class Client:
    """A Redlock client over one or more independent Redis masters.

    ``nodes``: URLs (``redis://[user:password@]host:port[/db]``, ``rediss://``,
    ``unix:///path``). ``node_timeout``: seconds any single node request may take
    (default 0.05). ``drift_factor``: clock drift allowance (default 0.01).
    ``key_prefix``: prepended to every resource to form the Redis key.
    ``backend``: ``"native"`` (liblock.so through ctypes, the default) or ``"wasm"``
    (liblock.wasm under wasmtime; see the README).

    Close it with :meth:`close` or use it as a (async) context manager; a dropped
    client is closed by its finalizer. Closing releases the locks it still holds.
    Safe to share between threads.
    """

    def __init__(
        self,
        nodes: Iterable[str],
        *,
        node_timeout: Optional[Seconds] = None,
        drift_factor: Optional[float] = None,
        key_prefix: Optional[str] = None,
        backend: str = "native",
    ) -> None:
        check_backend_name(backend)
        if isinstance(nodes, (str, bytes)) or nodes is None:
            raise ArgumentTypeError(
                f"nodes must be a list of URL strings, not {type(nodes).__name__}")
        try:
            node_list: List[Any] = list(nodes)
        except TypeError:
            raise ArgumentTypeError(
                f"nodes must be a list of URL strings, not {type(nodes).__name__}") from None
        for i, url in enumerate(node_list):
            _text(f"nodes[{i}]", url)
        config: Dict[str, Any] = {"nodes": node_list}
        if node_timeout is not None:
            config["node_timeout_ms"] = _ms("node_timeout", node_timeout)
        if drift_factor is not None:
            if isinstance(drift_factor, bool) or not isinstance(drift_factor, numbers.Real):
                raise ArgumentTypeError(
                    f"drift_factor must be a number, not {type(drift_factor).__name__}")
            if not math.isfinite(float(drift_factor)):
                raise InvalidArgument(f"drift_factor must be finite, got {drift_factor!r}")
            config["drift_factor"] = float(drift_factor)
        if key_prefix is not None:
            _text("key_prefix", key_prefix)
            config["key_prefix"] = key_prefix
        self._backend: Backend = _make_backend(backend)
        self._handle = self._backend.client_new(json.dumps(config).encode("utf-8"))
        _lib.handle_opened()
        self._finalizer = weakref.finalize(self, self._backend.free_client, self._handle)
        self._nodes = len(node_list)

    @property
    def handle(self) -> int:
        return self._handle

    @property
    def backend(self) -> str:
        """``"native"`` or ``"wasm"``: the engine running this client's locks."""
        return self._backend.name

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        """Release the locks this client still holds, cancel its pending acquires, free it.
        Idempotent."""
        self._finalizer()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                 tb: Optional[TracebackType]) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], exc: Optional[BaseException],
                        tb: Optional[TracebackType]) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<liblock.Client {self._nodes} node(s) {self._backend.name}"
                f"{' closed' if self.closed else ''}>")

    # ------------------------------------------------------------ acquire

    @staticmethod
    def _acquire_args(resource: Any, ttl: Any, wait: Any, auto_extend: Any,
                      on_lost: Any) -> Tuple[bytes, int, Optional[bytes]]:
        res = _text("resource", resource)
        ttl_ms = _ms("ttl", ttl)
        wait_ms = _ms("wait", wait)
        _bool("auto_extend", auto_extend)
        _callable("on_lost", on_lost)
        if wait_ms == 0 and not auto_extend:
            return res, ttl_ms, None  # NULL: the library's defaults
        opts = json.dumps({"wait_ms": wait_ms, "auto_extend": auto_extend}).encode()
        return res, ttl_ms, opts

    def acquire(
        self,
        resource: str,
        ttl: Seconds,
        *,
        wait: Seconds = 0.0,
        auto_extend: bool = False,
        on_lost: Optional[OnLost] = None,
    ) -> Lock:
        """Acquire ``resource`` for ``ttl`` seconds, waiting up to ``wait`` seconds
        (with randomized backoff, inside the library) while another owner holds it.

        Blocks the calling thread (not the GIL). Raises :class:`NotAcquired` when
        the wait ran out, :class:`Unavailable` when no quorum of nodes answered.
        With ``auto_extend=True`` the library keeps extending the lock until it
        is released; ``on_lost(lock)`` is called if that fails.
        """
        res, ttl_ms, opts = self._acquire_args(resource, ttl, wait, auto_extend, on_lost)
        # A wait in the main thread stays interruptible (Ctrl-C cancels it).
        interruptible = opts is not None and threading.current_thread() is threading.main_thread() \
            and _ms("wait", wait) > 0
        got = self._backend.acquire(self._handle, res, ttl_ms, opts, interruptible)
        if isinstance(got, tuple):  # (lock, info) from an engine (wasm)
            return Lock(self, got[0], on_lost=on_lost, info=got[1])
        return Lock(self, got, on_lost=on_lost)

    async def acquire_async(
        self,
        resource: str,
        ttl: Seconds,
        *,
        wait: Seconds = 0.0,
        auto_extend: bool = False,
        on_lost: Optional[OnLost] = None,
    ) -> Lock:
        """Like :meth:`acquire`, without blocking the event loop or using a thread.

        Cancelling the awaiting task cancels the pending acquire in the library:
        no key is left behind. ``on_lost`` is called on this event loop.
        """
        res, ttl_ms, _ = self._acquire_args(resource, ttl, wait, auto_extend, on_lost)
        host = self._backend.async_host()
        lock = await host.acquire(res, ttl_ms, _ms("wait", wait), auto_extend)
        from ._host import HostOps
        return Lock(self, lock, on_lost=on_lost, loop=host.loop, backend=HostOps(host),  # type: ignore[arg-type]
                    info=host.info(lock))

    def lock(
        self,
        resource: str,
        ttl: Seconds,
        *,
        wait: Seconds = 0.0,
        auto_extend: bool = False,
        on_lost: Optional[OnLost] = None,
        raise_on_lost: bool = True,
    ) -> LockContext:
        """A context manager for ``with`` and ``async with``: acquire on entry, release on exit.

        Arguments are checked here, acquisition happens on entry.
        """
        self._acquire_args(resource, ttl, wait, auto_extend, on_lost)
        return LockContext(self, resource, ttl, wait, auto_extend, on_lost, raise_on_lost)


def _make_backend(name: str) -> Backend:
    if name == "wasm":
        from ._wasmbackend import WasmBackend
        return WasmBackend()
    from ._native import NativeBackend
    return NativeBackend()
