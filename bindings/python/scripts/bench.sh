#!/usr/bin/env bash
# make bench (Python part): the binding (native and wasm backends, sync and asyncio) beside redis-py, pottery and
# python-redis-lock, same run: pairs on 1 and 5 nodes, contention in one process and two, release->acquire across
# processes (see bench.py's docstring; BENCH_ONLY=contention,wake runs some parts only).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh" requirements-dev.txt
cd "$ROOT"
for f in build/liblock.so build/liblock.wasm build/redisnodes; do
  [ -f "$f" ] || { echo "liblock: $f is missing; run \`make build\` first" >&2; exit 1; }
done
# Its rows also go to build/bench/python.json, for make bench's plots.
export LIBLOCK_BENCH_JSON="${LIBLOCK_BENCH_JSON:-$ROOT/build/bench/python.json}"
echo "== Python binding benchmark"
PYTHONPATH="$ROOT/bindings/python" PYTHONDONTWRITEBYTECODE=1 \
  build/redisnodes -n 5 -- "$PY" bindings/python/scripts/bench.py
# The Redis Cluster part starts (and stops) its own clusters; its rows go to python-cluster.json.
echo "== Python binding, Redis Cluster benchmark (scripts/bench_cluster.py)"
LIBLOCK_BENCH_JSON="$(dirname "$LIBLOCK_BENCH_JSON")/python-cluster.json" \
  PYTHONPATH="$ROOT/bindings/python" PYTHONDONTWRITEBYTECODE=1 "$PY" bindings/python/scripts/bench_cluster.py
