#!/usr/bin/env bash
# The Node examples against LIBLOCK_NODES (set by `make demo`). Runs from any
# directory; without LIBLOCK_NODES it starts its own 3 nodes via
# build/redisnodes. Installs the binding's dependencies (npm ci) if needed.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
if [ -z "${LIBLOCK_NODES:-}" ]; then
  [ -x "$ROOT/build/redisnodes" ] || { echo "run \`make build\` first" >&2; exit 1; }
  exec "$ROOT/build/redisnodes" -n 3 -- bash "${BASH_SOURCE[0]}"
fi
bash "$ROOT/bindings/node/scripts/npm-ci.sh"
export LIBLOCK_PATH="${LIBLOCK_PATH:-$ROOT/build/liblock.so}"
# `require('liblock')` resolves to the binding in this repository.
export NODE_PATH="$HERE/node_modules_link${NODE_PATH:+:$NODE_PATH}"
mkdir -p "$HERE/node_modules_link"
ln -sfn "$ROOT/bindings/node" "$HERE/node_modules_link/liblock"
cd "$HERE"
for script in 01_ten_tasks.js 02_cron_once.js 03_long_job.js 05_fencing.js; do
  echo
  node "$script"
done
echo
# 04 kills a node, so it runs last (after 05); if an earlier demo (the Python one) has
# already killed a node of this set, it gets a fresh 3-node set of its own.
all_alive=1
IFS=, read -ra pids <<< "${LIBLOCK_NODE_PIDS:-}"
[ ${#pids[@]} -ge 3 ] || all_alive=0
for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null || all_alive=0; done
if [ "$all_alive" = 1 ]; then
  node 04_node_failure.js
else
  echo "(a node of this set is already down — killed by an earlier demo — so (4) runs on a fresh 3-node set)"
  "$ROOT/build/redisnodes" -n 3 -- node 04_node_failure.js
fi
