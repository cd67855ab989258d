#!/usr/bin/env bash
# make test-dist (Node part): the npm tarball of `make dist`, installed as a user would
# (`npm install ./liblock-VERSION.tgz`) into a fresh directory outside the repository,
# with no LIBLOCK_PATH / LIBLOCK_WASM_PATH:
#   1. it carries prebuilt/liblock.so and prebuilt/liblock.wasm; one acquire/release
#      with each backend against redis-servers started by build/redisnodes, loading
#      those files (test/dist/check.js), and its ESM entry;
#   2. it does not install @types/node (an optional peer dependency);
#   3. its type declarations, checked with `tsc --strict` and no skipLibCheck, once with
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
tgzs=("$DIST"/liblock-*.tgz)
[ ${#tgzs[@]} = 1 ] || { echo "test-dist: expected one liblock-*.tgz in $DIST: run \`make dist\`" >&2; exit 1; }
[ -x "$root/build/redisnodes" ] || { echo "test-dist: build/redisnodes is missing: run \`make build\`" >&2; exit 1; }
command -v redis-server >/dev/null || { echo "test-dist: redis-server is missing: apt-get install -y redis-server" >&2; exit 1; }
(cd "$here" && npm ci --include=dev --no-audit --no-fund --loglevel=error)   # typescript
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
for f in prebuilt/liblock.so prebuilt/liblock.wasm index.d.ts index.mjs; do
  [ -f "node_modules/liblock/$f" ] || { echo "test-dist: the tarball has no $f" >&2; exit 1; }
done
if [ -e node_modules/@types/node ]; then
  echo "test-dist: installing the tarball installed @types/node: it must be an optional peer dependency, not a dependency" >&2
  exit 1
fi
"$root/build/redisnodes" -n 3 -- node check.js native wasm

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
echo "node-dist: 4 passed, 0 failed"
