"""Fixtures: real redis-servers started by build/redisnodes (mode 1), one
session-scoped set per size (1, 3, 5 nodes), flushed and repaired around every
test. No mocks: every test talks to real Redis on 127.0.0.1."""

from __future__ import annotations

import gc
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Set

import pytest

ROOT = Path(__file__).resolve().parents[3]
REDISNODES = ROOT / "build" / "redisnodes"

# The engine under test: scripts/test.sh runs the suite with the default (native),
# scripts/test-wasm.sh with LIBLOCK_BACKEND=wasm. Every Client a test makes gets it.
BACKEND = os.environ.get("LIBLOCK_BACKEND", "native")
if BACKEND not in ("native", "wasm"):
    raise RuntimeError(f"LIBLOCK_BACKEND must be 'native' or 'wasm', not {BACKEND!r}")


def pytest_configure(config: Any) -> None:
    config.addinivalue_line(
        "markers", "native_only: checks liblock.so itself (ctypes lookup, Go runtime and fork); "
        "deselected when LIBLOCK_BACKEND=wasm")
    config.addinivalue_line("markers", "wasm_only: checks the wasm backend itself; deselected on native")


def pytest_collection_modifyitems(config: Any, items: List[Any]) -> None:
    # The other backend's own tests are deselected, not skipped: each runs
    # in its backend's pass (scripts/test.sh, scripts/test-wasm.sh).
    other = "wasm_only" if BACKEND == "native" else "native_only"
    keep = [item for item in items if not item.get_closest_marker(other)]
    dropped = [item for item in items if item.get_closest_marker(other)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep


def eventually(cond: Callable[[], Any], timeout: float = 10.0, what: str = "condition",
               interval: float = 0.01) -> Any:
    """The tests' one polling helper: cond() until truthy (its value is returned) or the
    deadline passes (then the test fails naming ``what``). Every wait for a condition
    goes through it (or its coroutine form, eventually_async): no fixed sleep stands in
    for one."""
    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def count_drives(monkeypatch: pytest.MonkeyPatch) -> List[int]:
    """How each synchronous call's caller drive ended (_syncdrive._DONE, _HANDOFF,
    _NOT_STARTED), one entry per call from now on (the test's monkeypatch undoes it)."""
    from liblock import _syncdrive

    ends: List[int] = []
    orig = _syncdrive.CallerDrive._drive

    def drive(self: Any, *a: Any) -> int:
        how: int = orig(self, *a)
        ends.append(how)
        return how
    monkeypatch.setattr(_syncdrive.CallerDrive, "_drive", drive)
    return ends


async def eventually_async(cond: Callable[[], Any], timeout: float = 10.0, what: str = "condition",
                           interval: float = 0.01) -> Any:
    """eventually inside a coroutine: between polls it yields to the event loop, whose
    liblock host must go on working (an async operation returns once a quorum has
    answered; the last node's write goes out when its connection opens, on this loop).
    A blocking poll there would stall exactly what it waits for."""
    import asyncio

    deadline = time.monotonic() + timeout
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        await asyncio.sleep(interval)


async def no_keys_left(cluster: "Cluster") -> None:
    """no_keys inside a coroutine (see eventually_async)."""
    await eventually_async(lambda: cluster.all_keys() == [], what="no key on any node")


def no_keys(cluster: "Cluster") -> None:
    """Wait until no node holds a key: an operation returns once a quorum has answered,
    so the last nodes' commands may still be on their way (eventually_async, with a deadline)."""
    eventually(lambda: cluster.all_keys() == [], what="no key on any node")


def resp(port: int, *args: str, timeout: float = 2.0) -> Any:
    """One Redis command over a raw socket (RESP2); returns str/int/list/None."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        out = f"*{len(args)}\r\n"
        for a in args:
            b = a.encode()
            out += f"${len(b)}\r\n{a}\r\n"
        s.sendall(out.encode())
        f = s.makefile("rb")
        return _read(f)


def _read(f: Any) -> Any:
    line = f.readline().rstrip(b"\r\n")
    kind, rest = line[:1], line[1:]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RuntimeError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        if n < 0:
            return None
        data = f.read(n + 2)[:-2]
        return data.decode()
    if kind == b"*":
        n = int(rest)
        return None if n < 0 else [_read(f) for _ in range(n)]
    raise RuntimeError(f"bad reply {line!r}")


class Cluster:
    def __init__(self, n: int) -> None:
        if not REDISNODES.is_file():
            pytest.fail(f"{REDISNODES} is missing: run `make build` in {ROOT}")
        if shutil.which("redis-server") is None:
            pytest.fail("redis-server is not installed: apt-get install -y redis-server")
        self.n = n
        self.proc = subprocess.Popen([str(REDISNODES), "-n", str(n)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            pytest.fail(f"build/redisnodes -n {n} did not start (exit {self.proc.wait()})")
        nodes = json.loads(line)["nodes"]
        self.urls: List[str] = [node["url"] for node in nodes]
        self.ports: List[int] = [node["port"] for node in nodes]
        self.pids: List[int] = [node["pid"] for node in nodes]
        self.killed: Set[int] = set()
        self.frozen: Set[int] = set()
        self._lock = threading.Lock()

    def cmd(self, line: str) -> Dict[str, Any]:
        with self._lock:
            assert self.proc.stdin is not None and self.proc.stdout is not None
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
            reply = json.loads(self.proc.stdout.readline())
        if not reply.get("ok"):
            raise RuntimeError(f"redisnodes {line!r}: {reply}")
        return reply

    def kill(self, i: int) -> None:
        self.cmd(f"kill {i}")
        self.killed.add(i)

    def freeze(self, i: int) -> None:
        self.cmd(f"freeze {i}")
        self.frozen.add(i)

    def thaw(self, i: int) -> None:
        self.cmd(f"thaw {i}")
        self.frozen.discard(i)

    def keys(self) -> List[List[str]]:
        return self.cmd("keys")["keys"]

    def all_keys(self) -> List[str]:
        return sorted(k for node in self.keys() for k in node)

    def do(self, i: int, *args: str) -> Any:
        return resp(self.ports[i], *args)

    def waiting(self, resource: str, engines: int = 1) -> bool:
        """True when ``engines`` engines wait for resource: each listens for the key's
        releases on every node, which an acquire does only once an attempt was refused (or
        it queued behind another). A client has one engine for its synchronous calls and
        one per event loop of its asyncio calls. Assumes no key prefix."""
        return all(self.do(i, "PUBSUB", "NUMSUB", "liblock:released:" + resource)[1] == engines
                   for i in range(self.n))

    def reset(self) -> None:
        for i in sorted(self.frozen):
            self.thaw(i)
        for i in sorted(self.killed):
            self.cmd(f"restart {i}")
        self.killed.clear()
        self.cmd("flush")

    def close(self) -> None:
        try:
            self.cmd("quit")
        except Exception:  # noqa: BLE001
            pass
        if self.proc.stdin:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


_clusters: Dict[int, Cluster] = {}


@pytest.fixture(scope="session", autouse=True)
def _stop_clusters() -> Iterator[None]:
    yield
    for c in _clusters.values():
        c.close()


def _cluster(n: int) -> Iterator[Cluster]:
    c = _clusters.get(n)
    if c is None:
        c = _clusters[n] = Cluster(n)
    c.reset()
    yield c
    c.reset()


@pytest.fixture
def c1() -> Iterator[Cluster]:
    yield from _cluster(1)


@pytest.fixture
def c3() -> Iterator[Cluster]:
    yield from _cluster(3)


@pytest.fixture
def c5() -> Iterator[Cluster]:
    yield from _cluster(5)


@pytest.fixture
def client3(c3: Cluster) -> Iterator[Any]:
    import liblock
    with liblock.Client(c3.urls, node_timeout=0.5, backend=BACKEND) as client:
        yield client


@pytest.fixture
def client1(c1: Cluster) -> Iterator[Any]:
    import liblock
    with liblock.Client(c1.urls, node_timeout=0.5, backend=BACKEND) as client:
        yield client


@pytest.fixture(autouse=True)
def no_thread_leak() -> Iterator[None]:
    """Every test ends with as many Python threads as it started with."""
    before = threading.active_count()
    yield
    gc.collect()
    eventually(lambda: threading.active_count() <= before, timeout=10,
               what=f"threads back to {before} (now {threading.active_count()}: "
                    f"{[t.name for t in threading.enumerate()]})")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
