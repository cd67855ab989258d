"""close() returns whatever a node's connection met: a port outside 1-65535 (refused
by the engine when the client is built, naming the node), a refused connection, a
name that does not resolve, a TLS handshake that fails, a frozen node (SIGSTOP: it
accepts and never answers). Each case: one bad node of three (the acquire is granted
by the other two), a client of the bad node alone (refused with Unavailable), and a
client closed while its first acquire is still connecting — in the synchronous and
the asyncio API. A close() that hangs fails the test by pytest-timeout."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, List

import pytest

import liblock
from conftest import BACKEND, Cluster, free_port


@pytest.mark.parametrize("i,bad", [
    (1, "redis://127.0.0.1:99999"), (0, "redis://127.0.0.1:0"), (2, "rediss://[::1]:65536"),
    (1, "redis://127.0.0.1:1?cluster=yes&addr=127.0.0.1:70000"),
    (0, "redis://127.0.0.1:1?master_name=m&addr=h:123456"),
])
def test_port_out_of_range_is_invalid_argument_naming_the_node(i: int, bad: str) -> None:
    urls = ["redis://127.0.0.1:7001", "redis://127.0.0.1:7002", "redis://127.0.0.1:7003"]
    urls[i] = bad
    with pytest.raises(liblock.InvalidArgument) as e:
        liblock.Client(urls, backend=BACKEND)
    assert f"nodes[{i}]: redis: invalid port " in str(e.value)
    assert "a TCP port is a number from 1 to 65535" in str(e.value)
    # the ends of the range are ports
    liblock.Client(["redis://127.0.0.1:1", "redis://127.0.0.1:65535"], backend=BACKEND).close()


def _client(urls: List[str]) -> liblock.Client:
    return liblock.Client(urls, node_timeout=0.5, backend=BACKEND)


def _closes_after(c3: Cluster, bad: str, resource: str) -> None:
    good = c3.urls[:2]
    three = _client([bad, *good])
    lock = three.acquire(resource, 10, wait=0)
    assert lock.validity > 0
    three.close()  # with the lock still held: close releases it
    alone = _client([bad])
    with pytest.raises(liblock.Unavailable):
        alone.acquire(resource, 10, wait=0)
    alone.close()
    # closed while its first acquire is still connecting (from another thread)
    early = _client([bad])
    outcome: List[Any] = []

    def acquire() -> None:
        try:
            early.acquire(resource, 10, wait=0)
            outcome.append("granted")
        except liblock.LockError as e:
            outcome.append(type(e))

    t = threading.Thread(target=acquire)
    t.start()
    early.close()
    t.join()
    assert outcome[0] in (liblock.Unavailable, liblock.Canceled, liblock.ClientClosed), outcome

    async def in_asyncio() -> None:
        three = _client([bad, *good])
        lock = await three.acquire_async(resource, 10, wait=0)
        assert lock.validity > 0
        three.close()
        alone = _client([bad])
        with pytest.raises(liblock.Unavailable):
            await alone.acquire_async(resource, 10, wait=0)
        alone.close()
        early = _client([bad])
        pending = asyncio.ensure_future(early.acquire_async(resource, 10, wait=0))
        await asyncio.sleep(0)  # the acquire has started
        early.close()
        with pytest.raises((liblock.Unavailable, liblock.Canceled, liblock.ClientClosed)):
            await pending

    asyncio.run(in_asyncio())


def test_close_returns_after_a_refused_connection(c3: Cluster) -> None:
    _closes_after(c3, f"redis://127.0.0.1:{free_port()}", "connfail:refused")


def test_close_returns_after_a_name_that_does_not_resolve(c3: Cluster) -> None:
    _closes_after(c3, "redis://nonexistent.invalid:6379", "connfail:dns")


def test_close_returns_after_a_failed_tls_handshake(c3: Cluster) -> None:
    # rediss:// to a plain node: the handshake fails
    _closes_after(c3, f"rediss://127.0.0.1:{c3.ports[2]}", "connfail:tls")


def test_close_returns_with_a_frozen_node(c3: Cluster) -> None:
    c3.freeze(2)
    _closes_after(c3, c3.urls[2], "connfail:frozen")
