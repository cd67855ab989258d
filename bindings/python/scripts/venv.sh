# Sourced by test.sh and bench.sh: creates build/venv-python if missing and
# installs the pinned requirements file given as $1. Sets ROOT and PY.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
VENV="$ROOT/build/venv-python"
REQ="$ROOT/bindings/python/$1"
PY="$VENV/bin/python"
# Under a lock: make test's lanes run suites that share this venv at the same time.
mkdir -p "$ROOT/build"
{
  flock 9
  if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" || { echo "liblock: cannot create a virtualenv (apt-get install -y python3-venv)" >&2; exit 1; }
  fi
  stamp="$VENV/.installed-$(basename "$REQ")-$(cksum < "$REQ" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ]; then
    "$PY" -m pip install -q --disable-pip-version-check -r "$REQ"
    touch "$stamp"
  fi
} 9>"$ROOT/build/.venv-python.lock"
