"""asyncio: non-blocking acquire through lock_acquire_async + call_soon_threadsafe,
cancellation (no key left), no thread per waiter (contention is the shared suite's: make test-interop)."""

from __future__ import annotations

import asyncio
import threading

import pytest

import liblock
from conftest import BACKEND, Cluster, no_keys, no_keys_left, eventually_async, eventually


def test_async_with_and_methods(c3: Cluster, client3) -> None:
    async def main() -> None:
        async with client3.lock("a", ttl=10, wait=1) as lock:
            assert isinstance(lock, liblock.Lock)
            await eventually_async(lambda: c3.all_keys() == ["a"] * 3, what="the key on every node")
            await lock.extend_async(20)
            assert lock.validity > 10
        assert lock.released
        await eventually_async(lambda: c3.all_keys() == [], what="the key gone from every node")
        lock = await client3.acquire_async("b", ttl=5)
        async with lock:
            pass
        assert lock.released
        with pytest.raises(liblock.LockLost):  # released twice: LOST, as in Go, C and Node
            await lock.release_async()
        with pytest.raises(liblock.LockLost):
            await lock.extend_async(5)

    asyncio.run(main())


def test_async_errors(c3: Cluster, client3) -> None:
    async def main() -> None:
        holder = await client3.acquire_async("held", ttl=10)
        with pytest.raises(liblock.NotAcquired):
            await client3.acquire_async("held", ttl=2, wait=0)
        with pytest.raises(liblock.NotAcquired):
            async with client3.lock("held", ttl=2, wait=0.1):
                pytest.fail("entered")
        for i in range(3):
            c3.do(i, "SET", "held", "thief")
        with pytest.raises(liblock.LockLost):
            await holder.extend_async(5)
        with pytest.raises(liblock.LockLost):
            await holder.release_async()
        assert holder.lost
        assert [c3.do(i, "GET", "held") for i in range(3)] == ["thief"] * 3
        with pytest.raises(liblock.LockLost):
            async with client3.lock("gone", ttl=1.5):
                await asyncio.sleep(0)
                await eventually_async(lambda: "gone" not in c3.all_keys(), what="expiry")

    asyncio.run(main())


def test_async_unavailable(c3: Cluster, client3) -> None:
    c3.kill(0)
    c3.kill(1)

    async def main() -> None:
        with pytest.raises(liblock.Unavailable):
            await client3.acquire_async("down", ttl=2, wait=0)

    asyncio.run(main())


def test_cancel_waiting_tasks_leaves_no_key(c3: Cluster) -> None:
    threads_before = threading.active_count()
    # a thousand waiters retrying keep the nodes busy: a roomier node timeout
    client3 = liblock.Client(c3.urls, node_timeout=2.0, backend=BACKEND)

    async def main() -> None:
        holder = await client3.acquire_async("hot", ttl=30)
        tasks = [asyncio.ensure_future(client3.acquire_async("hot", ttl=10, wait=60))
                 for _ in range(1000)]
        await eventually_async(lambda: c3.waiting("hot"), what="the waiters wait")
        assert not any(t.done() for t in tasks)
        # a thousand waiters, no thread: every one is a future on this loop's host
        assert threading.active_count() == threads_before
        for t in tasks:
            t.cancel()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        assert all(isinstance(r, asyncio.CancelledError) for r in results)
        await eventually_async(lambda: c3.all_keys() == ["hot"] * 3, what="the key on every node")
        assert [c3.do(i, "GET", "hot") for i in range(3)] == [holder.token] * 3
        await holder.release_async()

    asyncio.run(main())
    client3.close()
    eventually(lambda: c3.all_keys() == [], what="no key left")


def test_wait_for_timeout_cancels_acquire(c3: Cluster, client3) -> None:
    async def main() -> None:
        holder = await client3.acquire_async("wf", ttl=30)
        waiter = asyncio.ensure_future(asyncio.wait_for(client3.acquire_async("wf", ttl=10, wait=30), 0.5))
        await eventually_async(lambda: c3.waiting("wf"), what="the acquire waits")
        with pytest.raises(asyncio.TimeoutError):
            await waiter
        # the canceled acquire is over: its engine no longer listens for the key's release,
        # so the release below wakes nobody and nothing takes the key later
        await eventually_async(lambda: c3.waiting("wf", engines=0), what="the canceled waiter gone")
        await holder.release_async()
        await no_keys_left(c3)
        assert c3.waiting("wf", engines=0)

    asyncio.run(main())


def test_cancel_racing_success_leaves_no_key(c1: Cluster, client1) -> None:
    async def main() -> None:
        for _ in range(50):
            t = asyncio.ensure_future(client1.acquire_async("race", ttl=10))
            await asyncio.sleep(0)
            t.cancel()
            try:
                lock = await t
            except asyncio.CancelledError:
                continue
            await lock.release_async()

    asyncio.run(main())
    eventually(lambda: c1.all_keys() == [], what="no key left after cancel races")


def test_close_client_cancels_pending(c3: Cluster) -> None:
    async def main() -> None:
        holder_client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
        holder = await holder_client.acquire_async("pend", ttl=30)
        client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
        task = asyncio.ensure_future(client.acquire_async("pend", ttl=10, wait=30))
        await eventually_async(lambda: c3.waiting("pend"), what="the acquire waits")
        client.close()
        with pytest.raises(liblock.Canceled) as e:
            await task
        assert e.value.status == 6
        await holder.release_async()
        holder_client.close()

    asyncio.run(main())
    no_keys(c3)


def test_async_on_lost_runs_on_loop(c3: Cluster, client3) -> None:
    async def main() -> None:
        loop_thread = threading.get_ident()
        seen = asyncio.Event()
        where = []

        def on_lost(lock: liblock.Lock) -> None:
            where.append(threading.get_ident())
            seen.set()

        lock = await client3.acquire_async("al", ttl=1.5, auto_extend=True, on_lost=on_lost)
        for i in range(3):
            c3.do(i, "SET", "al", "thief")
        await asyncio.wait_for(seen.wait(), 20)
        assert where == [loop_thread]
        assert lock.lost
        with pytest.raises(liblock.LockLost):
            await lock.release_async()

    asyncio.run(main())
