#!/usr/bin/env bash
# Acquire+release pair latency through the Go driver over the wasm engine (wazero)
# beside the same driver over the native engine (core.New), on the same
# redis-servers in the same run, on 1 and
# 5 nodes: the median of each run's p50, and the wasm/native ratio (target
# <= 1.5x). Then the CPU the module (and host) spend per pair without Redis
# I/O (BenchmarkModuleCPU: the node I/O answers at once; its engine=native
# rows are the same engine compiled natively), the module's size,
# compile time (cold and with wazero's on-disk cache) and instantiate time.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
COUNT=${COUNT:-5}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$GO" test -run '^$' -bench 'Pair' -benchtime 2000x -count "$COUNT" ./wasm/host/ | tee "$out"
# The same samples as results rows (build/bench/wasm.json), for make bench's plots.
"$GO" run ./core/internal/benchreport -json build/bench/wasm.json -part "go-wasm-host" < "$out" > /dev/null
echo
awk '
  $1 ~ /^BenchmarkPair\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkPair\//, "", name)
    for (i = 3; i < NF; i++) if ($(i+1) == "p50-µs") { n[name]++; v[name, n[name]] = $i }
    if (!(name in seen)) { seen[name] = 1; order[++k] = name }
  }
  function median(name,   m, i, j, t, a) {
    m = n[name]; for (i = 1; i <= m; i++) a[i] = v[name, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (m % 2) ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    printf "%-22s %14s %8s\n", "pair (median of runs)", "p50 µs/pair", "ratio"
    for (i = 1; i <= k; i++) {
      name = order[i]; med = median(name); ratio = ""
      if (name ~ /\/wasm$/) { base = name; sub(/\/wasm$/, "/native", base); if (base in seen) ratio = sprintf("%.2fx", med / median(base)) }
      printf "%-22s %14.1f %8s\n", name, med, ratio
    }
  }' "$out"
echo
"$GO" test -run '^$' -bench 'ModuleCPU' -benchtime 3000x -count "$COUNT" ./wasm/host/ | tee "$out"
echo
awk '
  $1 ~ /^BenchmarkModuleCPU\// {
    name = $1; sub(/-[0-9]+$/, "", name); sub(/^BenchmarkModuleCPU\//, "", name)
    for (i = 3; i < NF; i++) for (m = 1; m <= 3; m++) if ($(i+1) == metric[m] "-µs") { n[name, m]++; v[name, m, n[name, m]] = $i }
    if (!(name in seen)) { seen[name] = 1; order[++k] = name }
  }
  BEGIN { metric[1] = "pair"; metric[2] = "acquire"; metric[3] = "release" }
  function median(name, m,   c, i, j, t, a) {
    c = n[name, m]; for (i = 1; i <= c; i++) a[i] = v[name, m, i]
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
  }
  END {
    printf "%-22s %10s %10s %10s\n", "module CPU, no I/O", "pair µs", "acquire µs", "release µs"
    for (i = 1; i <= k; i++) printf "%-22s %10.1f %10.1f %10.1f\n", order[i], median(order[i], 1), median(order[i], 2), median(order[i], 3)
  }' "$out"
echo
"$GO" test -run '^$' -bench 'Compile|Instantiate' -benchtime 3x -count 1 ./wasm/host/ | grep -E '^Benchmark'
if [ -f build/liblock.wasm ]; then
  echo "build/liblock.wasm: $(stat -c %s build/liblock.wasm) bytes"
fi
