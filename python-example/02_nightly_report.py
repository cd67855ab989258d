"""A "nightly report" cron job starts on several machines (here: processes) at
the same moment; the lock makes it run exactly once, the others skip.

(A real job would also record that tonight's report is done, for starters that
arrive after it finished; the lock covers the overlap.)"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import liblock
from _common import log, nodes, set_origin

RESOURCE = "nightly-report:2026-11-22"


def job(start_at: float) -> int:
    me = f"pid {os.getpid()}"
    set_origin(start_at)
    with liblock.Client(nodes(), node_timeout=0.25) as client:
        client.acquire(f"warm-up:{os.getpid()}", ttl=1).release()  # connect before the race
        time.sleep(max(0.0, start_at - time.time()))
        try:
            # A short wait only lets simultaneous starters retry a split vote
            # (each node granting a different process); it is far shorter
            # than the job, so nobody runs it after the winner.
            lock = client.acquire(RESOURCE, ttl=30.0, wait=0.2)
        except liblock.NotAcquired:
            log(me, "report already taken by another process: skipping")
            return 0
        log(me, "got the lock: generating the nightly report …")
        time.sleep(2.0)
        lock.release()
        log(me, "report done, lock released")
        return 1


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--job":
        sys.exit(10 + job(float(sys.argv[2])))
    procs = 5
    print(f"(2) the nightly report job starts in {procs} processes at once")
    start_at = time.time() + 2.0  # every process is up and connected by then
    children = [subprocess.Popen([sys.executable, __file__, "--job", repr(start_at)]) for _ in range(procs)]
    ran = sum(1 for p in children if p.wait() == 11)
    print(f"  the report ran {ran} time(s) out of {procs} starts")
    assert ran == 1


if __name__ == "__main__":
    main()
