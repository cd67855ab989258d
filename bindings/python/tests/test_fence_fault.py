"""A node frozen (SIGSTOP) or killed (SIGKILL) during the second round of a fenced
acquire, through the synchronous and the asyncio API of the backend under test: the
client reaches the nodes through build/faultproxy, which signals the first nodes the
fence round's command (fence.lua) reaches, just before it does. The scenarios of
core/testkit/locktest's FenceRound* and bindings/node's fence-fault.test.js.

The second round goes to the nodes whose grants made the first round's quorum (2 of 3)
and to the third as its grant comes in: losing one still leaves a quorum to take the
fence, so the acquire succeeds with a higher fence; losing two leaves the fence on fewer
than a quorum, so the acquire raises Unavailable (never a lock). Either way the lock key
goes (the release or the cleanup, at the latest its ttl), and the next fenced acquire's
fence is above every fence before."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any, List

import pytest

import liblock
from conftest import BACKEND, ROOT, Cluster, wait_until

FAULTPROXY = ROOT / "build" / "faultproxy"
NODE_TIMEOUT = 0.5


class FaultProxy:
    """build/faultproxy in front of every node of c: it sends signal ("STOP" or "KILL")
    to the first `faults` nodes the fence round's command reaches."""

    def __init__(self, c: Cluster, signal: str, faults: int) -> None:
        if not FAULTPROXY.is_file():
            pytest.fail(f"{FAULTPROXY} is missing: run `make build` in {ROOT}")
        args = [str(FAULTPROXY), "-signal", signal, "-faults", str(faults), "-fence"]
        for n in c.cmd("nodes")["nodes"]:  # current pids: a node may have been restarted
            args += ["-route", f"127.0.0.1:{n['port']}={n['pid']}"]
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            pytest.fail(f"faultproxy did not start (exit {self.proc.wait()})")
        self.urls: List[str] = [f"redis://{a}" for a in line.split()]

    def fired(self) -> List[int]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("fired\n")
        self.proc.stdin.flush()
        words = self.proc.stdout.readline().split()
        assert words[:1] == ["fired"], words
        return [int(w) for w in words[1:]]

    def stop(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)
        self.proc.stdout.close()


async def acquire(mode: str, c: liblock.Client, res: str, ttl: float, **kw: Any) -> liblock.Lock:
    if mode == "sync":
        return c.acquire(res, ttl, **kw)
    return await c.acquire_async(res, ttl, **kw)


async def release(mode: str, lock: liblock.Lock) -> None:
    if mode == "sync":
        lock.release()
    else:
        await lock.release_async()


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("signal,faults", [("STOP", 1), ("KILL", 1), ("STOP", 2)],
                         ids=["one_frozen", "one_killed", "two_frozen"])
def test_fence_round_fault(c3: Cluster, mode: str, signal: str, faults: int, request: Any) -> None:
    res = request.node.name  # its own resource: a frozen node's queued commands run late
    ttl = 3.0  # a key the cleanup cannot reach expires soon

    def gone() -> bool:
        return all(c3.do(i, "GET", res) is None for i in range(c3.n))

    async def scenario() -> None:
        with liblock.Client(c3.urls, node_timeout=NODE_TIMEOUT, backend=BACKEND) as direct:
            lock = await acquire(mode, direct, res, 5.0, fence=True)
            first = lock.fence
            await release(mode, lock)
            wait_until(gone, what=f"{res} released")

            proxy = FaultProxy(c3, signal, faults)
            try:
                with liblock.Client(proxy.urls, node_timeout=NODE_TIMEOUT, backend=BACKEND) as c:
                    if faults == 1:
                        lock = await acquire(mode, c, res, ttl, fence=True, wait=0)
                        assert lock.fence > first, (lock.fence, first)
                        first = lock.fence
                        await release(mode, lock)
                    else:
                        with pytest.raises(liblock.Unavailable, match="fence") as e:
                            lock = await acquire(mode, c, res, ttl, fence=True, wait=0)
                        assert not isinstance(e.value, liblock.NotAcquired), e.value
                    assert len(proxy.fired()) == faults, proxy.fired()
            finally:
                # Even after a failed assertion: the fixture's reset restarts or thaws them.
                for i in proxy.fired():
                    (c3.killed if signal == "KILL" else c3.frozen).add(i)
                proxy.stop()
                for i in sorted(c3.frozen):
                    c3.thaw(i)
                for i in sorted(c3.killed):
                    c3.cmd(f"restart {i}")
                c3.killed.clear()
            wait_until(gone, timeout=ttl + 10, what=f"{res} gone from every node")

            lock = await acquire(mode, direct, res, 5.0, fence=True)
            assert lock.fence > first, (lock.fence, first)
            await release(mode, lock)
            wait_until(gone, what=f"{res} released")

    asyncio.run(scenario())
