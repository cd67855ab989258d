#!/usr/bin/env bash
# make test-wasm (Node part): the Node suite of scripts/test.sh, every test
# through backend: 'wasm' (liblock.wasm under V8, on the main thread) instead of
# liblock.so, plus the wasm-only tests (test/wasm*.test.js).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$here"
if [ ! -x "$root/build/redisnodes" ] || [ ! -f "$root/build/liblock.wasm" ]; then
  echo "test-node-wasm: build/redisnodes or build/liblock.wasm is missing: run \`make build\` at the repository root" >&2
  exit 1
fi
if ! command -v redis-server >/dev/null 2>&1; then
  echo "test-node-wasm: redis-server is missing: apt-get install -y redis-server" >&2
  exit 1
fi
bash "$here/scripts/npm-ci.sh"
export LIBLOCK_BACKEND=wasm
export LIBLOCK_WASM_PATH="${LIBLOCK_WASM_PATH:-$root/build/liblock.wasm}"
# liblock.so is needed only by the tests that compare both backends' messages.
if [ -f "$root/build/liblock.so" ]; then export LIBLOCK_PATH="${LIBLOCK_PATH:-$root/build/liblock.so}"; fi
# liblock.so's lookup tests run in scripts/test.sh.
exec node --test --test-concurrency=1 --test-timeout=120000 $(ls test/*.test.js | grep -v '/lookup.test.js')
