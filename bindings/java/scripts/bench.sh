#!/usr/bin/env bash
# make bench: liblock's Java binding beside Redisson (bindings/java/bench, a module of its own),
# the uncontended pair on 1 and 5 local nodes (build/redisnodes). Maven's downloads cached in build/m2.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
mvn=(mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$root/build/m2")
cd "$root/bindings/java"
"${mvn[@]}" -Dliblock.native.dir="$root/build" install -DskipTests
cd bench
"${mvn[@]}" package dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile="$root/build/java-bench-deps.txt"
cp="$root/bindings/java/bench/target/classes:$(cat "$root/build/java-bench-deps.txt")"
for n in 1 5; do
  "$root/build/redisnodes" -n "$n" -- java -cp "$cp" bench.Pair
done
# Contention across two JVMs: 2 x 300 critical sections of 1 ms on one resource, 1 node; the
# time per section is the slower JVM's wall time / 600 (1 ms is the floor).
for impl in liblock redisson; do
  "$root/build/redisnodes" -n 1 -- bash -c '
    java -cp "$1" bench.Contend "$2" 300 > "$3/contend-a.txt" & a=$!
    java -cp "$1" bench.Contend "$2" 300 > "$3/contend-b.txt" & b=$!
    wait $a; wait $b
    awk -v impl="$2" "{ if (\$3 > m) m = \$3 } END { printf \"contention, 2 JVMs, 1 node: %-9s %.2f ms per 1 ms section\\n\", impl, m / 600 }" "$3/contend-a.txt" "$3/contend-b.txt"
  ' _ "$cp" "$impl" "$root/build"
done
