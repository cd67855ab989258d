"""Loss, Python's way: on_lost, lock.lost, LockLost from a with block. (Auto-extension outliving
the ttl and expiry without it are the shared suite's: make test-interop.)"""

from __future__ import annotations

import io
import sys
import threading

import pytest

import liblock
from conftest import Cluster, eventually


def test_loss_by_overwrite_calls_on_lost(c3: Cluster, client3) -> None:
    got = []
    fired = threading.Event()

    def on_lost(lock: liblock.Lock) -> None:
        got.append(lock)
        fired.set()

    lock = client3.acquire("ow", ttl=1.5, auto_extend=True, on_lost=on_lost)
    for i in range(2):  # a majority
        c3.do(i, "SET", "ow", "thief")
    assert fired.wait(20), "on_lost was not called"
    assert got == [lock] and lock.lost
    with pytest.raises(liblock.LockLost):
        lock.release()
    assert [c3.do(i, "GET", "ow") for i in range(2)] == ["thief"] * 2


def test_loss_by_killing_majority(c3: Cluster, client3) -> None:
    fired = threading.Event()
    with pytest.raises(liblock.LockLost):
        with client3.lock("kill", ttl=1.5, auto_extend=True, on_lost=lambda l: fired.set()) as lock:
            c3.kill(0)
            c3.kill(1)
            assert fired.wait(20), "on_lost was not called"
            assert lock.lost


def test_on_lost_without_callback_and_replacement(c1: Cluster, client1) -> None:
    first, second = threading.Event(), threading.Event()
    lock = client1.acquire("repl", ttl=1.5, auto_extend=True)
    lock.on_lost(lambda l: first.set())
    lock.on_lost(lambda l: second.set())  # replaces the first
    c1.do(0, "SET", "repl", "thief")
    assert second.wait(20)
    assert not first.is_set()
    eventually(lambda: lock.lost, what="lost flag")


def test_on_lost_registered_after_loss_still_fires(c1: Cluster, client1) -> None:
    lock = client1.acquire("late", ttl=1.5)
    eventually(lambda: lock.validity == 0.0, what="expiry")
    fired = threading.Event()
    lock.on_lost(lambda l: fired.set())
    assert fired.wait(20)
    assert lock.lost


def test_on_lost_not_called_after_release(c1: Cluster, client1) -> None:
    fired = threading.Event()
    lock = client1.acquire("rel", ttl=1.5, auto_extend=True, on_lost=lambda l: fired.set())
    lock.release()
    # A control lock of the same client taken after it, whose key is stolen with the
    # released one's: its loss, at its first extension (ttl/3 after it was taken), shows
    # that the engine has run the round that would have found the released lock stolen.
    control = threading.Event()
    other = client1.acquire("rel-control", ttl=1.5, auto_extend=True, on_lost=lambda l: control.set())
    c1.do(0, "SET", "rel", "thief")
    c1.do(0, "SET", "rel-control", "thief")
    assert control.wait(20) and other.lost
    assert not fired.is_set()


def test_on_lost_exception_does_not_crash(c1: Cluster, client1, monkeypatch) -> None:
    fired = threading.Event()
    # The library prints a callback's traceback to sys.stderr (looked up at
    # print time). A stream of our own, read without consuming: capfd's
    # readouterr() truncates its file, and a line the library thread writes
    # between the read and the truncation is lost.
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)

    def bad(lock: liblock.Lock) -> None:
        fired.set()
        raise RuntimeError("callback bug")

    lock = client1.acquire("bad-cb", ttl=1.5, auto_extend=True, on_lost=bad)
    c1.do(0, "SET", "bad-cb", "thief")
    assert fired.wait(20)

    def printed() -> bool:
        return "RuntimeError: callback bug" in err.getvalue()

    eventually(printed, what="traceback printed")
    assert lock.lost
