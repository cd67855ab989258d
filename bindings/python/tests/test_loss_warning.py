"""A lost lock is never silent: a WARNING record on the ``liblock`` logger, which with no
logging set up Python's last-resort handler prints on stderr, and which the
application's handlers take instead when it has some. The text is the engine's, the
same in every language: the resource, the reason and the count. Keys deleted on 2 of 3
real nodes under an auto-extended lock."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import liblock
from conftest import BACKEND, Cluster, eventually

BINDING = Path(__file__).resolve().parents[1]
LOSS = "held on at most 1 of 3 nodes (2 answered it is gone), quorum is 2"

# The child: acquires, says so, waits for the parent to delete the keys, waits for
# the loss (with a deadline), exits. argv: mode ("default" or "handler"), backend, urls.
CHILD = r'''
import logging, sys, time
import liblock
mode, backend, urls = sys.argv[1], sys.argv[2], sys.argv[3:]
if mode == "handler":
    logging.basicConfig(stream=sys.stdout, format="USER %(levelname)s %(name)s %(message)s")
with liblock.Client(urls, node_timeout=1, backend=backend) as client:
    lock = client.acquire("loss:child", 3, auto_extend=True)
    print("acquired", flush=True)
    sys.stdin.readline()
    deadline = time.monotonic() + 20
    while not lock.lost and time.monotonic() < deadline:
        time.sleep(0.01)
    print("lost" if lock.lost else "not lost", flush=True)
'''


def _on_every_node(c3: Cluster, key: str) -> None:
    """acquire() returns at a quorum: the third grant may still be on its way, and a DEL
    that overtook it would leave the lock held on 2 of 3."""
    eventually(lambda: all(c3.do(i, "EXISTS", key) == 1 for i in range(3)), what=f"{key} on every node")


def _lose_in_child(c3: Cluster, mode: str) -> Any:
    env = dict(os.environ, PYTHONPATH=str(BINDING))
    p = subprocess.Popen([sys.executable, "-c", CHILD, mode, BACKEND, *c3.urls], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert p.stdout is not None and p.stdin is not None
    assert p.stdout.readline().strip() == "acquired"
    _on_every_node(c3, "loss:child")
    for i in (0, 1):
        assert c3.do(i, "DEL", "loss:child") == 1
    p.stdin.write("go\n")
    p.stdin.flush()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0, err
    assert out.splitlines()[-1] == "lost", (out, err)
    return out, err


def test_with_no_logging_set_up_a_loss_is_printed_on_stderr(c3: Cluster) -> None:
    out, err = _lose_in_child(c3, "default")
    lines = [line for line in err.splitlines() if "lock lost" in line]
    assert len(lines) == 1, err
    assert lines[0].startswith("liblock: lock lost: "), lines
    assert LOSS in lines[0] and '"loss:child"' in lines[0], lines
    assert "None" not in err and "auto-extension failed" not in err, err


def test_the_applications_handler_replaces_the_default(c3: Cluster) -> None:
    out, err = _lose_in_child(c3, "handler")
    assert "lock lost" not in err, err
    lines = [line for line in out.splitlines() if "lock lost" in line]
    assert len(lines) == 1, out
    assert lines[0].startswith("USER WARNING liblock liblock: lock lost: "), lines
    assert LOSS in lines[0] and '"loss:child"' in lines[0], lines


def test_the_record_names_the_resource(c3: Cluster, caplog: Any) -> None:
    caplog.set_level(logging.WARNING, logger="liblock")
    with liblock.Client(c3.urls, node_timeout=1, backend=BACKEND) as client:
        lock = client.acquire("loss:record", 3, auto_extend=True)
        _on_every_node(c3, "loss:record")
        for i in (0, 1):
            assert c3.do(i, "DEL", "loss:record") == 1
        eventually(lambda: lock.lost, timeout=20, what="the loss")
        eventually(lambda: any("lock lost" in r.getMessage() for r in caplog.records), what="the record")
    [r] = [r for r in caplog.records if "lock lost" in r.getMessage()]
    assert r.name == "liblock" and r.levelno == logging.WARNING
    assert r.liblock_resource == "loss:record"
    assert LOSS in r.getMessage()


def test_the_release_of_a_lost_lock_names_its_resource(c1: Cluster, caplog: Any) -> None:
    """The loss's report ends the lane's record of the lock; the release that follows still
    names the resource in its DEBUG line (it said ``release None: lost``)."""
    caplog.set_level(logging.DEBUG, logger="liblock")
    with liblock.Client(c1.urls, node_timeout=1, backend=BACKEND, telemetry=True) as client:
        lock = client.acquire("loss:release", 10)
        assert c1.do(0, "DEL", "loss:release") == 1
        try:
            lock.extend(10)
            raise AssertionError("extended a deleted lock")
        except liblock.LockLost:
            pass
        try:
            lock.release()
        except liblock.LockLost:
            pass
        eventually(lambda: any(r.getMessage().startswith("liblock: release ") for r in caplog.records),
                   what="the release's line")
    lines = [r.getMessage() for r in caplog.records if r.name == "liblock"]
    assert any(m.startswith("liblock: release loss:release: ") for m in lines), lines
    assert not any("None" in m for m in lines), lines
