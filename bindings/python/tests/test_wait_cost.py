"""A wait budget costs nothing until a wait happens: uncontended
acquire+release pairs with the default wait send the node exactly the commands the same
pairs with ``wait=0`` send — no SUBSCRIBE, no extra PING — counted by the server itself
(``INFO commandstats``), sync (main thread and another thread) and asyncio, both backends."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, Dict

import pytest

import liblock
from conftest import BACKEND, Cluster, eventually_async, eventually

PAIRS = 50
WAIT_0 = {"wait": 0}
DEFAULT: Dict[str, Any] = {}  # no wait argument: liblock.DEFAULT_WAIT


def _stats(c: Cluster) -> Dict[str, int]:
    """Calls per command on the node since the last CONFIG RESETSTAT, without the test's own."""
    text = c.do(0, "INFO", "commandstats")
    calls: Dict[str, int] = {}
    for line in text.splitlines():
        if line.startswith("cmdstat_"):
            name, _, fields = line[len("cmdstat_"):].partition(":")
            calls[name] = int(dict(f.split("=") for f in fields.split(","))["calls"])
    for own in ("info", "config|resetstat"):
        calls.pop(own, None)
    return calls


def _released_all(c: Cluster) -> bool:
    s = _stats(c)
    return s.get("evalsha", 0) + s.get("eval", 0) >= PAIRS


def _sync_run(c: Cluster, client: Any, kw: Dict[str, Any], in_thread: bool) -> Dict[str, int]:
    def pairs() -> None:
        for _ in range(PAIRS):
            client.acquire("cost", ttl=10, **kw).release()

    c.do(0, "CONFIG", "RESETSTAT")
    if in_thread:  # off the main thread the wait goes to the library as it is
        t = threading.Thread(target=pairs)
        t.start()
        t.join(60)
        assert not t.is_alive()
    else:
        pairs()
    eventually(lambda: _released_all(c), what="every release counted")
    return _stats(c)


def _check(single: Dict[str, int], waiting: Dict[str, int]) -> None:
    assert waiting == single, f"{PAIRS} pairs with the default wait ran {waiting}; with wait=0 {single}"
    assert single.get("set") == PAIRS, single
    assert "subscribe" not in waiting and "ping" not in waiting, waiting


@pytest.mark.parametrize("where", ["main thread", "another thread"])
def test_default_wait_sends_what_wait_0_sends_sync(c1: Cluster, where: str) -> None:
    # a roomy node timeout: one timed out on a loaded machine would fail a pair
    with liblock.Client(c1.urls, node_timeout=2.0, backend=BACKEND) as client:
        run: Callable[[Dict[str, Any]], Dict[str, int]] = (
            lambda kw: _sync_run(c1, client, kw, where == "another thread"))
        run(WAIT_0)  # connects and loads the release script
        single = run(WAIT_0)
        waiting = run(DEFAULT)
    _check(single, waiting)


def test_default_wait_sends_what_wait_0_sends_asyncio(c1: Cluster) -> None:
    async def main() -> None:
        # a roomy node timeout: one timed out on a loaded machine would fail a pair
        with liblock.Client(c1.urls, node_timeout=2.0, backend=BACKEND) as client:
            async def run(kw: Dict[str, Any]) -> Dict[str, int]:
                c1.do(0, "CONFIG", "RESETSTAT")
                for _ in range(PAIRS):
                    lock = await client.acquire_async("acost", ttl=10, **kw)
                    await lock.release_async()
                await eventually_async(lambda: _released_all(c1), what="every release counted")
                return _stats(c1)

            await run(WAIT_0)  # connects and loads the release script
            single = await run(WAIT_0)
            waiting = await run(DEFAULT)
        _check(single, waiting)

    asyncio.run(main())
