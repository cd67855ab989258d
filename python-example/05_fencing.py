"""The GC-pause story (Kleppmann's critique of Redlock), fixed with fencing tokens: a
holder paused past its lock's validity wakes up and writes, and the storage refuses it,
because its successor's fence is higher. Plus inspect (who holds it, for how long) and a
hand-over by token."""

from __future__ import annotations

import liblock
from _common import log, nodes

RESOURCE = "invoice-store"


class StaleFence(Exception):
    pass


class Storage:
    """The resource the lock protects. It keeps the highest fence it has seen and refuses
    any write carrying a lower one: that is all a storage needs to do."""

    def __init__(self) -> None:
        self.highest = 0
        self.data: list = []

    def write(self, fence: int, value: str) -> None:
        if fence < self.highest:
            raise StaleFence(f"fence {fence} < {self.highest}")
        self.highest = fence
        self.data.append(value)


def main() -> None:
    print("(5) fencing tokens: a paused holder's late write is refused")
    storage = Storage()
    with liblock.Client(nodes(), node_timeout=0.25, owner="worker-a") as a, \
            liblock.Client(nodes(), node_timeout=0.25, owner="worker-b") as b:
        lock_a = a.acquire(RESOURCE, ttl=1.0, fence=True)
        storage.write(lock_a.fence, "a: first half")
        log("worker-a", f"holds it with fence {lock_a.fence}, wrote; now a long GC pause begins")

        seen = b.inspect(RESOURCE)
        log("worker-b", f"inspect: held={seen.held} by {seen.owner!r}, for {seen.validity:.2f}s more")
        lock_b = b.acquire(RESOURCE, ttl=10.0, wait=5.0, fence=True)  # gets it once a's ttl ran out
        log("worker-b", f"acquired after a's lock expired, fence {lock_b.fence}")
        storage.write(lock_b.fence, "b: whole job")
        log("worker-b", "wrote")

        try:  # worker-a wakes up, still believing it holds the lock
            storage.write(lock_a.fence, "a: second half")
            log("storage", "accepted a's late write?! (should not happen)")
        except StaleFence as e:
            log("storage", f"stale fence refused: {e}")

        # worker-b hands its lock to a worker process by token: that one re-enters it.
        with liblock.Client(nodes(), node_timeout=0.25) as worker:
            handed = worker.acquire(RESOURCE, ttl=10.0, token=lock_b.token, wait=0)
            log("worker", f"re-entered b's lock by its token: reentered={handed.reentered}")
            handed.release()  # releases it for every holder of the token
        log("worker", f"released; inspect: held={b.inspect(RESOURCE).held}")
        try:
            lock_a.release()
        except liblock.LockLost:
            log("worker-a", "release: LockLost (it had expired long ago)")
    assert storage.data == ["a: first half", "b: whole job"], storage.data


if __name__ == "__main__":
    main()
