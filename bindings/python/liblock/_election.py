"""Leader election: ``Client.campaign``, ``leader`` and ``observe`` (docs/python.md,
"Leader election"). The engine does the work: a campaign is an ACQUIRE with the ELECTION
flag (fenced and auto-extended, its term the fence), ``leader`` an INSPECT with it,
``observe`` a WATCH whose LEADER actions (pub/sub, polled as the fallback) come in order.
"""

from __future__ import annotations

import asyncio
import collections
import threading
from dataclasses import dataclass
from typing import Any, Callable, Deque, List, Optional

from . import _protocol as P
from ._args import Request, _callable, _ms, _text
from ._errors import ArgumentTypeError, InvalidArgument, InvalidHandle, LockError

MAX_VALUE_BYTES = P.LIMIT_ELECTION_VALUE_MAX
DEFAULT_CAMPAIGN_TTL = P.DEFAULT_CAMPAIGN_TTL / 1000.0  # seconds


@dataclass(frozen=True)
class Leader:
    """An election's leader: its ``value``, ``term`` (strictly greater than every earlier
    leader's), ``owner`` label and ``validity`` (seconds it certainly keeps leading unless
    it resigns)."""

    name: str
    value: str
    term: int
    owner: str
    validity: Optional[float]


def _leader(name: str, held: int, term: int, validity_ms: int, owner: str, value: str) -> Optional[Leader]:
    if not held or not term:
        return None
    return Leader(name=name, value=value, term=term, owner=owner,
                  validity=None if validity_ms < 0 else validity_ms / 1000.0)


class Leadership:
    """This client's leadership of an election (from :meth:`Client.campaign`): ``term``
    (the fencing token), ``value``, ``validity``, ``lost``, and :meth:`resign`. Leaving a
    ``with`` block resigns. It is kept by auto-extension; ``on_lost`` is called if that
    fails."""

    def __init__(self, name: str, value: str, lock: Any) -> None:
        self.name = name
        self.value = value
        self.lock = lock

    @property
    def term(self) -> int:
        """Strictly greater than every earlier leader's term: a fence, as large (see ``Lock.fence``)."""
        return int(self.lock.fence)

    @property
    def validity(self) -> float:
        """Seconds this client certainly still leads (0 once lost or resigned)."""
        return float(self.lock.validity)

    @property
    def lost(self) -> bool:
        return bool(self.lock.lost)

    def resign(self) -> None:
        """Resign: the election key goes where this leadership holds it; observers learn it at once."""
        self.lock.release()

    async def resign_async(self) -> None:
        await self.lock.release_async()

    def __enter__(self) -> "Leadership":
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self.resign()
        except LockError:
            pass

    async def __aenter__(self) -> "Leadership":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        try:
            await self.resign_async()
        except LockError:
            pass

    def __repr__(self) -> str:
        return f"Leadership(name={self.name!r}, value={self.value!r}, term={self.term})"


def _request(client: Any, name: Any, value: Any, ttl: Any, wait: Any, on_lost: Any) -> Request:
    """A campaign's arguments checked, as an acquire's request (``value`` makes it a campaign)."""
    n = _name(name)
    v = _text("value", value, MAX_VALUE_BYTES, 1)
    ttl_ms = _ms("ttl", ttl, P.LIMIT_TTL_MIN, P.LIMIT_TTL_MAX)
    wait_ms = P.LIMIT_WAIT_MAX if wait is None else _ms("wait", wait, P.LIMIT_WAIT_MIN, P.LIMIT_WAIT_MAX)
    _callable("on_lost", on_lost)
    return Request((n, ttl_ms, wait_ms, True, True, b"", 0, 0, (), v))


def _name(name: Any) -> bytes:
    return _text("name", name, P.LIMIT_RESOURCE_MAX, 1)


def _poll(poll: Any) -> int:
    return 0 if poll is None else _ms("poll", poll, P.LIMIT_POLL_MIN, P.LIMIT_POLL_MAX)


def _again(wait: Any, e: LockError) -> bool:
    """Whether an unbounded campaign starts over: its wait (the engine's longest) ran out."""
    return wait is None and e.status in (P.STATUS_NOT_ACQUIRED, P.STATUS_UNAVAILABLE)


def campaign(client: Any, name: Any, value: Any, ttl: Any, wait: Any, on_lost: Any) -> Leadership:
    client._open("client.campaign()")
    req = _request(client, name, value, ttl, wait, on_lost)
    try:
        host = client._driver.sync_host()
        while True:
            try:
                lock, info = host.acquire_sync(req)
                break
            except LockError as e:
                if not _again(wait, e):
                    raise
    except InvalidHandle as e:
        raise client._gone(e, "client.campaign()") from None
    return Leadership(name, value, client._new_lock(host, lock, info, on_lost))


async def campaign_async(client: Any, name: Any, value: Any, ttl: Any, wait: Any, on_lost: Any) -> Leadership:
    client._open("client.campaign_async()")
    req = _request(client, name, value, ttl, wait, on_lost)
    try:
        host = client._driver.async_host()
        while True:
            try:
                lock = await host.acquire(req)
                break
            except LockError as e:
                if not _again(wait, e):
                    raise
        info = host.info(lock)
    except InvalidHandle as e:
        raise client._gone(e, "client.campaign_async()") from None
    return Leadership(name, value, client._new_lock(host, lock, info, on_lost))


def leader(client: Any, name: Any) -> Optional[Leader]:
    client._open("client.leader()")
    n = _name(name)
    try:
        got = client._driver.sync_host().inspect_sync(n, election=True)
    except InvalidHandle as e:
        raise client._gone(e, "client.leader()") from None
    return _leader(name, got[0], got[-2], got[1], got[2], got[-1])


async def leader_async(client: Any, name: Any) -> Optional[Leader]:
    client._open("client.leader_async()")
    n = _name(name)
    try:
        got = await client._driver.async_host().inspect_async(n, election=True)
    except InvalidHandle as e:
        raise client._gone(e, "client.leader_async()") from None
    return _leader(name, got[0], got[-2], got[1], got[2], got[-1])


# ---------------------------------------------------------------- observe


def _start_watch(host: Any, n: bytes, poll_ms: int, changed: Callable[[Any], None],
                 ended: Callable[[Optional[LockError]], None]) -> int:
    """WATCH on the host's loop thread: ``changed(fields)`` per LEADER (its fields after
    the op), ``ended(err)`` at its DONE."""
    engine = host._check()
    box: List[int] = []

    def done(err: Optional[LockError], _lock: Any) -> None:
        if box:
            host.watches.pop(box[0], None)
        ended(err)
    # not eager: the LEADER actions find the watch by its op, registered below
    op = int(host._request(P.enc_watch(engine.inbuf, n, poll_ms), done, eager=False))
    box.append(op)
    host.watches[op] = lambda _err, fields: changed(fields)
    return op


def _stop_watch(host: Any, op: int) -> None:
    if host.engine is not None and not host.closing and op in host.watches:
        host._step(P.enc_unwatch(host.engine.inbuf, op))


class Observation:
    """A running :meth:`Client.observe` with a callback; :meth:`close` stops it (no call
    starts after it returns, unless called from the callback itself)."""

    def __init__(self, host: Any) -> None:
        self._host = host
        self._op = 0
        self._closed = threading.Event()
        self._mu = threading.Lock()

    def close(self) -> None:
        from ._host import call

        with self._mu:
            if self._closed.is_set():
                return
            self._closed.set()
        try:
            call(self._host, _stop_watch, self._host, self._op)
        except (LockError, RuntimeError):
            pass

    def __enter__(self) -> "Observation":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class _Stream:
    """The async iterator of :meth:`Client.observe` (without a callback): started on the
    running loop by the first ``__anext__``; ``aclose`` (or leaving ``async for``) stops it."""

    def __init__(self, client: Any, name: str, n: bytes, poll_ms: int) -> None:
        self._client, self._name, self._n, self._poll = client, name, n, poll_ms
        self._host: Any = None
        self._op = 0
        self._queue: Deque[Optional[Leader]] = collections.deque()
        self._waiter: "Optional[asyncio.Future[None]]" = None
        self._ended = False
        self._err: Optional[BaseException] = None

    def __aiter__(self) -> "_Stream":
        return self

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _changed(self, fields: Any) -> None:
        self._queue.append(_leader(self._name, fields[0], fields[1], fields[2], fields[3], fields[4]))
        self._wake()

    def _end(self, err: Optional[LockError]) -> None:
        self._ended = True
        if err is not None and err.status != P.STATUS_CANCELED:
            self._err = err
        self._wake()

    async def __anext__(self) -> Optional[Leader]:
        if self._host is None and not self._ended:
            self._client._open("client.observe()")
            try:
                self._host = self._client._driver.async_host()
                self._op = _start_watch(self._host, self._n, self._poll, self._changed, self._end)
            except InvalidHandle as e:
                raise self._client._gone(e, "client.observe()") from None
        while not self._queue:
            if self._ended:
                if self._err is not None:
                    raise self._err
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        got: Optional[Leader] = self._queue.popleft()
        return got

    async def aclose(self) -> None:
        if self._host is not None and not self._ended:
            _stop_watch(self._host, self._op)
        self._ended = True
        self._queue.clear()


def observe(client: Any, name: Any, callback: Any, poll: Any) -> Any:
    client._open("client.observe()")
    n = _name(name)
    poll_ms = _poll(poll)
    if callback is None:
        return _Stream(client, name, n, poll_ms)
    if not callable(callback):
        raise ArgumentTypeError(f"callback must be callable or None, not {type(callback).__name__}")
    from ._host import run_op

    try:
        host = client._driver.sync_host()
    except InvalidHandle as e:
        raise client._gone(e, "client.observe()") from None
    obs = Observation(host)

    def changed(fields: Any) -> None:
        if not obs._closed.is_set():
            callback(_leader(name, fields[0], fields[1], fields[2], fields[3], fields[4]))

    def ended(err: Optional[LockError]) -> None:
        obs._closed.set()
    try:
        obs._op = run_op(host, lambda done: done(None, _start_watch(host, n, poll_ms, changed, ended)))
    except InvalidHandle as e:
        raise client._gone(e, "client.observe()") from None
    return obs


__all__ = ["Leader", "Leadership", "Observation", "InvalidArgument"]
