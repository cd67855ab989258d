#!/usr/bin/env bash
# make test-node: installs the package's locked dependencies (npm ci), then
# runs node's built-in test runner on test/*.test.js against real
# redis-servers started by the tests through build/redisnodes.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
if [ ! -x "$root/build/redisnodes" ] || [ ! -f "$root/build/liblock.so" ]; then
  echo "test-node: build/redisnodes or build/liblock.so is missing: run \`make build\` at the repository root" >&2
  exit 1
fi
if ! command -v redis-server >/dev/null 2>&1; then
  echo "test-node: redis-server is missing: apt-get install -y redis-server" >&2
  exit 1
fi
bash "$here/scripts/npm-ci.sh"
export LIBLOCK_PATH="${LIBLOCK_PATH:-$root/build/liblock.so}"
# The wasm backend's own tests run in scripts/test-wasm.sh.
exec node --test --test-concurrency=1 --test-timeout=120000 $(ls test/*.test.js | grep -v '/wasm')
