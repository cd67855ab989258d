#!/usr/bin/env bash
# make test-dist (Python part): what a user gets from `make dist`, tried as a user would,
# in a temp directory outside the repository, with no LIBLOCK_PATH / LIBLOCK_WASM_PATH /
# PYTHONPATH:
#   1. the wheel, installed with its [wasm] extra (and mypy) into a fresh venv: one
#      acquire/release with each backend against a redis-server started by
#      build/redisnodes, from the files the wheel carries; its platform tag is the one
#      `objdump -T` of liblock.so implies; `mypy --strict` on tests/installed/typing_check.py
#      against the installed package (py.typed);
#   2. `pip install <checkout>/bindings/python` (the README's command) into another fresh
#      venv: it bundles the library itself; one acquire/release;
#   3. a wheel built from the sdist with Go (no build/ next to it): it carries both files.
#   bash bindings/python/scripts/test-dist.sh [DIST_DIR]     (default: build/dist)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
DIST="$(realpath -m "${1:-$ROOT/build/dist}")"
MYPY_PIN="$(grep '^mypy==' "$ROOT/bindings/python/requirements-test.txt")"
shopt -s nullglob
wheels=("$DIST"/liblock-*.whl); sdists=("$DIST"/liblock-*.tar.gz)
[ ${#wheels[@]} = 1 ] && [ ${#sdists[@]} = 1 ] || { echo "test-dist: expected one wheel and one sdist in $DIST: run \`make dist\`" >&2; exit 1; }
[ -x "$ROOT/build/redisnodes" ] || { echo "test-dist: build/redisnodes is missing: run \`make build\`" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "test-dist: redis-server is missing: apt-get install -y redis-server" >&2; exit 1; }
command -v objdump >/dev/null || { echo "test-dist: objdump is missing: apt-get install -y binutils" >&2; exit 1; }
wheel="${wheels[0]}"; sdist="${sdists[0]}"
unset LIBLOCK_PATH LIBLOCK_WASM_PATH PYTHONPATH LIBLOCK_BACKEND PYTHONHOME
export PIP_DISABLE_PIP_VERSION_CHECK=1
tmp="$(mktemp -d /tmp/liblock-dist-py.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
case "$tmp" in "$ROOT"/*) echo "test-dist: $tmp is inside the repository" >&2; exit 1 ;; esac
cp "$ROOT/bindings/python/tests/installed/check_installed.py" "$ROOT/bindings/python/tests/installed/typing_check.py" "$tmp/"
cd "$tmp"

echo "== the wheel's platform tag"
glibc="$(objdump -T "$ROOT/build/liblock.so" | grep -o 'GLIBC_2\.[0-9]*' | sort -t. -k2 -n | tail -1)"
want="manylinux_2_${glibc#GLIBC_2.}_$(uname -m)"
case "$(basename "$wheel")" in
  *-py3-none-"$want".whl) echo "$(basename "$wheel"): $want (liblock.so needs $glibc)" ;;
  *) echo "test-dist: $(basename "$wheel") is not tagged py3-none-$want (liblock.so needs $glibc)" >&2; exit 1 ;;
esac
has() { python3 -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' "$1" "$2"; }
for f in liblock/liblock.so liblock/liblock.wasm liblock/py.typed; do
  has "$wheel" "$f" || { echo "test-dist: $f is not in $(basename "$wheel")" >&2; exit 1; }
done

echo "== the wheel in a fresh venv ($tmp/venv), both backends"
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q "$wheel[wasm]" "$MYPY_PIN"
"$ROOT/build/redisnodes" -n 3 -- "$tmp/venv/bin/python" check_installed.py native wasm
echo "mypy --strict typing_check.py (against the installed package)"
"$tmp/venv/bin/python" -m mypy --strict --no-incremental --cache-dir=/dev/null typing_check.py

echo "== pip install <checkout>/bindings/python (the README's command) in a fresh venv"
python3 -m venv "$tmp/venv2"
"$tmp/venv2/bin/pip" install -q "$ROOT/bindings/python"
rm -rf "$ROOT/bindings/python/build" "$ROOT/bindings/python/liblock.egg-info"  # setuptools' in-tree leftovers
"$ROOT/build/redisnodes" -n 1 -- "$tmp/venv2/bin/python" check_installed.py native

echo "== a wheel built from the sdist, with Go"
# setuptools, wheel and build from the repository's test venv (no index needed); no pip
# cache, so that the wheel really is built here, from the sdist's Go sources.
source "$ROOT/bindings/python/scripts/venv.sh" requirements-test.txt
cd "$tmp"
"$PY" -m pip wheel -q --no-deps --no-build-isolation --no-cache-dir -w "$tmp/from-sdist" "$sdist"
built=("$tmp"/from-sdist/liblock-*.whl)
case "$(basename "${built[0]}")" in
  *-py3-none-"$want".whl) ;;
  *) echo "test-dist: the wheel built from the sdist is $(basename "${built[0]}"), not py3-none-$want" >&2; exit 1 ;;
esac
for f in liblock/liblock.so liblock/liblock.wasm liblock/py.typed; do
  has "${built[0]}" "$f" || { echo "test-dist: $f is not in the wheel built from the sdist" >&2; exit 1; }
done
echo "$(basename "$sdist") -> $(basename "${built[0]}"): liblock.so and liblock.wasm built with Go"
echo "python-dist: 3 passed, 0 failed"
