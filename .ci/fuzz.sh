#!/usr/bin/env bash
# make fuzz: runs every Go fuzz target (func FuzzXxx) of the module for
# FUZZ_TIME each (default 60s), one at a time, with FUZZ_PARALLEL workers
# (default 1). A crasher is kept by go test in the target package's
# testdata/fuzz/<target>/, where `go test` runs it as a regression seed from
# then on; commit it with its fix. FUZZ_ONLY, a regular expression, picks
# targets by name. Exits non-zero if any target failed, after running all.
set -uo pipefail
GO=${GO:-go}
FUZZ_TIME=${FUZZ_TIME:-60s}
FUZZ_PARALLEL=${FUZZ_PARALLEL:-1}
FUZZ_ONLY=${FUZZ_ONLY:-.}
# go test's -timeout covers the fuzzing too: FUZZ_TIME plus room, so that a
# hang in a target still ends the run.
FUZZ_TIMEOUT=${FUZZ_TIMEOUT:-3h}
cd "$(dirname "$0")/.."
failed=()
for pkg in $($GO list ./... | grep -v '/wasm'); do
  dir=$($GO list -f '{{.Dir}}' "$pkg")
  grep -lq '^func Fuzz' "$dir"/*_test.go 2>/dev/null || continue
  for target in $($GO test -list '^Fuzz' "$pkg" | grep '^Fuzz' | grep -E "$FUZZ_ONLY"); do
    echo "== $pkg $target ($FUZZ_TIME)"
    if ! $GO test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZ_TIME" -timeout "$FUZZ_TIMEOUT" -parallel "$FUZZ_PARALLEL" "$pkg"; then
      failed+=("$pkg $target")
    fi
  done
done
if ((${#failed[@]})); then
  printf 'fuzz: failed: %s (crashers in the package testdata/fuzz/)\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz: every target ran $FUZZ_TIME without a failure"
