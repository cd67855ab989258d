"""Units, defaults and the names in error messages.

Every duration is seconds (int, float or datetime.timedelta); a value that is almost
certainly milliseconds written as seconds is refused with a message naming the unit;
every message names the caller's parameter (ttl, wait, node_timeout, ...), never the
C ABI's (ttl_ms, wait_ms, node_timeout_ms); acquire() waits 10 s by default, wait=0 is
one attempt, wait=None until acquired; `import liblock` imports neither asyncio nor
typing, json, ctypes or a backend."""

from __future__ import annotations

import datetime
import inspect
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict

import pytest

import liblock
from conftest import BACKEND, Cluster, eventually

URL = "redis://127.0.0.1:1"
BINDING = Path(__file__).resolve().parents[1]
C_NAMES = ("ttl_ms", "wait_ms", "node_timeout_ms", "options", "config")


def _message(fn: Callable[[], Any]) -> str:
    with pytest.raises(liblock.LockError) as e:
        fn()
    assert isinstance(e.value, (ValueError, TypeError)), repr(e.value)
    return str(e.value)


def _names_only(msg: str, param: str) -> None:
    assert param in msg, msg
    for c_name in C_NAMES:
        assert c_name not in msg, msg


# ------------------------------------------------------------ Client(...)

CLIENT_BAD: Dict[str, Any] = {
    "node_timeout=0": (dict(node_timeout=0), "node_timeout"),
    "node_timeout=-1": (dict(node_timeout=-1), "node_timeout"),
    "node_timeout=nan": (dict(node_timeout=math.nan), "node_timeout"),
    "node_timeout=61 s (timedelta)": (dict(node_timeout=datetime.timedelta(seconds=61)), "node_timeout"),
    "node_timeout=0.0001": (dict(node_timeout=0.0001), "node_timeout"),
    "node_timeout='1'": (dict(node_timeout="1"), "node_timeout"),
    "drift_factor=0.5": (dict(drift_factor=0.5), "drift_factor"),
    "drift_factor=-1": (dict(drift_factor=-1), "drift_factor"),
    "drift_factor=nan": (dict(drift_factor=math.nan), "drift_factor"),
    "key_prefix 257 bytes": (dict(key_prefix="k" * 257), "key_prefix"),
    "key_prefix NUL": (dict(key_prefix="a\x00"), "key_prefix"),
    "backend=x": (dict(backend="x"), "backend"),
}


@pytest.mark.parametrize("case", sorted(CLIENT_BAD))
def test_client_errors_name_the_parameter(case: str) -> None:
    kw, param = CLIENT_BAD[case]
    kw = dict(kw)
    kw.setdefault("backend", BACKEND)
    _names_only(_message(lambda: liblock.Client([URL], **kw)), param)


@pytest.mark.parametrize("nodes", [[], [URL] * 65])
def test_node_count_names_nodes(nodes: Any) -> None:
    _names_only(_message(lambda: liblock.Client(nodes, backend=BACKEND)), "nodes")


@pytest.mark.parametrize("value", [10, 50, 100, 500, 5000, 10.0, 59])
def test_node_timeout_in_milliseconds_is_refused_naming_the_unit(value: Any) -> None:
    msg = _message(lambda: liblock.Client([URL], node_timeout=value, backend=BACKEND))
    _names_only(msg, "node_timeout")
    assert "seconds" in msg and "milliseconds" in msg and "timedelta" in msg, msg
    assert f"node_timeout={value / 1000!r}" in msg, msg  # what they probably meant


def test_long_node_timeout_as_timedelta_is_taken_at_its_word() -> None:
    for td in (datetime.timedelta(seconds=10), datetime.timedelta(seconds=60)):
        with liblock.Client([URL], node_timeout=td, backend=BACKEND) as client:
            assert client.node_timeout == td.total_seconds()
    with liblock.Client([URL], node_timeout=0.001, backend=BACKEND) as client:
        assert client.node_timeout == 0.001
    with liblock.Client([URL], backend=BACKEND) as client:
        assert client.node_timeout == 0.05  # the default


# ------------------------------------------------------------ acquire / lock / extend

ACQUIRE_BAD: Dict[str, Any] = {
    "ttl=0": (dict(ttl=0), "ttl"),
    "ttl=-1": (dict(ttl=-1), "ttl"),
    "ttl=0.0001": (dict(ttl=0.0001), "ttl"),
    "ttl=inf": (dict(ttl=math.inf), "ttl"),
    "ttl=1 day + 1 s": (dict(ttl=24 * 3600 + 1), "ttl"),
    "ttl=None": (dict(ttl=None), "ttl"),
    "wait=-1": (dict(wait=-1), "wait"),
    "wait=nan": (dict(wait=math.nan), "wait"),
    "wait=1 day + 1 s": (dict(wait=datetime.timedelta(days=1, seconds=1)), "wait"),
    "wait='1'": (dict(wait="1"), "wait"),
    "resource=''": (dict(resource=""), "resource"),
    "resource 1025 bytes": (dict(resource="r" * 1025), "resource"),
    "resource bytes": (dict(resource=b"r"), "resource"),
    "auto_extend=1": (dict(auto_extend=1), "auto_extend"),
    "on_lost=1": (dict(on_lost=1), "on_lost"),
}


def _acquire_kw(over: Dict[str, Any]) -> Dict[str, Any]:
    kw: Dict[str, Any] = dict(resource="r", ttl=5.0)
    kw.update(over)
    return kw


@pytest.mark.parametrize("case", sorted(ACQUIRE_BAD))
def test_acquire_errors_name_the_parameter(client1, case: str) -> None:
    over, param = ACQUIRE_BAD[case]
    kw = _acquire_kw(over)
    _names_only(_message(lambda: client1.acquire(**kw)), param)
    _names_only(_message(lambda: client1.lock(**kw)), param)

    async def via_async() -> None:
        await client1.acquire_async(**kw)

    import asyncio
    _names_only(_message(lambda: asyncio.run(via_async())), param)


def test_ttl_too_short_for_the_round_trip_names_the_ttl_and_the_node_timeout(c1: Cluster) -> None:
    """No ttl is refused for its length next to node_timeout: the engine decides by the grant's
    validity (ttl − elapsed − drift), and a grant left with none fails naming both."""
    with liblock.Client(c1.urls, backend=BACKEND) as client:  # the default node_timeout, 0.05 s
        # 2 ms less its clock-drift allowance (2 ms and 1 %) leaves no validity, however fast
        # the node answers.
        for kw in ({}, {"fence": True}, {"permits": 2}):
            with pytest.raises(liblock.Unavailable) as e:
                client.acquire("r", ttl=0.002, wait=0, **kw)
            msg = str(e.value)
            assert "too slowly for the ttl: " in msg, msg
            assert "a 2ms ttl" in msg and "node timeout (50ms): give a longer ttl" in msg, msg

            async def via_async() -> None:
                await client.acquire_async("r", ttl=0.002, wait=0, **kw)

            import asyncio
            with pytest.raises(liblock.Unavailable, match="too slowly for the ttl"):
                asyncio.run(via_async())
        client.acquire("r", ttl=0.06, wait=0).release()  # short, but the round fits in it
    assert c1.all_keys() == []


def test_timedelta_is_seconds(c1: Cluster, client1) -> None:
    lock = client1.acquire("td", ttl=datetime.timedelta(seconds=20), wait=datetime.timedelta(0))
    assert 10_000 < c1.do(0, "PTTL", "td") <= 20_000
    lock.extend(datetime.timedelta(minutes=1))
    assert 30_000 < c1.do(0, "PTTL", "td") <= 60_000
    lock.release()


# ------------------------------------------------------------ the default wait

def test_default_wait_is_documented_and_the_same_everywhere() -> None:
    assert liblock.DEFAULT_WAIT == 10.0
    for fn in (liblock.Client.acquire, liblock.Client.acquire_async, liblock.Client.lock):
        assert inspect.signature(fn).parameters["wait"].default == liblock.DEFAULT_WAIT, fn


def test_default_wait_outlasts_a_holder_that_expires(c1: Cluster, client1) -> None:
    """A holder that never releases (ttl 1.5 s): wait=0 fails at once, the default wait
    gets the lock once the holder's key expired."""
    held = client1.acquire("expiring", ttl=1.5, wait=0)
    with pytest.raises(liblock.NotAcquired):
        client1.acquire("expiring", ttl=5, wait=0)
    lock = client1.acquire("expiring", ttl=5)
    assert lock.token != held.token and c1.do(0, "GET", "expiring") == lock.token
    lock.release()


def test_wait_none_waits_until_acquired(c1: Cluster, client1) -> None:
    held = client1.acquire("forever", ttl=1.5, wait=0)
    lock = client1.acquire("forever", ttl=5, wait=None)
    assert lock.token != held.token
    lock.release()


# ------------------------------------------------------------ release twice

def test_release_twice_is_lost_in_every_form(c1: Cluster, client1) -> None:
    import asyncio

    lock = client1.acquire("twice", ttl=10)
    lock.release()
    for again in (lock.release, lambda: lock.extend(5)):
        with pytest.raises(liblock.LockLost) as e:
            again()
        assert e.value.status == 2

    async def main() -> None:
        alock = await client1.acquire_async("twice-async", ttl=10)
        await alock.release_async()
        with pytest.raises(liblock.LockLost):
            await alock.release_async()
        with pytest.raises(liblock.LockLost):
            alock.release()

    asyncio.run(main())
    assert c1.all_keys() == []


# ------------------------------------------------------------ import cost

def _fresh(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "LIBLOCK_BACKEND"}
    env["PYTHONPATH"] = str(BINDING)
    # -S: no site-packages .pth hooks, which import typing themselves on some systems
    p = subprocess.run([sys.executable, "-S", "-c", code], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


def test_import_loads_nothing_heavy() -> None:
    out = _fresh("import sys, liblock\n"
                 "print(sorted(m for m in ('asyncio', 'typing', 'json', 'ctypes', 'pathlib', 'datetime',"
                 " 'liblock._native', 'liblock._wasm', 'liblock._host', 'liblock._driver')"
                 " if m in sys.modules))")
    assert out.strip() == "[]", out


@pytest.mark.native_only
def test_making_a_client_imports_the_host_so_the_first_call_does_not(c1: Cluster) -> None:
    """A client's engine is made at once (a bad config fails in Client()), and the host's
    modules (asyncio among them) are imported there too: the first call then has nothing
    to import (20-300 ms) while its node deadlines run. Its driver thread starts with the
    first synchronous call."""
    out = _fresh(f"import sys, liblock\n"
                 f"c = liblock.Client([{c1.urls[0]!r}], node_timeout=0.5)\n"
                 f"print('asyncio' in sys.modules, 'liblock._host' in sys.modules)\n"
                 f"before = set(sys.modules)\n"
                 f"with c.lock('sync-only', ttl=5):\n"
                 f"    pass\n"
                 f"c.close()\n"
                 f"print(sorted(m for m in set(sys.modules) - before if m.startswith(('asyncio', 'liblock'))))")
    assert out.split("\n")[0].split() == ["True", "True"], out
    assert out.split("\n")[1] == "[]", out
    assert c1.all_keys() == []
