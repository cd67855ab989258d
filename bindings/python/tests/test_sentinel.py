"""A Sentinel node (a URL with master_name: the engine asks the sentinels for the
primary) and the replica check (wait_replicas), on the backend under test, against a
real deployment from build/redisnodes -sentinel: a primary (node 0), two replicas and
three sentinels. The failovers themselves are tested in Go
(core/testkit/sentineltest), on the same engine."""

from __future__ import annotations

from typing import Iterator

import pytest

import liblock
from _servers import Deployment
from conftest import BACKEND, eventually


@pytest.fixture(scope="module")
def dep() -> Iterator[Deployment]:
    d = Deployment("-sentinel", "sentinel_url")
    yield d
    d.close()


def test_acquire_through_sentinel(dep: Deployment) -> None:
    with liblock.Client([dep.url], node_timeout=0.25, backend=BACKEND) as client:
        lock = client.acquire("py:sent", ttl=5, wait=0)
        keys = dep.keys()
        assert keys[0] == ["py:sent"]
        assert len(keys[1]) + len(keys[2]) >= 1, f"WAIT 1 by default: a replica has it: {keys}"
        with pytest.raises(liblock.NotAcquired):
            client.acquire("py:sent", ttl=5, wait=0)
        lock.release()
    eventually(lambda: all(not k for k in dep.keys()), what="no key left")


def test_wait_replicas_too_many_fails_and_cleans_up(dep: Deployment) -> None:
    with liblock.Client([dep.url], node_timeout=0.25, wait_replicas=3, backend=BACKEND) as client:
        with pytest.raises(liblock.Unavailable, match="WAIT"):
            client.acquire("py:sent3", ttl=5, wait=0)
    eventually(lambda: all(not k for k in dep.keys()), what="no key left")


@pytest.mark.parametrize("bad", [-1, 101])
def test_bad_wait_replicas(dep: Deployment, bad: int) -> None:
    with pytest.raises(liblock.InvalidArgument, match="wait_replicas"):
        liblock.Client([dep.url], wait_replicas=bad, backend=BACKEND)


def test_wait_replicas_type(dep: Deployment) -> None:
    with pytest.raises(liblock.ArgumentTypeError, match="wait_replicas"):
        liblock.Client([dep.url], wait_replicas="1", backend=BACKEND)  # type: ignore[arg-type]


@pytest.mark.parametrize("url,param", [
    ("redis://127.0.0.1:1?master_name=m&replica_only=true", "replica_only"),
    ("redis://127.0.0.1:1?master_name=", "master_name"),
    ("redis://127.0.0.1:1?master_name=m&addr=x", "addr"),
])
def test_bad_sentinel_url(url: str, param: str) -> None:
    with pytest.raises(liblock.InvalidArgument, match=param):
        liblock.Client([url], backend=BACKEND)
