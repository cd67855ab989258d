"""What only the wasm backend has: module lookup and ABI check, its driver thread,
fork behaviour, and cleanup when a client closes with operations in flight."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Tuple

import pytest

import liblock
from conftest import Cluster, eventually, eventually_async

pytestmark = pytest.mark.wasm_only

BINDING = Path(__file__).resolve().parents[1]
ROOT = BINDING.parents[1]


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    e = dict(os.environ, PYTHONPATH=str(BINDING))
    e.pop("LIBLOCK_WASM_PATH", None)
    e.update(env)
    return subprocess.run([sys.executable, "-c", code], env=e, timeout=120, capture_output=True, text=True)


def _drivers() -> int:
    return sum(1 for t in threading.enumerate() if t.name == "liblock-wasm-driver")


def test_default_lookup_is_the_repository_build(client1) -> None:
    client1.acquire("lookup", ttl=2).release()
    assert liblock.wasm_path() == str(ROOT / "build" / "liblock.wasm")
    assert client1.backend == "wasm" and "wasm" in repr(client1)


def test_nothing_loaded_before_the_first_wasm_client() -> None:
    p = _run("import liblock, liblock._native as L; assert L._dll is None; print(liblock.wasm_path())")
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "None"


def test_wasm_path_env_used(tmp_path) -> None:
    copy = tmp_path / "copy.wasm"
    copy.write_bytes((ROOT / "build" / "liblock.wasm").read_bytes())
    p = _run("import liblock\nwith liblock.Client(['redis://127.0.0.1:1'], backend='wasm'): pass\n"
             "print(liblock.wasm_path())", LIBLOCK_WASM_PATH=str(copy))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == str(copy)


def test_wasm_path_env_missing_file() -> None:
    p = _run("import liblock\ntry:\n liblock.Client(['redis://127.0.0.1:1'], backend='wasm')\n"
             "except liblock.LibraryError as e: print('ERR', e)", LIBLOCK_WASM_PATH="/nonexistent/x.wasm")
    assert p.returncode == 0, p.stderr
    assert "ERR" in p.stdout and "/nonexistent/x.wasm" in p.stdout


def test_abi_mismatch_fails_clearly(tmp_path) -> None:
    import wasmtime
    fake = tmp_path / "liblock.wasm"
    fake.write_bytes(wasmtime.wat2wasm(
        '(module (memory (export "memory") 1) (func (export "_initialize"))'
        ' (func (export "lock_abi_version") (result i32) i32.const 99))'))
    p = _run("import liblock\ntry:\n liblock.Client(['redis://127.0.0.1:1'], backend='wasm')\n"
             "except liblock.LibraryError as e: print('ERR', e)", LIBLOCK_WASM_PATH=str(fake))
    assert p.returncode == 0, p.stderr
    assert "ERR" in p.stdout and "version 99" in p.stdout and "needs version 1" in p.stdout


def test_not_a_module_fails_clearly(tmp_path) -> None:
    bogus = tmp_path / "liblock.wasm"
    bogus.write_text("not wasm")
    p = _run("import liblock\ntry:\n liblock.Client(['redis://127.0.0.1:1'], backend='wasm')\n"
             "except liblock.LibraryError as e: print('ERR', e)", LIBLOCK_WASM_PATH=str(bogus))
    assert p.returncode == 0, p.stderr
    assert "ERR" in p.stdout and "not a loadable WebAssembly module" in p.stdout


def test_backend_argument_checked() -> None:
    with pytest.raises(liblock.InvalidArgument):
        liblock.Client(["redis://127.0.0.1:1"], backend="jvm")
    with pytest.raises(liblock.ArgumentTypeError):
        liblock.Client(["redis://127.0.0.1:1"], backend=3)  # type: ignore[arg-type]  (None: the default)


def test_driver_thread_starts_on_need_and_stops_on_close(c1: Cluster) -> None:
    before = _drivers()
    client = liblock.Client(c1.urls, node_timeout=0.5, backend="wasm")
    assert _drivers() == before  # a client alone runs no thread
    lock = client.acquire("drv", ttl=5, auto_extend=True)
    assert _drivers() == before + 1
    client.close()
    assert _drivers() == before
    assert lock.released is True and c1.all_keys() == []  # close released it
    with pytest.raises(liblock.ClientClosed):
        lock.extend(1)


def test_dropped_client_stops_its_driver(c1: Cluster) -> None:
    import gc
    before = _drivers()
    client = liblock.Client(c1.urls, node_timeout=0.5, backend="wasm")
    client.acquire("drop-drv", ttl=30, auto_extend=True)  # dropped at once: released later
    del client
    gc.collect()
    eventually(lambda: _drivers() == before, what="the driver to stop")
    eventually(lambda: c1.all_keys() == [], what="the lock released")


def test_close_with_pending_async_and_sync_acquires_leaves_no_key(c3: Cluster) -> None:
    holder = liblock.Client(c3.urls, node_timeout=0.5, backend="wasm")
    held = holder.acquire("busy", ttl=30)
    client = liblock.Client(c3.urls, node_timeout=0.5, backend="wasm")
    sync_result = []

    def waiter() -> None:
        try:
            sync_result.append(client.acquire("busy", ttl=5, wait=30))
        except liblock.LockError as e:
            sync_result.append(e)

    t = threading.Thread(target=waiter)
    t.start()

    async def main() -> None:
        tasks = [asyncio.ensure_future(client.acquire_async("busy", ttl=5, wait=30)) for _ in range(20)]
        # every waiter waits: the sync call's engine and this loop's (one for its 20 tasks)
        await eventually_async(lambda: c3.waiting("busy", engines=2), what="the acquires wait")
        held.release()  # the waiters race for it as the client closes
        client.close()
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for r in results:
            assert isinstance(r, (liblock.Canceled, liblock.Lock)), r

    asyncio.run(main())
    t.join(20)
    assert not t.is_alive()
    assert len(sync_result) == 1
    holder.close()
    eventually(lambda: c3.all_keys() == [], what="no key left by a closed client")


def test_forked_child_cannot_use_the_parents_client(c1: Cluster, client1) -> None:
    from test_fork import _in_fork
    lock = client1.acquire("fork-wasm", ttl=10)
    out = _in_fork(lambda: repr(client1.acquire("fork2", ttl=2)))
    assert out.startswith("ForkedProcessError:") and "new liblock.Client" in out
    out = _in_fork(lambda: repr(lock.release()))
    assert out.startswith("ForkedProcessError:")

    def fresh_client() -> str:  # a wasm client made in the child is its own
        with liblock.Client(c1.urls, node_timeout=0.5, backend="wasm") as c:
            with c.lock("child", ttl=5):
                return "ok " + ",".join(c1.all_keys())

    assert _in_fork(fresh_client) == "ok child,fork-wasm"
    assert c1.all_keys() == ["fork-wasm"]  # the child's exit did not touch the parent's lock
    lock.release()


def _grown(engine_cfg: "Any", module_bytes: bytes) -> "Tuple[int, int]":
    """Instantiate liblock.wasm under ``engine_cfg``, then grow its memory by 4 x 64 MiB
    (lock_buffer): the memory's address before and after."""
    import ctypes

    import wasmtime as wt
    engine = wt.Engine(engine_cfg)
    store = wt.Store(engine)
    store.set_wasi(wt.WasiConfig())
    linker = wt.Linker(engine)
    linker.define_wasi()
    inst = linker.instantiate(store, wt.Module(engine, module_bytes))
    ex = inst.exports(store)
    ex["_initialize"](store)
    mem = ex["memory"]
    before = ctypes.addressof(mem.data_ptr(store).contents)
    for _ in range(4):
        assert ex["lock_buffer"](store, 64 << 20)
    return before, ctypes.addressof(mem.data_ptr(store).contents)


def test_module_memory_never_moves_so_engine_buffers_stay_in_place(client1) -> None:
    """WasmEngine's views of its buffers are made once: the module's memory must stay at
    one address however it grows (memory_may_move off). Checked on the binding's own
    instance (its engines' views still reach module memory after 256 MiB of growth), with
    a negative control: the same growth under a config that lets memory move moves it."""
    import ctypes

    import wasmtime as wt

    from liblock import _protocol as P
    from liblock import _wasm
    client1.acquire("mem", ttl=2).release()
    inst = client1._driver.sync_host().engine.inst
    engine = client1._driver.sync_host().engine
    base = inst.base()
    with inst.mu:
        for _ in range(4):
            assert inst.call("lock_buffer", 64 << 20) & 0xFFFFFFFF
    assert inst.base() == base
    n = P.handle_event(engine.inbuf, P.EV_LOCK_INFO, 12345)
    in_ptr = engine._bufs[0]
    assert ctypes.string_at(inst.base() + in_ptr, n) == bytes(engine.inbuf[:n])
    client1.acquire("mem2", ttl=2).release()  # still steps, in place

    data = _wasm.compiled().path.read_bytes()
    cfg = wt.Config()
    cfg.memory_may_move = False
    cfg.memory_reservation = 1 << 32
    before, after = _grown(cfg, data)
    assert before == after
    moving = wt.Config()  # the negative control: a small reservation that memory may leave
    moving.memory_reservation = 1 << 20
    moving.memory_reservation_for_growth = 0
    moving.memory_may_move = True
    before, after = _grown(moving, data)
    assert before != after


def test_engines_of_a_client_have_their_own_buffers_reused_after_free(c1: Cluster) -> None:
    """Each engine (one per event loop) steps in buffers of its own, so a step on another
    thread's engine cannot overwrite actions a host is still decoding; a freed engine's
    buffers go to the next one (module memory is never freed)."""
    with liblock.Client(c1.urls, node_timeout=0.5, backend="wasm") as client:
        client.acquire("bufs", ttl=2).release()
        sync_engine = client._driver.sync_host().engine
        seen = []

        async def main() -> None:
            lock = await client.acquire_async("bufs-a", ttl=2)
            seen.append(client._driver.async_host().engine._bufs)
            await lock.release_async()

        asyncio.run(main())
        asyncio.run(main())  # the first loop's engine was freed when its loop shut down
        assert seen[0] != sync_engine._bufs
        assert seen[1] == seen[0]
        assert c1.all_keys() == []
