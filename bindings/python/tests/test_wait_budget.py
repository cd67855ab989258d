"""Every primitive's wait budget with one node of three that refuses connections or holds
a connect open (a listening socket that never accepts: the kernel completes the connect,
nothing ever answers), and the resource held by another owner on one of the two good
nodes, so that no attempt decides before the bad node's answer: the call retries for its
wait, then raises its outcome (NotAcquired or Unavailable) naming the bad node's cause.
The bad node never comes back here: a call that waited for it would hang the test."""

from __future__ import annotations

import re
import socket
from typing import Any, Callable, Iterator, List, Tuple

import pytest

import liblock
from conftest import BACKEND, Cluster, free_port

NODE_TIMEOUT = 0.2
WAIT = 4 * NODE_TIMEOUT


@pytest.fixture
def silent_url() -> Iterator[str]:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(64)
    try:
        yield f"redis://127.0.0.1:{s.getsockname()[1]}"
    finally:
        s.close()


Prim = Tuple[str, Callable[[Any, str], Any], Callable[[Any, str], Any]]
PRIMS: List[Prim] = [
    ("mutex", lambda c, r: c.acquire(r, 60), lambda c, r: c.acquire(r, 10, wait=WAIT)),
    ("semaphore", lambda c, r: c.acquire(r, 60, permits=1), lambda c, r: c.acquire(r, 10, permits=1, wait=WAIT)),
    ("read behind a writer", lambda c, r: c.acquire(r, 60, mode="write"),
     lambda c, r: c.acquire(r, 10, mode="read", wait=WAIT)),
    ("write behind a writer", lambda c, r: c.acquire(r, 60, mode="write"),
     lambda c, r: c.acquire(r, 10, mode="write", wait=WAIT)),
    ("multi", lambda c, r: c.acquire([r + ":a", r + ":b"], 60), lambda c, r: c.acquire([r + ":a", r + ":b"], 10, wait=WAIT)),
    ("election", lambda c, r: c.campaign(r, "holder"), lambda c, r: c.campaign(r, "waiter", wait=WAIT)),
]


def _budgets(c3: Cluster, bad_url: str, cause: str, tag: str) -> None:
    with liblock.Client([c3.urls[0]], node_timeout=1, backend=BACKEND) as holder, \
            liblock.Client([c3.urls[0], c3.urls[1], bad_url], node_timeout=NODE_TIMEOUT, backend=BACKEND) as client:
        kept = []
        for name, hold, attempt in PRIMS:
            r = f"budget:{name}:{tag}"
            kept.append(hold(holder, r))
            with pytest.raises((liblock.NotAcquired, liblock.Unavailable)) as e:
                attempt(client, r)
            assert "node 2 " in str(e.value), (name, str(e.value))
            assert re.search(cause, str(e.value)), (name, str(e.value))


def test_wait_budget_with_a_node_refusing(c3: Cluster) -> None:
    _budgets(c3, f"redis://127.0.0.1:{free_port()}", r"[Cc]onnection refused|Errno 111", "refusing")


def test_wait_budget_with_a_node_holding_a_connect_open(c3: Cluster, silent_url: str) -> None:
    _budgets(c3, silent_url, re.escape("connect: no answer within the node timeout (200ms)"), "silent")
