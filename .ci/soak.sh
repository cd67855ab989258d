#!/usr/bin/env bash
# make soak: sets up what the soak's workers need (the Node package's locked
# dependencies, the Python test venv build/venv-python, liblock.so and
# liblock.wasm from make build), then runs TestSoak (core/soak_test.go) for
# SOAK_TIME, sampling every SOAK_SAMPLE.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
for f in build/liblock.so build/liblock.wasm build/redisnodes; do
  [ -f "$f" ] || { echo "soak: $f is missing: run \`make build\` at the repository root" >&2; exit 1; }
done
command -v redis-server >/dev/null 2>&1 || { echo "soak: redis-server is missing: apt-get install -y redis-server" >&2; exit 1; }
GO="${GO:-go}"
bash bindings/node/scripts/npm-ci.sh
source bindings/python/scripts/venv.sh requirements-test.txt   # sets PY
cd "$root"
export LIBLOCK_PATH="${LIBLOCK_PATH:-$root/build/liblock.so}"
export LIBLOCK_WASM_PATH="${LIBLOCK_WASM_PATH:-$root/build/liblock.wasm}"
export LIBLOCK_SOAK_PYTHON="$PY"
export LIBLOCK_SOAK="${SOAK_TIME:-30m}" LIBLOCK_SOAK_SAMPLE="${SOAK_SAMPLE:-10s}"
# Compile liblock.wasm for wasmtime once (its on-disk cache), so that the
# Python wasm workers do not spend their first samples compiling.
PYTHONPATH="$root/bindings/python" "$PY" -c 'import liblock._wasm as w; w.compiled()'
exec "$GO" test -count=1 -run '^TestSoak$' -timeout 0 -v ./core/
