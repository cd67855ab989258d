"""python-example/demo.sh (what `make demo` runs) keeps working: it starts its own
3 nodes through build/redisnodes when LIBLOCK_NODES is unset."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.native_only  # the demo runs on the default backend; it does not exercise wasm
def test_demo_script(tmp_path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIBLOCK_")}
    p = subprocess.run(["bash", str(ROOT / "python-example" / "demo.sh")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    out = p.stdout
    assert "final balance 100" in out
    assert "the report ran 1 time(s) out of 5 starts" in out
    assert "on_lost was called 0 time(s)" in out
    # Fences are large (at least the servers' clock in µs): compare them.
    stale = re.search(r"stale fence refused: fence (\d+) < (\d+)", out)
    assert stale and int(stale[1]) < int(stale[2]) and "reentered=True" in out, out
    assert "50/50 rounds with node 0 dead" in out and "Unavailable" in out
