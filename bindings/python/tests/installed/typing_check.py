"""Type-checked with `mypy --strict` against the installed wheel (its py.typed) by
scripts/test-dist.sh; never run. Uses the public API the way the README does."""

from __future__ import annotations

import asyncio
import datetime
from typing import List, Optional

import liblock


def sync_use(nodes: List[str]) -> Optional[str]:
    with liblock.Client(nodes, node_timeout=0.05, key_prefix="app:") as client:
        backend: str = client.backend
        timeout: float = client.node_timeout
        assert backend and timeout
        try:
            with client.lock("orders:42", ttl=10.0, wait=5.0) as lock:
                token: str = lock.token
                left: float = lock.validity
                lock.extend(datetime.timedelta(seconds=20))
                assert left >= 0
                return token
        except liblock.NotAcquired:
            return None
        except liblock.Unavailable as e:
            status: Optional[int] = e.status
            print(status, e.message)
            return None


def on_lost(lock: liblock.Lock) -> None:
    print("lost", lock.resource, lock.lost)


async def async_use(nodes: List[str]) -> None:
    async with liblock.Client(nodes, backend="wasm") as client:
        lock = await client.acquire_async("job", ttl=5, wait=0, auto_extend=True, on_lost=on_lost)
        await lock.extend_async(5)
        await lock.release_async()
        async with client.lock("job", ttl=5.0, wait=None) as held:
            assert not held.released


def errors() -> List[type]:
    wait: float = liblock.DEFAULT_WAIT
    assert wait > 0 and liblock.ABI_VERSION == 1
    path: Optional[str] = liblock.library_path()
    wasm: Optional[str] = liblock.wasm_path()
    n: int = liblock.live_handles()
    print(path, wasm, n)
    return [liblock.LockError, liblock.LockLost, liblock.Canceled, liblock.InvalidArgument,
            liblock.ArgumentTypeError, liblock.InvalidHandle, liblock.InternalError,
            liblock.LibraryError, liblock.ForkedProcessError]


if __name__ == "__main__":
    asyncio.run(async_use(["redis://127.0.0.1:7001"]))


def inspect_fence_reentry_use(nodes: List[str]) -> Optional[int]:
    """inspect, re-entry by token, fencing tokens, owner."""
    with liblock.Client(nodes, owner="worker-7") as client:
        seen: liblock.Inspection = client.inspect("orders:42")
        held: bool = seen.held
        validity: Optional[float] = seen.validity
        owner: str = seen.owner
        for node in seen.nodes:
            state: liblock.NodeState = node
            ttl: Optional[float] = state.ttl
            error: Optional[str] = state.error
            print(state.node, state.addr, state.locked, state.holder, state.owner, ttl, error)
        print(held, validity, owner, client.owner)
        lock = client.acquire("orders:42", ttl=10.0, fence=True)
        fence: int = lock.fence
        again = client.acquire("orders:42", ttl=20.0, token=lock.token)
        reentered: bool = again.reentered
        assert reentered
        with client.lock("other", ttl=1.0, token="a-token-of-my-own-0001") as other:
            assert not other.reentered
        again.release()
        return fence


async def inspect_fence_reentry_async(nodes: List[str]) -> bool:
    async with liblock.Client(nodes) as client:
        seen = await client.inspect_async("orders:42")
        lock = await client.acquire_async("orders:42", ttl=5, fence=True, wait=0)
        await lock.release_async()
        return seen.held and lock.fence > 0


def errors_and_lock_handle_use(nodes: List[str]) -> List[str]:
    """ClientClosed, Unavailable.nodes (NodeFailure), lock.info() in seconds, and
    acquire/release/locked/owned on what client.lock() returns."""
    causes: List[str] = []
    client = liblock.Client(nodes)
    lk: liblock.LockContext = client.lock("orders:42", ttl=10.0)
    try:
        got: liblock.Lock = lk.acquire()
        ttl: float = got.info()["ttl"]
        mine: bool = lk.owned()
        anyone: bool = lk.locked()
        print(ttl, mine, anyone, lk.lock)
        lk.release()
    except liblock.Unavailable as e:
        for failure in e.nodes:
            node: liblock.NodeFailure = failure
            where: int = node.node
            causes.append(f"{where} {node.addr}: {node.cause}")
    client.close()
    try:
        client.acquire("orders:42", ttl=10.0)
    except liblock.ClientClosed as closed:
        gone: liblock.InvalidHandle = closed
        causes.append(str(gone))
    return causes


async def errors_and_lock_handle_async(nodes: List[str]) -> bool:
    async with liblock.Client(nodes) as client:
        lk = client.lock("orders:42", ttl=10.0)
        await lk.acquire_async()
        held = await lk.locked_async()
        await lk.release_async()
        return held
