"""make bench's results as rows (core/internal/benchreport/results).

Every figure bench.py prints is also recorded here and written as one JSON file at the end
($LIBLOCK_BENCH_JSON; build/bench/python.json under make bench), which
core/internal/benchreport/plot turns into a table and one SVG chart per scenario. A bar is
liblock's when its name starts with "liblock".
"""
import json
import math
import os
from typing import Any, Dict, List

ROWS: List[Dict[str, Any]] = []

# bench.py's pair variants, by the names its tables give them.
PAIR_NAMES = {
    "sync": "liblock native sync",
    "async": "liblock native asyncio",
    "wasm sync": "liblock wasm sync",
    "wasm async": "liblock wasm asyncio",
    "host sync": "liblock native sync, one driver",
    "raw": "liblock blocking C ABI",
    "sync default": "liblock native sync, defaults",
    "async default": "liblock native asyncio, defaults",
    "wasm sync default": "liblock wasm sync, defaults",
    "wasm async default": "liblock wasm asyncio, defaults",
    "redis-py": "redis-py (the same script, by hand)",
    "redis-py async": "redis-py asyncio Lock",
    "redis-py Lock default": "redis-py Lock, defaults",
    "redis-py async default": "redis-py asyncio Lock, defaults",
    "pottery async": "pottery AIORedlock",
    "pottery default": "pottery Redlock, defaults",
    "pottery async default": "pottery AIORedlock, defaults",
}


def record(scenario: str, unit: str, impl: str, value: float, higher_is_better: bool = False) -> None:
    """Adds one figure; a missing or non-finite one (a stalled peer) is left out."""
    if value is None or not math.isfinite(value):
        return
    ROWS.append({"scenario": scenario, "unit": unit, "impl": impl, "value": value,
                 "liblock": impl.startswith("liblock"), "higher_is_better": higher_is_better})


def record_pairs(n: int, res: Dict[str, float]) -> None:
    """One pair row per variant of bench.py's pairs() on n nodes."""
    for key, us in res.items():
        if key == "n":
            continue
        record(f"pair, {n} node{'s' if n > 1 else ''}", "µs per acquire+release pair (median)",
               PAIR_NAMES.get(key, key), us)


def write(part: str) -> None:
    """Writes the rows to $LIBLOCK_BENCH_JSON (nothing when unset or empty)."""
    out = os.environ.get("LIBLOCK_BENCH_JSON")
    if not out or not ROWS:
        return
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"part": part, "rows": ROWS}, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"\nresults: {len(ROWS)} rows in {out}")
