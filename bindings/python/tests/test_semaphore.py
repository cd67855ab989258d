"""Counting semaphores from Python, on the backend under test (LIBLOCK_BACKEND):
N permits acquired, the N+1th refused, a release wakes a waiter of another client,
inspect with permits, bad permits naming ``permits``, nothing left behind — through the
blocking API and asyncio."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any, List

import pytest

import liblock
from conftest import BACKEND, Cluster, eventually

FENCE_COUNTER = "\ufffdfence"  # key + 0xFF + "fence": the name's fence counter (no expiry)


@pytest.fixture
def res(request: Any) -> str:
    return f"{request.node.name}"


def client(c: Cluster, **kw: Any) -> liblock.Client:
    return liblock.Client(c.urls, node_timeout=0.5, backend=BACKEND, **kw)


def sem_waiting(c: Cluster, resource: str, permits: int) -> bool:
    """True when a client listens for releases of the semaphore on every node (its
    channel: "liblock:released:" + resource + 0xFF + "sem" + permits, not UTF-8)."""
    channel = b"liblock:released:" + resource.encode() + b"\xffsem" + str(permits).encode()
    for port in c.ports:
        with socket.create_connection(("127.0.0.1", port), timeout=2.0) as s:
            s.sendall(b"*3\r\n$6\r\nPUBSUB\r\n$6\r\nNUMSUB\r\n$%d\r\n%s\r\n" % (len(channel), channel))
            data = b""
            while data.count(b"\r\n") < 4:
                data += s.recv(4096)
            if not data.split(b"\r\n")[3].startswith(b":1"):
                return False
    return True


def no_lock_keys(c: Cluster) -> None:
    eventually(lambda: [k for k in c.all_keys() if not k.endswith(FENCE_COUNTER)] == [],
               what="no lock key on any node")


def test_permits_sync(c3: Cluster, res: str) -> None:
    with client(c3, owner="pool") as a, client(c3) as b:
        held = [a.acquire(res, 10.0, wait=0, permits=3, fence=True) for _ in range(3)]
        assert held[0].fence < held[1].fence < held[2].fence
        with pytest.raises(liblock.NotAcquired):
            b.acquire(res, 10.0, wait=0, permits=3)
        b.acquire(res, 10.0, wait=0).release()  # the mutex of the name is another lock

        seen = b.inspect(res, permits=3)
        assert seen.permits == 3 and seen.in_use == 3 and seen.held, seen
        assert [(h.slot, h.owner) for h in seen.holders] == [(0, "pool"), (1, "pool"), (2, "pool")]
        assert all(isinstance(h, liblock.Holder) and 9.0 < (h.validity or 0) <= 10.0 for h in seen.holders)
        mutex = b.inspect(res)
        assert not mutex.held and mutex.permits == 0 and mutex.holders == ()

        # a release wakes a waiter of another client
        got: List[liblock.Lock] = []
        t = threading.Thread(target=lambda: got.append(b.acquire(res, 10.0, wait=20.0, permits=3)))
        t.start()
        eventually(lambda: sem_waiting(c3, res, 3), what="the waiter waits")
        t0 = time.monotonic()
        held[1].release()
        t.join(15)
        assert got and time.monotonic() - t0 < 10, "woken by the release"
        got[0].extend(20.0)
        got[0].release()
        held[0].release()
        held[2].release()
        after = a.inspect(res, permits=3)
        assert after.in_use == 0 and not after.held and after.holders == ()
    no_lock_keys(c3)


def test_permits_async(c3: Cluster, res: str) -> None:
    async def main() -> None:
        async with client(c3, owner="aio") as a:
            l1 = await a.acquire_async(res, 10.0, wait=0, permits=2)
            l2 = await a.acquire_async(res, 10.0, wait=0, permits=2)
            with pytest.raises(liblock.NotAcquired):
                await a.acquire_async(res, 10.0, wait=0, permits=2)
            seen = await a.inspect_async(res, permits=2)
            assert seen.in_use == 2 and [h.owner for h in seen.holders] == ["aio", "aio"]
            waiter = asyncio.ensure_future(a.acquire_async(res, 10.0, wait=20.0, permits=2))
            await asyncio.sleep(0)
            await l1.release_async()
            l3 = await asyncio.wait_for(waiter, 15)
            await l3.release_async()
            await l2.release_async()
            async with a.lock(res, 10.0, permits=2) as lk:
                assert (await a.inspect_async(res, permits=2)).in_use == 1, lk

    asyncio.run(main())
    no_lock_keys(c3)


def test_close_releases_permits(c3: Cluster, res: str) -> None:
    a = client(c3)
    a.acquire(res, 10.0, wait=0, permits=2)
    a.acquire(res, 10.0, wait=0, permits=2, auto_extend=True)
    a.close()
    no_lock_keys(c3)


@pytest.mark.parametrize("bad", [0, -1, 1025, 2**70])
def test_bad_permits_value(c3: Cluster, res: str, bad: int) -> None:
    with client(c3) as a:
        for call in (lambda: a.acquire(res, 1.0, permits=bad), lambda: a.inspect(res, permits=bad),
                     lambda: a.lock(res, 1.0, permits=bad),
                     lambda: asyncio.run(a.acquire_async(res, 1.0, permits=bad)),
                     lambda: asyncio.run(a.inspect_async(res, permits=bad))):
            with pytest.raises(liblock.InvalidArgument, match="permits must be 1 to 1024"):
                call()
    assert c3.all_keys() == []


def test_permits_not_with_a_set(c3: Cluster, res: str) -> None:
    with client(c3) as a:
        with pytest.raises(liblock.InvalidArgument, match="permits"):
            a.acquire([res, res + "-2"], 5.0, permits=2)
        with pytest.raises(liblock.InvalidArgument, match="permits"):
            asyncio.run(a.acquire_async([res, res + "-2"], 5.0, permits=2))
    assert c3.all_keys() == []


@pytest.mark.parametrize("bad", ["3", 2.0, True, [3]])
def test_bad_permits_type(c3: Cluster, res: str, bad: Any) -> None:
    with client(c3) as a:
        for call in (lambda: a.acquire(res, 1.0, permits=bad), lambda: a.inspect(res, permits=bad)):
            with pytest.raises(liblock.ArgumentTypeError, match="permits must be an int"):
                call()
    assert c3.all_keys() == []
