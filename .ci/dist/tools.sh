#!/usr/bin/env bash
# The tools `make dist` and `make test-dist` need beyond `make deps`, installed once
# and checked in well under a second when present:
#   zig (the `ziglang` PyPI package, in a venv at build/zig-venv): the C compiler and
#       linker of the cross builds of liblock.so (cgo) against an old glibc floor;
#   qemu-user-static and libc6-arm64-cross (Debian): run the aarch64 artifacts here.
# Prints nothing when everything is there.
#   bash .ci/dist/tools.sh            then: build/zig-venv/bin/python -m ziglang
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ZIG_PIN="ziglang==0.17.0"   # the one zig this build is checked with
VENV="$ROOT/build/zig-venv"

if ! "$VENV/bin/python" -c 'import ziglang' 2>/dev/null \
   || [ "$("$VENV/bin/python" -m pip show ziglang 2>/dev/null | sed -n 's/^Version: //p')" != "${ZIG_PIN#ziglang==}" ]; then
  echo "dist-tools: installing $ZIG_PIN into $VENV" >&2
  python3 -m venv "$VENV"
  PIP_DISABLE_PIP_VERSION_CHECK=1 "$VENV/bin/pip" install -q "$ZIG_PIN"
fi

missing=()
command -v qemu-aarch64-static >/dev/null || command -v qemu-aarch64 >/dev/null || missing+=(qemu-user-static)
[ -e /usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1 ] || missing+=(libc6-arm64-cross)
if [ ${#missing[@]} -gt 0 ]; then
  echo "dist-tools: apt-get install ${missing[*]}" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi
