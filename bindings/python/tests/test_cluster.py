"""A Redis Cluster node (a URL with cluster=yes: the engine routes by slot), on
the backend under test, against a real cluster from build/redisnodes -cluster:
3 primaries (nodes 0-2) with a replica each. Migrations and failovers are tested
in Go (core/cluster_test.go), on the same engine."""

from __future__ import annotations

import json
import subprocess
from typing import Any, Dict, Iterator, List

import pytest

import liblock
from conftest import BACKEND, REDISNODES, eventually


class ClusterDeployment:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([str(REDISNODES), "-cluster", "-n", "3"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            pytest.fail(f"build/redisnodes -cluster did not start (exit {self.proc.wait()})")
        self.url: str = json.loads(line)["cluster_url"]

    def cmd(self, line: str) -> Dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        reply: Dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert reply.get("ok"), reply
        return reply

    def keys(self) -> List[List[str]]:
        keys: List[List[str]] = self.cmd("keys")["keys"]
        return keys

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


@pytest.fixture(scope="module")
def dep() -> Iterator[ClusterDeployment]:
    d = ClusterDeployment()
    yield d
    d.close()


def test_acquire_on_cluster(dep: ClusterDeployment) -> None:
    with liblock.Client([dep.url], node_timeout=3.0, backend=BACKEND) as client:
        lock = client.acquire("py:clu", ttl=5, wait=0)
        assert lock.key == "{py:clu}", "a resource without a hash tag gets one"
        holding = sum(1 for k in dep.keys() if "{py:clu}" in k)
        assert holding == 2, f"the primary and, WAIT 1 by default, its replica: {dep.keys()}"
        with pytest.raises(liblock.NotAcquired):
            client.acquire("py:clu", ttl=5, wait=0)
        lock.release()
    eventually(lambda: all(not k for k in dep.keys()), what="no key left")


@pytest.mark.parametrize("suffix,param", [
    ("&master_name=m", "master_name"),
    ("&db=1", "db"),
    ("&read_only=true", "read_only"),
])
def test_bad_cluster_url(dep: ClusterDeployment, suffix: str, param: str) -> None:
    with pytest.raises(liblock.InvalidArgument, match=param):
        liblock.Client([dep.url + suffix], backend=BACKEND)
