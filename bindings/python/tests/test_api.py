"""Every synchronous API path and exception, against real Redis."""

from __future__ import annotations

import threading

import pytest

import liblock
from conftest import BACKEND, Cluster, free_port, no_keys, eventually


@pytest.mark.native_only
def test_abi_and_library_path(client1) -> None:
    assert liblock.abi_version() == liblock.ABI_VERSION == 1
    assert liblock.library_path() and liblock.library_path().endswith("liblock.so")


def test_acquire_release_keys_on_wire(c3: Cluster, client3) -> None:
    lock = client3.acquire("orders:42", ttl=10.0)
    assert isinstance(lock, liblock.Lock)
    assert lock.resource == "orders:42" and lock.key == "orders:42"
    assert len(lock.token) >= 20
    assert not lock.lost and not lock.released
    assert 0 < lock.validity <= 10.0
    # SET key token NX PX ttl on every node (the acquire returns once a quorum has
    # granted it: the last node's reply may still be on its way)
    eventually(lambda: [c3.do(i, "GET", "orders:42") for i in range(3)] == [lock.token] * 3,
               what="the key on every node")
    for i in range(3):
        assert 0 < c3.do(i, "PTTL", "orders:42") <= 10000
    info = lock.info()
    for k in ("resource", "key", "token", "validity_ms", "auto_extend", "lost"):
        assert k in info
    assert info["auto_extend"] is False
    lock.release()
    assert lock.released and lock.validity == 0.0 and not lock.lost
    no_keys(c3)
    assert "released" in repr(lock)


def test_key_prefix(c1: Cluster) -> None:
    with liblock.Client(c1.urls, node_timeout=0.5, key_prefix="app:", backend=BACKEND) as client:
        with client.lock("job", ttl=5) as lock:
            assert lock.key == "app:job"
            assert c1.all_keys() == ["app:job"]
            assert c1.do(0, "GET", "app:job") == lock.token
    assert c1.all_keys() == []


def test_not_acquired_and_wait(c3: Cluster, client3) -> None:
    lock = client3.acquire("busy", ttl=10)
    with pytest.raises(liblock.NotAcquired) as e:
        client3.acquire("busy", ttl=2, wait=0)
    assert e.value.status == 1 and isinstance(e.value, liblock.LockError)
    assert str(e.value)
    with pytest.raises(liblock.NotAcquired):
        client3.acquire("busy", ttl=2, wait=0.2)
    # the failed attempts left the holder's key untouched (polled: the holder's
    # acquire returned once a quorum granted; the third SET may be on its way)
    eventually(lambda: [c3.do(i, "GET", "busy") for i in range(3)] == [lock.token] * 3,
               what="the holder's key on every node")
    # a waiter gets it once the holder releases
    got = []
    t = threading.Thread(target=lambda: got.append(client3.acquire("busy", ttl=5, wait=20)))
    t.start()
    lock.release()
    t.join(30)
    assert got and not got[0].lost
    got[0].release()


def test_excludes_plain_setnx_lock(c1: Cluster, client1) -> None:
    assert c1.do(0, "SET", "shared", "someone-else", "NX", "PX", "10000") == "OK"
    with pytest.raises(liblock.NotAcquired):
        client1.acquire("shared", ttl=2, wait=0)
    assert c1.do(0, "GET", "shared") == "someone-else"
    c1.do(0, "DEL", "shared")
    with client1.lock("shared", ttl=5):
        assert c1.do(0, "SET", "shared", "x", "NX") is None


def test_extend(c3: Cluster, client3) -> None:
    lock = client3.acquire("ext", ttl=2.0)
    lock.extend(30.0)
    assert lock.validity > 10.0
    # decided once a quorum extended: the last node's PEXPIRE may still be on its way
    eventually(lambda: all(c3.do(i, "PTTL", "ext") > 10000 for i in range(3)), what="the extension on every node")
    lock.release()


def test_extend_and_release_after_overwrite_raise_lost(c3: Cluster, client3) -> None:
    lock = client3.acquire("stolen", ttl=10)
    for i in range(3):
        c3.do(i, "SET", "stolen", "thief")
    with pytest.raises(liblock.LockLost) as e:
        lock.extend(10)
    assert e.value.status == 2
    assert lock.lost
    with pytest.raises(liblock.LockLost):
        lock.release()
    # never touches a key another owner holds
    assert [c3.do(i, "GET", "stolen") for i in range(3)] == ["thief"] * 3


def test_expired_lock_is_lost(c1: Cluster, client1) -> None:
    lock = client1.acquire("short", ttl=1.5)
    eventually(lambda: lock.validity == 0.0, what="validity to run out")
    eventually(lambda: c1.all_keys() == [], what="key to expire")
    with pytest.raises(liblock.LockLost):
        lock.extend(2)  # never re-acquires an expired lock
    assert c1.all_keys() == []
    with pytest.raises(liblock.LockLost):
        lock.release()


def test_with_block_raises_lock_lost_on_exit(c1: Cluster, client1) -> None:
    with pytest.raises(liblock.LockLost):
        with client1.lock("w", ttl=1.5) as lock:
            eventually(lambda: c1.all_keys() == [], what="key to expire")
    assert lock.released and lock.lost
    # configurable
    with client1.lock("w", ttl=1.5, raise_on_lost=False) as lock:
        eventually(lambda: c1.all_keys() == [], what="key to expire")
    assert lock.lost
    # an exception from the body wins over LockLost
    with pytest.raises(KeyError):
        with client1.lock("w", ttl=1.5):
            eventually(lambda: c1.all_keys() == [], what="key to expire")
            raise KeyError("body")


def test_with_block_releases_on_exception(c3: Cluster, client3) -> None:
    with pytest.raises(RuntimeError):
        with client3.lock("exc", ttl=10):
            eventually(lambda: c3.all_keys() == ["exc"] * 3, what="the key on every node")
            raise RuntimeError("boom")
    no_keys(c3)


def test_with_block_not_acquired(client3) -> None:
    ctx = client3.lock("held", ttl=10)
    with ctx as lock:
        assert ctx.lock is lock
        with pytest.raises(liblock.NotAcquired):
            with client3.lock("held", ttl=2, wait=0.05):
                pytest.fail("entered a block without the lock")
        lock.release()  # released early inside the block: leaving is fine
    assert lock.released


def test_lock_as_context_manager(c3: Cluster, client3) -> None:
    with client3.acquire("cm", ttl=10) as lock:
        eventually(lambda: c3.all_keys() == ["cm"] * 3, what="the key on every node")
    assert lock.released
    # the release ends on a quorum: the third node's delete may land just after
    eventually(lambda: c3.all_keys() == [], what="the key gone from every node")


def test_double_release_is_lost_as_in_go_c_and_node(client3) -> None:
    lock = client3.acquire("twice", ttl=10)
    lock.release()
    with pytest.raises(liblock.LockLost) as e:
        lock.release()
    assert e.value.status == 2 and "released already" in str(e.value)
    with pytest.raises(liblock.LockLost):
        lock.extend(2)
    assert lock.released and not lock.lost
    with pytest.raises(liblock.InvalidHandle):
        lock.info()  # the handle itself is gone


def test_closed_client(c3: Cluster) -> None:
    client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
    lock = client.acquire("closing", ttl=30)
    assert not client.closed
    client.close()
    assert client.closed and "closed" in repr(client)
    client.close()  # idempotent
    # closing released the lock it held
    no_keys(c3)
    with pytest.raises(liblock.ClientClosed):
        client.acquire("closing", ttl=2)
    with pytest.raises(liblock.ClientClosed):
        lock.extend(2)


def test_unavailable_when_nothing_listens() -> None:
    with liblock.Client([f"redis://127.0.0.1:{free_port()}"], node_timeout=0.5, backend=BACKEND) as client:
        with pytest.raises(liblock.Unavailable) as e:
            client.acquire("x", ttl=2, wait=0)
        assert e.value.status == 5 and str(e.value)


def test_client_context_manager_and_repr(c1: Cluster) -> None:
    with liblock.Client(c1.urls, node_timeout=0.1, drift_factor=0.02, backend=BACKEND) as client:
        assert "1 node" in repr(client)
        assert client.handle > 0
    assert client.closed


def test_client_does_not_need_reachable_nodes() -> None:
    with liblock.Client([f"redis://127.0.0.1:{free_port()}", "redis://user:secret@127.0.0.1:1/2"], backend=BACKEND):
        pass


def test_password_not_in_messages() -> None:
    port = free_port()
    with liblock.Client([f"redis://user:hunter2@127.0.0.1:{port}"], node_timeout=0.5, backend=BACKEND) as client:
        with pytest.raises(liblock.Unavailable) as e:
            client.acquire("x", ttl=2, wait=0)
    assert "hunter2" not in str(e.value)


def test_close_while_another_thread_waits(c3: Cluster) -> None:
    holder = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
    held = holder.acquire("blocked", ttl=30)
    client = liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND)
    result = []

    def waiter() -> None:
        try:
            result.append(client.acquire("blocked", ttl=5, wait=30))
        except liblock.LockError as e:
            result.append(e)

    t = threading.Thread(target=waiter)
    t.start()
    eventually(lambda: c3.waiting("blocked"), what="the acquire waits")
    client.close()
    t.join(20)
    assert not t.is_alive(), "a waiting acquire did not return when its client was closed"
    assert isinstance(result[0], liblock.Canceled), result
    held.release()
    holder.close()
    no_keys(c3)


def test_ctrl_c_cancels_a_waiting_acquire(c3: Cluster, client3) -> None:
    import os
    import signal
    import subprocess
    import sys
    from pathlib import Path

    held = client3.acquire("interrupt", ttl=30)
    code = f"""
import liblock, sys
client = liblock.Client({c3.urls!r}, node_timeout=0.5, backend={BACKEND!r})
print("waiting", flush=True)
try:
    client.acquire("interrupt", ttl=5, wait=60)
    print("acquired?!")
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    p = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "waiting"
        eventually(lambda: c3.waiting("interrupt"), what="the child's acquire waits")
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
    assert out.strip() == "interrupted"
    assert [c3.do(i, "GET", "interrupt") for i in range(3)] == [held.token] * 3
    held.release()
    no_keys(c3)


def test_main_thread_waiting_acquire_paths(c3: Cluster, client3) -> None:
    held = client3.acquire("mt", ttl=30)
    with pytest.raises(liblock.NotAcquired):
        client3.acquire("mt", ttl=2, wait=0.1)  # main thread, interruptible path
    t = threading.Timer(0.2, held.release)
    t.start()
    lock = client3.acquire("mt", ttl=5, wait=20)
    t.join()
    assert lock.token != held.token and not lock.lost
    lock.release()
    no_keys(c3)
