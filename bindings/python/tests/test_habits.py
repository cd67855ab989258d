"""What users of other lock libraries reach for: ``lock.info()`` in
seconds; ``client.lock(...)`` with ``acquire()``/``release()``/``locked()``/``owned()`` as
redis-py's ``Lock`` has them; unknown keyword arguments (``blocking=``, ``timeout=``)
named with liblock's equivalent; ``dir(liblock)`` without module internals; Ctrl-C in a
waiting acquire surfacing as a plain KeyboardInterrupt. Sync and asyncio, both backends."""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

import liblock
from conftest import BACKEND, Cluster, no_keys, no_keys_left, eventually

BINDING = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------ info() in seconds

def test_info_speaks_seconds(client1) -> None:
    lock = client1.acquire("info-s", ttl=30)
    info = lock.info()
    assert info["ttl"] == 30.0
    assert 25.0 < info["validity"] <= 30.0
    assert info["ttl_ms"] == 30_000  # kept, deprecated: the C ABI's name

    async def main() -> None:
        alock = await client1.acquire_async("info-s-async", ttl=20)
        ainfo = alock.info()
        assert ainfo["ttl"] == 20.0 and 15.0 < ainfo["validity"] <= 20.0
        await alock.release_async()

    asyncio.run(main())
    lock.release()


# ------------------------------------------------------------ acquire / release / locked / owned

def test_lock_object_acquire_release_locked_owned(c3: Cluster, client3) -> None:
    lk = client3.lock("habit", ttl=30)
    other = client3.lock("habit", ttl=30, wait=0)
    assert lk.locked() is False and lk.owned() is False and lk.lock is None
    got = lk.acquire()
    assert got is lk.lock and bool(got)  # `if lk.acquire():` reads as with redis-py
    assert not got.released
    eventually(lambda: c3.all_keys() == ["habit"] * 3, what="the key on every node")
    assert lk.locked() is True and lk.owned() is True
    assert other.locked() is True and other.owned() is False  # held by someone else
    with pytest.raises(liblock.NotAcquired):  # where redis-py's acquire() returns False
        other.acquire()
    with pytest.raises(liblock.LockError, match="held by this object already"):
        lk.acquire()  # not reentrant: a second acquire would wait for itself
    lk.release()
    assert lk.owned() is False and lk.lock is None and got.released
    no_keys(c3)
    assert lk.locked() is False
    with pytest.raises(liblock.LockLost):  # as redis-py's release of an unlocked lock
        lk.release()
    # acquire again with the same object, then leave a `with` on it
    with lk as again:
        assert lk.owned() and again is lk.lock
    assert lk.owned() is False
    no_keys(c3)


def test_lock_object_async_forms(c3: Cluster, client3) -> None:
    async def main() -> None:
        lk = client3.lock("ahabit", ttl=30)
        assert await lk.locked_async() is False and not lk.owned()
        got = await lk.acquire_async()
        assert got is lk.lock and lk.owned()
        assert await lk.locked_async() is True
        await lk.release_async()
        assert not lk.owned() and got.released
        await no_keys_left(c3)
        with pytest.raises(liblock.LockLost):
            await lk.release_async()

    asyncio.run(main())


def test_owned_is_false_once_the_lock_is_lost(c1: Cluster, client1) -> None:
    lk = client1.lock("owned-lost", ttl=30)
    lk.acquire()
    c1.do(0, "SET", "owned-lost", "someone-else")  # the key taken from under it
    with pytest.raises(liblock.LockLost):
        lk.lock.extend(30)  # type: ignore[union-attr]
    assert lk.owned() is False and lk.locked() is True  # held: by the other value
    with pytest.raises(liblock.LockLost):
        lk.release()
    assert c1.do(0, "GET", "owned-lost") == "someone-else"


# ------------------------------------------------------------ unknown keyword arguments

def _type_error(fn: Callable[[], Any]) -> str:
    with pytest.raises(liblock.ArgumentTypeError) as e:
        fn()
    assert isinstance(e.value, TypeError) and isinstance(e.value, liblock.LockError)
    return str(e.value)


@pytest.mark.parametrize("kw", ["blocking", "timeout", "blocking_timeout"])
def test_other_libraries_keywords_say_what_liblock_calls_them(client1, kw: str) -> None:
    value = {"blocking": False, "timeout": 5, "blocking_timeout": 5}[kw]
    calls = {
        "acquire": lambda: client1.acquire("r", ttl=5, **{kw: value}),
        "lock": lambda: client1.lock("r", ttl=5, **{kw: value}),
        "acquire_async": lambda: client1.acquire_async("r", ttl=5, **{kw: value}),
        "lock().acquire": lambda: client1.lock("r", ttl=5).acquire(**{kw: value}),
    }
    for where, call in calls.items():
        msg = _type_error(call)
        assert f"unexpected keyword argument '{kw}'" in msg, (where, msg)
        assert "wait=" in msg, (where, msg)  # liblock's equivalent
        if where != "lock().acquire":
            assert "it takes resource, ttl, wait, auto_extend" in msg, (where, msg)
        else:
            assert "client.lock(" in msg, msg


def test_unknown_keyword_of_client_lists_the_known_ones() -> None:
    msg = _type_error(lambda: liblock.Client(["redis://127.0.0.1:1"], socket_timeout=0.05))
    assert "'socket_timeout'" in msg and "node_timeout" in msg and "key_prefix" in msg, msg
    msg = _type_error(lambda: liblock.Client(["redis://127.0.0.1:1"], bogus=1))
    assert "'bogus'" in msg and "it takes nodes, node_timeout, drift_factor" in msg, msg


def test_wrapped_methods_keep_their_signatures() -> None:
    for fn in (liblock.Client.acquire, liblock.Client.acquire_async, liblock.Client.lock):
        assert "wait" in inspect.signature(fn).parameters
    assert inspect.iscoroutinefunction(liblock.Client.acquire_async.__wrapped__)  # type: ignore[attr-defined]


# ------------------------------------------------------------ dir(liblock)

def test_dir_shows_no_module_internals() -> None:
    public = {n for n in dir(liblock) if not n.startswith("_")}
    assert public <= set(liblock.__all__), public - set(liblock.__all__)
    for name in ("annotations", "sys", "TYPE_CHECKING"):
        assert not hasattr(liblock, name), name
    for name in liblock.__all__:
        assert getattr(liblock, name) is not None, name


# ------------------------------------------------------------ Ctrl-C

def test_ctrl_c_in_a_waiting_acquire_is_a_plain_keyboard_interrupt(c3: Cluster, client3) -> None:
    """The interrupted wait's traceback is KeyboardInterrupt alone: not raised "during
    handling" of the first attempt's NotAcquired (the native sync acquire makes one plain
    attempt before its interruptible wait)."""
    held = client3.acquire("ctrl-c", ttl=30)
    code = (f"import liblock\nclient = liblock.Client({c3.urls!r}, node_timeout=0.5, "
            f"backend={BACKEND!r})\nclient.acquire('ctrl-c', ttl=5, wait=60)\n")
    env = dict(os.environ, PYTHONPATH=str(BINDING))
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        # the waiter listens for the release on every node once it waits
        eventually(lambda: all(c3.do(i, "PUBSUB", "NUMSUB", "liblock:released:ctrl-c")[1] == 1
                               for i in range(3)), what="the child waiting")
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert "KeyboardInterrupt" in err, err
    assert "During handling" not in err and "NotAcquired" not in err, err
    assert [c3.do(i, "GET", "ctrl-c") for i in range(3)] == [held.token] * 3
    held.release()
    no_keys(c3)
