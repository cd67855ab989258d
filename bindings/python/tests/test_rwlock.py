"""Read-write locks from Python (``mode="read" | "write"``), blocking and asyncio, on either
backend (LIBLOCK_BACKEND=wasm: scripts/test-wasm.sh). The engine does the work; these check
that ``mode`` reaches it, ``lock.mode``, bad input naming ``mode`` with nothing left behind,
and no key left after release and close."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import liblock
from conftest import BACKEND, Cluster, eventually

FENCE_COUNTER = "\ufffdfence"  # fence counters never expire, by design


@pytest.fixture
def res(request: Any) -> str:
    return f"rw-{request.node.name}"


def client(c: Cluster, **kw: Any) -> liblock.Client:
    return liblock.Client(c.urls, node_timeout=0.5, backend=BACKEND, **kw)


def no_lock_keys(c: Cluster) -> None:
    eventually(lambda: [k for k in c.all_keys() if not k.endswith(FENCE_COUNTER)] == [],
               what="no lock key on any node")


def test_readers_share_writer_excludes(c3: Cluster, res: str) -> None:
    with client(c3) as a, client(c3) as b:
        r1 = a.acquire(res, 10.0, mode="read")
        r2 = b.acquire(res, 10.0, mode="read", auto_extend=True)
        assert (r1.mode, r2.mode) == ("read", "read")
        assert r1.validity > 9.0
        with pytest.raises(liblock.NotAcquired):
            b.acquire(res, 10.0, mode="write", wait=0)
        # The mutex of the same name is another lock.
        m = b.acquire(res, 10.0, wait=0)
        assert m.mode == "exclusive"
        m.release()
        r1.extend(10.0)
        r1.release()
        r2.release()
        w = a.acquire(res, 10.0, mode="write", wait=5.0, fence=True)
        assert w.mode == "write" and w.fence >= 1
        with pytest.raises(liblock.NotAcquired):
            b.acquire(res, 10.0, mode="read", wait=0)
        w.release()
        with b.lock(res, 10.0, mode="read") as held:
            assert held.mode == "read"
    no_lock_keys(c3)


def test_async_writer_woken_by_readers_release(c3: Cluster, res: str) -> None:
    async def main() -> None:
        with client(c3) as a, client(c3) as b:
            r = await a.acquire_async(res, 10.0, mode="read")
            assert r.mode == "read"
            pending = asyncio.ensure_future(b.acquire_async(res, 10.0, mode="write", wait=5.0))
            # deliberate: a window in which the writer must NOT get the lock (the reader holds it)
            await asyncio.sleep(0.05)
            assert not pending.done()
            await r.release_async()
            w = await pending
            assert w.mode == "write"
            with pytest.raises(liblock.NotAcquired):
                await a.acquire_async(res, 10.0, mode="read", wait=0)
            await w.release_async()

    asyncio.run(main())
    no_lock_keys(c3)


def test_close_releases_readers_and_writers(c3: Cluster, res: str) -> None:
    a = client(c3)
    held = [a.acquire(res + "-r", 10.0, mode="read"), a.acquire(res + "-w", 10.0, mode="write")]
    assert len(c3.all_keys()) >= 2 and all(h.mode in ("read", "write") for h in held)
    a.close()
    no_lock_keys(c3)


@pytest.mark.parametrize("mode,err", [
    ("bogus", liblock.InvalidArgument), ("READ", liblock.InvalidArgument), ("", liblock.InvalidArgument),
    (1, liblock.ArgumentTypeError), (True, liblock.ArgumentTypeError), (["read"], liblock.ArgumentTypeError),
])
def test_bad_mode(c3: Cluster, res: str, mode: Any, err: Any) -> None:
    with client(c3) as a:
        with pytest.raises(err, match="mode"):
            a.acquire(res, 5.0, mode=mode)
        with pytest.raises(err, match="mode"):
            asyncio.run(a.acquire_async(res, 5.0, mode=mode))
        with pytest.raises(err, match="mode"):
            a.lock(res, 5.0, mode=mode)
        with pytest.raises(liblock.InvalidArgument, match="mode"):
            a.acquire(res, 5.0, mode="read", token="a-token-of-my-own-0001")
    assert c3.all_keys() == [k for k in c3.all_keys() if k.endswith(FENCE_COUNTER)]



def test_inspect_mode(c3: Cluster, res: str) -> None:
    """inspect(mode=...) reports the read-write lock's writer (sync and asyncio); permits
    with mode, or an unknown mode, is refused naming mode."""
    with client(c3) as c:
        assert not c.inspect(res, mode="read").held
        w = c.acquire(res, 10, mode="write")
        try:
            got = c.inspect(res, mode="write")
            assert got.held and got.validity is not None and got.validity > 0
            assert asyncio.run(c.inspect_async(res, mode="read")).held
            assert not c.inspect(res).held  # the mutex of the name is another lock
        finally:
            w.release()
        with pytest.raises(liblock.InvalidArgument, match="mode"):
            c.inspect(res, mode="read", permits=2)
        with pytest.raises(liblock.InvalidArgument, match="mode"):
            c.inspect(res, mode="READ")
    no_lock_keys(c3)


# The readers' sorted set of a read-write lock is the name + 0xFF "rw:r" (core/engine/rwlock.go);
# the test's raw RESP client sends text, so Lua builds the key.
_ZSCORE_READER = "return redis.call('ZSCORE', ARGV[1] .. '\\255rw:r', ARGV[2])"
_ZREM_READER = "return redis.call('ZREM', ARGV[1] .. '\\255rw:r', ARGV[2])"


def test_inspect_lists_readers(c3: Cluster, res: str) -> None:
    """inspect(mode=...) lists the readers on a quorum, with their owner labels and validity
    (sync and asyncio: the sync native path reads them from the C ABI's JSON, the others from
    the protocol's INSPECTED); a reader lost on 2 of 3 nodes is not listed."""
    with client(c3, owner="alice") as a, client(c3, owner="bob") as b:
        r1 = a.acquire(res, 10.0, mode="read")
        r2 = b.acquire(res, 10.0, mode="read")
        for got in (b.inspect(res, mode="read"), asyncio.run(b.inspect_async(res, mode="write"))):
            assert not got.held  # no writer
            assert got.readers is not None
            assert sorted(r.owner for r in got.readers) == ["alice", "bob"]
            assert all(r.validity is not None and 8.0 < r.validity <= 10.0 for r in got.readers), got.readers
            assert got.holders == () and got.permits == 0
        assert a.inspect(res).readers is None  # the mutex of the name: no readers
        assert a.inspect(res + "-none", mode="read").readers == ()
        # bob's reader lost on two nodes. The acquire returned at a quorum: wait until it is
        # on every node before removing it there.
        eventually(lambda: all(c3.do(i, "EVAL", _ZSCORE_READER, "0", res, r2.token) is not None for i in range(3)),
                   what="bob's reader on every node")
        for i in (0, 1):
            assert c3.do(i, "EVAL", _ZREM_READER, "0", res, r2.token) == 1
        for got in (a.inspect(res, mode="write"), asyncio.run(a.inspect_async(res, mode="read"))):
            assert [r.owner for r in got.readers or ()] == ["alice"], got.readers
        with pytest.raises(liblock.LockLost):
            r2.release()
        r1.release()
    no_lock_keys(c3)
