"""A worker of the soak (core/soak_test.go, make soak): every primitive of the Python
binding in a loop against the nodes it is given while the Go test injects faults,
until its stdin closes; blocking (two threads per primitive) or asyncio (two tasks
per primitive). Every `every` ms, and once more after it closed its client, it
prints one JSON line of its own samples:
  {"t" (seconds since it started),"rss_mb","fds","threads","live" (liblock.live_handles()),"tasks" (asyncio),
   "ops","errors":{kind:n},"done"?}
It times every acquire and campaign: one that returns later than wait_ms + allow_ms is
printed at once as {"late":{"prim","took_ms","outcome","at" (Unix s),"stall_ms" (how late its
25 ms lag probe ran within the span)}}, and each sample
carries "timed":{prim:{"n","max_ms"}}.
argv[1]: JSON {urls, backend ('native'|'wasm'), mode ('sync'|'async'), every (ms), prefix,
wait_ms, allow_ms, leak?, overrun?}; leak (the soak's negative control) keeps a file
descriptor open every 100 operations; overrun (the overrun check's) holds every 50th
reader acquire inside its timed span past the allowance.
Run with the test venv's interpreter (build/venv-python) and PYTHONPATH=bindings/python."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
import threading
import time
from typing import Any, Callable, Dict, List

import liblock

cfg = json.loads(sys.argv[1])
stop = threading.Event()
mu = threading.Lock()
counts: Dict[str, Any] = {"ops": 0, "errors": {}}
WAIT = cfg["wait_ms"] / 1000.0
ALLOW = cfg["allow_ms"] / 1000.0
PRIMS = ["mutex", "auto-extended", "fenced", "semaphore", "read", "write", "multi", "campaign"]
leaked: List[int] = []
T0 = time.monotonic()
timed: Dict[str, Dict[str, float]] = {}
out = threading.Lock()


LAG_EVERY = 0.025
lag_ends: List[float] = []
lag_lags: List[float] = []


lag_since = [0.0]  # when the probe's current sleep began


def lag_note(t0: float) -> None:
    """Records the lag probe's lateness: time the runtime could not run."""
    now = time.monotonic()
    lag = now - t0 - LAG_EVERY
    if lag > 0.001:
        with mu:
            lag_ends.append(now)
            lag_lags.append(lag)
            if len(lag_ends) > 4096:
                del lag_ends[:2048], lag_lags[:2048]


def lag_thread() -> None:
    """The blocking worker's lag probe: a thread (it needs the GIL, as the loops do)."""
    while not stop.is_set():
        t0 = lag_since[0] = time.monotonic()
        time.sleep(LAG_EVERY)
        lag_note(t0)


async def lag_task() -> None:
    """The asyncio worker's lag probe: a task on the event loop the acquires run on."""
    while not stop.is_set():
        t0 = lag_since[0] = time.monotonic()
        await asyncio.sleep(LAG_EVERY)  # the probe's period: its lateness is what it measures
        lag_note(t0)


def stalled(start: float, end: float) -> float:
    """The probe's lateness within [start, end], in seconds, its current wake-up included
    when it is overdue at end (the runtime may end the acquire before it runs the probe)."""
    with mu:
        spans = [(e - lag, e) for e, lag in zip(lag_ends, lag_lags)]
    if lag_since[0]:
        spans.append((lag_since[0] + LAG_EVERY, end))
    total = 0.0
    for s, e in spans:
        if e > start and s < end:
            total += min(e, end) - max(s, start)
    return total


def say(line: Dict[str, Any]) -> None:
    with out:
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()


def started(prim: str) -> int:
    """Counts an acquire of prim as it starts; returns its number."""
    with mu:
        st = timed.setdefault(prim, {"n": 0, "max_ms": 0.0})
        st["n"] += 1
        return int(st["n"])


def overrun_now(prim: str, n: int) -> bool:
    """The negative control: every 50th reader acquire overruns."""
    return bool(cfg.get("overrun")) and prim == "read" and n % 50 == 0


def finished(prim: str, t0: float, e: "BaseException | None") -> None:
    """Records how long an acquire of prim called at t0 took; prints an overrun."""
    now = time.monotonic()
    took = now - t0
    with mu:
        st = timed[prim]
        st["max_ms"] = max(st["max_ms"], took * 1000)
    if took > WAIT + ALLOW:
        outcome = "acquired" if e is None else f"{type(e).__name__}: {str(e)[:300]}"
        say({"late": {"prim": prim, "took_ms": took * 1000, "outcome": outcome, "at": time.time(),
                      "stall_ms": stalled(t0, now) * 1000}})


def note(e: "BaseException | None") -> None:
    with mu:
        if e is None:
            counts["ops"] += 1
            if cfg.get("leak") and counts["ops"] % 100 == 0:
                leaked.append(os.open("/dev/null", os.O_RDONLY))
            return
        kind = type(e).__name__
        counts["errors"][kind] = counts["errors"].get(kind, 0) + 1


def status() -> Dict[str, float]:
    m: Dict[str, float] = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            parts = v.split()
            if parts:
                try:
                    m[k] = float(parts[0])
                except ValueError:
                    pass
    return m


def sample(done: bool = False, tasks: int = 0) -> None:
    st = status()
    with mu:
        line = {"t": time.monotonic() - T0, "rss_mb": st.get("VmRSS", 0) / 1024, "fds": len(os.listdir("/proc/self/fd")),
                "threads": st.get("Threads", 0), "live": liblock.live_handles(), "tasks": tasks,
                "ops": counts["ops"], "errors": dict(counts["errors"]),
                "timed": {k: dict(v) for k, v in timed.items()}}
    if done:
        line["done"] = True
    say(line)


def watch_stdin() -> None:
    sys.stdin.read()
    stop.set()


def acquires(i: int) -> List[Any]:
    """The primitives' acquire arguments (resource, ttl, keywords); the election apart."""
    return [
        (f"m{i % 4}", 2.0, {}),
        (f"a{i % 2}", 1.0, {"auto_extend": True}),
        (f"f{i % 2}", 2.0, {"fence": True}),
        ("s", 2.0, {"permits": 3}),
        ("rw", 2.0, {"mode": "read"}),
        ("rw", 2.0, {"mode": "write"}),
        ([f"x{i % 3}", f"y{i % 3}"], 2.0, {}),
    ]


def run_sync(client: liblock.Client) -> None:
    def loop(p: int, w: int) -> None:
        i = w
        prim = PRIMS[p]
        while not stop.is_set():
            try:
                n, t0, err = started(prim), time.monotonic(), None
                try:
                    if p == 7:
                        ld = client.campaign("e", f"py-{os.getpid()}-{i}", ttl=2.0, wait=WAIT)
                    else:
                        res, ttl, kw = acquires(i)[p]
                        lock = client.acquire(res, ttl, wait=WAIT, **kw)
                except liblock.LockError as e:
                    err = e
                    raise
                finally:
                    if overrun_now(prim, n):
                        time.sleep(2 * (WAIT + ALLOW))  # the negative control's overrun
                    finished(prim, t0, err)
                if p == 7:
                    ld.resign()
                else:
                    if random.random() < 0.25:
                        try:
                            lock.extend(2.0)
                        except liblock.LockError as e:
                            note(e)
                    lock.release()
                note(None)
            except liblock.LockError as e:
                note(e)
            i += 2

    threads = [threading.Thread(target=loop, args=(p, w)) for p in range(8) for w in range(2)]
    threads.append(threading.Thread(target=lag_thread))
    for t in threads:
        t.start()
    every = cfg["every"] / 1000.0
    sample()
    while not stop.wait(every):
        sample()
    for t in threads:
        t.join()
    client.close()
    sample(done=True)


async def run_async(client: liblock.Client) -> None:
    async def loop(p: int, w: int) -> None:
        i = w
        prim = PRIMS[p]
        while not stop.is_set():
            try:
                n, t0, err = started(prim), time.monotonic(), None
                try:
                    if p == 7:
                        ld = await client.campaign_async("e", f"py-{os.getpid()}-{i}", ttl=2.0, wait=WAIT)
                    else:
                        res, ttl, kw = acquires(i)[p]
                        lock = await client.acquire_async(res, ttl, wait=WAIT, **kw)
                except liblock.LockError as e:
                    err = e
                    raise
                finally:
                    if overrun_now(prim, n):
                        await asyncio.sleep(2 * (WAIT + ALLOW))  # the negative control's overrun
                    finished(prim, t0, err)
                if p == 7:
                    await ld.resign_async()
                else:
                    if random.random() < 0.25:
                        try:
                            await lock.extend_async(2.0)
                        except liblock.LockError as e:
                            note(e)
                    await lock.release_async()
                note(None)
            except liblock.LockError as e:
                note(e)
            i += 2

    tasks = [asyncio.ensure_future(loop(p, w)) for p in range(8) for w in range(2)]
    tasks.append(asyncio.ensure_future(lag_task()))
    every = cfg["every"] / 1000.0
    sample(tasks=len(asyncio.all_tasks()))
    while True:
        await asyncio.sleep(every)  # the sampling period, not a wait for a condition
        if stop.is_set():
            break
        sample(tasks=len(asyncio.all_tasks()))
    await asyncio.gather(*tasks)
    client.close()
    sample(done=True, tasks=len(asyncio.all_tasks()) - 1)


def main() -> None:
    threading.Thread(target=watch_stdin, daemon=True).start()
    client = liblock.Client(cfg["urls"], node_timeout=0.2, backend=cfg["backend"], key_prefix=cfg["prefix"])
    if cfg["mode"] == "async":
        asyncio.run(run_async(client))
    else:
        run_sync(client)


if __name__ == "__main__":
    main()
