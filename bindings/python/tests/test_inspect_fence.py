"""Inspect, re-entry by token, fencing tokens, and wake on release across processes
(issue 13), against real redis-servers, through the synchronous and the asyncio API
of the backend under test. The scenarios of core/testkit/locktest/locktest.go (Inspect,
InspectMinorityDown, ReenterByToken, FencesIncrease, FenceWithANodeFrozen,
WakeOnReleaseAcrossClients)."""

from __future__ import annotations

import asyncio
import multiprocessing
import threading
from typing import Any, Awaitable, Callable, List

import pytest

import liblock
from conftest import BACKEND, Cluster, free_port, no_keys, no_keys_left, settled, wait_until

MODES = ["sync", "async"]


class Api:
    """The same operations through the synchronous or the asyncio API, both awaitable
    (a synchronous call simply blocks inside the coroutine)."""

    def __init__(self, mode: str) -> None:
        self.mode = mode

    async def acquire(self, client: liblock.Client, resource: str, ttl: float, **kw: Any) -> liblock.Lock:
        if self.mode == "sync":
            return client.acquire(resource, ttl, **kw)
        return await client.acquire_async(resource, ttl, **kw)

    async def release(self, lock: liblock.Lock) -> None:
        if self.mode == "sync":
            lock.release()
        else:
            await lock.release_async()

    async def inspect(self, client: liblock.Client, resource: str) -> liblock.Inspection:
        if self.mode == "sync":
            return client.inspect(resource)
        return await client.inspect_async(resource)


def run(mode: str, scenario: Callable[[Api], Awaitable[None]]) -> None:
    asyncio.run(scenario(Api(mode)))


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
    wait_until(lambda: [k for k in c.all_keys() if not k.endswith(FENCE_COUNTER)] == [],
               what="no lock key on any node")


def holds_quorum(c: Cluster, key: str, value: str) -> None:
    """A quorum of nodes holds value at key (all an acquire promises: a node may refuse,
    e.g. when it gets the acquire before the previous holder's release)."""
    wait_until(lambda: sum(c.do(i, "GET", key) == value for i in range(c.n)) > c.n // 2,
               what=f"{key}={value} on a quorum of nodes")


def holds(c: Cluster, key: str, value: str) -> None:
    """Wait until every node holds value at key (an acquire returns once a quorum granted)."""
    wait_until(lambda: [c.do(i, "GET", key) for i in range(c.n)] == [value] * c.n,
               what=f"{key}={value} on every node")


async def held_everywhere(c: Cluster, key: str, value: str) -> None:
    await settled(lambda: [c.do(i, "GET", key) for i in range(c.n)] == [value] * c.n,
                  f"{key}={value} on every node")


# ------------------------------------------------------------ inspect

@pytest.mark.parametrize("mode", MODES)
def test_inspect(c3: Cluster, mode: str, res: str) -> None:
    """A free resource, one held with an owner label (seen by another client too), one
    held by another program (no label), one without expiry, a minority's value."""
    async def scenario(api: Api) -> None:
        with client(c3, owner="worker-7") as a, client(c3) as other:
            assert a.owner == "worker-7" and other.owner == ""
            free = await api.inspect(a, res)
            assert isinstance(free, liblock.Inspection)
            assert not free.held and free.validity == 0.0 and free.owner == "" and len(free.nodes) == 3
            assert [n.node for n in free.nodes] == [0, 1, 2]
            assert all(not n.locked and not n.holder and n.error is None for n in free.nodes)
            assert [n.addr for n in free.nodes] == [u.split("//")[1] for u in c3.urls]

            lock = await api.acquire(a, res, 10.0)
            assert lock.token.startswith("worker-7/") and len(lock.token) == len("worker-7/") + 36
            await held_everywhere(c3, res, lock.token)
            for who in (a, other):
                got = await api.inspect(who, res)
                assert got.held and got.owner == "worker-7", got
                assert got.validity is not None and 9.0 < got.validity <= 10.0, got
                for n in got.nodes:
                    assert isinstance(n, liblock.NodeState)
                    assert n.locked and n.holder and n.owner == "worker-7" and n.error is None, n
                    assert n.ttl is not None and 9.0 < n.ttl <= 10.0, n
            with pytest.raises(Exception):  # frozen dataclasses
                got.held = False  # type: ignore[misc]
            await api.release(lock)
            await no_keys_left(c3)

            # another program's plain SET NX: held, no owner
            for i in range(3):
                c3.do(i, "SET", res, "legacy", "NX", "PX", "60000")
            got = await api.inspect(a, res)
            assert got.held and got.owner == "" and got.validity is not None and got.validity > 50.0, got

            # without expiry
            for i in range(3):
                c3.do(i, "SET", res, "forever")
            got = await api.inspect(a, res)
            assert got.held and got.validity is None, got
            assert all(n.locked and n.holder and n.ttl is None for n in got.nodes), got

            # a minority's value is no holder
            c3.do(0, "SET", res, "other")
            c3.do(1, "DEL", res)
            got = await api.inspect(a, res)
            assert not got.held and got.validity == 0.0, got
            assert got.nodes[0].locked and not got.nodes[0].holder and not got.nodes[1].locked, got
            # inspecting took nothing
            assert c3.do(0, "GET", res) == "other" and c3.do(2, "GET", res) == "forever"
    run(mode, scenario)


@pytest.mark.parametrize("mode", MODES)
def test_inspect_minority_down(c3: Cluster, mode: str, res: str) -> None:
    """One node of three killed: the answer stands, that node's error reported; two: Unavailable."""
    async def scenario(api: Api) -> None:
        with client(c3) as a:
            lock = await api.acquire(a, res, 10.0)
            await held_everywhere(c3, res, lock.token)
            c3.kill(2)
            got = await api.inspect(a, res)
            assert got.held and got.validity is not None and got.validity > 5.0, got
            assert got.nodes[2].error and not got.nodes[2].locked, got
            assert all(n.error is None and n.holder for n in got.nodes[:2]), got
            c3.kill(1)
            with pytest.raises(liblock.Unavailable) as e:
                await api.inspect(a, res)
            assert isinstance(e.value, liblock.LockError) and e.value.status == 5
    run(mode, scenario)


# ------------------------------------------------------------ re-entry

@pytest.mark.parametrize("mode", MODES)
def test_reenter_by_token(c3: Cluster, mode: str, res: str) -> None:
    """A token handed to another client re-enters the held lock (ttl raised); someone
    else's token is NotAcquired; releasing once frees it for every holder of the token;
    an unknown token on a free resource is an ordinary acquire."""
    async def scenario(api: Api) -> None:
        with client(c3) as a, client(c3) as b:
            first = await api.acquire(a, res, 2.0)
            assert not first.reentered and first.fence == 0
            await held_everywhere(c3, res, first.token)
            handed = await api.acquire(b, res, 20.0, token=first.token, wait=0)
            assert handed.reentered and handed.token == first.token
            assert handed.validity > 19.0, handed.validity
            await settled(lambda: all(10000 <= c3.do(i, "PTTL", res) <= 20000 for i in range(3)),
                          "the ttl raised to 20 s on every node")
            with pytest.raises(liblock.NotAcquired):
                await api.acquire(b, res, 2.0, token="someone-elses-token-0123", wait=0)
            assert [c3.do(i, "GET", res) for i in range(3)] == [first.token] * 3
            await api.release(handed)
            await no_keys_left(c3)
            with pytest.raises(liblock.LockLost):  # the key went with the hand-over's release
                await api.release(first)

            fresh = await api.acquire(b, res, 2.0, token="a-token-of-my-own-0001")
            assert not fresh.reentered and fresh.token == "a-token-of-my-own-0001"
            await held_everywhere(c3, res, "a-token-of-my-own-0001")
            await api.release(fresh)
            await no_keys_left(c3)
    run(mode, scenario)


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


# ------------------------------------------------------------ fences

def strictly_increasing(fences: List[int]) -> int:
    """The first index where fences do not strictly increase, or -1."""
    for i in range(1, len(fences)):
        if fences[i] <= fences[i - 1]:
            return i
    return -1


def test_fence_checker_catches_a_repeat() -> None:
    """Negative control: the checker the fence tests rely on does fail."""
    assert strictly_increasing([1, 2, 2]) == 2
    assert strictly_increasing([3, 1]) == 1
    assert strictly_increasing([5, 6, 6, 7]) == 2
    assert strictly_increasing([1, 5, 9]) == -1 and strictly_increasing([]) == -1


@pytest.mark.parametrize("mode", MODES)
def test_fences_increase(c3: Cluster, mode: str, res: str) -> None:
    """Six contenders over two clients take turns, five rounds each: the fences, in the
    order the critical sections ran, strictly increase."""
    order: List[int] = []
    inside = [0]
    with client(c3) as a, client(c3) as b:
        clients = [a, b]
        if mode == "sync":
            errors: List[BaseException] = []

            def contender(w: int) -> None:
                try:
                    for _ in range(5):
                        with clients[w % 2].lock(res, ttl=5.0, fence=True, wait=30.0) as lock:
                            inside[0] += 1
                            assert inside[0] == 1, "two holders at once"
                            order.append(lock.fence)
                            inside[0] -= 1
                except BaseException as e:  # noqa: BLE001
                    errors.append(e)

            threads = [threading.Thread(target=contender, args=(w,)) for w in range(6)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert not errors, errors
        else:
            async def contender(w: int) -> None:
                for _ in range(5):
                    async with clients[w % 2].lock(res, ttl=5.0, fence=True, wait=30.0) as lock:
                        inside[0] += 1
                        assert inside[0] == 1, "two holders at once"
                        order.append(lock.fence)
                        await asyncio.sleep(0)  # let the others run while it is held
                        inside[0] -= 1

            async def main() -> None:
                await asyncio.gather(*(contender(w) for w in range(6)))
            asyncio.run(main())
    assert len(order) == 30 and order[0] >= 1, order
    assert strictly_increasing(order) == -1, order
    no_lock_keys(c3)
    counters = c3.all_keys()  # one per node that granted at least once: a quorum at least
    assert set(counters) == {res + FENCE_COUNTER} and len(counters) >= 2, counters


@pytest.mark.parametrize("mode", MODES)
def test_fence_with_a_node_frozen(c3: Cluster, mode: str, res: str) -> None:
    """One node of three frozen (SIGSTOP): fenced acquires still succeed, and increase."""
    async def scenario(api: Api) -> None:
        with client(c3) as a:
            lock = await api.acquire(a, res, 5.0, fence=True)
            first = lock.fence
            assert first >= 1 and not lock.reentered
            await api.release(lock)
            c3.freeze(0)
            lock = await api.acquire(a, res, 5.0, fence=True, wait=0)
            assert lock.fence > first, (lock.fence, first)
            lock2_fence = lock.fence
            await api.release(lock)
            lock = await api.acquire(a, res, 5.0, fence=True, wait=0)
            assert lock.fence > lock2_fence
            await api.release(lock)
    run(mode, scenario)


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


# ------------------------------------------------------------ wake on release across processes

def numsub(c: Cluster, i: int, key: str) -> int:
    """How many connections of node i listen for releases of key."""
    reply = c.do(i, "PUBSUB", "NUMSUB", "liblock:released:" + key)
    return int(reply[1])


@pytest.mark.parametrize("mode", MODES)
def test_wake_on_release_across_processes(c3: Cluster, mode: str, res: str) -> None:
    """A waiter in a child process listens for releases on every node (one pub/sub
    connection per node), is woken by the parent's release, and stops listening once it
    holds the lock (NUMSUB 1 -> 0 on each node while it still holds it). Its pub/sub
    connections killed while it waits are replaced."""
    from _workers import wait_for_release

    ctx = multiprocessing.get_context("spawn")
    with client(c3) as parent:
        held = parent.acquire(res, ttl=30.0)
        events = ctx.Queue()
        go_on = ctx.Event()
        child = ctx.Process(target=wait_for_release, args=(c3.urls, res, mode, events, go_on))
        child.start()
        try:
            wait_until(lambda: [numsub(c3, i, res) for i in range(3)] == [1, 1, 1], timeout=60,
                       what="the child listening for releases on every node")
            # its pub/sub connections dropped while it waits: it subscribes again
            assert [c3.do(i, "CLIENT", "KILL", "TYPE", "pubsub") for i in range(3)] == [1, 1, 1]
            wait_until(lambda: [numsub(c3, i, res) for i in range(3)] == [1, 1, 1], timeout=60,
                       what="the child listening again after its pub/sub connections were killed")
            assert [c3.do(i, "GET", res) for i in range(3)] == [held.token] * 3
            held.release()
            what, token = events.get(timeout=60)  # woken (bounded: the child waits 60 s)
            assert what == "acquired", token
            assert token != held.token
            holds_quorum(c3, res, token)
            wait_until(lambda: [numsub(c3, i, res) for i in range(3)] == [0, 0, 0],
                       what="the child no longer listening once it holds the lock")
            assert sum(c3.do(i, "GET", res) == token for i in range(3)) >= 2  # still held
        finally:
            go_on.set()
        what, validity = events.get(timeout=60)
        child.join(60)
        assert what == "released" and validity > 20.0, (what, validity)
        assert child.exitcode == 0
    no_keys(c3)


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
                wait_until(lambda: [numsub(c3, i, res) for i in range(3)] == [1, 1, 1],
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
