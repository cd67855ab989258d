#!/usr/bin/env bash
# make test-python: pytest for the Python binding against real redis-servers.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh" requirements-test.txt
cd "$ROOT"
for f in build/liblock.so build/redisnodes; do
  [ -f "$f" ] || { echo "liblock: $f is missing; run \`make build\` first" >&2; exit 1; }
done
export PYTHONPATH="$ROOT/bindings/python${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
echo "mypy --strict bindings/python/liblock"
"$PY" -m mypy --strict --no-incremental --cache-dir=/dev/null bindings/python/liblock
exec "$PY" -m pytest -p no:cacheprovider --timeout=120 --timeout-method=thread -q "$@" bindings/python/tests
