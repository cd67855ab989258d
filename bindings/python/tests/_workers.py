"""Worker functions for spawn-started processes (must be importable by name)."""

from __future__ import annotations

import os
import time
from typing import Any, List, Tuple

# The backend under test (conftest.BACKEND; spawned children inherit the environment).
BACKEND = os.environ.get("LIBLOCK_BACKEND", "native")


def contend(urls: List[str], resource: str, rounds: int, marker: str) -> List[Tuple[float, float]]:
    """Take the lock `rounds` times; inside, create `marker` with O_EXCL (fails if
    another holder is inside too) and record the (enter, leave) monotonic times."""
    import liblock

    spans = []
    with liblock.Client(urls, node_timeout=0.5, backend=BACKEND) as client:
        for _ in range(rounds):
            with client.lock(resource, ttl=10.0, wait=60.0):
                t0 = time.monotonic()
                fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)  # raises on overlap
                time.sleep(0.001)
                os.close(fd)
                os.unlink(marker)
                spans.append((t0, time.monotonic()))
    return spans


def nightly(urls: List[str], resource: str, start_at: float) -> bool:
    """Run-once job started in several processes at the same wall-clock instant:
    True if this process got the lock (and ran the job)."""
    import liblock

    with liblock.Client(urls, node_timeout=0.5, backend=BACKEND) as client:
        client.acquire(f"warm-up:{os.getpid()}", ttl=2).release()  # connected before the race
        time.sleep(max(0.0, start_at - time.time()))
        try:
            # the short wait only resolves split votes between simultaneous starters
            lock = client.acquire(resource, ttl=30.0, wait=0.2)
        except liblock.NotAcquired:
            return False
        time.sleep(2.0)  # the job: far longer than the others' wait
        lock.release()
        return True


def reenter(urls: List[str], resource: str, token: str, ttl: float) -> Tuple[bool, str, int]:
    """Re-enter a lock handed over by another process (its token); release it.
    Returns (reentered, token, the PTTL-like validity in ms seen before release)."""
    import liblock

    with liblock.Client(urls, node_timeout=0.5, backend=BACKEND) as client:
        lock = client.acquire(resource, ttl=ttl, token=token, wait=0)
        got = (lock.reentered, lock.token, int(lock.validity * 1000))
        lock.release()
        return got
