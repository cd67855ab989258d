"""One of the Redis nodes is killed (SIGKILL) in the middle of the run: with a
majority still up, locks keep being granted, and a held lock keeps extending."""

from __future__ import annotations

import os
import signal
import time

import liblock
from _common import log, nodes


def rounds(client: liblock.Client, n: int) -> tuple:
    """n acquire+release rounds: (how many succeeded, slowest round in seconds)."""
    ok, slowest = 0, 0.0
    for i in range(n):
        t0 = time.monotonic()
        with client.lock("orders:42", ttl=2.0, wait=2.0):
            ok += 1
        slowest = max(slowest, time.monotonic() - t0)
    return ok, slowest


def main() -> None:
    urls = nodes()
    pids = [int(p) for p in os.environ.get("LIBLOCK_NODE_PIDS", "").split(",") if p]
    print(f"(4) {len(urls)} nodes; one is killed mid-run and locking goes on")
    if len(pids) != len(urls) or len(urls) < 3:
        print("  needs LIBLOCK_NODE_PIDS and at least 3 nodes (run python-example/demo.sh): skipped")
        return
    with liblock.Client(urls, node_timeout=0.25) as client:
        ok, slowest = rounds(client, 50)
        log("main", f"{ok}/50 acquire+release rounds with all nodes up (slowest {slowest * 1000:.0f} ms)")
        held = client.acquire("long-lived", ttl=1.0, auto_extend=True)
        os.kill(pids[0], signal.SIGKILL)
        log("main", f"SIGKILL sent to node 0 ({urls[0]}, pid {pids[0]})")
        t0 = time.monotonic()
        ok, slowest = rounds(client, 50)
        log("main", f"{ok}/50 rounds with node 0 dead in {time.monotonic() - t0:.2f}s (slowest"
                    f" {slowest * 1000:.0f} ms; a dead node refuses at once, a frozen one costs at most the 250 ms node timeout)")
        time.sleep(2.0)
        log("main", f"lock taken before the kill, 2 ttls later: lost={held.lost}")
        held.release()
        log("main", "released it on the 2 surviving nodes")
        try:
            os.kill(pids[1], signal.SIGSTOP)  # a majority down now: a clear error, no hang
            client.acquire("orders:42", ttl=2.0, wait=0)  # one attempt: report the outage at once
        except liblock.Unavailable as e:
            log("main", f"with node 1 frozen too: Unavailable ({str(e)[:60]}…)")
        finally:
            os.kill(pids[1], signal.SIGCONT)


if __name__ == "__main__":
    main()
