#!/usr/bin/env bash
# make dist: every artifact of a release, into OUT_DIR (default build/dist):
#   liblock-V-py3-none-any.whl                   liblock.wasm only; requires wasmtime: any OS/CPU
#   liblock-V-py3-none-manylinux_2_17_{x86_64,aarch64}.manylinux2014_*.whl
#                                                 liblock.so (glibc >= 2.17) + liblock.wasm
#   liblock-V.tar.gz                              the sdist (Python + Go sources; builds with Go)
#   liblock_cli-V-py3-none-manylinux_2_17_*.musllinux_1_1_*.whl   the static liblock command
#   liblock-V.tgz                                 npm: prebuilt/liblock.wasm and
#                                                 prebuilt/linux-{x64,arm64}/liblock.so
#   liblock-cli-V.tgz                             npm: `liblock` bin + static commands
#   liblock-V-linux-{x86_64,aarch64}              the static, stripped liblock command
#   SHA256SUMS
# The native files are cross-built with zig as the C compiler (cgo) against glibc 2.17,
# into build/cross/linux-{x64,arm64}/ (rebuilt only when a Go, C or Lua source, go.mod or
# VERSION is newer). V is the VERSION file's.
#   bash .ci/dist/build.sh [OUT_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
OUT="$(realpath -m "${1:-build/dist}")"
GO="${GO:-go}"
VERSION="$(tr -d '[:space:]' < VERSION)"
[ -f build/liblock.wasm ] || { echo "build-dist: build/liblock.wasm is missing: run \`make build\`" >&2; exit 1; }
bash .ci/dist/tools.sh

# stale OUT DIR...: OUT is missing, or a source under DIR... (or VERSION, go.mod) is newer.
stale() {
  local out=$1; shift
  [ -f "$out" ] || return 0
  [ -n "$(find "$@" VERSION go.mod go.sum -newer "$out" \( -name '*.go' -o -name '*.lua' -o -name '*.c' -o -name '*.h' -o -name VERSION -o -name 'go.*' \) -not -name '*_test.go' -print -quit)" ]
}

# dir goarch zig-target
for spec in "linux-x64 amd64 x86_64-linux-gnu.2.17" "linux-arm64 arm64 aarch64-linux-gnu.2.17"; do
  read -r dir goarch target <<<"$spec"
  d="build/cross/$dir"
  mkdir -p "$d"
  if stale "$d/liblock.so" core capi; then
    echo "build-dist: $d/liblock.so (cgo, zig cc -target $target)"
    ZIG_TARGET="$target" CC="$ROOT/.ci/dist/zig-cc" CGO_ENABLED=1 GOOS=linux GOARCH="$goarch" \
      CGO_CFLAGS="-O2 -DLIBLOCK_VERSION=$VERSION" CGO_LDFLAGS="-s" \
      "$GO" build -trimpath -tags liblock_nootel -buildmode=c-shared -ldflags='-s -w' -o "$d/liblock.so.tmp" ./capi
    rm -f "$d/liblock.so.h" "$d/liblock.so.tmp.h"
    mv "$d/liblock.so.tmp" "$d/liblock.so"
  fi
  if stale "$d/liblock" core; then
    echo "build-dist: $d/liblock (static, stripped)"
    CGO_ENABLED=0 GOOS=linux GOARCH="$goarch" \
      "$GO" build -trimpath -ldflags "-s -w -X main.version=$VERSION" -o "$d/liblock.tmp" ./core/cmd/liblock
    mv "$d/liblock.tmp" "$d/liblock"
  fi
done

rm -rf "$OUT" && mkdir -p "$OUT"

echo "== Python"
source bindings/python/scripts/venv.sh requirements-test.txt
cd "$ROOT"
clean() { rm -rf bindings/python/build bindings/python/liblock.egg-info; }
trap clean EXIT
pybuild() {   # pybuild WHAT [env...]: python -m build, quietly, from a clean tree
  local what=$1; shift
  clean
  env "$@" "$PY" -m build --no-isolation "$what" --outdir "$OUT" bindings/python >"$OUT/.python-build.log" 2>&1 \
    || { cat "$OUT/.python-build.log" >&2; exit 1; }
  rm -f "$OUT/.python-build.log"
}
pybuild --sdist
pybuild --wheel LIBLOCK_WASM_ONLY=1
pybuild --wheel LIBLOCK_SO="$ROOT/build/cross/linux-x64/liblock.so"
pybuild --wheel LIBLOCK_SO="$ROOT/build/cross/linux-arm64/liblock.so"
"$PY" .ci/dist/cli_wheel.py build/cross/linux-x64/liblock x86_64 "$VERSION" "$OUT" >/dev/null
"$PY" .ci/dist/cli_wheel.py build/cross/linux-arm64/liblock aarch64 "$VERSION" "$OUT" >/dev/null

echo "== npm"
stage="$(mktemp -d /tmp/liblock-dist-npm.XXXXXX)"
trap 'clean; rm -rf "$stage"' EXIT
mkdir -p "$stage/liblock/prebuilt/linux-x64" "$stage/liblock/prebuilt/linux-arm64"
(cd bindings/node && cp -r index.js index.mjs index.d.ts lib README.md LICENSE package.json "$stage/liblock/")
cp build/liblock.wasm "$stage/liblock/prebuilt/"
cp build/cross/linux-x64/liblock.so "$stage/liblock/prebuilt/linux-x64/"
cp build/cross/linux-arm64/liblock.so "$stage/liblock/prebuilt/linux-arm64/"
cp -r bindings/node/cli "$stage/liblock-cli"
cp LICENSE "$stage/liblock-cli/"
mkdir -p "$stage/liblock-cli/prebuilt/linux-x64" "$stage/liblock-cli/prebuilt/linux-arm64"
cp build/cross/linux-x64/liblock "$stage/liblock-cli/prebuilt/linux-x64/"
cp build/cross/linux-arm64/liblock "$stage/liblock-cli/prebuilt/linux-arm64/"
for p in liblock liblock-cli; do
  # The version is VERSION's; the staged package.json loses what only the repository uses.
  node -e '
    const fs = require("fs"); const f = process.argv[1]; const p = JSON.parse(fs.readFileSync(f, "utf8"));
    p.version = process.argv[2]; delete p.devDependencies; delete p.scripts;
    fs.writeFileSync(f, JSON.stringify(p, null, 2) + "\n");' "$stage/$p/package.json" "$VERSION"
  (cd "$stage/$p" && npm pack --silent --pack-destination "$OUT" >/dev/null)
done

echo "== the command"
cp build/cross/linux-x64/liblock "$OUT/liblock-$VERSION-linux-x86_64"
cp build/cross/linux-arm64/liblock "$OUT/liblock-$VERSION-linux-aarch64"
(cd "$OUT" && sha256sum -- * > SHA256SUMS)
ls -l "$OUT"
