"""A job that runs longer than its lock's ttl: auto_extend keeps the lock alive
(the extending happens inside liblock, no thread in Python)."""

from __future__ import annotations

import time

import liblock
from _common import log, nodes

RESOURCE = "reindex-catalog"


def main() -> None:
    print("(3) a 3-second job holding a lock whose ttl is 1 second, with auto_extend")
    with liblock.Client(nodes(), node_timeout=0.25) as client:
        lost = []
        with client.lock(RESOURCE, ttl=1.0, auto_extend=True, on_lost=lost.append) as lock:
            for step in range(1, 7):
                time.sleep(0.5)
                log("job", f"step {step}/6 done; lock lost={lock.lost}, validity left {lock.validity:.2f}s")
                if step == 4:
                    try:
                        client.acquire(RESOURCE, ttl=1.0, wait=0)  # one attempt
                        log("intruder", "got the lock?! (should not happen)")
                    except liblock.NotAcquired:
                        log("intruder", "tried to take it: NotAcquired, still held after 2 ttls")
        log("job", f"finished and released; on_lost was called {len(lost)} time(s)")
        assert not lost


if __name__ == "__main__":
    main()
