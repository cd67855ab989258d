#!/usr/bin/env bash
# make bench (Node part): acquire+release medians through the binding beside
# node-redlock and redis-semaphore's RedlockMutex, on 1 and 5 local nodes,
# then the contention run, then the wasm backend beside the native one
# (bench/wasm-bench.js); all under build/redisnodes.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
if [ ! -x "$root/build/redisnodes" ] || [ ! -f "$root/build/liblock.so" ] || [ ! -f "$root/build/liblock.wasm" ]; then
  echo "bench-node: run \`make build\` at the repository root first" >&2
  exit 1
fi
[ -d node_modules/redlock ] || npm ci --include=dev --no-audit --no-fund --loglevel=error
export LIBLOCK_PATH="${LIBLOCK_PATH:-$root/build/liblock.so}"
export LIBLOCK_WASM_PATH="${LIBLOCK_WASM_PATH:-$root/build/liblock.wasm}"
echo "== Node binding bench (bindings/node/bench/bench.js)"
exec "$root/build/redisnodes" -n 5 -- node bench/bench.js
