#!/usr/bin/env bash
# make test-snippets: every program snippet of the READMEs and docs/*.md (marked with
# <!-- snippet: KIND --> before its fence) extracted and run as written against
# 3 real redis-servers that build/redisnodes starts on free loopback ports; see
# .ci/snippets.py. Arguments: markdown files to check instead of the default set.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
for f in build/liblock.so build/liblock.h build/liblock.wasm build/redisnodes; do
  [ -f "$f" ] || { echo "test-snippets: $f is missing: run \`make build\`" >&2; exit 1; }
done
command -v redis-server >/dev/null 2>&1 || { echo "test-snippets: redis-server is missing: apt-get install -y redis-server" >&2; exit 1; }
# The Python tests' venv (liblock comes from bindings/python through PYTHONPATH).
source bindings/python/scripts/venv.sh requirements-test.txt
# The Node package's locked dependencies (koffi, @types/node, typescript), as scripts/test.sh:
# through npm-ci.sh, which takes turns with the other suites of make test that install them.
bash bindings/node/scripts/npm-ci.sh
rm -rf build/_snippets
mkdir -p build/_snippets
SNIPPETS_PY="$PY" exec build/redisnodes -n 3 -dir build/_snippets/nodes -- "$PY" .ci/snippets.py "$@"
