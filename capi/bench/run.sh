#!/usr/bin/env bash
# The C ABI's blocking pair beside the C floor (pair.c), with each of the
# two waits the blocking calls can use (poll(2) on the caller's thread, the
# default; Go's netpoller: LIBLOCK_BLOCKING_WAIT=netpoller), in three
# placements: where the kernel puts the program and one redis-server (as a
# user runs them), both on CPU 0 (the fast regime), and the program on CPU 0
# with the redis-server on CPU 1 (the slow regime;
# core/internal/waitpeers/regimes.sh says why this VM has two). GOMAXPROCS
# stays the machine's. The waits alternate process by process, RUNS times.
#
#   bash capi/bench/run.sh [ROUNDS BURST RUNS]   (default 40 50 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
B=build
for f in $B/liblock.so $B/liblock.h; do
  [ -f "$f" ] || { echo "capi bench: $f is missing; run \`make build\` first" >&2; exit 1; }
done
command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ] || { echo "capi bench: needs 2 CPUs and taskset; skipped" >&2; exit 0; }
rounds=${1:-40} burst=${2:-50} runs=${3:-2}
tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || kill "$pid" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
${CC:-cc} -Wall -Werror -O2 -I$B -o "$tmp/pair" capi/bench/pair.c -L$B -llock -Wl,-rpath,"$PWD/$B" -lpthread
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
for placement in "- - unpinned: where the kernel puts them" "0 0 one vCPU: the program and redis-server on CPU 0" "0 1 two vCPUs: the program on CPU 0, redis-server on CPU 1"; do
  read -r pcpu rcpu label <<<"$placement"
  ppin=() rpin=()
  [ "$pcpu" = - ] || ppin=(taskset -c "$pcpu")
  [ "$rcpu" = - ] || rpin=(taskset -c "$rcpu")
  echo "== $label"
  "${rpin[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >"$tmp/redis.log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.05; done
  for run in $(seq "$runs"); do
    for wait in poll netpoller; do
      echo "-- wait: $wait (run $run)"
      LIBLOCK_BLOCKING_WAIT=$wait GOMAXPROCS=$(nproc) "${ppin[@]}" "$tmp/pair" "$port" "$rounds" "$burst"
    done
  done
  kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
  echo
done
