#!/usr/bin/env bash
# Acquire+release pair latency through the wasm module (Go host, wazero)
# beside the native core, on the same redis-servers in the same run, on 1 and
# 5 nodes: the median of each run's p50, and the wasm/native ratio (target
# <= 1.5x). Then the module's size, compile time (cold and with wazero's
# on-disk cache) and instantiate time.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
COUNT=${COUNT:-5}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

"$GO" test -run '^$' -bench 'Pair' -benchtime 2000x -count "$COUNT" ./wasm/host/ | tee "$out"
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
"$GO" test -run '^$' -bench 'Compile|Instantiate' -benchtime 3x -count 1 ./wasm/host/ | grep -E '^Benchmark'
if [ -f build/liblock.wasm ]; then
  echo "build/liblock.wasm: $(stat -c %s build/liblock.wasm) bytes"
fi
