#!/usr/bin/env bash
# make test-dist (Node part): the npm tarballs of `make dist`, installed as a user would
# (`npm install ./liblock-VERSION.tgz`) into a fresh directory outside the repository,
# with no LIBLOCK_PATH / LIBLOCK_WASM_PATH:
#   1. it carries prebuilt/liblock.wasm and prebuilt/linux-{x64,arm64}/liblock.so; clients
#      naming no backend run native here, unwarned; one acquire/release with each backend
#      against redis-servers started by build/redisnodes, loading those files
#      (test/dist/check.js), and its ESM entry;
#   2. with this platform's liblock.so deleted from the install (as on a platform without
#      one: macOS, Windows, musl...): clients naming no backend run wasm, warned once;
#   3. liblock-cli-VERSION.tgz: `npx liblock version`, and `npx liblock run` holding a
#      lock that a second one is refused (exit 65);
#   4. it does not install @types/node (an optional peer dependency);
#   5. its type declarations, checked with `tsc --strict` and no skipLibCheck, once with
#      lib es2022 only and once with the DOM lib too: test/dist/types-bare.mts (ESM) and
#      types-bare.cts (CommonJS) in the project as installed, without @types/node
#      ("types": []); then test/dist/types.mts and types.cts, which use Node's globals,
#      after `npm install @types/node` (the repository's locked version; "types": ["node"]).
#      tsc is the repository's devDependency (typescript, pinned).
#   bash bindings/node/scripts/test-dist.sh [DIST_DIR]     (default: build/dist)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
root="$(cd "$here/../.." && pwd)"
DIST="$(realpath -m "${1:-$root/build/dist}")"
shopt -s nullglob
VERSION="$(tr -d '[:space:]' < "$root/VERSION")"
tgzs=("$DIST"/liblock-"$VERSION".tgz); clis=("$DIST"/liblock-cli-"$VERSION".tgz)
[ ${#tgzs[@]} = 1 ] && [ -f "${clis[0]}" ] || { echo "test-dist: expected liblock-$VERSION.tgz and liblock-cli-$VERSION.tgz in $DIST: run \`make dist\`" >&2; exit 1; }
[ -x "$root/build/redisnodes" ] || { echo "test-dist: build/redisnodes is missing: run \`make build\`" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "test-dist: redis-server is missing: apt-get install -y redis-server" >&2; exit 1; }
bash "$here/scripts/npm-ci.sh"   # typescript
tsc="$here/node_modules/typescript/bin/tsc"
unset LIBLOCK_PATH LIBLOCK_WASM_PATH LIBLOCK_BACKEND NODE_PATH
tmp="$(mktemp -d /tmp/liblock-dist-node.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
case "$tmp" in "$root"/*) echo "test-dist: $tmp is inside the repository" >&2; exit 1 ;; esac
cp "$here"/test/dist/check.js "$here"/test/dist/types.mts "$here"/test/dist/types.cts "$here"/test/dist/types-bare.mts "$here"/test/dist/types-bare.cts "$tmp/"
cd "$tmp"
echo '{ "name": "liblock-dist-check", "version": "1.0.0", "private": true }' > package.json

echo "== npm install $(basename "${tgzs[0]}") in $tmp"
npm install --no-audit --no-fund --loglevel=error "${tgzs[0]}"
for f in prebuilt/linux-x64/liblock.so prebuilt/linux-arm64/liblock.so prebuilt/liblock.wasm index.d.ts index.mjs; do
  [ -f "node_modules/liblock/$f" ] || { echo "test-dist: the tarball has no $f" >&2; exit 1; }
done
if [ -e node_modules/@types/node ]; then
  echo "test-dist: installing the tarball installed @types/node: it must be an optional peer dependency, not a dependency" >&2
  exit 1
fi
"$root/build/redisnodes" -n 3 -- node check.js auto:native native wasm

echo "== this platform's liblock.so removed from the install: clients naming no backend run wasm"
mv "node_modules/liblock/prebuilt/$(node -p 'process.platform + "-" + process.arch')" "$tmp/moved-native"
"$root/build/redisnodes" -n 3 -- node check.js auto:wasm wasm
mv "$tmp/moved-native" "node_modules/liblock/prebuilt/$(node -p 'process.platform + "-" + process.arch')"

echo "== npm install $(basename "${clis[0]}"): the liblock command"
npm install --no-audit --no-fund --loglevel=error "${clis[0]}"
[ "$(npx --no-install liblock version)" = "liblock $VERSION" ] || { echo "test-dist: npx liblock version says $(npx --no-install liblock version)" >&2; exit 1; }
"$root/build/redisnodes" -n 3 -- npx --no-install liblock run --node-timeout 1s --wait 5s dist-node-cli -- \
  sh -c 'npx --no-install liblock run --node-timeout 1s --wait 0s dist-node-cli -- true; [ $? = 65 ]'
echo "npx liblock run held dist-node-cli (a second run was refused: 65)"

typecheck() {   # typecheck TYPES FILES...
  local types="$1"; shift
  local files; files="$(printf '"%s", ' "$@")"
  for lib in '"es2022"' '"es2022", "dom"'; do
    echo "== tsc --strict, no skipLibCheck, lib [$lib], types [$types]: $* ($("$tsc" --version))"
    cat > tsconfig.json <<JSON
{
  "compilerOptions": {
    "strict": true, "skipLibCheck": false, "noEmit": true,
    "module": "nodenext", "moduleResolution": "nodenext", "target": "es2022",
    "lib": [$lib], "types": [$types]
  },
  "files": [${files%, }]
}
JSON
    node "$tsc" -p tsconfig.json
  done
}
typecheck '' types-bare.mts types-bare.cts
types_node="$(node -p "require('$here/node_modules/@types/node/package.json').version")"
echo "== npm install @types/node@$types_node (a consumer's own, as most Node projects have)"
npm install --no-audit --no-fund --loglevel=error "@types/node@$types_node"
typecheck '"node"' types.mts types.cts types-bare.mts types-bare.cts
echo "node-dist: 6 passed, 0 failed"
