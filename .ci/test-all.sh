#!/usr/bin/env bash
# make test: every suite, a few at a time.
#
# Usage: test-all.sh [-j JOBS] TARGET...
#
# JOBS workers (default 3) each take the next make target of the list, in the
# order given, until none is left: given longest first, the long suites start
# at once and the short ones fill the gaps (a greedy longest-first schedule,
# within a few percent of the best for suites like these). Most suites wait on
# Redis round trips, node timeouts and child processes rather than on the CPU,
# so three workers on two cores finish in about a third of the suites' sum.
#
# Each suite's output goes to build/test-logs/TARGET.log and is printed whole
# once the suite ends (so a runner's closing lines stay together), then a
# table of every suite's time and result, then one closing line.
set -uo pipefail
cd "$(dirname "$0")/.."
jobs=3
if [ "${1:-}" = "-j" ]; then jobs=$2; shift 2; fi
[ $# -gt 0 ] || { echo "usage: $0 [-j JOBS] TARGET..." >&2; exit 64; }
logs=build/test-logs
rm -rf "$logs" && mkdir -p "$logs"
make=${MAKE:-make}

# The queue: one target per line; a worker takes the first line under a lock.
printf '%s\n' "$@" >"$logs/.queue"

next_target() {
  {
    flock 8
    local t
    t=$(head -n 1 "$logs/.queue")
    tail -n +2 "$logs/.queue" >"$logs/.queue.rest" && mv "$logs/.queue.rest" "$logs/.queue"
    echo "$t"
  } 8>"$logs/.queue.lock"
}

# worker: runs targets from the queue until it is empty; writes TARGET.rc and TARGET.secs.
worker() {
  local target start
  while target=$(next_target) && [ -n "$target" ]; do
    start=$SECONDS
    $make --no-print-directory "$target" >"$logs/$target.log" 2>&1
    echo $? >"$logs/$target.rc"
    echo $((SECONDS - start)) >"$logs/$target.secs"
    echo "$1 $start $SECONDS" >"$logs/$target.span"
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
for ((w = 1; w <= jobs; w++)); do
  worker "$w" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done

passed=0 failed=0
echo
echo "suite              seconds  worker  from    to  result"
for target in "$@"; do
  rc=$(cat "$logs/$target.rc" 2>/dev/null || echo 1)
  if [ "$rc" = 0 ]; then result=ok; passed=$((passed + 1)); else result="FAILED ($rc)"; failed=$((failed + 1)); fi
  read -r w from to <"$logs/$target.span" 2>/dev/null || { w=- from=- to=-; }
  [ "$from" != - ] && from=$((from - start)) to=$((to - start))
  printf '%-18s %7s  %6s  %4s  %4s  %s\n' "$target" "$(cat "$logs/$target.secs" 2>/dev/null || echo -)" "$w" "$from" "$to" "$result"
done
printf '%-18s %7s\n' "wall clock" "$((SECONDS - start))"
echo
echo "suites: $passed passed, $failed failed"
[ "$failed" = 0 ]
