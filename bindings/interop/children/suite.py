"""The Python side of the shared behaviour suite (core/testkit/locktest, run through
core/testkit/locktest/remote by bindings/interop/suite_test.go): clients and locks of the
Python binding driven by JSON lines on stdin, one answer line per request on stdout, and a
{"event":"lost"} line when a lock is lost. The protocol is described in
core/testkit/locktest/remote/remote.go.

    python suite.py async|sync native|wasm

async: every request is a task on one event loop (acquire_async, extend_async, ...); a
cancel line cancels the acquire's task. sync: every request runs the blocking API in a
thread of its own (a blocking acquire cannot be canceled from another thread: the Go side
skips CancelMidWait). At the end of its input it closes every client and exits. Run with
the test venv's interpreter (build/venv-python) and PYTHONPATH=bindings/python.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import re
import sys
import threading
from typing import Any, Dict, Optional

import liblock

MODE, BACKEND = sys.argv[1], sys.argv[2]

_out = threading.Lock()


def say(obj: Any) -> None:
    line = json.dumps(obj) + "\n"
    with _out:
        sys.stdout.write(line)
        sys.stdout.flush()


clients: Dict[int, liblock.Client] = {}
locks: Dict[int, Dict[str, Any]] = {}  # id -> {"lock", "reported"}
_ids = itertools.count(1)
_lost = threading.Lock()
_reported = threading.Lock()


def ms(seconds: Optional[float]) -> Optional[float]:
    return None if seconds is None else seconds * 1000.0


# An argument's name at the start of the message: the engine's ("liblock: invalid argument:
# nodes[1]: ...") or the binding's ("ttl must be ...", "node_timeout=3600 is ...",
# "fence=True cannot ...").
_ENGINE_ARG = re.compile(r"^liblock: invalid argument: ([^:\s]+):")
_BINDING_ARG = re.compile(r"^(\w+(?:\[\d+\])?)[ =]")


def wire_error(e: BaseException) -> Dict[str, Any]:
    if isinstance(e, asyncio.CancelledError):
        return {"code": "CANCELED", "message": "the acquire's task was canceled"}
    codes = [(liblock.NotAcquired, "NOT_ACQUIRED"), (liblock.LockLost, "LOST"),
             (liblock.InvalidArgument, "INVALID_ARGUMENT"), (liblock.ArgumentTypeError, "INVALID_ARGUMENT"),
             (liblock.ClientClosed, "CLOSED"), (liblock.Unavailable, "UNAVAILABLE"),
             (liblock.Canceled, "CANCELED")]
    code = next((c for cls, c in codes if isinstance(e, cls)), "FOREIGN")
    out: Dict[str, Any] = {"code": code, "message": str(e) if code != "FOREIGN" else repr(e)}
    if code == "INVALID_ARGUMENT":
        m = _ENGINE_ARG.match(str(e)) or _BINDING_ARG.match(str(e))
        arg = m.group(1) if m else ""
        out["arg"] = arg[:-3] if arg.endswith("_ms") else arg
    if code == "UNAVAILABLE":
        out["nodes"] = [{"node": n.node, "addr": n.addr, "cause": n.cause} for n in e.nodes]  # type: ignore[attr-defined]
    return out


def note_lost(lid: int, told: bool = False) -> None:
    """Reports a loss the binding knows of, once: told by on_lost, or seen in ``lock.lost``
    before the answer that may report it (on_lost may run after it: on a library thread,
    or soon on the loop). Not while a release of the lock is under way: an extend racing
    it finds the key gone, which is no loss (``lock.lost`` turns false once it is done)."""
    entry = locks.get(lid)
    if entry is None or entry["reported"]:
        return
    if not told:
        # _lost keeps a release from starting while lock.lost is read. on_lost (told) never
        # takes it: it runs on the client's loop thread, which lock.lost may wait for.
        with _lost:
            if entry["releasing"] or not entry["lock"].lost:
                return
    with _reported:
        if entry["reported"]:
            return
        entry["reported"] = True
    say({"event": "lost", "lock": lid})


def new_client(req: Dict[str, Any]) -> Dict[str, Any]:
    kw: Dict[str, Any] = {"backend": BACKEND}
    if "nodeTimeout" in req:
        kw["node_timeout"] = req["nodeTimeout"] / 1000.0
    if "driftFactor" in req:
        kw["drift_factor"] = req["driftFactor"]
    if req.get("keyPrefix"):
        kw["key_prefix"] = req["keyPrefix"]
    if req.get("owner"):
        kw["owner"] = req["owner"]
    cid = next(_ids)
    clients[cid] = liblock.Client(req["nodes"], **kw)
    return {"client": cid}


def acquire_kw(req: Dict[str, Any], lid: int) -> Dict[str, Any]:
    kw: Dict[str, Any] = {"wait": req["wait"] / 1000.0, "auto_extend": req["autoExtend"], "fence": req["fence"],
                          "on_lost": lambda _lock: note_lost(lid, told=True)}
    if req["token"]:
        kw["token"] = req["token"]
    if "permits" in req:
        kw["permits"] = req["permits"]
    if "mode" in req:
        kw["mode"] = req["mode"]
    return kw


def what(req: Dict[str, Any]) -> Any:
    """An acquire's resource, or its list of resources (a multi-resource lock)."""
    return req["resources"] if "resources" in req else req["resource"]


def inspect_kw(req: Dict[str, Any]) -> Dict[str, Any]:
    return {"permits": req["permits"]} if "permits" in req else {}


def campaign_kw(req: Dict[str, Any], lid: int) -> Dict[str, Any]:
    kw: Dict[str, Any] = {"ttl": req["ttl"] / 1000.0, "on_lost": lambda _lock: note_lost(lid, told=True)}
    if "wait" in req:
        kw["wait"] = req["wait"] / 1000.0
    return kw


def campaigned(lid: int, ld: Any) -> Dict[str, Any]:
    locks[lid] = {"lock": ld.lock, "reported": False, "releasing": 0}
    note_lost(lid)
    return {"lock": lid, "term": ld.term, "value": ld.value}


observers: Dict[int, Any] = {}  # the Go side's observer id -> (client id, Observation)


def observe(req: Dict[str, Any]) -> Dict[str, Any]:
    """Observes with a callback (liblock's thread; say is thread-safe) in both modes."""
    oid, name = req["observer"], req["name"]

    def changed(leader: Any) -> None:
        if leader is None:
            say({"event": "leader", "observer": oid, "name": name, "term": 0, "value": "", "owner": "", "validity": None})
        else:
            say({"event": "leader", "observer": oid, "name": name, "term": leader.term, "value": leader.value,
                 "owner": leader.owner, "validity": ms(leader.validity)})

    observers[oid] = (req["client"], clients[req["client"]].observe(name, changed, poll=0.5))
    return {}


def unobserve(oid: int) -> None:
    entry = observers.pop(oid, None)
    if entry is not None:
        entry[1].close()
        say({"event": "observed", "observer": oid})


def close_client(cid: int) -> None:
    for oid, (c, _obs) in list(observers.items()):
        if c == cid:
            unobserve(oid)
    clients[cid].close()


def acquired(lid: int, lock: liblock.Lock, req: Dict[str, Any]) -> Dict[str, Any]:
    locks[lid] = {"lock": lock, "reported": False, "releasing": 0}
    note_lost(lid)  # lost before on_lost could report it
    return {"lock": lid, "key": lock.key, "token": lock.token, "ttl": req["ttl"], "validity": ms(lock.validity),
            "fence": lock.fence, "reentered": lock.reentered}


def inspection(got: Any) -> Dict[str, Any]:
    out = {"held": got.held, "validity": ms(got.validity), "owner": got.owner,
           "nodes": [{"node": n.node, "addr": n.addr, "locked": n.locked, "holder": n.holder, "owner": n.owner,
                      "ttl": ms(n.ttl), "error": n.error} for n in (got.nodes or ())]}
    if getattr(got, "holders", None):
        out["holders"] = [{"slot": h.slot, "owner": h.owner, "validity": ms(h.validity)} for h in got.holders]
    return out


# ---------------------------------------------------------------- sync: a thread a request

def serve_sync(req: Dict[str, Any]) -> None:
    op = req["op"]
    try:
        if op == "client":
            out = new_client(req)
        elif op == "acquire":
            lid = next(_ids)
            lock = clients[req["client"]].acquire(what(req), req["ttl"] / 1000.0, **acquire_kw(req, lid))
            out = acquired(lid, lock, req)
        elif op == "campaign":
            lid = next(_ids)
            out = campaigned(lid, clients[req["client"]].campaign(req["name"], req["value"], **campaign_kw(req, lid)))
        elif op == "observe":
            out = observe(req)
        elif op == "unobserve":
            unobserve(req["observer"])
            out = {}
        elif op in ("extend", "release"):
            entry = locks[req["lock"]]
            lock = entry["lock"]
            try:
                if op == "extend":
                    lock.extend(req["ttl"] / 1000.0)
                else:
                    with _lost:
                        entry["releasing"] += 1
                    try:
                        lock.release()
                    finally:
                        with _lost:
                            entry["releasing"] -= 1
            finally:
                note_lost(req["lock"])
            out = {"validity": ms(lock.validity)} if op == "extend" else {}
        elif op == "validity":
            note_lost(req["lock"])
            out = {"validity": ms(locks[req["lock"]]["lock"].validity)}
        elif op == "inspect":
            out = inspection(clients[req["client"]].inspect(req["resource"], **inspect_kw(req)))
        elif op == "close":
            close_client(req["client"])
            out = {}
        else:
            out = {"error": {"code": "PROTOCOL", "message": f"unknown op {op!r}"}}
    except Exception as e:  # noqa: BLE001 - every failure is an answer
        out = {"error": wire_error(e)}
    say({"id": req["id"], **out})


def main_sync() -> None:
    threads = []
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "cancel":
            continue  # not cancellable from another thread (the Go side skips what needs it)
        t = threading.Thread(target=serve_sync, args=(req,), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()
    for c in clients.values():
        c.close()


# ---------------------------------------------------------------- async: a task a request

async def serve_async(req: Dict[str, Any]) -> None:
    op = req["op"]
    try:
        if op == "client":
            out = new_client(req)
        elif op == "acquire":
            lid = next(_ids)
            lock = await clients[req["client"]].acquire_async(what(req), req["ttl"] / 1000.0,
                                                              **acquire_kw(req, lid))
            out = acquired(lid, lock, req)
        elif op == "campaign":
            lid = next(_ids)
            ld = await clients[req["client"]].campaign_async(req["name"], req["value"], **campaign_kw(req, lid))
            out = campaigned(lid, ld)
        elif op == "observe":
            out = observe(req)
        elif op == "unobserve":
            unobserve(req["observer"])
            out = {}
        elif op in ("extend", "release"):
            entry = locks[req["lock"]]
            lock = entry["lock"]
            try:
                if op == "extend":
                    await lock.extend_async(req["ttl"] / 1000.0)
                else:
                    entry["releasing"] += 1
                    try:
                        await lock.release_async()
                    finally:
                        entry["releasing"] -= 1
            finally:
                note_lost(req["lock"])
            out = {"validity": ms(lock.validity)} if op == "extend" else {}
        elif op == "validity":
            note_lost(req["lock"])
            out = {"validity": ms(locks[req["lock"]]["lock"].validity)}
        elif op == "inspect":
            out = inspection(await clients[req["client"]].inspect_async(req["resource"], **inspect_kw(req)))
        elif op == "close":
            close_client(req["client"])
            out = {}
        else:
            out = {"error": {"code": "PROTOCOL", "message": f"unknown op {op!r}"}}
    except (Exception, asyncio.CancelledError) as e:  # noqa: BLE001 - every failure is an answer
        out = {"error": wire_error(e)}
    say({"id": req["id"], **out})


def forget(tasks: Dict[int, "asyncio.Task[None]"], rid: int, _task: "asyncio.Task[None]") -> None:
    tasks.pop(rid, None)


async def main_async() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=1 << 24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    tasks: Dict[int, asyncio.Task[None]] = {}
    while True:
        line = await reader.readline()
        if not line:
            break
        req = json.loads(line)
        if req["op"] == "cancel":
            task = tasks.get(req["id"])
            if task is not None:
                task.cancel()
            continue
        task = asyncio.ensure_future(serve_async(req))
        tasks[req["id"]] = task
        task.add_done_callback(functools.partial(forget, tasks, req["id"]))
    if tasks:
        await asyncio.gather(*tasks.values(), return_exceptions=True)
    for c in clients.values():
        c.close()


if __name__ == "__main__":
    if MODE == "async":
        asyncio.run(main_async())
    else:
        main_sync()
