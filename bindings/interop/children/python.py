"""One side of the cross-runtime re-entry tests (bindings/interop/reenter.test.js), in
Python; the protocol is described in bindings/interop/children/node.js. Run with the
test venv's interpreter (build/venv-python) and PYTHONPATH=bindings/python."""

from __future__ import annotations

import json
import sys
from typing import Any, Optional

import liblock


# The codes of the Node and Go children, for the classes a test may meet.
CODES = {"NotAcquired": "NOT_ACQUIRED", "LockLost": "LOST", "Unavailable": "UNAVAILABLE"}


def code(e: BaseException) -> str:
    return CODES.get(type(e).__name__, type(e).__name__)


def say(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> None:
    cfg = json.loads(sys.argv[1])
    kw = {"owner": cfg["owner"]} if cfg.get("owner") else {}
    client = liblock.Client(cfg["urls"], node_timeout=0.5, backend=cfg["backend"], **kw)
    lock: Optional[liblock.Lock] = None
    try:
        lock = client.acquire(cfg["resource"], cfg["ttl"] / 1000.0, wait=0, token=cfg.get("token"))
        say({"ok": True, "runtime": "python", "backend": cfg["backend"], "token": lock.token,
             "reentered": lock.reentered, "fence": lock.fence, "validity": round(lock.validity * 1000)})
    except liblock.LockError as e:
        say({"ok": False, "code": code(e), "message": str(e)})
    for line in sys.stdin:
        cmd = line.strip()
        if cmd == "inspect":
            got = client.inspect(cfg["resource"])
            validity = None if got.validity is None else round(got.validity * 1000)
            say({"held": got.held, "owner": got.owner, "validity": validity})
        elif cmd == "release":
            try:
                assert lock is not None
                lock.release()
                say({"released": True})
            except liblock.LockError as e:
                say({"released": False, "code": code(e)})
        elif cmd == "close":
            break
        else:
            say({"error": f"unknown command {cmd!r}"})
    client.close()
    say({"closed": True})


if __name__ == "__main__":
    main()
