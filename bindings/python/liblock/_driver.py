"""A Client's engines and hosts (``Driver``), kept apart from the host so that
``import liblock`` and making a client import no asyncio."""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, Optional

from ._errors import CLOSED_MESSAGE, InvalidHandle, LockError, check_fork

# asyncio.get_running_loop, looked up at the first asyncio call
_running_loop: Optional[Callable[[], Any]] = None


class Driver:
    """A Client's engine factory (an adapter's constructor with the client's config), the
    synchronous API's ``_syncdrive.LoopThread`` (started by the first synchronous call) and
    one ``_host.Host`` per event loop (closed when its loop shuts down or the client closes)."""

    def __init__(self, new_engine: Callable[[], Any], name: str, tls: Any,
                 close_timeout: float, tel: Any = None) -> None:
        self._new = new_engine
        self.tel = tel  # _otel.Telemetry: every host of the client maps its engine's reports
        self.name = name
        self.tls = tls
        self.pid = os.getpid()
        self.close_timeout = close_timeout
        self._spare: Any = new_engine()  # made now: a bad config fails in Client()
        self._thread: Any = None  # _syncdrive.LoopThread
        self._hosts: Dict[Any, Any] = {}  # event loop -> _host.Host
        self._last: Any = None  # the host async_host returned last (its one-loop fast path)
        self._mu = threading.Lock()
        self.closed = False

    def _engine(self) -> Any:  # under _mu
        if self.closed:
            raise InvalidHandle(CLOSED_MESSAGE)
        engine, self._spare = self._spare, None
        return engine or self._new()

    def sync_host(self) -> Any:
        """The synchronous API's host, on the loop thread (started on first use)."""
        check_fork(self.pid)
        t = self._thread
        if t is None:
            with self._mu:
                if self.closed:
                    raise InvalidHandle(CLOSED_MESSAGE)
                if self._thread is None:
                    from ._syncdrive import LoopThread

                    thread = LoopThread(self._engine(), f"liblock-{self.name}-driver", self.tls)
                    assert thread.host is not None
                    thread.host.tel = self.tel.lane(thread.loop, True) if self.tel is not None else None
                    # no spin on the loop thread: a caller waits for the GIL it keeps taking
                    # (wasm, 5 nodes: 1.15x latency, 1.12x CPU with it)
                    thread.host.eager_polls = 1
                    self._thread = thread
                t = self._thread
        assert t.host is not None
        return t.host

    def async_host(self) -> Any:
        """The host of the running loop (made on first use)."""
        global _running_loop
        check_fork(self.pid)
        if _running_loop is None:
            import asyncio

            _running_loop = asyncio.get_running_loop
        loop = _running_loop()
        host = self._last
        # (a program's one loop: no dict lookup, no import statement per call)
        if host is not None and host.loop is loop and host.engine is not None and not host.closing:
            return host
        from ._host import Host

        host = self._hosts.get(loop)
        if host is not None and host.engine is not None and not host.closing:
            self._last = host
            return host
        with self._mu:
            engine = self._engine()
        host = Host(engine, loop, on_free=self._forget, tls=self.tls)
        host.tel = self.tel.lane(loop) if self.tel is not None else None  # its _otel.Lane
        host.watch_loop_shutdown()
        with self._mu:
            dead = [h for h in self._hosts.values() if h.loop.is_closed()]
            self._hosts[loop] = host
        for h in dead:  # loops closed without shutting down their async generators
            h.free()
        self._last = host
        return host

    def _forget(self, host: Any) -> None:
        with self._mu:
            if self._hosts.get(host.loop) is host:
                del self._hosts[host.loop]
            if self._last is host:
                self._last = None

    def close(self) -> None:
        """Close every host, waiting (bounded) for CLOSED except on a host's own thread, where
        it starts closing. A forked child touches nothing."""
        if os.getpid() != self.pid:
            return
        with self._mu:
            if self.closed:
                return
            self.closed = True
            thread, self._thread = self._thread, None
            spare, self._spare = self._spare, None
            hosts = list(self._hosts.values())
        for host in hosts:
            if host.engine is None:
                continue
            if host.loop.is_closed():
                host.free()
            elif threading.get_ident() == host.thread_id:
                host.close()
            else:
                from ._host import submit

                try:
                    submit(host, host.close)
                except LockError:
                    continue
                if host.loop.is_running():
                    host.closed.wait(self.close_timeout)
        if thread is not None:
            thread.stop(self.close_timeout)
        if spare is not None:
            spare.free()
