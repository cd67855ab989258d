"""A Redis Cluster node (a URL with cluster=yes: the engine routes by slot), on
the backend under test, against a real cluster from build/redisnodes -cluster:
3 primaries (nodes 0-2) with a replica each. Migrations and failovers are tested
in Go (core/cluster_test.go), on the same engine."""

from __future__ import annotations

from typing import Iterator

import pytest

import liblock
from _servers import Deployment
from conftest import BACKEND, eventually


@pytest.fixture(scope="module")
def dep() -> Iterator[Deployment]:
    d = Deployment("-cluster", "cluster_url")
    yield d
    d.close()


def test_acquire_on_cluster(dep: Deployment) -> None:
    with liblock.Client([dep.url], node_timeout=3.0, backend=BACKEND) as client:
        lock = client.acquire("py:clu", ttl=10, wait=0)
        assert lock.key == "{py:clu}", "a resource without a hash tag gets one"
        holding = sum(1 for k in dep.keys() if "{py:clu}" in k)
        assert holding == 2, f"the primary and, WAIT 1 by default, its replica: {dep.keys()}"
        with pytest.raises(liblock.NotAcquired):
            client.acquire("py:clu", ttl=10, wait=0)
        lock.release()
    eventually(lambda: all(not k for k in dep.keys()), what="no key left")


@pytest.mark.parametrize("suffix,param", [
    ("&master_name=m", "master_name"),
    ("&db=1", "db"),
    ("&read_only=true", "read_only"),
])
def test_bad_cluster_url(dep: Deployment, suffix: str, param: str) -> None:
    with pytest.raises(liblock.InvalidArgument, match=param):
        liblock.Client([dep.url + suffix], backend=BACKEND)
