#!/usr/bin/env bash
# make test: every suite, in lanes that run side by side.
#
# Usage: test-all.sh "LANE1 TARGETS" "LANE2 TARGETS" ...
#
# Each lane runs its make targets one after another; the lanes run at the
# same time. Most suites wait on Redis round trips, node timeouts and child
# processes rather than on the CPU, so three lanes on two cores finish in
# about the time of the longest. The CPU-heavy race run of the Go packages
# shares its lane with the lightest suites.
#
# Each suite's output goes to build/test-logs/TARGET.log and is printed
# whole once the suite ends (so a runner's closing lines stay together),
# then a table of every suite's time and result, then one closing line.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=build/test-logs
rm -rf "$logs" && mkdir -p "$logs"
make=${MAKE:-make}

# run_lane TARGETS: each target in turn; writes TARGET.rc and TARGET.secs.
run_lane() {
  for target in $1; do
    local start=$SECONDS
    $make --no-print-directory "$target" >"$logs/$target.log" 2>&1
    echo $? >"$logs/$target.rc"
    echo $((SECONDS - start)) >"$logs/$target.secs"
    # One lock for printing, so two suites' logs never interleave.
    {
      flock 9
      echo "===== $target ($(cat "$logs/$target.secs") s, exit $(cat "$logs/$target.rc")) ====="
      cat "$logs/$target.log"
    } 9>"$logs/.print.lock"
  done
}

start=$SECONDS
pids=()
targets=()
for lane in "$@"; do
  run_lane "$lane" &
  pids+=($!)
  targets+=($lane)
done
for pid in "${pids[@]}"; do wait "$pid"; done

passed=0 failed=0
echo
echo "suite            seconds  result"
for target in "${targets[@]}"; do
  rc=$(cat "$logs/$target.rc" 2>/dev/null || echo 1)
  if [ "$rc" = 0 ]; then result=ok; passed=$((passed + 1)); else result="FAILED ($rc)"; failed=$((failed + 1)); fi
  printf '%-16s %7s  %s\n' "$target" "$(cat "$logs/$target.secs" 2>/dev/null || echo -)" "$result"
done
printf '%-16s %7s\n' "wall clock" "$((SECONDS - start))"
echo
echo "suites: $passed passed, $failed failed"
[ "$failed" = 0 ]
