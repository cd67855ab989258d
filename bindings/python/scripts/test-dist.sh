#!/usr/bin/env bash
# make test-dist (Python part): what a user gets from `make dist`, tried as a user would,
# in a temp directory outside the repository, with no LIBLOCK_PATH / LIBLOCK_WASM_PATH /
# PYTHONPATH:
#   1. the manylinux x86_64 wheel in a fresh venv (its dependency wasmtime from the index):
#      a client naming no backend runs native, unwarned; one acquire/release with each
#      backend against redis-servers started by build/redisnodes, from the files the
#      wheel carries; `mypy --strict` on tests/installed/typing_check.py against it;
#   2. the liblock-cli wheel into the same venv: `liblock version`, and `liblock run`
#      holding a lock that a second `liblock run` is refused (exit 65);
#   3. the py3-none-any wheel (liblock.wasm only: what macOS, Windows, musl and any other
#      machine install) in a fresh venv: a client naming no backend runs wasm, warned
#      once; backend="native" raises;
#   4. `pip install <checkout>/bindings/python` (the README's command) into another fresh
#      venv: it bundles the library itself; one acquire/release;
#   5. a wheel built from the sdist with Go (no build/ next to it): it carries both files.
# (scripts/test-dist.sh checks the aarch64 wheel's library under qemu, and every tag.)
#   bash bindings/python/scripts/test-dist.sh [DIST_DIR]     (default: build/dist)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
DIST="$(realpath -m "${1:-$ROOT/build/dist}")"
MYPY_PIN="$(grep '^mypy==' "$ROOT/bindings/python/requirements-test.txt")"
shopt -s nullglob
VERSION="$(tr -d '[:space:]' < "$ROOT/VERSION")"
wheels=("$DIST"/liblock-"$VERSION"-py3-none-manylinux_*_x86_64.whl); anys=("$DIST"/liblock-"$VERSION"-py3-none-any.whl)
clis=("$DIST"/liblock_cli-"$VERSION"-*x86_64*.whl); sdists=("$DIST"/liblock-*.tar.gz)
[ ${#wheels[@]} = 1 ] && [ ${#anys[@]} = 1 ] && [ ${#clis[@]} = 1 ] && [ ${#sdists[@]} = 1 ] \
  || { echo "test-dist: expected the x86_64, any and cli wheels and one sdist in $DIST: run \`make dist\`" >&2; exit 1; }
[ -x "$ROOT/build/redisnodes" ] || { echo "test-dist: build/redisnodes is missing: run \`make build\`" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "test-dist: redis-server is missing: apt-get install -y redis-server" >&2; exit 1; }
command -v objdump >/dev/null || { echo "test-dist: objdump is missing: apt-get install -y binutils" >&2; exit 1; }
wheel="${wheels[0]}"; sdist="${sdists[0]}"; any="${anys[0]}"; cli="${clis[0]}"
unset LIBLOCK_PATH LIBLOCK_WASM_PATH PYTHONPATH LIBLOCK_BACKEND PYTHONHOME
export PIP_DISABLE_PIP_VERSION_CHECK=1
tmp="$(mktemp -d /tmp/liblock-dist-py.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
case "$tmp" in "$ROOT"/*) echo "test-dist: $tmp is inside the repository" >&2; exit 1 ;; esac
cp "$ROOT/bindings/python/tests/installed/check_installed.py" "$ROOT/bindings/python/tests/installed/typing_check.py" "$tmp/"
cd "$tmp"

has() { python3 -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' "$1" "$2"; }
for f in liblock/liblock.so liblock/liblock.wasm liblock/py.typed liblock/_version.py; do
  has "$wheel" "$f" || { echo "test-dist: $f is not in $(basename "$wheel")" >&2; exit 1; }
done

echo "== 1. $(basename "$wheel") in a fresh venv ($tmp/venv): no backend named, then both"
python3 -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q "$wheel" "$MYPY_PIN"
"$tmp/venv/bin/python" -c 'import liblock, sys; v = liblock.__version__; sys.exit(0 if v == sys.argv[1] else f"__version__ {v}")' "$VERSION"
"$ROOT/build/redisnodes" -n 3 -- "$tmp/venv/bin/python" check_installed.py auto:native native wasm
echo "mypy --strict typing_check.py (against the installed package)"
"$tmp/venv/bin/python" -m mypy --strict --no-incremental --cache-dir=/dev/null typing_check.py

echo "== 2. $(basename "$cli") into the same venv: the liblock command"
"$tmp/venv/bin/pip" install -q "$cli"
[ "$("$tmp/venv/bin/liblock" version)" = "liblock $VERSION" ] || { echo "test-dist: liblock version says $("$tmp/venv/bin/liblock" version)" >&2; exit 1; }
"$ROOT/build/redisnodes" -n 3 -- "$tmp/venv/bin/liblock" run --node-timeout 1s --wait 5s dist-py-cli -- \
  sh -c '"$0" run --node-timeout 1s --wait 0s dist-py-cli -- true; [ $? = 65 ]' "$tmp/venv/bin/liblock"
echo "liblock run held dist-py-cli (a second run was refused: 65)"

echo "== 3. $(basename "$any") in a fresh venv: no liblock.so anywhere, a client naming no backend runs wasm"
python3 -m venv "$tmp/venv-any"
"$tmp/venv-any/bin/pip" install -q "$any"
if find "$tmp/venv-any" -name 'liblock*.so' | grep -q .; then echo "test-dist: the any wheel installed a liblock.so" >&2; exit 1; fi
"$ROOT/build/redisnodes" -n 3 -- "$tmp/venv-any/bin/python" check_installed.py auto:wasm wasm
"$tmp/venv-any/bin/python" -c '
import liblock
try:
    liblock.Client(["redis://127.0.0.1:1"], backend="native")
except liblock.LibraryError as e:
    print("backend=\"native\" raises:", str(e)[:80], "...")
else:
    raise SystemExit("backend=native worked without liblock.so")'

echo "== 4. pip install <checkout>/bindings/python (the README's command) in a fresh venv"
python3 -m venv "$tmp/venv2"
"$tmp/venv2/bin/pip" install -q "$ROOT/bindings/python"
rm -rf "$ROOT/bindings/python/build" "$ROOT/bindings/python/liblock.egg-info"  # setuptools' in-tree leftovers
"$ROOT/build/redisnodes" -n 1 -- "$tmp/venv2/bin/python" check_installed.py native

echo "== 5. a wheel built from the sdist, with Go"
# setuptools, wheel and build from the repository's test venv (no index needed); no pip
# cache, so that the wheel really is built here, from the sdist's Go sources.
source "$ROOT/bindings/python/scripts/venv.sh" requirements-test.txt
cd "$tmp"
"$PY" -m pip wheel -q --no-deps --no-build-isolation --no-cache-dir -w "$tmp/from-sdist" "$sdist"
built=("$tmp"/from-sdist/liblock-*.whl)
unzip -q -o "${built[0]}" liblock/liblock.so -d "$tmp/from-sdist/x"
want="$("$PY" "$ROOT/bindings/python/setup.py" --platform-tag "$tmp/from-sdist/x/liblock/liblock.so")"
case "$(basename "${built[0]}")" in
  liblock-"$VERSION"-py3-none-"$want".whl) ;;
  *) echo "test-dist: the wheel built from the sdist is $(basename "${built[0]}"), not py3-none-$want" >&2; exit 1 ;;
esac
for f in liblock/liblock.so liblock/liblock.wasm liblock/py.typed; do
  has "${built[0]}" "$f" || { echo "test-dist: $f is not in the wheel built from the sdist" >&2; exit 1; }
done
echo "$(basename "$sdist") -> $(basename "${built[0]}"): liblock.so and liblock.wasm built with Go"
echo "python-dist: 5 passed, 0 failed"
