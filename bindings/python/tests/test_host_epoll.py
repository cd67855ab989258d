"""The asyncio host's fast socket path (_epoll.py): plain connections in one epoll set
of the host's, and requests that read their replies at once (Host._read_now), at most
_host._EAGER_RUN of them between two turns of the loop."""

import asyncio
import select
import socket
from typing import Any, List

import pytest

from liblock import _epoll, _host

pytestmark = pytest.mark.skipif(not hasattr(select, "epoll"), reason="epoll is Linux's")


def test_plain_connections_are_in_the_hosts_epoll_set(client1) -> None:
    async def main() -> Any:
        lock = await client1.acquire_async("epoll:plain", ttl=5)
        host = client1._driver.async_host()
        conns = list(host._conns.values())
        await lock.release_async()
        return host, conns

    host, conns = asyncio.run(main())
    assert conns and all(isinstance(c, _epoll.MuxConn) for c in conns)
    assert host._mux is False  # closed with the loop: the set and its sockets are gone
    assert all(c.closed and c.sock.fileno() == -1 for c in conns)


def test_a_loop_that_cannot_watch_a_descriptor_keeps_transports() -> None:
    class Loop:
        def add_reader(self, fd: int, cb: Any) -> None:
            raise NotImplementedError  # as the Windows proactor loop

    class Host:
        loop = Loop()

    assert _epoll.make(Host()) is None  # type: ignore[arg-type]


def test_a_write_the_socket_cannot_take_at_once_is_sent_in_order() -> None:
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    a.setblocking(False)
    b.setblocking(False)
    watched: List[int] = []

    class Mux:
        host = None

        def watch(self, c: Any, events: int) -> None:
            watched.append(events)

        def forget(self, c: Any) -> None:
            pass

    c = _epoll.MuxConn(Mux(), 1, a)  # type: ignore[arg-type]
    data = bytes(range(256)) * 4096  # 1 MiB: far more than the socket takes at once
    c.write(data[:600_000])
    c.write(data[600_000:])  # behind what is pending, not before it
    assert c._pending is not None and watched == [select.EPOLLIN | select.EPOLLOUT]
    got = bytearray()
    while len(got) < len(data):
        try:
            got += b.recv(1 << 16)
        except BlockingIOError:
            pass
        c._flush()
    assert bytes(got) == data
    assert c._pending is None and watched[-1] == select.EPOLLIN
    c.abort()
    b.close()


def test_a_view_the_socket_cannot_take_at_once_is_copied_before_the_buffer_is_reused() -> None:
    """The host hands MuxConn.write a view of the engine's output buffer (Host._apply),
    which the engine's next step overwrites: what the socket did not take must be a copy."""
    a, b = socket.socketpair()
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
    a.setblocking(False)
    b.setblocking(False)

    class Mux:
        host = None

        def watch(self, c: Any, events: int) -> None:
            pass

        def forget(self, c: Any) -> None:
            pass

    data = bytes(range(256)) * 4000
    out = bytearray(data)  # the engine's output buffer
    view = memoryview(out)
    c = _epoll.MuxConn(Mux(), 1, a)  # type: ignore[arg-type]
    c.write_view(view)
    assert c._pending is not None
    taken = len(data) - len(c._pending)
    out[:] = bytes(len(out))  # the next step reuses the buffer
    # control: the kept part's bytes did change in the buffer, so a kept view would show
    assert bytes(view[taken:]) != data[taken:]
    got = bytearray()
    while len(got) < len(data):
        try:
            got += b.recv(1 << 16)
        except BlockingIOError:
            pass
        c._flush()
    assert bytes(got) == data
    view.release()
    c.abort()
    b.close()


class _CountingMux:
    def __init__(self) -> None:
        self.polls = 0

    def poll(self) -> None:
        self.polls += 1


def _eager_host(loop: asyncio.AbstractEventLoop) -> Any:
    host = _host.Host.__new__(_host.Host)
    host.loop = loop
    host._mux = _CountingMux()
    host._eager_left = _host._EAGER_RUN
    return host


def _requests(host: Any, n: int) -> None:
    for _ in range(n):  # what _request does after each STARTED
        if host._mux and host._eager_left and host.eager:
            host._read_now()


def test_at_most_eager_run_requests_read_at_once_between_loop_turns() -> None:
    loop = asyncio.new_event_loop()
    try:
        host = _eager_host(loop)
        _requests(host, 3 * _host._EAGER_RUN)  # no loop turn in between
        assert host._mux.polls == _host._EAGER_RUN
        loop.run_until_complete(asyncio.sleep(0))  # a turn: the budget is back
        _requests(host, 3 * _host._EAGER_RUN)
        assert host._mux.polls == 2 * _host._EAGER_RUN
        # negative control: without the turn's reset, nothing more is read at once
        host._eager_reset = lambda: None
        loop.run_until_complete(asyncio.sleep(0))
        _requests(host, 3 * _host._EAGER_RUN)
        assert host._mux.polls == 3 * _host._EAGER_RUN
        _requests(host, 3 * _host._EAGER_RUN)
        assert host._mux.polls == 3 * _host._EAGER_RUN
    finally:
        loop.close()


def test_a_task_of_back_to_back_pairs_lets_the_loop_turn(client1) -> None:
    """However fast the nodes answer, the loop turns at least once every _EAGER_RUN
    requests: another task gets to run."""
    pairs = 100

    async def main() -> int:
        turns = 0
        stop = False

        async def other() -> None:
            nonlocal turns
            while not stop:
                turns += 1
                await asyncio.sleep(0)

        t = asyncio.ensure_future(other())
        await asyncio.sleep(0)
        base = turns
        for _ in range(pairs):
            lock = await client1.acquire_async("epoll:turns", ttl=5)
            await lock.release_async()
        stop = True
        await t
        return turns - base

    assert asyncio.run(main()) >= 2 * pairs // (_host._EAGER_RUN + 1)
