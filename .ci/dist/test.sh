#!/usr/bin/env bash
# make test-dist (the platform part; bindings/*/scripts/test-dist.sh install and run the
# Python and npm packages): what `make dist` made for each platform, checked and run:
#   1. one version: VERSION = the packages' versions (npm, wheels, the Java poms) = the library's lock_version() =
#      `liblock version`, and capi/trampoline.h's fallback for builds outside make dist;
#   2. every liblock.so (in the wheels and the npm tarball): its ELF machine, the newest
#      GLIBC_ symbol version it needs (<= 2.17), the libraries it needs, the wheel's tag
#      computed from it (setup.py --platform-tag); the npm copies are the wheels' bytes;
#   3. the x86_64 liblock.so and the aarch64 one (under qemu-aarch64, with Debian's aarch64
#      glibc) each run a C program (.ci/dist/smoke.c) that takes, is refused, releases
#      and retakes a lock against 3 local redis-servers;
#   4. the commands: static, stripped, for the right machine; natively for x86_64,
#      `liblock run` holds a lock while a second `liblock run` of the same name is refused
#      (exit 65); under qemu for aarch64 (no PR_SET_CHILD_SUBREAPER there, which run's
#      supervisor needs), doctor's lock cycle passes on each node;
#   5. `go install github.com/liblock/liblock/core/cmd/liblock@latest` from an empty module
#      cache, the module served by a file GOPROXY made from the committed files (go.mod
#      has no replace directive), its dependencies from the local Go download cache.
#   bash .ci/dist/test.sh [DIST_DIR]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DIST="$(realpath -m "${1:-$ROOT/build/dist}")"
cd "$ROOT"
VERSION="$(tr -d '[:space:]' < VERSION)"
bash .ci/dist/tools.sh
QEMU="$(command -v qemu-aarch64-static || command -v qemu-aarch64)"
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
passed=0
ok() { echo "ok: $* (${SECONDS}s in)"; passed=$((passed + 1)); }
die() { echo "test-dist: $*" >&2; exit 1; }
tmp="$(mktemp -d /tmp/liblock-dist-platforms.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
shopt -s nullglob
one() { local f=("$DIST"/$1); [ ${#f[@]} = 1 ] || die "expected one $1 in $DIST (run make dist)"; echo "${f[0]}"; }
any_whl="$(one "liblock-$VERSION-py3-none-any.whl")"
x64_whl="$(one "liblock-$VERSION-py3-none-manylinux_*_x86_64.whl")"
arm_whl="$(one "liblock-$VERSION-py3-none-manylinux_*_aarch64.whl")"
npm_tgz="$(one "liblock-$VERSION.tgz")"
cli_tgz="$(one "liblock-cli-$VERSION.tgz")"
one "liblock-$VERSION.tar.gz" >/dev/null
one "liblock_cli-$VERSION-*x86_64*.whl" >/dev/null
one "liblock_cli-$VERSION-*aarch64*.whl" >/dev/null

echo "== 1. one version: $VERSION"
fallback="$(sed -n 's/^#define LIBLOCK_VERSION_STRING "\(.*\)".*/\1/p' capi/trampoline.h)"
[ "$fallback" = "$VERSION" ] || die "capi/trampoline.h says $fallback, VERSION says $VERSION"
repo_npm="$(node -p "require('./bindings/node/package.json').version")"
[ "$repo_npm" = "$VERSION" ] || die "bindings/node/package.json says $repo_npm, VERSION says $VERSION"
for t in "$npm_tgz" "$cli_tgz"; do
  v="$(tar -xOzf "$t" package/package.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).version))')"
  [ "$v" = "$VERSION" ] || die "$(basename "$t") has version $v"
done
# The Java binding's Maven coordinates (its pom, the bench module's pom and its dependency on the
# binding) and the coordinates docs/java.md tells users to write.
java_versions="$(python3 - <<'PY'
import xml.etree.ElementTree as ET
ns = {"m": "http://maven.apache.org/POM/4.0.0"}
for path in ("bindings/java/pom.xml", "bindings/java/bench/pom.xml"):
    root = ET.parse(path).getroot()
    print(path, root.find("m:version", ns).text)
    for d in root.iterfind("m:dependencies/m:dependency", ns):
        if d.find("m:groupId", ns).text == "io.github.liblock":
            print(path + ":" + d.find("m:artifactId", ns).text, d.find("m:version", ns).text)
PY
)"
while read -r where v; do
  [ "$v" = "$VERSION" ] || die "$where says $v, VERSION says $VERSION"
done <<<"$java_versions"
grep -q "<version>$VERSION</version>" docs/java.md && grep -q "io.github.liblock:liblock:$VERSION'" docs/java.md ||
  die "docs/java.md's Maven/Gradle coordinates are not version $VERSION"
ok "VERSION, trampoline.h, package.json, both npm tarballs, the wheels' names, the Java poms and docs/java.md: $VERSION"

echo "== 1b. the licence in every artifact"
lic() { python3 - "$@" <<'PY'
import sys, tarfile, zipfile
path = sys.argv[1]
names = zipfile.ZipFile(path).namelist() if path.endswith(".whl") else tarfile.open(path).getnames()
sys.exit(not any(n.rsplit("/", 1)[-1] in ("LICENSE", "LICENSE.txt") for n in names))
PY
}
for a in "$DIST"/*.whl "$DIST"/*.tgz "$DIST"/*.tar.gz; do
  lic "$a" || die "$(basename "$a") carries no LICENSE"
done
ok "LICENSE in every wheel, the sdist and both npm tarballs"

echo "== 2. the native libraries"
mkdir -p "$tmp/x64" "$tmp/arm64" "$tmp/npm"
unzip -q -o "$x64_whl" liblock/liblock.so -d "$tmp/x64"
unzip -q -o "$arm_whl" liblock/liblock.so -d "$tmp/arm64"
tar -xzf "$npm_tgz" -C "$tmp/npm"
cmp "$tmp/x64/liblock/liblock.so" "$tmp/npm/package/prebuilt/linux-x64/liblock.so" || die "the npm linux-x64 liblock.so differs from the wheel's"
cmp "$tmp/arm64/liblock/liblock.so" "$tmp/npm/package/prebuilt/linux-arm64/liblock.so" || die "the npm linux-arm64 liblock.so differs from the wheel's"
has() { python3 -c 'import sys, zipfile; sys.exit(sys.argv[2] not in zipfile.ZipFile(sys.argv[1]).namelist())' "$1" "$2"; }
has "$any_whl" liblock/liblock.so && die "the py3-none-any wheel carries a liblock.so"
has "$any_whl" liblock/liblock.wasm || die "the py3-none-any wheel lacks liblock.wasm"
source bindings/python/scripts/venv.sh requirements-test.txt
cd "$ROOT"
for spec in "x64 x86_64 X86-64 $x64_whl" "arm64 aarch64 AArch64 $arm_whl"; do
  read -r dir arch machine whl <<<"$spec"
  so="$tmp/$dir/liblock/liblock.so"
  readelf -h "$so" | grep "Machine:" | grep -q "$machine" || die "$so: not $machine: $(readelf -h "$so" | grep Machine)"
  glibc="$(objdump -T "$so" | grep -o 'GLIBC_2\.[0-9.]*' | sort -uV | tail -1)"
  [ "$(printf '%s\nGLIBC_2.17\n' "$glibc" | sort -V | tail -1)" = GLIBC_2.17 ] || die "$so needs $glibc (> 2.17)"
  needed="$(readelf -d "$so" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
  tag="$("$PY" bindings/python/setup.py --platform-tag "$so")"
  [ "$(basename "$whl")" = "liblock-$VERSION-py3-none-$tag.whl" ] || die "$(basename "$whl") is not tagged $tag"
  has "$whl" liblock/liblock.wasm || die "$(basename "$whl") lacks liblock.wasm"
  ok "$arch liblock.so: ELF $machine, newest $glibc, needs $needed-> $tag"
done

echo "== 3. liblock.so runs: x86_64 natively, aarch64 under qemu-aarch64"
cc -O1 -Wall -Werror -Icapi -o "$tmp/smoke-x64" .ci/dist/smoke.c -L"$tmp/x64/liblock" -llock
ZIG_TARGET=aarch64-linux-gnu.2.17 .ci/dist/zig-cc -O1 -Wall -Werror -Icapi -o "$tmp/smoke-arm64" .ci/dist/smoke.c -L"$tmp/arm64/liblock" -llock
out="$(build/redisnodes -n 3 -- env LD_LIBRARY_PATH="$tmp/x64/liblock" "$tmp/smoke-x64")"
grep -qx "smoke: ok" <<<"$out" && grep -q "version $VERSION\$" <<<"$out" || die "x86_64 smoke: $out"
ok "x86_64 liblock.so (the wheel's): $(tr '\n' ';' <<<"$out")"
out="$(build/redisnodes -n 3 -- env LD_LIBRARY_PATH="$tmp/arm64/liblock" "$QEMU" "$tmp/smoke-arm64")"
grep -qx "smoke: ok" <<<"$out" && grep -q "version $VERSION\$" <<<"$out" || die "aarch64 smoke: $out"
ok "aarch64 liblock.so (the wheel's) under $(basename "$QEMU"): $(tr '\n' ';' <<<"$out")"

echo "== 4. the commands"
for spec in "x86_64 X86-64" "aarch64 AArch64"; do
  read -r arch machine <<<"$spec"
  bin="$DIST/liblock-$VERSION-linux-$arch"
  readelf -h "$bin" | grep "Machine:" | grep -q "$machine" || die "$bin: not $machine"
  [ -z "$(readelf -l "$bin" | grep INTERP || true)" ] || die "$bin is dynamically linked"
  [ -z "$(readelf -S "$bin" | grep '\.symtab' || true)" ] || die "$bin is not stripped"
  run=("$bin"); [ "$arch" = aarch64 ] && run=("$QEMU" "$bin")
  v="$("${run[@]}" version)"
  [ "$v" = "liblock $VERSION" ] || die "$bin version: $v"
  if [ "$arch" = aarch64 ]; then
    # qemu-user does not emulate PR_SET_CHILD_SUBREAPER, which run's supervisor
    # needs: under qemu the command's own lock cycle is doctor's (acquire,
    # extend twice, release on each node).
    out="$(build/redisnodes -n 3 -- "${run[@]}" doctor --node-timeout 2s 2>&1 || true)"
    [ "$(grep -cE '^redis://[^ ]+ +lock +ok ' <<<"$out")" = 3 ] || { echo "$out" >&2; die "$arch command: doctor's lock cycle did not pass on every node"; }
    ok "$arch command: static, stripped, $(stat -c %s "$bin") bytes, '$v'; doctor took and released a lock on each of 3 nodes"
    continue
  fi
  # The outer run holds dist-cmd while the inner one, refused, exits 65.
  inner="$(printf '%q ' "${run[@]}") run --node-timeout 2s --wait 0s dist-cmd -- true"
  build/redisnodes -n 3 -- "${run[@]}" run --node-timeout 2s --wait 5s dist-cmd -- \
    sh -c "$inner; code=\$?; [ \$code = 65 ] || { echo \"inner run exited \$code, not 65\" >&2; exit 1; }" \
    || die "$arch command: the lock was not held, or not taken"
  ok "$arch command: static, stripped, $(stat -c %s "$bin") bytes, '$v'; run held dist-cmd (a second run exited 65)"
done

echo "== 5. go install github.com/liblock/liblock/core/cmd/liblock@latest, empty module cache"
[ -z "$(grep -E '^[[:space:]]*replace' go.mod || true)" ] || die "go.mod has a replace directive: go install ...@latest refuses it"
"$PY" .ci/dist/goproxy_module.py "$ROOT" "$VERSION" "$tmp/proxy"
(cd "$tmp" && env -u GOFLAGS GOMODCACHE="$tmp/modcache" GOBIN="$tmp/gobin" GOFLAGS="-modcacherw -trimpath" \
  GOPROXY="file://$tmp/proxy,file://$(go env GOMODCACHE)/cache/download,https://proxy.golang.org" \
  GONOSUMDB=github.com/liblock/liblock GONOSUMCHECK=1 GOTOOLCHAIN=local CGO_ENABLED=0 \
  go install github.com/liblock/liblock/core/cmd/liblock@latest) || die "go install failed"
v="$("$tmp/gobin/liblock" version)"
case "$v" in "liblock v$VERSION"*) ;; *) die "the go-installed command says $v" ;; esac
ok "go install ...@latest: '$v'"
echo "platform-dist: $passed passed, 0 failed"
