#!/usr/bin/env bash
# The Python examples against LIBLOCK_NODES (set by `make demo`). Run from any
# directory; without LIBLOCK_NODES it starts its own 3 nodes via build/redisnodes.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
if [ -z "${LIBLOCK_NODES:-}" ]; then
  [ -x "$ROOT/build/redisnodes" ] || { echo "run \`make build\` first" >&2; exit 1; }
  exec "$ROOT/build/redisnodes" -n 3 -- bash "${BASH_SOURCE[0]}"
fi
export PYTHONPATH="$ROOT/bindings/python:$HERE${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
PY="${PYTHON:-python3}"
cd "$HERE"
# 04 kills a node: it must stay last.
for script in 01_ten_workers.py 02_nightly_report.py 03_long_job.py 05_fencing.py; do
  echo
  "$PY" "$script"
done
# 04 needs every node up; an earlier demo (node-example's) may have killed
# one, and then 04 runs on a fresh 3-node set of its own.
echo
all_up=1
IFS=, read -ra pids <<< "${LIBLOCK_NODE_PIDS:-}"
[ ${#pids[@]} -ge 3 ] || all_up=0
for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || all_up=0; done
if [ "$all_up" = 1 ]; then
  "$PY" 04_node_failure.py
else
  echo "(a node of the shared set is down: scenario 4 runs on a fresh 3-node set)"
  "$ROOT/build/redisnodes" -n 3 -- "$PY" 04_node_failure.py
fi
