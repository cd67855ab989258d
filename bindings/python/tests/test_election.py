"""Leader election from Python, on the backend under test
(LIBLOCK_BACKEND): campaign / campaign_async, leader / leader_async, observe as an async
iterator and with a callback; resign hands over with a higher term; the leader's process
killed (SIGKILL) and another taking over; a node killed under a leader; bad input naming
the parameter; nothing left behind but the election's term counter."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import threading
import time
from typing import Any, List, Optional

import pytest

import liblock
from conftest import BACKEND, Cluster, eventually, eventually_async

FENCE_COUNTER = "\ufffdfence"  # key + 0xFF + "fence": the term counter (no expiry)


def client(c: Cluster, **kw: Any) -> liblock.Client:
    return liblock.Client(c.urls, node_timeout=0.2, backend=BACKEND, **kw)


def only_counters(c: Cluster) -> None:
    eventually(lambda: [k for k in c.all_keys() if not k.endswith(FENCE_COUNTER)] == [],
               what="no election key on any node")


def in_order(seen: List[Optional[liblock.Leader]]) -> None:
    last = 0
    for x in seen:
        if x is not None:
            assert x.term > last, seen
            last = x.term


def test_campaign_resign_observe_sync(c3: Cluster) -> None:
    with client(c3) as a, client(c3) as b, client(c3) as o:
        seen: List[Optional[liblock.Leader]] = []
        obs = o.observe("svc", seen.append, poll=0.1)
        eventually(lambda: len(seen) >= 1, what="the first report")
        assert seen[0] is None  # a late observer first gets the state now: no leader
        assert b.leader("svc") is None

        la = a.campaign("svc", "replica-a", ttl=2.0)
        assert isinstance(la, liblock.Leadership)
        assert la.name == "svc" and la.value == "replica-a" and la.term >= 1 and la.validity > 0
        now = b.leader("svc")
        assert now is not None and now.value == "replica-a" and now.term == la.term and now.validity
        b.acquire("svc", 1.0, wait=0).release()  # the lock of the same name is another key
        with pytest.raises(liblock.NotAcquired):
            b.campaign("svc", "b", wait=0)
        got: List[liblock.Leadership] = []
        t = threading.Thread(target=lambda: got.append(b.campaign("svc", "replica-b", ttl=2.0)))
        t.start()
        eventually(lambda: any(x is not None and x.term == la.term for x in seen), what="observed a")
        la.resign()
        t.join(10)
        assert got and got[0].term > la.term
        eventually(lambda: any(x is not None and x.term == got[0].term for x in seen), what="observed b")
        got[0].resign()
        eventually(lambda: seen[-1] is None, what="observed nobody")
        obs.close()
        n = len(seen)
        with a.campaign("svc", "again", ttl=2.0):
            pass
        assert len(seen) == n, "a call after close()"
        in_order(seen)
        assert [x.value for x in seen if x is not None] == ["replica-a", "replica-b"]
    only_counters(c3)


def test_campaign_async_and_observe_iterator(c3: Cluster) -> None:
    async def main() -> None:
        async with client(c3) as a, client(c3) as b:
            seen: List[Optional[liblock.Leader]] = []

            async def watch() -> None:
                async for x in b.observe("asvc", poll=0.1):
                    seen.append(x)

            task = asyncio.ensure_future(watch())
            await eventually_async(lambda: len(seen) >= 1, what="the first report")
            la = await a.campaign_async("asvc", "A", ttl=2.0)
            now = await b.leader_async("asvc")
            assert now is not None and now.value == "A" and now.term == la.term
            waiting = asyncio.ensure_future(b.campaign_async("asvc", "B", ttl=2.0))
            await eventually_async(lambda: any(x is not None and x.value == "A" for x in seen), what="observed A")
            await la.resign_async()
            lb = await asyncio.wait_for(waiting, 10)
            assert lb.term > la.term
            await eventually_async(lambda: any(x is not None and x.value == "B" for x in seen), what="observed B")
            # A cancelled campaign leaves nothing behind.
            pending = asyncio.ensure_future(a.campaign_async("asvc", "C"))
            await asyncio.sleep(0.05)  # deliberate: let the campaign start waiting
            pending.cancel()
            with pytest.raises(asyncio.CancelledError):
                await pending
            async with lb:
                pass  # leaving the block resigns
            await eventually_async(lambda: seen[-1] is None, what="observed nobody")
            task.cancel()
            in_order(seen)
    asyncio.run(main())
    only_counters(c3)


CAMPAIGNER = """
import sys, time, liblock
c = liblock.Client(sys.argv[1].split(","), node_timeout=0.2, backend=sys.argv[3])
l = c.campaign("kill", sys.argv[2], ttl=0.8)
print("LEADER", l.term, flush=True)
while True:
    time.sleep(1)  # deliberate: the leader idles until it is killed
"""


def test_leader_process_killed(c3: Cluster) -> None:
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(liblock.__file__)))
    procs = [subprocess.Popen([sys.executable, "-c", CAMPAIGNER, ",".join(c3.urls), f"p{i}", BACKEND],
                              stdout=subprocess.PIPE, text=True, env=env) for i in range(3)]
    try:
        with client(c3) as o:
            seen: List[Optional[liblock.Leader]] = []
            obs = o.observe("kill", seen.append, poll=0.1)
            last = 0
            for _ in range(2):
                box: List[liblock.Leader] = []

                def newer() -> bool:
                    x = o.leader("kill")
                    if x is not None and x.term > last:
                        box.append(x)
                        return True
                    return False
                eventually(newer, timeout=20, what="a new leader")
                p = procs[int(box[0].value[1:])]
                assert p.stdout is not None
                line = p.stdout.readline().split()
                assert line == ["LEADER", str(box[0].term)]
                assert box[0].term > last
                last = box[0].term
                eventually(lambda: any(x is not None and x.term == last for x in seen), what="observed")
                p.send_signal(signal.SIGKILL)
                p.wait()
            obs.close()
            in_order(seen)
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_node_killed_under_a_leader(c3: Cluster) -> None:
    with client(c3) as a, client(c3) as b:
        # 1.5 s, not less: an extension is due every third of the lease, and a loaded
        # machine can stall the process for a few hundred ms
        la = a.campaign("nk", "A", ttl=1.5)
        c3.kill(0)
        # past the first lease: it was extended on the two nodes left
        until = time.monotonic() + 1.7
        eventually(lambda: time.monotonic() > until, what="the first lease to pass")
        assert la.validity > 0.3 and not la.lost, "not extended with a node down"
        with pytest.raises(liblock.NotAcquired):
            b.campaign("nk", "B", wait=0.1)
        now = b.leader("nk")
        assert now is not None and now.term == la.term
        la.resign()


def test_bad_input(c1: Cluster) -> None:
    with client(c1) as c:
        def arg(name: str, fn: Any) -> None:
            with pytest.raises(liblock.InvalidArgument) as e:
                fn()
            assert name in str(e.value), e.value
        arg("name", lambda: c.campaign("", "v"))
        arg("value", lambda: c.campaign("e", ""))
        arg("value", lambda: c.campaign("e", "x" * 4097))
        arg("ttl", lambda: c.campaign("e", "v", ttl=0))
        arg("wait", lambda: c.campaign("e", "v", wait=-1))
        arg("name", lambda: c.leader(""))
        arg("name", lambda: c.observe(""))
        arg("poll", lambda: c.observe("e", poll=-1))
        with pytest.raises(liblock.ArgumentTypeError, match="value"):
            c.campaign("e", 5)  # type: ignore[arg-type]
        with pytest.raises(liblock.ArgumentTypeError, match="name"):
            c.leader(None)  # type: ignore[arg-type]
        with pytest.raises(liblock.ArgumentTypeError, match="callback"):
            c.observe("e", 3)  # type: ignore[arg-type]
        with pytest.raises(liblock.ArgumentTypeError, match="bogus"):
            c.campaign("e", "v", bogus=1)  # type: ignore[call-arg]
        assert c.leader("e") is None
    eventually(lambda: c1.all_keys() == [], what="nothing left")


def test_observe_first_state_when_the_reply_is_read_at_once(c3: Cluster) -> None:
    """An asyncio host may read a request's replies before the request's call returns
    (_host.Host._read_now); a watch's LEADER actions are found by the op that call returns,
    so a watch must not read early: its first state would arrive before the watch was
    registered and be dropped, and the iterator would wait forever (it did, in about one
    observe of six). Forty observes, each bounded."""
    client = liblock.Client(c3.urls, node_timeout=2, backend=BACKEND)

    async def main() -> None:
        ld = await client.campaign_async("watch-at-once", "v1")
        for _ in range(40):
            async def first() -> Any:
                async for leader in client.observe("watch-at-once"):
                    return leader
            got = await asyncio.wait_for(first(), 5)
            assert got is not None and got.value == "v1" and got.term == ld.term
        await ld.resign_async()
    try:
        asyncio.run(main())
    finally:
        client.close()
