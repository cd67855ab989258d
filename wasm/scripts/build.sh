#!/usr/bin/env bash
# Builds liblock.wasm into $1: go build for wasip1 (a reactor, -buildmode=
# c-shared, stripped, -tags liblockwasm), then binaryen's wasm-opt -Oz, which
# takes ~8 % off the code section (≈ 140 KB). The result was 2,430,104 bytes
# when measured; an empty Go reactor built the same way is 1,741,173, so a
# 2 MiB module is out of reach (wasm/README.md "The floor"). The Makefile
# and the Go host's tests both build through this script, so the tests run
# exactly the artifact that ships.
set -euo pipefail
out=${1:?usage: wasm/scripts/build.sh OUT.wasm}
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
cd "$(dirname "$0")/../.."
GO=${GO:-go}
if ! command -v wasm-opt >/dev/null 2>&1; then
  echo "liblock: wasm-opt not found; install binaryen: apt-get update && apt-get install -y binaryen   (or run \`make deps\`)" >&2
  exit 1
fi
tmp=$(mktemp "${out}.go.XXXXXX")
trap 'rm -f "$tmp"' EXIT
# -tags liblockwasm: the engine's own small package time (core/internal/xtime).
GOOS=wasip1 GOARCH=wasm "$GO" build -trimpath -tags liblockwasm -buildmode=c-shared -ldflags='-s -w' -o "$tmp" ./wasm/module
# Go's wasm output uses these post-MVP features; wasm-opt must be told.
wasm-opt -Oz --enable-sign-ext --enable-nontrapping-float-to-int --enable-bulk-memory --enable-mutable-globals \
  "$tmp" -o "$out"
