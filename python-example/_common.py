"""Shared bits of the examples: the node URLs from LIBLOCK_NODES and a tiny logger."""

from __future__ import annotations

import os
import sys
import time

_origin = time.time()


def set_origin(wall_clock: float) -> None:
    """Log times relative to this wall-clock instant (shared by several processes)."""
    global _origin
    _origin = wall_clock


def nodes() -> list:
    urls = [u for u in os.environ.get("LIBLOCK_NODES", "").split(",") if u]
    if not urls:
        sys.exit("set LIBLOCK_NODES (comma-separated redis:// URLs), or run python-example/demo.sh")
    return urls


def log(who: str, what: str) -> None:
    print(f"  {time.time() - _origin:6.3f}s  {who:<10} {what}", flush=True)
