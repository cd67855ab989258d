"""Multi-resource locks from Python: ``client.acquire(["a", "b"], ttl)``
and ``acquire_async`` take every resource of the list or none. Runs on the native backend
(scripts/test.sh: the blocking form through the C ABI's options "resources", asyncio
through the host protocol) and on liblock.wasm (scripts/test-wasm.sh)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, List

import pytest

import liblock
from conftest import BACKEND, Cluster, no_keys, eventually


def client(c: Cluster) -> liblock.Client:
    return liblock.Client(c.urls, node_timeout=0.5, backend=BACKEND)


def values(c: Cluster, key: str) -> List[Any]:
    return [c.do(i, "GET", key) for i in range(c.n)]


def test_list_taken_whole(c3: Cluster) -> None:
    with client(c3) as a, client(c3) as b:
        lock = a.acquire(["acct:1", "acct:2"], 5)
        assert lock.resources == ["acct:1", "acct:2"]
        assert lock.resource == "acct:1"
        # the acquire returns at a quorum: the third node's script may come a moment
        # later (and must, before b's attempts could take a member there)
        eventually(lambda: values(c3, "acct:2") == [lock.token] * 3, what="the list on every node")
        # a plain mutex on a member is refused
        with pytest.raises(liblock.NotAcquired):
            b.acquire("acct:2", 2, wait=0)
        # an overlapping list in the other order is refused, naming the held resource,
        # and leaves no key of its own
        with pytest.raises(liblock.NotAcquired, match='"acct:1" is held'):
            b.acquire(["acct:3", "acct:1"], 2, wait=0)
        assert values(c3, "acct:3") == [None] * 3
        lock.extend(8)
        # the extension returns at a quorum too: wait for the third node's
        eventually(lambda: all(c3.do(i, "PTTL", "acct:2") > 5000 for i in range(3)),
                   what="the extended ttl on every node")
        lock.release()
        no_keys(c3)
        with b.lock(["acct:2", "acct:3"], 2) as again:
            assert again.resources == ["acct:2", "acct:3"]
        no_keys(c3)


def test_release_wakes_a_waiting_list(c3: Cluster) -> None:
    with client(c3) as a, client(c3) as b:
        held = a.acquire("w:y", 30)
        got: List[Any] = []
        t = threading.Thread(target=lambda: got.append(b.acquire(["w:x", "w:y"], 5, wait=20)))
        t.start()
        eventually(lambda: c3.waiting("w:y"), what="the list waits for w:y")
        held.release()
        t.join(20)
        assert got and got[0].resources == ["w:x", "w:y"]
        got[0].release()
        no_keys(c3)


def test_async_list(c3: Cluster) -> None:
    async def main() -> None:
        with client(c3) as a, client(c3) as b:
            lock = await a.acquire_async(["as:1", "as:2"], 5, fence=True)
            assert lock.resources == ["as:1", "as:2"] and lock.fence >= 1
            with pytest.raises(liblock.NotAcquired):
                await b.acquire_async("as:2", 2, wait=0)
            waiting = asyncio.ensure_future(b.acquire_async(["as:2", "as:3"], 5, wait=20))
            await asyncio.sleep(0)
            await lock.release_async()
            got = await waiting
            assert got.resources == ["as:2", "as:3"]
            await got.release_async()
    asyncio.run(main())
    eventually(lambda: [k for k in c3.all_keys() if "fence" not in k] == [], what="no lock key")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_bad_lists(c3: Cluster, mode: str) -> None:
    with client(c3) as a:
        def call(resource: Any, **kw: Any) -> Any:
            if mode == "sync":
                return a.acquire(resource, 2, wait=0, **kw)
            return asyncio.run(a.acquire_async(resource, 2, wait=0, **kw))

        cases = [
            ([], {}, liblock.InvalidArgument, r"resources must name at least one resource"),
            (["a", ""], {}, liblock.InvalidArgument, r"resources\[1\] must not be empty"),
            (["a", 5], {}, liblock.ArgumentTypeError, r"resources\[1\] must be a str, not int"),
            (["a", "b\x00"], {}, liblock.InvalidArgument, r"resources\[1\] must not contain NUL"),
            (["a", "b", "a"], {}, liblock.InvalidArgument, r"resources\[2\] duplicates resources\[0\]"),
            ([f"r{i}" for i in range(liblock.MAX_RESOURCES + 1)], {}, liblock.InvalidArgument,
             r"at most 16 resources"),
            (["a", "x" * 1025], {}, liblock.InvalidArgument, r"resources\[1\] must be at most 1024 bytes"),
            (["a", "b"], {"token": "a-token-of-my-own-0001"}, liblock.InvalidArgument, r"not supported with a list"),
        ]
        for resource, kw, exc, pattern in cases:
            with pytest.raises(exc, match=pattern):
                call(resource, **kw)
        assert liblock.MAX_RESOURCES == 16
        no_keys(c3)
