#!/usr/bin/env bash
# Runs bindings/java/examples/QuickStart.java (the documented quick start) against LIBLOCK_NODES:
# make demo runs it under its nodes; make test-java under 3 nodes of its own (build/redisnodes).
# Builds the jar first (Maven's downloads cached in build/m2).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
cd "$root/bindings/java"
mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$root/build/m2" -Dliblock.native.dir="$root/build" package -DskipTests
mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$root/build/m2" dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile="$root/build/java-deps.txt"
# The jar carries linux-x86-64/liblock.so: no LIBLOCK_PATH needed.
exec java -cp "$root/bindings/java/target/liblock-$(tr -d '[:space:]' < "$root/VERSION").jar:$(cat "$root/build/java-deps.txt")" examples/QuickStart.java
