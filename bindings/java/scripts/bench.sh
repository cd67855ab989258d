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
