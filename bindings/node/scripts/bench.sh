#!/usr/bin/env bash
# make bench (Node part): bench/bench.js under 5 local nodes: both backends
# beside node-redlock, redis-semaphore and @sesamecare-oss/redlock (pairs
# with single attempts and with each library's defaults, contention in one and two processes, 32 concurrent resources, a frozen
# node, the wasm cold start; the new primitives beside redis-semaphore's Semaphore /
# RedlockSemaphore and node-redlock's multi-resource acquire); all under build/redisnodes.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
if [ ! -x "$root/build/redisnodes" ] || [ ! -f "$root/build/liblock.so" ] || [ ! -f "$root/build/liblock.wasm" ]; then
  echo "bench-node: run \`make build\` at the repository root first" >&2
  exit 1
fi
[ -d node_modules/@sesamecare-oss/redlock ] || bash scripts/npm-ci.sh
export LIBLOCK_PATH="${LIBLOCK_PATH:-$root/build/liblock.so}"
export LIBLOCK_WASM_PATH="${LIBLOCK_WASM_PATH:-$root/build/liblock.wasm}"
# Its rows also go to build/bench/node.json, for make bench's plots.
export LIBLOCK_BENCH_JSON="${LIBLOCK_BENCH_JSON:-$root/build/bench/node.json}"
echo "== Node binding bench (bindings/node/bench/bench.js)"
"$root/build/redisnodes" -n 5 -- node bench/bench.js
# The Redis Cluster part starts (and stops) its own clusters; its rows go to node-cluster.json.
echo "== Node binding, Redis Cluster bench (bindings/node/bench/cluster.js)"
LIBLOCK_BENCH_JSON="$(dirname "$LIBLOCK_BENCH_JSON")/node-cluster.json" node bench/cluster.js
