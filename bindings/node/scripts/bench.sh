#!/usr/bin/env bash
# make bench (Node part): acquire+release medians through the binding beside
# node-redlock and redis-semaphore's RedlockMutex, on 1 and 5 local nodes,
# then the contention run; all under build/redisnodes.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
if [ ! -x "$root/build/redisnodes" ] || [ ! -f "$root/build/liblock.so" ]; then
  echo "bench-node: run \`make build\` at the repository root first" >&2
  exit 1
fi
[ -d node_modules/redlock ] || npm ci --include=dev --no-audit --no-fund --loglevel=error
export LIBLOCK_PATH="${LIBLOCK_PATH:-$root/build/liblock.so}"
echo "== Node binding bench (bindings/node/bench/bench.js)"
exec "$root/build/redisnodes" -n 5 -- node bench/bench.js
