"""Run by scripts/test-dist.sh with the interpreter of a fresh venv where the wheel from
`make dist` is installed, from a temp directory outside the repository, with no
LIBLOCK_PATH / LIBLOCK_WASM_PATH / PYTHONPATH: each backend must find the files the
wheel carries and lock against the redis-servers in LIBLOCK_NODES (build/redisnodes).
Not collected by pytest (no test_ prefix)."""

from __future__ import annotations

import os
import socket
import sys
import sysconfig
import time

import liblock

nodes = os.environ["LIBLOCK_NODES"].split(",")
backends = sys.argv[1:] or ["native", "wasm"]
site = sysconfig.get_paths()["platlib"]
for var in ("LIBLOCK_PATH", "LIBLOCK_WASM_PATH", "PYTHONPATH"):
    assert var not in os.environ, f"{var} is set"
assert liblock.__file__.startswith(site), f"liblock imported from {liblock.__file__}, not {site}"


def get(url: str, key: str) -> str:
    """GET key over a raw socket: what Redis itself holds."""
    host, port = url.rsplit("/", 1)[-1].rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(f"*2\r\n$3\r\nGET\r\n${len(key)}\r\n{key}\r\n".encode())
        f = s.makefile("rb")
        reply = f.readline()
        if reply.startswith(b"$-1"):
            return ""
        if not reply.startswith(b"$"):
            raise AssertionError(f"GET {key}: {reply!r}")
        return f.readline().decode().strip()


def eventually(cond, what: str, timeout: float = 5.0) -> None:
    """Polls cond until it holds or timeout seconds passed. An operation returns once a
    quorum answered; the last nodes' commands may still be on their way."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(what)
        time.sleep(0.005)


# "auto:EXPECTED": a client naming no backend, which must run EXPECTED (native where the
# wheel's liblock.so loads; wasm from the py3-none-any wheel), warning once when it is wasm.
import warnings  # noqa: E402

caught = []
for spec in backends:
    backend, _, expected = spec.partition(":")
    key = f"dist:{backend}"
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        client = liblock.Client(nodes, node_timeout=0.5, backend=None if backend == "auto" else backend)
        if backend == "auto":
            client.close()
            client = liblock.Client(nodes, node_timeout=0.5)  # a second one: no second warning
    caught += [x for x in w if issubclass(x.category, liblock.NativeUnavailableWarning)]
    if backend == "auto":
        assert client.backend == expected, (client.backend, expected)
        assert len(caught) == (1 if expected == "wasm" else 0), [str(x.message) for x in caught]
        info = liblock.library()
        assert info["backend"] == expected and (info["fallback_reason"] is None) == (expected == "native"), info
        backend = expected
    with client:
        lock = client.acquire(key, ttl=10.0, wait=0)
        eventually(lambda: all(get(u, key) == lock.token for u in nodes), "the key is not ours on every node")
        try:
            client.acquire(key, ttl=10.0, wait=0)
        except liblock.NotAcquired:
            pass
        else:
            raise AssertionError("acquired a lock that is held")
        lock.release()
        eventually(lambda: all(get(u, key) == "" for u in nodes), "the key stayed after release")
    where = liblock.library_path() if backend == "native" else liblock.wasm_path()
    assert where is not None and where.startswith(os.path.join(site, "liblock")), where
    print(f"{spec}: acquired and released {key} with {where}" + (f" (warned: {caught[0].message})" if caught else ""))
assert liblock.live_handles() == 0
