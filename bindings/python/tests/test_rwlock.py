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
