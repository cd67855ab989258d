#!/usr/bin/env bash
# The caller's wait in each of this VM's two regimes, made on purpose
# (docs/benchmarks.md, "The caller's wait"): the benchmark runs twice,
#
#   one vCPU:  the client and its redis-servers pinned to CPU 0. A reply is
#              handed from one process to the other on the same CPU, which
#              never goes idle between packets: the fast regime.
#   two vCPUs: the client pinned to CPU 0, the redis-servers to CPU 1. Each
#              waits idle while the other works, and every packet wakes a
#              halted vCPU: the slow regime.
#
# Unpinned, the kernel's placement picks one of the two per run, which is
# why one-node pairs on this VM are bimodal. GOMAXPROCS stays the machine's
# (the runtime would take 1 from the pinned affinity), so every library runs
# with its defaults and only the placement differs. Arguments are passed to
# the test binary (default: pair by pair, 300 rounds).
set -euo pipefail
cd "$(dirname "$0")"
GO=${GO:-go}
args=("$@")
[ ${#args[@]} -gt 0 ] || args=(-test.benchtime 300x)
ncpu=$(nproc)
if [ "$ncpu" -lt 2 ] || ! command -v taskset >/dev/null 2>&1; then
  echo "waitpeers: the two regimes need 2 CPUs and taskset; skipped" >&2
  exit 0
fi
redis=${REDIS_SERVER:-$(command -v redis-server)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#!/bin/sh\nexec taskset -c 1 %s "$@"\n' "$redis" >"$tmp/redis-server-cpu1"
chmod +x "$tmp/redis-server-cpu1"
"$GO" test -c -o "$tmp/waitpeers.test" .
filter() {
  grep -v -e '^Benchmark' -e 'ns/op' -e '^goos' -e '^goarch' -e '^pkg' -e '^cpu:' -e '^PASS' -e '^ok'
}
echo "== one vCPU: the client and redis-server on CPU 0 (the fast regime)"
REDIS_SERVER="$redis" GOMAXPROCS="$ncpu" taskset -c 0 \
  "$tmp/waitpeers.test" -test.run '^$' -test.bench WaitPeers "${args[@]}" | filter
echo
echo "== two vCPUs: the client on CPU 0, redis-server on CPU 1 (the slow regime)"
REDIS_SERVER="$tmp/redis-server-cpu1" GOMAXPROCS="$ncpu" taskset -c 0 \
  "$tmp/waitpeers.test" -test.run '^$' -test.bench WaitPeers "${args[@]}" | filter
