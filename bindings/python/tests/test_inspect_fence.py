"""What of inspect, re-entry by token and fencing tokens is Python's own: the
types inspect returns, a token left on a minority, re-entry from a spawned process,
argument checks in Python's names and types, fence and token through the main thread's
interruptible wait. The behaviour itself (inspect's answers, with nodes down; re-entry;
fences increasing, with a node frozen or lost in the fence round; wake on release across
clients) is core/testkit/locktest's, which make test-interop runs on both backends through
the asyncio and the blocking API (bindings/interop/children/suite.py)."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from typing import Any

import pytest

import liblock
from conftest import BACKEND, Cluster, free_port, no_keys, eventually

MODES = ["sync", "async"]


@pytest.fixture
def res(request: Any) -> str:
    """A resource of its own per test: a node one test froze or killed may still carry out
    that test's queued commands after the cluster was flushed (keys that expire with their
    ttl), and they must not meet the next test's lock."""
    return f"{request.node.name}"


def client(c: Cluster, **kw: Any) -> liblock.Client:
    return liblock.Client(c.urls, node_timeout=0.5, backend=BACKEND, **kw)


FENCE_COUNTER = "\ufffdfence"  # key + 0xFF + "fence": each node's fence counter (no expiry)


def no_lock_keys(c: Cluster) -> None:
    """No lock left on any node; fence counters stay (they never expire, by design)."""
    eventually(lambda: [k for k in c.all_keys() if not k.endswith(FENCE_COUNTER)] == [],
               what="no lock key on any node")


def holds(c: Cluster, key: str, value: str) -> None:
    """Wait until every node holds value at key (an acquire returns once a quorum granted)."""
    eventually(lambda: [c.do(i, "GET", key) for i in range(c.n)] == [value] * c.n,
               what=f"{key}={value} on every node")


# ------------------------------------------------------------ inspect

def test_inspection_types(c3: Cluster, res: str) -> None:
    """What inspect returns, in Python: frozen dataclasses, seconds; the same from the
    asyncio API. (What it says, in every case, is the shared suite's: Inspect.)"""
    with client(c3, owner="worker-7") as a:
        assert a.owner == "worker-7"
        lock = a.acquire(res, 10.0)
        got = a.inspect(res)
        assert isinstance(got, liblock.Inspection) and got.held and got.owner == "worker-7", got
        assert isinstance(got.validity, float) and 9.0 < got.validity <= 10.0, got
        assert all(isinstance(n, liblock.NodeState) and isinstance(n.ttl, float) for n in got.nodes), got
        with pytest.raises(Exception):  # frozen dataclasses
            got.held = False  # type: ignore[misc]
        assert asyncio.run(a.inspect_async(res)).owner == "worker-7"
        lock.release()


# ------------------------------------------------------------ re-entry

def test_a_token_on_a_minority_is_no_reentry(c3: Cluster, res: str) -> None:
    """What a failed attempt with a caller's token leaves (its SET on a minority, which
    expires with its ttl) does not make the next acquire with that token a re-entry.
    (Whether node 0's answer comes before the quorum's decision varies: 50 tries.)"""
    token = "a-token-of-my-own-0003"
    seen = []
    with client(c3) as a:
        for _ in range(50):
            c3.do(0, "SET", res, token, "PX", "10000")  # the token on one node of three only
            lock = a.acquire(res, ttl=5.0, token=token, wait=0)
            assert lock.token == token
            seen.append(lock.reentered)
            lock.release()
    assert not any(seen), f"{sum(seen)} of 50 acquires reported a re-entry"


def test_reenter_from_another_process(c3: Cluster, res: str) -> None:
    """A scheduler hands its lock to a worker process by token: the worker re-enters it
    (ttl raised) and its release frees the key."""
    from _workers import reenter

    with client(c3) as a:
        lock = a.acquire(res, ttl=5.0)
        holds(c3, res, lock.token)
        with multiprocessing.get_context("spawn").Pool(1) as pool:
            reentered, token, validity_ms = pool.apply(reenter, (c3.urls, res, lock.token, 30.0))
        assert reentered and token == lock.token and validity_ms > 20000
        no_keys(c3)
        with pytest.raises(liblock.LockLost):
            lock.release()


# ------------------------------------------------------------ bad input

def test_bad_input_raises_before_anything_is_sent(c3: Cluster, res: str) -> None:
    """Errors name the caller's parameter, and come before any node is asked: a client
    whose only node does not exist raises them rather than Unavailable."""
    dead = f"redis://127.0.0.1:{free_port()}"
    with liblock.Client([dead], node_timeout=0.2, backend=BACKEND) as c:
        cases = [
            (dict(token="short"), liblock.InvalidArgument, "token"),
            (dict(token="t" * 513), liblock.InvalidArgument, "token"),
            (dict(token="é" * 257), liblock.InvalidArgument, "token"),  # 514 bytes of UTF-8
            (dict(token=b"0123456789abcdef"), liblock.ArgumentTypeError, "token"),
            (dict(token="0123456789abcdef\x00"), liblock.InvalidArgument, "token"),
            (dict(fence="yes"), liblock.ArgumentTypeError, "fence"),
            (dict(fence=1), liblock.ArgumentTypeError, "fence"),
            (dict(token="a-token-of-my-own-0001", fence=True), liblock.InvalidArgument, "fence"),
        ]
        for kw, exc, name in cases:
            with pytest.raises(exc) as e:
                c.acquire(res, 1.0, wait=0, **kw)
            assert name in str(e.value), (kw, e.value)
            with pytest.raises(exc):
                c.lock(res, 1.0, **kw)

            async def attempt(kw: Any = kw) -> None:
                await c.acquire_async(res, 1.0, wait=0, **kw)
            with pytest.raises(exc):
                asyncio.run(attempt())
        for bad, exc in (("", liblock.InvalidArgument), (b"res", liblock.ArgumentTypeError),
                         ("x" * 1025, liblock.InvalidArgument), (None, liblock.ArgumentTypeError)):
            with pytest.raises(exc) as e:
                c.inspect(bad)  # type: ignore[arg-type]
            assert "resource" in str(e.value)

            async def look(bad: Any = bad) -> None:
                await c.inspect_async(bad)
            with pytest.raises(exc):
                asyncio.run(look())
        # the only node is down: a good request is Unavailable (so the ones above were not sent)
        with pytest.raises(liblock.Unavailable):
            c.inspect(res)
    for owner, exc in (("a/b", liblock.InvalidArgument), ("o" * 129, liblock.InvalidArgument),
                       (7, liblock.ArgumentTypeError), ("nul\x00", liblock.InvalidArgument)):
        with pytest.raises(exc) as e:
            liblock.Client(c3.urls, owner=owner, backend=BACKEND)  # type: ignore[arg-type]
        assert "owner" in str(e.value)
    with liblock.Client(c3.urls, owner="o" * 128, backend=BACKEND) as c:
        assert c.owner == "o" * 128
    assert c3.all_keys() == []


# ------------------------------------------------------------ waits in the main thread

def numsub(c: Cluster, i: int, key: str) -> int:
    """How many connections of node i listen for releases of key."""
    reply = c.do(i, "PUBSUB", "NUMSUB", "liblock:released:" + key)
    return int(reply[1])


def test_fenced_and_token_waits_in_the_main_thread(c3: Cluster, res: str) -> None:
    """A synchronous acquire that waits in the main thread (the interruptible path: the C
    ABI's async acquire with the options) keeps fence and token: it is woken by a release
    from another thread once it listens (NUMSUB 1 on every node), gets a higher fence, and
    a waiting acquire with a token gets in with that token."""
    assert threading.current_thread() is threading.main_thread()
    with client(c3) as a, client(c3) as b:
        for kw in (dict(fence=True), dict(token="a-token-of-my-own-0002")):
            held = a.acquire(res, ttl=30.0, fence=True)

            def release_once_waited(held: liblock.Lock = held) -> None:
                eventually(lambda: [numsub(c3, i, res) for i in range(3)] == [1, 1, 1],
                           what="the main thread's acquire listening for releases")
                held.release()
            t = threading.Thread(target=release_once_waited)
            t.start()
            try:
                got = b.acquire(res, ttl=5.0, wait=30.0, **kw)  # type: ignore[arg-type]
            finally:
                t.join()
            if kw.get("fence"):
                assert got.fence > held.fence >= 1 and not got.reentered
            else:
                # (not `reentered` checked: an attempt that lost the race with the release may
                # leave the token on a minority, which the engine then counts as a re-entry;
                # see test_a_token_on_a_minority_is_no_reentry)
                assert got.token == "a-token-of-my-own-0002" and got.fence == 0
            got.release()
    no_lock_keys(c3)
