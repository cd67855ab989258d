#!/usr/bin/env bash
# This machine's Python distributions, from the repository's own build (tests/test_portability.py
# builds and installs them; `make dist` makes the release set with scripts/build-dist.sh):
#   liblock-VERSION-py3-none-manylinux_2_XX_ARCH.whl  carrying build/liblock.so, liblock.wasm
#       and py.typed; XX is the newest glibc symbol version liblock.so needs (setup.py reads
#       it from the ELF file, as `objdump -T` shows it)
#   liblock-VERSION.tar.gz  the sdist: the Python sources plus the Go sources (go-src/), so
#       that building a wheel from it builds both libraries with Go
#   bash bindings/python/scripts/build-dist.sh [OUT_DIR]     (default: build/dist)
# The wheel bundles the repository's build/liblock.so and build/liblock.wasm (setup.py checks
# they are newer than their sources; `make build` first).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh" requirements-test.txt
cd "$ROOT"
OUT="$(realpath -m "${1:-build/dist}")"
for f in build/liblock.so build/liblock.wasm; do
  [ -f "$f" ] || { echo "liblock: $f is missing; run \`make build\` first" >&2; exit 1; }
done
mkdir -p "$OUT"
rm -f "$OUT"/liblock-*.whl "$OUT"/liblock-*.tar.gz
# setuptools builds in bindings/python/build (git-ignored): start from nothing, leave nothing.
clean() { rm -rf bindings/python/build bindings/python/liblock.egg-info; }
clean
trap clean EXIT
# --no-isolation: setuptools, wheel and build come from the venv (requirements-test.txt).
"$PY" -m build --no-isolation --sdist --wheel --outdir "$OUT" bindings/python >"$OUT/.python-build.log" 2>&1 \
  || { cat "$OUT/.python-build.log" >&2; exit 1; }
rm -f "$OUT/.python-build.log"
ls "$OUT"/liblock-*.whl "$OUT"/liblock-*.tar.gz
