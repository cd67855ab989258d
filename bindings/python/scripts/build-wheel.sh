#!/usr/bin/env bash
# A wheel of the Python binding that carries build/liblock.so, build/liblock.wasm
# and py.typed as package data (both backends work from it without LIBLOCK_PATH or
# LIBLOCK_WASM_PATH). Built from a staging copy, so the source tree stays clean.
#   bash bindings/python/scripts/build-wheel.sh [OUT_DIR]     (default: build/python-dist)
# The wheel is tagged py3-none-any, but its liblock.so only loads on the platform it
# was built for (Linux, glibc); elsewhere the native backend says so and the wasm
# backend still works (pip install "liblock-*.whl[wasm]").
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh" requirements-test.txt
cd "$ROOT"
OUT="$(realpath -m "${1:-build/python-dist}")"
for f in build/liblock.so build/liblock.wasm; do
  [ -f "$f" ] || { echo "liblock: $f is missing; run \`make build\` first" >&2; exit 1; }
done
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
cp -r bindings/python/pyproject.toml bindings/python/README.md bindings/python/liblock "$stage/"
rm -rf "$stage/liblock/__pycache__"
cp build/liblock.so build/liblock.wasm "$stage/liblock/"
mkdir -p "$OUT"
# --no-build-isolation: setuptools comes from the venv (requirements-test.txt), no index needed.
"$PY" -m pip wheel -q --disable-pip-version-check --no-deps --no-build-isolation -w "$OUT" "$stage"
ls "$OUT"/liblock-*.whl
