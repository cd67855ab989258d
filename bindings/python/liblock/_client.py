"""Client, Lock and LockContext: the public objects over a client's engine hosts."""

from __future__ import annotations

import importlib.util
import math
import numbers
import sys

from ._errors import ArgumentTypeError, ClientClosed, InvalidArgument, InvalidHandle, LockError, LockLost

# Nothing heavy at import time: asyncio, typing, json, ctypes and the backends are imported
# where first needed (a synchronous program never pays for asyncio).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import datetime
    from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple, Type, TypeVar, Union

    from ._election import Leader, Leadership
    from ._inspection import Inspection
    from ._node import Node

    Seconds = Union[int, float, datetime.timedelta]
    _F = TypeVar("_F", bound=Callable[..., Any])
    OnLost = Callable[["Lock"], Any]

from . import _proto_gen as P  # noqa: E402
from . import _multi  # noqa: E402
from ._rwlock import MODES, NAMES, mode_arg  # noqa: E402
from ._args import Request, _callable, _ms, _text  # noqa: E402

# A node_timeout given as a bare number of at least this many seconds is taken for
# milliseconds written as seconds (node_timeout=50 meaning 50 ms); a timedelta says its unit.
_SUSPICIOUS_NODE_TIMEOUT_S = 10
_BACKENDS = ("native", "wasm")
_CAMPAIGN_TTL = P.DEFAULT_CAMPAIGN_TTL / 1000.0  # the spec's, as Go's core.DefaultCampaignTTL
# acquire()'s default wait (the spec's, as Node's DEFAULT_WAIT): bounded, so that a Redis
# outage is an error, not a silent hang (docs/python.md).
DEFAULT_WAIT = P.DEFAULT_WAIT / 1000.0


def _closed_error(what: str) -> ClientClosed:
    """What every call on a closed client, or on one of its locks, raises."""
    return ClientClosed(f"liblock: the client is closed: {what} after client.close(), "
                        "which released the locks it held")


# Other lock libraries' keyword arguments (redis-py, pottery, threading.Lock) in liblock's terms.
_KEYWORD_HINTS = {
    "blocking": "blocking=False is wait=0 (one attempt); blocking=True is the default wait "
                "(10 s, liblock.DEFAULT_WAIT) or wait=None (until acquired)",
    "blocking_timeout": "blocking_timeout=S is wait=S (seconds)",
    "timeout": "timeout= is the wait in pottery's and threading's acquire() (liblock's wait=, "
               "seconds) but the lock's expiry in redis-py's lock(timeout=) (liblock's ttl=, seconds)",
    "sleep": "liblock has no sleep=: the library retries with randomized backoff, and a release "
             "wakes the waiters at once",
    "auto_release_time": "auto_release_time= is ttl= (seconds)",
    "expire": "expire= is ttl= (seconds)",
    "socket_timeout": "socket_timeout= is node_timeout= (seconds, per node request)",
}


def _keywords(fn: _F) -> _F:
    """Wrap fn so that an unknown keyword argument raises ArgumentTypeError naming it, the
    known ones and, for another library's argument, liblock's equivalent."""
    code = fn.__code__
    known = tuple(n for n in code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]
                  if n != "self")
    name = fn.__qualname__.replace(".__init__", "")
    where = " (give it to client.lock(...))" if name.startswith("LockContext.") else ""

    def checked(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except TypeError:
            unknown = [k for k in kwargs if k not in known]
            if not unknown:
                raise
            msg = (f"{name}() got an unexpected keyword argument {unknown[0]!r}; "
                   f"it takes {', '.join(known) or 'none'}")
            hint = _KEYWORD_HINTS.get(unknown[0])
            raise ArgumentTypeError(msg + (f". liblock: {hint}{where}" if hint else "")) from None

    for a in ("__name__", "__qualname__", "__doc__", "__module__"):
        setattr(checked, a, getattr(fn, a))
    checked.__wrapped__ = fn  # type: ignore[attr-defined]  # inspect.signature follows it
    return checked  # type: ignore[return-value]


def _node_timeout_ms(value: Any) -> int:
    if (isinstance(value, (int, float)) and not isinstance(value, bool)
            and _SUSPICIOUS_NODE_TIMEOUT_S <= value < math.inf):
        raise InvalidArgument(
            f"node_timeout={value!r} is {value!r} seconds (liblock durations are seconds): "
            f"a node request timeout is normally 0.005 - 1 s, so this looks like milliseconds; "
            f"for {value!r} ms write node_timeout={value / 1000!r}, or pass "
            f"datetime.timedelta(seconds={value!r}) if you mean {value!r} s")
    return _ms("node_timeout", value, P.LIMIT_NODE_TIMEOUT_MIN, P.LIMIT_NODE_TIMEOUT_MAX)


def _int(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(f"{name} must be an int, not {type(value).__name__}")
    return int(value)


def _bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArgumentTypeError(f"{name} must be a bool, not {type(value).__name__}")
    return value


def _token(value: Any) -> bytes:
    """``acquire(..., token=...)``: the caller's token, 16 to 512 bytes of UTF-8."""
    b = _text("token", value)
    if not P.LIMIT_TOKEN_MIN <= len(b) <= P.LIMIT_TOKEN_MAX:
        raise InvalidArgument(
            f"token must be {P.LIMIT_TOKEN_MIN} to {P.LIMIT_TOKEN_MAX} bytes of UTF-8, got {len(b)} "
            "(pass the token of a held lock, lock.token, to re-enter it)")
    return b


def _kind(permits: Any, mode: Any, token: Any) -> Tuple[int, int]:
    """``permits`` and ``mode``: (permit count, 0 for none; 0, or a read-write lock's
    1/2). A count of 0 is refused like any other bad one (the protocol's 0 is the mutex)."""
    n = 0 if permits is None else _int("permits", permits)
    if permits is not None and not P.LIMIT_PERMITS_MIN <= n <= P.LIMIT_PERMITS_MAX:
        raise InvalidArgument(f"permits must be {P.LIMIT_PERMITS_MIN} to {P.LIMIT_PERMITS_MAX}, got {n}")
    m = MODES[mode_arg(mode, token)]
    if n and m:
        raise InvalidArgument("mode cannot be combined with permits: a read-write lock and a "
                              "semaphore are two different locks")
    return n, m


_live = [0, 0]  # Client and Lock objects not freed yet (liblock.live_handles); clients made


def _free_lock(host: Any, handle: int, released: List[bool]) -> None:
    _live[0] -= 1
    host.free_lock(handle, released[0])


def _outcome(fn: Callable[[], Any]) -> Optional[LockError]:
    """The LockError fn raised (None if it returned); the binding's own errors (status
    None: ForkedProcessError, ...) propagate."""
    try:
        fn()
    except LockError as e:
        if e.status is None:
            raise
        return e
    return None


class Lock:
    """A held (or formerly held) distributed lock, from :meth:`Client.acquire`,
    :meth:`Client.acquire_async` or ``with client.lock(...)``. A (async) context manager
    itself: leaving the block releases it. A dropped Lock is released by its finalizer."""

    resource: str
    key: str
    token: str
    mode: str = "exclusive"
    """``"exclusive"`` (the mutex), or ``"read"`` / ``"write"`` (``acquire(..., mode=...)``)."""
    auto_extend: bool
    fence: int
    """The fencing token (``acquire(..., fence=True)``): strictly greater than the fence of
    every lock on the resource acquired before (docs/python.md, "fencing tokens"); 0 when
    no fence was asked for."""
    reentered: bool
    """True when ``acquire(..., token=...)`` re-entered a lock already held with that token."""

    def __init__(self, client: "Client", host: Any, handle: int, info: Dict[str, Any],
                 on_lost: Optional[OnLost] = None) -> None:
        import weakref

        _live[0] += 1
        self._host = host  # the engine host that holds it (the sync loop thread's, or a loop's)
        self._done = [False]  # released: shared with the finalizer
        self._finalizer = weakref.finalize(self, _free_lock, host, handle, self._done)
        self._client = client  # keeps the client alive while its locks are
        self._handle = handle
        self._lost = False
        self._released = False
        self.resource = str(info.get("resource", ""))
        self.resources: List[str] = list(info.get("resources") or [self.resource])
        """The resources the lock holds: the list given to acquire, or ``[resource]``."""
        self.key = str(info.get("key", ""))
        self.token = str(info.get("token", ""))
        self.auto_extend = bool(info.get("auto_extend", False))
        self.fence = int(info.get("fence", 0) or 0)
        self.reentered = bool(info.get("reentered", False))
        self.mode = str(info.get("mode") or "exclusive")
        host.lock_names[handle] = self.resource  # for the loss's log record (_host.warn_lost)
        if on_lost is not None or self.auto_extend:
            self.on_lost(on_lost)

    @property
    def handle(self) -> int:
        """The engine's lock handle (for debugging)."""
        return self._handle

    @property
    def released(self) -> bool:
        """True once :meth:`release` was called (whatever its outcome), or once the client's
        ``close()`` released the lock (a lock known to be lost before stays only ``lost``)."""
        return self._released or (not self._lost and not self._client._finalizer.alive)

    def _open(self, what: str) -> None:
        self._client._open(what)

    def _gone(self, e: LockError, what: str) -> LockError:
        return self._client._gone(e, what)

    def info(self) -> Dict[str, Any]:
        """The library's description of the lock: ``resource``, ``key``, ``token``, ``ttl``
        and ``validity`` (seconds), ``auto_extend``, ``released``, ``lost``, ``fence``,
        ``reentered`` (and the deprecated ``ttl_ms``, ``validity_ms``)."""
        self._open("lock.info()")
        try:
            info = self._info()
        except InvalidHandle as e:
            raise self._gone(e, "lock.info()") from None
        info["ttl"] = int(info.get("ttl_ms", 0)) / 1000.0
        info["validity"] = int(info.get("validity_ms", 0)) / 1000.0
        return info

    def _info(self) -> Dict[str, Any]:
        return dict(self._host.lock_info(self._handle))

    @property
    def validity(self) -> float:
        """Seconds of validity left by the local monotonic clock (0.0 when expired or released)."""
        if self._released or not self._client._finalizer.alive:
            return 0.0
        try:
            return float(self._info().get("validity_ms") or 0) / 1000.0
        except InvalidHandle:
            return 0.0

    @property
    def lost(self) -> bool:
        """True when the library knows the lock is no longer held (expired, taken, or extension
        failed). False once released, by :meth:`release` or by the client's ``close()``."""
        if self._lost:
            return True
        if self._released or not self._client._finalizer.alive:
            return False
        try:
            lost = bool(self._info().get("lost"))
        except InvalidHandle:
            return self._lost
        if lost:
            self._lost = True
        return lost

    def on_lost(self, callback: Optional[OnLost]) -> None:
        """Register ``callback(lock)``, called at most once when the lock is lost (not after a
        successful release), on the client's driver thread for a lock acquired synchronously,
        on the event loop for one acquired with ``acquire_async``. Replaces an earlier one."""
        import weakref

        _callable("on_lost", callback)
        self._open("lock.on_lost()")
        ref = weakref.ref(self)

        def fire(err: Optional[LockError]) -> None:
            lock = ref()
            if lock is None:
                return
            lock._lost = True
            if callback is not None:
                try:
                    callback(lock)
                except BaseException:  # noqa: BLE001 - a callback's bug is printed, not raised into the host
                    import traceback

                    traceback.print_exc(file=sys.stderr)

        try:
            self._host.watch(self._handle, fire)
        except InvalidHandle as e:
            raise self._gone(e, "lock.on_lost()") from None
        # A loss that happened before registration must not go unnoticed.
        try:
            lost_already = bool(self._info().get("lost"))
        except InvalidHandle:
            lost_already = False
        if lost_already and self._host.watch(self._handle, None) is fire:
            fire(None)

    def _extend_ttl_ms(self, ttl: Any) -> int:
        self._open("lock.extend()")
        ttl_ms = _ms("ttl", ttl, P.LIMIT_TTL_MIN, P.LIMIT_TTL_MAX)
        if self._released:
            raise LockLost("extend: the lock was released already")
        return ttl_ms

    def _extended(self, err: Optional[LockError], what: str) -> None:
        if isinstance(err, LockLost) and not self._released:  # an extend racing release() is no loss
            self._lost = True
        if err is not None:
            raise self._gone(err, what)

    def extend(self, ttl: Seconds) -> None:
        """Reset the lock's expiry to ``ttl`` seconds from now. Raises :class:`LockLost` if it
        expired, was taken or was released already; never re-acquires."""
        ttl_ms = self._extend_ttl_ms(ttl)
        self._extended(_outcome(lambda: self._host.extend_sync(self._handle, ttl_ms)), "lock.extend()")

    async def extend_async(self, ttl: Seconds) -> None:
        """Like :meth:`extend`, without blocking the event loop."""
        ttl_ms = self._extend_ttl_ms(ttl)
        try:
            await self._host.extend_async(self._handle, ttl_ms)
        except LockError as e:
            self._extended(e, "lock.extend_async()")

    def _releasing(self, what: str) -> None:
        self._open(what)
        if self._released:
            raise LockLost("release: the lock was released already")

    def release(self) -> None:
        """Release the lock and free its handle. Raises :class:`LockLost` when it was no longer
        held on a quorum (nothing another owner holds is touched) or was released already."""
        self._releasing("lock.release()")
        self._released_with(_outcome(lambda: self._host.release_sync(self._handle)), "lock.release()")

    async def release_async(self) -> None:
        """Like :meth:`release`, without blocking the event loop."""
        self._releasing("lock.release_async()")
        try:
            await self._host.release_async(self._handle)
        except LockError as e:
            self._released_with(e, "lock.release_async()")
        else:
            self._released_with(None, "")

    def _released_with(self, err: Optional[LockError], what: str) -> None:
        if err is None or isinstance(err, LockLost):
            self._released = self._done[0] = True
            # OK: a quorum still held it, whatever an extend racing this release saw
            self._lost = err is not None
            self._host.watch(self._handle, None)
            self._finalizer()  # local: the lock is no longer held
        if err is not None:
            raise self._gone(err, what)

    def _exit_release(self, exc_type: Optional[type], raise_on_lost: bool) -> None:
        if self._released or not self._client._finalizer.alive:
            return  # released by the client's close()
        try:
            self.release()
        except LockLost:
            if raise_on_lost and exc_type is None:
                raise

    async def _aexit_release(self, exc_type: Optional[type], raise_on_lost: bool) -> None:
        if self._released or not self._client._finalizer.alive:
            return  # released by the client's close()
        try:
            await self.release_async()
        except LockLost:
            if raise_on_lost and exc_type is None:
                raise

    def __enter__(self) -> "Lock":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], *_: Any) -> None:
        self._exit_release(exc_type, True)

    async def __aenter__(self) -> "Lock":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], *_: Any) -> None:
        await self._aexit_release(exc_type, True)

    def __repr__(self) -> str:
        state = "released" if self.released else ("lost" if self._lost else "held")
        return f"<liblock.Lock {self.resource!r} {state}>"


class LockContext:
    """What :meth:`Client.lock` returns: use it with ``with`` or ``async with``, or call
    :meth:`acquire` and :meth:`release` (as with redis-py's ``Lock``).

    Entering acquires (raising :class:`NotAcquired`, :class:`Unavailable`, ... when it
    cannot), leaving releases. Leaving a block on a lock that was lost raises
    :class:`LockLost` unless ``raise_on_lost=False`` (an exception raised by the block
    itself takes precedence). :meth:`locked` tells whether anyone holds the resource,
    :meth:`owned` whether this object does."""

    def __init__(self, client: "Client", args: Tuple[Any, Any], kwargs: Dict[str, Any],
                 raise_on_lost: bool) -> None:
        self._client = client
        self._args = args
        self._kwargs = kwargs
        self._raise_on_lost = _bool("raise_on_lost", raise_on_lost)
        self._lock: Optional[Lock] = None

    @property
    def lock(self) -> Optional[Lock]:
        """The :class:`Lock` this object holds (None before :meth:`acquire` and after :meth:`release`)."""
        return self._lock

    def _not_held(self) -> None:
        lock = self._lock
        if lock is not None and not lock.released and not lock.lost:
            raise LockError(f"liblock: {lock.resource!r} is held by this object already: release() "
                            "it first (a lock is not reentrant; acquire with token=lock.token to "
                            "re-enter it)")

    @_keywords
    def acquire(self) -> Lock:
        """Acquire with the arguments given to :meth:`Client.lock`; returns the held
        :class:`Lock` (true, so ``if lk.acquire():`` reads as with redis-py). Where redis-py
        returns False, liblock raises :class:`NotAcquired` or :class:`Unavailable`."""
        self._not_held()
        self._lock = self._client.acquire(*self._args, **self._kwargs)
        return self._lock

    @_keywords
    async def acquire_async(self) -> Lock:
        """:meth:`acquire` on the event loop (as :meth:`Client.acquire_async`)."""
        self._not_held()
        self._lock = await self._client.acquire_async(*self._args, **self._kwargs)
        return self._lock

    def _take(self) -> Lock:
        lock, self._lock = self._lock, None
        if lock is None:
            raise LockLost("release: this lock was not acquired (or was released already)")
        return lock

    def release(self) -> None:
        """Release the lock :meth:`acquire` took. Raises :class:`LockLost` when it was no
        longer held on a quorum, was released already or was never acquired."""
        self._take().release()

    async def release_async(self) -> None:
        """:meth:`release` on the event loop."""
        await self._take().release_async()

    def locked(self) -> bool:
        """True when anyone (this object included) holds the resource on a quorum: one round
        of :meth:`Client.inspect` (:class:`Unavailable` when too many nodes fail)."""
        return self._client.inspect(self._args[0]).held

    async def locked_async(self) -> bool:
        """:meth:`locked` on the event loop."""
        return (await self._client.inspect_async(self._args[0])).held

    def owned(self) -> bool:
        """True when this object holds the lock and it is still valid (acquired, not
        released, not lost, validity left by the local monotonic clock); no round trip."""
        lock = self._lock
        return lock is not None and not lock.released and not lock.lost and lock.validity > 0

    def __enter__(self) -> Lock:
        return self.acquire()

    def __exit__(self, exc_type: Optional[Type[BaseException]], *_: Any) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:  # (None: release() was called inside the block)
            lock._exit_release(exc_type, self._raise_on_lost)

    async def __aenter__(self) -> Lock:
        return await self.acquire_async()

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], *_: Any) -> None:
        lock, self._lock = self._lock, None
        if lock is not None:
            await lock._aexit_release(exc_type, self._raise_on_lost)


def _telemetry(telemetry: Any, urls: List[str]) -> Any:
    """The ``telemetry`` argument: None (the spec's default for Python, docs/defaults.md) or
    False (off), True (OpenTelemetry's global providers), or a dict of ``meter_provider``,
    ``tracer_provider``, ``resource_label``."""
    if telemetry is None:
        telemetry = P.DEFAULT_TELEMETRY == "on" or (
            P.DEFAULT_TELEMETRY == "installed" and importlib.util.find_spec("opentelemetry") is not None)
    if telemetry is False:
        return None
    opts: Dict[str, Any] = {}
    if isinstance(telemetry, dict):
        for k in telemetry:
            if k not in ("meter_provider", "tracer_provider", "resource_label"):
                raise InvalidArgument(
                    f"telemetry: unknown key {k!r} (known: meter_provider, tracer_provider, resource_label)")
        opts = dict(telemetry)
        label = opts.get("resource_label")
        if label is not None and not callable(label):
            raise ArgumentTypeError(
                f"telemetry['resource_label'] must be a function (resource) -> label, not {type(label).__name__}")
    elif telemetry is not True:
        raise ArgumentTypeError(
            f"telemetry must be None, True, False or a dict, not {type(telemetry).__name__}")
    from urllib.parse import urlsplit

    from ._otel import Telemetry

    def address(u: str) -> str:
        try:
            p = urlsplit(u)
            return p.path if p.scheme == "unix" else (p.hostname or "") + (f":{p.port}" if p.port else "")
        except ValueError:
            return ""
    try:
        return Telemetry([address(u) for u in urls], **opts)
    except ImportError:
        raise InvalidArgument(
            "telemetry: meter_provider and tracer_provider need opentelemetry-api "
            "(pip install liblock[otel])") from None


class Client:
    """A Redlock client over 1 to 64 independent Redis masters (docs/python.md).

    ``nodes``: URLs (``redis://[user:password@]host:port[/db]``, ``rediss://``,
    ``unix:///path``; a Sentinel-managed primary with ``?master_name=``, a Redis Cluster
    with ``?cluster=yes``), or :class:`liblock.Node` entries (a URL with TLS of its own).
    ``node_timeout``: seconds any single node request may take (default 0.05; a bare
    number of 10 or more is refused as a likely millisecond value: pass a
    ``datetime.timedelta`` for such a timeout). ``drift_factor``: clock drift allowance
    (default 0.01). ``key_prefix``: prepended to every resource to form the Redis key.
    ``owner``: a label carried in every lock's value (``owner/uuid``), which
    :meth:`inspect` reports. ``backend``: ``"native"`` (liblock.so) or ``"wasm"``
    (liblock.wasm under wasmtime); default native where it loads, else wasm with a
    :class:`liblock.NativeUnavailableWarning`. ``wait_replicas``: a node's grant counts
    once that many replicas acknowledged it (default 1 on Sentinel and Cluster nodes,
    else 0: off). ``telemetry``: True or a dict (docs/python.md, "Metrics, traces and logs").

    TLS of ``rediss://`` nodes: ``ssl_ca_certs`` (a PEM file of CA certificates),
    ``ssl_certfile`` and ``ssl_keyfile`` (mutual TLS), ``ssl_server_name``, or
    ``ssl_context`` (an ``ssl.SSLContext`` of yours). Files are read here: a bad one
    raises :class:`InvalidArgument` naming the parameter.

    Close it with :meth:`close` or use it as a (async) context manager; a dropped client
    is closed by its finalizer. Closing releases the locks it still holds. Safe to share
    between threads.
    """

    @_keywords
    def __init__(self, nodes: Iterable[Union[str, "Node"]], *, node_timeout: Optional[Seconds] = None,
                 drift_factor: Optional[float] = None, key_prefix: Optional[str] = None,
                 owner: Optional[str] = None, backend: Optional[str] = None, ssl_context: Optional[Any] = None,
                 ssl_ca_certs: Optional[Any] = None, ssl_certfile: Optional[Any] = None,
                 ssl_keyfile: Optional[Any] = None, ssl_server_name: Optional[str] = None,
                 wait_replicas: Optional[int] = None, telemetry: Union[None, bool, Dict[str, Any]] = None) -> None:
        import json
        import weakref

        if backend is not None:
            if not isinstance(backend, str):
                raise ArgumentTypeError(f"backend must be a str, not {type(backend).__name__}")
            if backend not in _BACKENDS:
                raise InvalidArgument(f"backend must be one of {', '.join(map(repr, _BACKENDS))}, got {backend!r}")
        try:
            if isinstance(nodes, (str, bytes)) or nodes is None:
                raise TypeError
            node_list: List[Any] = list(nodes)
        except TypeError:
            raise ArgumentTypeError(
                f"nodes must be a list of URL strings, not {type(nodes).__name__}") from None
        node_tls: List[Any] = []  # (index, liblock.Node) of the nodes with TLS of their own
        for i, url in enumerate(node_list):
            if not isinstance(url, str):
                from ._node import Node
                if not isinstance(url, Node):
                    raise ArgumentTypeError(
                        f"nodes[{i}] must be a URL string or a liblock.Node, not {type(url).__name__}")
                _text(f"nodes[{i}].url", url.url)
                if url.has_tls():
                    node_tls.append((i, url))
                node_list[i] = url.url
            else:
                _text(f"nodes[{i}]", url)
        # Values are the engine's to check (its errors name these parameters); types are here.
        config: Dict[str, Any] = {"nodes": node_list}
        self._node_timeout_ms = P.DEFAULT_NODE_TIMEOUT
        if node_timeout is not None:
            self._node_timeout_ms = config["node_timeout_ms"] = _node_timeout_ms(node_timeout)
        if drift_factor is not None:
            if isinstance(drift_factor, bool) or not isinstance(drift_factor, numbers.Real):
                raise ArgumentTypeError(f"drift_factor must be a number, not {type(drift_factor).__name__}")
            if not math.isfinite(drift_factor):  # (JSON has no NaN)
                raise InvalidArgument(f"drift_factor must be a finite number, got {drift_factor!r}")
            config["drift_factor"] = float(drift_factor)
        if key_prefix is not None:
            config["key_prefix"] = _text("key_prefix", key_prefix).decode()
        if owner is not None:
            config["owner"] = _text("owner", owner).decode()
        if wait_replicas is not None:
            config["wait_replicas"] = _int("wait_replicas", wait_replicas)
        self._owner = owner or ""
        tls = None
        if (ssl_context is not None or ssl_ca_certs is not None or ssl_certfile is not None
                or ssl_keyfile is not None or ssl_server_name is not None or node_tls):
            from . import _tls  # ssl only when asked for
            base = _tls.settings(ssl_context, ssl_ca_certs, ssl_certfile, ssl_keyfile, ssl_server_name)
            own: Dict[int, Any] = {i: _tls.settings(n.ssl_context, n.ssl_ca_certs, n.ssl_certfile, n.ssl_keyfile,
                                    n.ssl_server_name, prefix=f"nodes[{i}].") for i, n in node_tls}
            tls = _tls.ClientTLS(base, own)
        tel = _telemetry(telemetry, node_list)
        if tel is not None:
            config["report"] = True  # the engine's REPORT actions (_otel.py)
        cfg = json.dumps(config).encode("utf-8")
        from ._backend import choose
        backend = choose(backend)
        if backend == "wasm":
            from . import _wasm
            inst = _wasm.Instance()  # one module instance per client: its engines share it
            new_engine: Callable[[], Any] = lambda: _wasm.WasmEngine(inst, cfg)  # noqa: E731
        else:
            from . import _native
            new_engine = lambda: _native.NativeEngine(cfg)  # noqa: E731
        from ._driver import Driver

        self._driver = Driver(new_engine, backend, tls, 2.0 + 4 * self._node_timeout_ms / 1000, tel)
        # The host's modules (asyncio: 20-300 ms) are imported now, so that the first call,
        # like every other, returns within its node deadlines (docs/python.md, "Connect budget").
        from . import _host, _syncdrive  # noqa: F401
        _live[0] += 1
        self._handle = _live[1] = _live[1] + 1
        self._finalizer = weakref.finalize(self, _close, self._driver)
        self._nodes = len(node_list)

    @property
    def handle(self) -> int:
        """This client's number in the process (for debugging)."""
        return self._handle

    @property
    def backend(self) -> str:
        """``"native"`` or ``"wasm"``: the engine running this client's locks."""
        return self._driver.name

    @property
    def node_timeout(self) -> float:
        """Seconds any single node request may take (what the client was made with)."""
        return self._node_timeout_ms / 1000

    @property
    def owner(self) -> str:
        """The owner label this client puts in its locks' values ("" for none)."""
        return self._owner

    @property
    def closed(self) -> bool:
        return not self._finalizer.alive

    def close(self) -> None:
        """Release the locks this client still holds, cancel its pending acquires, free it.
        Idempotent."""
        self._finalizer()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, exc_type: Optional[Type[BaseException]], *_: Any) -> None:
        self.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, exc_type: Optional[Type[BaseException]], *_: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<liblock.Client {self._nodes} node(s) {self._driver.name}"
                f"{' closed' if self.closed else ''}>")

    def _open(self, what: str) -> None:
        if not self._finalizer.alive:
            raise _closed_error(what)

    def _gone(self, e: LockError, what: str) -> LockError:
        """:class:`ClientClosed` for a handle found gone because close() ran meanwhile, else e."""
        return _closed_error(what) if isinstance(e, InvalidHandle) and not self._finalizer.alive else e

    def _acquire_args(self, resource: Any, ttl: Any, wait: Any, auto_extend: Any,
                      on_lost: Any, token: Any, fence: Any, permits: Any = None, mode: Any = None) -> Request:
        """Every argument of an acquire checked (errors name the caller's parameter) and
        made the engine's request; nothing sent. acquire, acquire_async and lock use it."""
        res = _multi.resource_arg(resource, _text, P.LIMIT_RESOURCE_MAX, P.LIMIT_RESOURCE_MIN)
        ttl_ms = _ms("ttl", ttl, P.LIMIT_TTL_MIN, P.LIMIT_TTL_MAX)
        wait_ms = P.LIMIT_WAIT_MAX if wait is None else _ms("wait", wait, P.LIMIT_WAIT_MIN, P.LIMIT_WAIT_MAX)
        _bool("auto_extend", auto_extend)
        _callable("on_lost", on_lost)
        _bool("fence", fence)
        tok = b"" if token is None else _token(token)
        _multi.check_token(res, tok)
        if fence and tok:
            raise InvalidArgument(
                "fence=True cannot be combined with token=...: only an acquire with a random "
                "token is fenced (ask for the fence when the lock is first taken)")
        n, m = _kind(permits, mode, token)
        # a multi-resource acquire's res also carries its further resources (_multi.py)
        return Request((res, ttl_ms, wait_ms, auto_extend, fence, tok, n, m, getattr(res, "more", ())))

    @_keywords
    def acquire(self, resource: str, ttl: Seconds, *, wait: Optional[Seconds] = DEFAULT_WAIT,
                auto_extend: bool = False, on_lost: Optional[OnLost] = None, token: Optional[str] = None,
                fence: bool = False, permits: Optional[int] = None, mode: Optional[str] = None) -> Lock:
        """Acquire ``resource`` (a str, or a list of them: all or none) for ``ttl`` seconds,
        waiting while another owner holds it; a release through this client wakes the
        oldest waiter at once. Blocks the calling thread (not the GIL); Ctrl-C cancels.

        ``wait``: the longest wait in seconds (default 10, :data:`liblock.DEFAULT_WAIT`;
        0: one attempt; None: until acquired). Raises :class:`NotAcquired` when it ran out,
        :class:`Unavailable` when no quorum of nodes answered.
        ``auto_extend=True``: the library extends the lock until it is released;
        ``on_lost(lock)`` is called if that fails.
        ``token``: acquire with this token (16 to 512 bytes) instead of a random one;
        re-enters a lock already held with it (``lock.reentered``).
        ``fence=True``: the lock gets a fencing token, ``lock.fence`` (a second round trip).
        ``permits=N``: a permit of the counting semaphore of N permits on ``resource``.
        ``mode="read"`` or ``"write"``: a reader or the writer of its read-write lock.
        docs/python.md tells each in full.
        """
        self._open("client.acquire()")
        req = self._acquire_args(resource, ttl, wait, auto_extend, on_lost, token, fence, permits, mode)
        try:
            host = self._driver.sync_host()
            lock, info = host.acquire_sync(req)
        except InvalidHandle as e:
            raise self._gone(e, "client.acquire()") from None
        return self._lock(host, lock, info, req, on_lost)

    @_keywords
    async def acquire_async(self, resource: str, ttl: Seconds, *, wait: Optional[Seconds] = DEFAULT_WAIT,
                            auto_extend: bool = False, on_lost: Optional[OnLost] = None,
                            token: Optional[str] = None, fence: bool = False, permits: Optional[int] = None,
                            mode: Optional[str] = None) -> Lock:
        """Like :meth:`acquire`, without blocking the event loop or using a thread.
        Cancelling the awaiting task cancels the acquire (no key is left behind);
        ``on_lost`` is called on this event loop."""
        self._open("client.acquire_async()")
        req = self._acquire_args(resource, ttl, wait, auto_extend, on_lost, token, fence, permits, mode)
        try:
            host = self._driver.async_host()
            lock = await host.acquire(req)
            info = host.info(lock)
        except InvalidHandle as e:
            raise self._gone(e, "client.acquire_async()") from None
        return self._lock(host, lock, info, req, on_lost)

    def _lock(self, host: Any, handle: int, info: Dict[str, Any], req: Request, on_lost: Optional[OnLost]) -> Lock:
        """The Lock of a granted acquire: the list of resources and the mode are the request's."""
        info["resources"] = getattr(req.resource, "names", None)
        info["mode"] = NAMES[req.mode]
        return Lock(self, host, handle, info, on_lost)

    @_keywords
    def lock(self, resource: str, ttl: Seconds, *, wait: Optional[Seconds] = DEFAULT_WAIT,
             auto_extend: bool = False, on_lost: Optional[OnLost] = None, raise_on_lost: bool = True,
             token: Optional[str] = None, fence: bool = False, permits: Optional[int] = None,
             mode: Optional[str] = None) -> LockContext:
        """A :class:`LockContext` for ``with`` and ``async with``: acquire on entry, release on
        exit. The arguments are :meth:`acquire`'s, checked here; acquiring happens on entry."""
        self._open("client.lock()")
        self._acquire_args(resource, ttl, wait, auto_extend, on_lost, token, fence, permits, mode)
        return LockContext(self, (resource, ttl), dict(wait=wait, auto_extend=auto_extend, on_lost=on_lost,
                                                       token=token, fence=fence, permits=permits, mode=mode),
                           raise_on_lost)

    def inspect(self, resource: str, *, permits: Optional[int] = None, mode: Optional[str] = None) -> Inspection:
        """Whether a quorum holds ``resource``, how long it certainly stays held, and the
        holder's owner label, with each node's answer, without taking it: one round of
        ``GET`` + ``PTTL``; :class:`Unavailable` when too many nodes failed to tell.
        ``permits=N``: the counting semaphore of N permits instead; ``mode="read"`` or
        ``"write"`` (either): the read-write lock (its writer, and its ``readers``)."""
        self._open("client.inspect()")
        res = _text("resource", resource, P.LIMIT_RESOURCE_MAX, P.LIMIT_RESOURCE_MIN)
        n, m = _kind(permits, mode, None)
        try:
            got = self._driver.sync_host().inspect_sync(res, n, m)
        except InvalidHandle as e:
            raise self._gone(e, "client.inspect()") from None
        from ._inspection import from_engine

        return from_engine(*got, rw=bool(m))

    async def inspect_async(self, resource: str, *, permits: Optional[int] = None,
                            mode: Optional[str] = None) -> Inspection:
        """Like :meth:`inspect`, on the event loop with no thread."""
        self._open("client.inspect_async()")
        res = _text("resource", resource, P.LIMIT_RESOURCE_MAX, P.LIMIT_RESOURCE_MIN)
        n, m = _kind(permits, mode, None)
        try:
            got = await self._driver.async_host().inspect_async(res, n, m)
        except InvalidHandle as e:
            raise self._gone(e, "client.inspect_async()") from None
        from ._inspection import from_engine

        return from_engine(*got, rw=bool(m))

    # ------------------------------------------------------------ leader election (_election.py)

    def _new_lock(self, host: Any, handle: int, info: Dict[str, Any], on_lost: Optional[OnLost]) -> Lock:
        """A Lock of this client (a leadership's): _election makes one without importing this module."""
        return Lock(self, host, handle, info, on_lost)

    @_keywords
    def campaign(self, name: str, value: str, *, ttl: Seconds = _CAMPAIGN_TTL, wait: Optional[Seconds] = None,
                 on_lost: Optional[OnLost] = None) -> Leadership:
        """Campaign in the election ``name``, publishing ``value`` to observers, until this
        client leads: a :class:`liblock.Leadership` (``with`` resigns on exit). ``ttl``: the
        leadership's lease in seconds (default 10), extended in the background;
        ``on_lost(lock)`` is called if that fails. ``wait``: None (default) waits until it
        leads; seconds bound the wait (:class:`NotAcquired` when another still leads)."""
        from . import _election

        return _election.campaign(self, name, value, ttl, wait, on_lost)

    @_keywords
    async def campaign_async(self, name: str, value: str, *, ttl: Seconds = _CAMPAIGN_TTL,
                             wait: Optional[Seconds] = None, on_lost: Optional[OnLost] = None) -> Leadership:
        """Like :meth:`campaign`, on the event loop; cancelling the task ends the wait (no key left)."""
        from . import _election

        return await _election.campaign_async(self, name, value, ttl, wait, on_lost)

    def leader(self, name: str) -> Optional[Leader]:
        """The leader of the election ``name`` (a :class:`liblock.Leader`: ``value``,
        ``term``, ``owner``, ``validity``), or None when none is valid on a quorum."""
        from . import _election

        return _election.leader(self, name)

    async def leader_async(self, name: str) -> Optional[Leader]:
        """Like :meth:`leader`, on the event loop."""
        from . import _election

        return await _election.leader_async(self, name)

    def observe(self, name: str, callback: Optional[Callable[[Any], None]] = None, *,
                poll: Optional[Seconds] = None) -> Any:
        """The leader changes of the election ``name``: the leader now (None when there is
        none), then each change once, in order (pub/sub, polled every ``poll`` seconds,
        default 1, as the fallback). Without ``callback``: an async iterator; with it,
        ``callback(leader)`` runs on liblock's thread and the returned
        :class:`liblock.Observation` stops it with ``close()`` (or ``with``)."""
        from . import _election

        return _election.observe(self, name, callback, poll)


def _close(driver: Any) -> None:
    """Finalizer of a Client (and its close()): close its engines, releasing its locks."""
    _live[0] -= 1
    driver.close()
