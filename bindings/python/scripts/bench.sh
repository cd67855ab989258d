#!/usr/bin/env bash
# make bench (Python part): the binding (native and wasm backends, sync and asyncio) beside redis-py and pottery, same run, 1 and 5 nodes.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh" requirements-dev.txt
cd "$ROOT"
for f in build/liblock.so build/liblock.wasm build/redisnodes; do
  [ -f "$f" ] || { echo "liblock: $f is missing; run \`make build\` first" >&2; exit 1; }
done
echo "== Python binding benchmark"
PYTHONPATH="$ROOT/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
  build/redisnodes -n 5 -- "$PY" bindings/python/scripts/bench.py
