"""Ten workers contend for one account; the lock lets exactly one in at a time."""

from __future__ import annotations

import threading
import time

import liblock
from _common import log, nodes

RESOURCE = "account_id123"


def worker(client: liblock.Client, n: int, balance: list) -> None:
    name = f"worker-{n}"
    with client.lock(RESOURCE, ttl=5.0, wait=30.0) as lock:
        log(name, f"got {RESOURCE} (token {lock.token[:8]}…)")
        before = balance[0]
        time.sleep(0.02)            # read-modify-write that must not interleave
        balance[0] = before + 10
        log(name, f"balance {before} -> {balance[0]}, releasing")


def main() -> None:
    print(f"(1) ten workers contend for {RESOURCE!r} on {len(nodes())} Redis nodes")
    balance = [0]
    with liblock.Client(nodes(), node_timeout=0.25) as client:
        threads = [threading.Thread(target=worker, args=(client, n, balance)) for n in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print(f"  final balance {balance[0]} (10 deposits of 10, none lost)")
    assert balance[0] == 100


if __name__ == "__main__":
    main()
