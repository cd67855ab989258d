"""The first call of a fresh client with frozen nodes (SIGSTOP: they accept connections
and never answer) ends on the engine's connect deadline, one node timeout, like every
later call: with one of three frozen it is granted by the other two; with two of three
frozen it is Unavailable and each frozen node's cause is that deadline. In the
synchronous API and on a fresh event loop (each has its own engine host)."""

from __future__ import annotations

import asyncio

import pytest

import liblock
from conftest import BACKEND, Cluster

DEADLINE = "connect: no answer within the node timeout (500ms)"


def _client(c3: Cluster) -> liblock.Client:
    return liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)


def test_first_call_with_one_frozen_node_is_granted(c3: Cluster) -> None:
    c3.freeze(2)
    with _client(c3) as client:
        lock = client.acquire("first:one", 5, wait=0)
        assert lock.validity > 0
        lock.release()
    with _client(c3) as client:
        async def first() -> None:
            lock = await client.acquire_async("first:one", 5, wait=0)
            assert lock.validity > 0
            await lock.release_async()

        asyncio.run(first())


def _frozen_causes(e: liblock.Unavailable) -> None:
    causes = {f.node: f.cause for f in e.nodes}
    assert sorted(causes) == [1, 2], e
    for i in (1, 2):
        assert DEADLINE in causes[i], e


def test_first_call_with_two_frozen_nodes_ends_on_their_connect_deadline(c3: Cluster) -> None:
    c3.freeze(1)
    c3.freeze(2)
    with _client(c3) as client:
        with pytest.raises(liblock.Unavailable) as e:
            client.acquire("first:two", 5, wait=0)
        _frozen_causes(e.value)
    with _client(c3) as client:
        async def first() -> None:
            with pytest.raises(liblock.Unavailable) as e:
                await client.acquire_async("first:two", 5, wait=0)
            _frozen_causes(e.value)

        asyncio.run(first())
