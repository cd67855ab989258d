#!/usr/bin/env bash
# make test-wasm (Python part): the Python binding's suite with every Client on the
# wasm backend (LIBLOCK_BACKEND=wasm: build/liblock.wasm under wasmtime, Redis I/O
# through the asyncio host), against real redis-servers. Installs its pinned requirements.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh" requirements-test.txt
cd "$ROOT"
for f in build/liblock.wasm build/redisnodes; do
  [ -f "$f" ] || { echo "liblock: $f is missing; run \`make build\` first" >&2; exit 1; }
done
export PYTHONPATH="$ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
export LIBLOCK_BACKEND=wasm
unset LIBLOCK_WASM_PATH
echo "mypy --strict bindings/python/liblock"
"$PY" -m mypy --strict --no-incremental --cache-dir=/dev/null bindings/python/liblock
# Compile the module once (wasmtime caches compiled code on disk) so that the first
# test does not pay seconds of compilation inside its timeout.
"$PY" -c 'import liblock._wasm as w; c = w.compiled(); print("liblock.wasm: %s compiled in %.2f s (wasmtime cache %s)" % (c.path, c.compile_seconds, "on" if c.cached else "off"))'
echo "pytest (LIBLOCK_BACKEND=wasm)"
exec "$PY" -m pytest -p no:cacheprovider --timeout=120 --timeout-method=thread -q "$@" bindings/python/tests
