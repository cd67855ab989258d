"""After ``client.close()``: one error, ``ClientClosed``, for every call on the client or
its locks, in every mode (sync, asyncio) and on both backends; the locks close()
released say so (``released``, not ``lost``); and an interpreter that exits without
close() releases what is held, quietly."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, List

import pytest

import liblock
from conftest import BACKEND, Cluster, no_keys, no_keys_left, eventually

BINDING = Path(__file__).resolve().parents[1]
PREFIX = "liblock: the client is closed"


def _closed(fn: Callable[[], Any]) -> str:
    with pytest.raises(liblock.ClientClosed) as e:
        fn()
    assert str(e.value).startswith(PREFIX), str(e.value)
    return str(e.value)


async def _aclosed(fn: Callable[[], Awaitable[Any]]) -> str:
    with pytest.raises(liblock.ClientClosed) as e:
        await fn()
    assert str(e.value).startswith(PREFIX), str(e.value)
    return str(e.value)


def test_client_closed_is_exported_and_in_the_hierarchy() -> None:
    assert "ClientClosed" in liblock.__all__
    assert issubclass(liblock.ClientClosed, liblock.LockError)
    # what a closed client raised before: `except InvalidHandle` keeps working
    assert issubclass(liblock.ClientClosed, liblock.InvalidHandle)


def test_every_sync_call_after_close_raises_client_closed(c3: Cluster) -> None:
    client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
    lock = client.acquire("closing", ttl=30)
    auto = client.acquire("closing-auto", ttl=30, auto_extend=True)
    done = client.acquire("closing-done", ttl=30)
    done.release()
    eventually(lambda: len(c3.all_keys()) == 6, what="two keys on every node")
    client.close()
    no_keys(c3)  # close() released them
    for held in (lock, auto):
        assert held.released is True and held.lost is False, held
        assert held.validity == 0.0 and "released" in repr(held)
        msg = _closed(held.info)
        assert "lock.info()" in msg
        _closed(lambda: held.extend(30))
        _closed(held.release)
        _closed(lambda: held.on_lost(None))
    assert done.released is True and done.lost is False
    _closed(done.release)  # not "released already": the client is gone
    _closed(lambda: client.acquire("closing", ttl=30))
    _closed(lambda: client.acquire("closing", ttl=30, wait=0))
    _closed(lambda: client.lock("closing", ttl=30))
    _closed(lambda: client.inspect("closing"))
    client.close()  # idempotent, raises nothing


def test_every_async_call_after_close_raises_client_closed(c3: Cluster) -> None:
    async def main() -> None:
        client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
        lock = await client.acquire_async("aclosing", ttl=30)
        auto = await client.acquire_async("aclosing-auto", ttl=30, auto_extend=True)
        await no_keys_left_but(c3, 6)
        client.close()
        await no_keys_left(c3)
        for held in (lock, auto):
            assert held.released is True and held.lost is False, held
            _closed(held.info)
            await _aclosed(lambda: held.extend_async(30))
            await _aclosed(held.release_async)
            _closed(lambda: held.release())
        await _aclosed(lambda: client.acquire_async("aclosing", ttl=30))
        await _aclosed(lambda: client.inspect_async("aclosing"))

        async def enter() -> None:
            async with client.lock("aclosing", ttl=30):
                pass
        await _aclosed(enter)

    asyncio.run(main())


def test_context_manager_exits_quietly_after_close(c3: Cluster) -> None:
    client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
    with client.lock("cm-closing", ttl=30) as lock:
        client.close()
    assert lock.released and not lock.lost
    no_keys(c3)

    async def main() -> None:
        aclient = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
        async with aclient.lock("acm-closing", ttl=30) as alock:
            aclient.close()
        assert alock.released and not alock.lost
        await no_keys_left(c3)

    asyncio.run(main())


async def no_keys_left_but(c: Cluster, n: int) -> None:
    from conftest import eventually_async
    await eventually_async(lambda: len(c.all_keys()) == n, what=f"{n} keys")


def _run(code: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(BINDING))
    return subprocess.run([sys.executable, "-c", code], env=env, timeout=60, capture_output=True, text=True)


EXIT_CASES = {
    # the client dropped first: its finalizer and the lock's run at exit, in either order
    "sync, client dropped": """
lock = client.acquire("exit-quiet", ttl=30)
auto = client.acquire("exit-quiet-auto", ttl=30, auto_extend=True)
del client
""",
    "sync, both kept": """
lock = client.acquire("exit-quiet", ttl=30)
""",
    "asyncio on a loop never closed": """
import asyncio
loop = asyncio.new_event_loop()
lock = loop.run_until_complete(client.acquire_async("exit-quiet", ttl=30))
del client
""",
}


@pytest.mark.parametrize("case", sorted(EXIT_CASES))
def test_exit_without_close_releases_quietly(c3: Cluster, case: str) -> None:
    code = (f"import liblock\nclient = liblock.Client({c3.urls!r}, node_timeout=0.5, "
            f"backend={BACKEND!r})\n" + EXIT_CASES[case] + "print('held', flush=True)\n")
    p = _run(code)
    assert p.returncode == 0 and p.stdout == "held\n", p.stdout + p.stderr
    assert p.stderr == ""
    no_keys(c3)
