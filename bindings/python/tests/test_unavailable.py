"""``Unavailable`` names every node that failed: ``e.nodes``, a list of
``liblock.NodeFailure(node, addr, cause)``, in every mode (sync, asyncio) and on both
backends. Every node named when all are down is the shared suite's
AllNodesDown (make test-interop)."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, List

import pytest

import liblock
from conftest import BACKEND, Cluster


def _acquire_unavailable(client: Any, resource: str, mode: str) -> liblock.Unavailable:
    if mode == "sync":
        with pytest.raises(liblock.Unavailable) as e:
            client.acquire(resource, ttl=5, wait=0)
        return e.value

    async def main() -> liblock.Unavailable:
        with pytest.raises(liblock.Unavailable) as e:
            await client.acquire_async(resource, ttl=5, wait=0)
        return e.value

    return asyncio.run(main())


@pytest.mark.parametrize("mode", ["sync", "asyncio"])
def test_unavailable_names_the_failed_nodes(c3: Cluster, mode: str) -> None:
    with liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND) as client:
        c3.kill(0)
        c3.kill(2)
        e = _acquire_unavailable(client, "two-down", mode)
    assert e.status == 5
    nodes: List[liblock.NodeFailure] = e.nodes
    # the two refused (node 1, which grants, is named too if it had not answered yet)
    assert {0, 2} <= {n.node for n in nodes}, nodes
    assert [n.node for n in nodes] == sorted(n.node for n in nodes)
    for n in nodes:
        assert isinstance(n, liblock.NodeFailure)
        assert n.addr == f"127.0.0.1:{c3.ports[n.node]}", n
        assert n.cause and n.cause in str(e), n
    assert dataclasses.is_dataclass(nodes[0])
    with pytest.raises(dataclasses.FrozenInstanceError):
        nodes[0].cause = "changed"  # type: ignore[misc]


def test_nodes_read_from_a_message() -> None:
    """The synchronous native path gets the engine's message alone (the blocking C ABI):
    the causes are read from it, also when the reason itself holds a "; "."""
    msg = ("liblock: extend: unavailable: 2 of 3 nodes failed, quorum is 2; the lock stays held "
           "until its current validity ends; node 0 (127.0.0.1:7001): dial tcp 127.0.0.1:7001: "
           "connect: connection refused; node 2 (/tmp/redis.sock): i/o timeout")
    e = liblock.Unavailable(msg)
    assert e.nodes == [
        liblock.NodeFailure(0, "127.0.0.1:7001", "dial tcp 127.0.0.1:7001: connect: connection refused"),
        liblock.NodeFailure(2, "/tmp/redis.sock", "i/o timeout"),
    ]
    assert liblock.Unavailable("liblock: nothing per node").nodes == []
    assert "NodeFailure" in liblock.__all__
