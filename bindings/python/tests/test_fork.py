"""Fork safety: a child forked after liblock.so was loaded gets ForkedProcessError
on first use, never a hang. Spawn/forkserver work (see test_concurrency)."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest

import liblock
from conftest import BACKEND, Cluster, eventually

BINDING = str(Path(__file__).resolve().parents[1])


def _in_fork(fn) -> str:
    """Run fn() in a forked child; return what it wrote; kill it if it hangs."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        os.close(r)
        try:
            out = fn()
        except BaseException as e:  # noqa: BLE001
            out = f"{type(e).__name__}: {e}"
        os.write(w, out.encode())
        os._exit(0)
    os.close(w)
    try:
        eventually(lambda: os.waitpid(pid, os.WNOHANG)[0], timeout=20, what="the forked child to exit")
    except BaseException:  # it hung: kill it
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        raise
    with os.fdopen(r) as f:
        return f.read()


@pytest.mark.native_only  # wasm: test_wasm.test_forked_child_cannot_use_the_parents_client
def test_forked_child_gets_clear_error(c3: Cluster, client3) -> None:
    lock = client3.acquire("fork", ttl=10)
    out = _in_fork(lambda: repr(client3.acquire("fork2", ttl=2)))
    assert out.startswith("ForkedProcessError:") and "spawn" in out
    assert 'backend="wasm"' in out, out  # the way that works in a forked child
    out = _in_fork(lambda: repr(liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)))
    assert out.startswith("ForkedProcessError:")
    assert 'backend="wasm"' in out, out
    out = _in_fork(lambda: repr(lock.release()))
    assert out.startswith("ForkedProcessError:")
    out = _in_fork(lambda: str(isinstance(liblock.ForkedProcessError("x"), liblock.LockError)))
    assert out == "True"
    # the parent is unaffected, and the child's exit did not release the parent's lock
    eventually(lambda: c3.all_keys() == ["fork"] * 3, what="the key on every node")
    lock.release()


def test_fork_child_drops_objects_without_hanging(c1: Cluster) -> None:
    client = liblock.Client(c1.urls, node_timeout=0.5, backend=BACKEND)
    lock = client.acquire("drop", ttl=10)

    def child() -> str:
        import gc
        nonlocal client, lock
        del lock, client
        gc.collect()  # finalizers must not call into the library here
        return "ok"

    assert _in_fork(child) == "ok"
    assert c1.all_keys() == ["drop"]
    lock.release()
    client.close()


def test_multiprocessing_fork_context_errors(c1: Cluster, client1) -> None:
    client1.acquire("mp", ttl=2).release()
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()

    def child(q) -> None:  # noqa: ANN001
        try:
            client1.acquire("mp", ttl=2)
            q.put("no error")
        except liblock.ForkedProcessError as e:
            q.put("ForkedProcessError: " + str(e))

    p = ctx.Process(target=child, args=(q,))
    p.start()
    msg = q.get(timeout=20)
    p.join(20)
    assert msg.startswith("ForkedProcessError")
    assert p.exitcode == 0


def test_fork_before_load_is_fine(c1: Cluster) -> None:
    """Lazy loading: importing liblock loads nothing, so forking first is fine."""
    code = f"""
import os, sys
import liblock, liblock._native as L
assert L._dll is None, "loaded at import"
pid = os.fork()
if pid == 0:
    c = liblock.Client({c1.urls!r}, node_timeout=0.5, backend={BACKEND!r})
    c.acquire("before-load", ttl=5).release()
    c.close()
    os._exit(0)
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
"""
    env = dict(os.environ, PYTHONPATH=BINDING)
    p = subprocess.run([sys.executable, "-c", code], env=env, timeout=60, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
