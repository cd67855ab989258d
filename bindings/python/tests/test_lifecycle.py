"""Finalizers free handles of dropped locks and clients (releasing held locks);
library lookup, lazy loading and the ABI check."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

import liblock
import liblock._host  # pending_count (imported on first use otherwise: a test alone must not depend on others)
from conftest import BACKEND, Cluster, no_keys, eventually

BINDING = Path(__file__).resolve().parents[1]
ROOT = BINDING.parents[1]


def test_dropped_lock_is_released(c3: Cluster, client3) -> None:
    base = liblock.live_handles()
    lock = client3.acquire("dropped", ttl=30)
    assert liblock.live_handles() == base + 1
    eventually(lambda: c3.all_keys() == ["dropped"] * 3, what="the key on every node")
    del lock
    gc.collect()
    assert liblock.live_handles() == base
    eventually(lambda: c3.all_keys() == [], what="the finalizer to release the lock")


def test_dropped_client_releases_its_locks(c3: Cluster) -> None:
    base = liblock.live_handles()
    client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
    locks = [client.acquire(f"c{i}", ttl=30, auto_extend=(i % 2 == 0)) for i in range(4)]
    assert liblock.live_handles() == base + 5
    eventually(lambda: len(c3.all_keys()) == 12, what="the keys on every node")
    del client, locks
    gc.collect()
    assert liblock.live_handles() == base
    eventually(lambda: c3.all_keys() == [], what="finalizers to release the locks")


def test_lock_keeps_its_client_alive(c1: Cluster) -> None:
    lock = liblock.Client(c1.urls, node_timeout=0.5, backend=BACKEND).acquire("orphan", ttl=30)
    gc.collect()
    lock.extend(30)  # the client was not finalized under the lock
    lock.release()
    assert c1.all_keys() == []


def test_released_lock_handle_freed(client1) -> None:
    base = liblock.live_handles()
    for _ in range(20):
        client1.acquire("loop", ttl=5).release()
    assert liblock.live_handles() == base


def test_many_dropped_async_locks(c1: Cluster, client1) -> None:
    import asyncio

    async def main() -> None:
        for i in range(50):
            await client1.acquire_async(f"a{i}", ttl=30)  # dropped at once

    gc.collect()
    base, pending = liblock.live_handles(), liblock._host.pending_count()
    asyncio.run(main())
    gc.collect()
    assert liblock.live_handles() == base
    eventually(lambda: c1.all_keys() == [], what="dropped async locks released")
    assert liblock._host.pending_count() == pending


def test_dropped_auto_extend_lock_unregisters_on_lost(c1: Cluster, client1) -> None:
    gc.collect()
    pending = liblock._host.pending_count()
    lock = client1.acquire("ae", ttl=5, auto_extend=True, on_lost=lambda l: None)
    assert liblock._host.pending_count() == pending + 1
    del lock
    gc.collect()
    assert liblock._host.pending_count() == pending
    eventually(lambda: c1.all_keys() == [], what="released")


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    e = dict(os.environ, PYTHONPATH=str(BINDING))
    e.pop("LIBLOCK_PATH", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, timeout=60, capture_output=True, text=True)


@pytest.mark.native_only
def test_lazy_loading_and_default_lookup() -> None:
    p = _run("import liblock, liblock._native as L; assert L._dll is None; "
             "print(liblock.abi_version(), liblock.library_path())")
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["1", str(ROOT / "build" / "liblock.so")]


@pytest.mark.native_only
def test_liblock_path_missing_file() -> None:
    p = _run("import liblock\ntry:\n liblock.Client(['redis://127.0.0.1:1'], backend='native')\n"
             "except liblock.LibraryError as e: print('ERR', e)", LIBLOCK_PATH="/nonexistent/liblock.so")
    assert p.returncode == 0, p.stderr
    assert "ERR" in p.stdout and "/nonexistent/liblock.so" in p.stdout


@pytest.mark.native_only
def test_liblock_path_used(tmp_path) -> None:
    copy = tmp_path / "copy-liblock.so"
    copy.write_bytes((ROOT / "build" / "liblock.so").read_bytes())
    p = _run("import liblock; print(liblock.abi_version(), liblock.library_path())", LIBLOCK_PATH=str(copy))
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["1", str(copy)]


@pytest.mark.native_only
def test_abi_mismatch_fails_clearly(tmp_path) -> None:
    import shutil
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.fail("a C compiler is needed for this test: apt-get install -y gcc")
    src = tmp_path / "fake.c"
    src.write_text("int lock_abi_version(void) { return 99; }\n")
    so = tmp_path / "liblock.so"
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    p = _run("import liblock\ntry:\n liblock.abi_version()\n"
             "except liblock.LibraryError as e: print('ERR', e)", LIBLOCK_PATH=str(so))
    assert p.returncode == 0, p.stderr
    assert "ERR" in p.stdout and "version 99" in p.stdout and "needs version 1" in p.stdout


@pytest.mark.native_only
def test_not_liblock_fails_clearly(tmp_path) -> None:
    bogus = tmp_path / "liblock.so"
    bogus.write_text("not a library")
    p = _run("import liblock\ntry:\n liblock.abi_version()\n"
             "except liblock.LibraryError as e: print('ERR', e)", LIBLOCK_PATH=str(bogus))
    assert "ERR cannot load" in p.stdout, p.stdout + p.stderr


def test_interpreter_exit_releases_held_locks(c3: Cluster) -> None:
    code = f"""
import liblock
client = liblock.Client({c3.urls!r}, node_timeout=0.5, backend={BACKEND!r})
lock = client.acquire("exit-held", ttl=30)
auto = client.acquire("exit-auto", ttl=30, auto_extend=True)
print(lock.token)
"""
    p = _run(code)
    assert p.returncode == 0, p.stderr
    no_keys(c3)
