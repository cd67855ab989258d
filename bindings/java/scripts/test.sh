#!/usr/bin/env bash
# make test-java: the Java binding's tests (JUnit 5, against redis-servers the tests start), with
# Maven's downloads cached under build/m2 so that a fresh clone needs only a JDK (17 or later) and
# Maven. Extra arguments go to mvn (e.g. -Dtest=LockClientTest#waitWinsAfterRelease).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
[ -f "$root/build/liblock.so" ] || { echo "test-java: build/liblock.so is missing: run \`make build\`" >&2; exit 1; }
command -v redis-server >/dev/null 2>&1 || { echo "test-java: redis-server is missing: make deps" >&2; exit 1; }
command -v mvn >/dev/null 2>&1 || { echo "test-java: mvn is missing: apt-get install -y maven (or use a Maven 3.8+)" >&2; exit 1; }
cd "$root/bindings/java"
mkdir -p "$root/build"
# Maven writes target/ here, as make test-interop's Java build does: one at a time.
exec 7>"$root/build/.java-build.lock"
flock 7
mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$root/build/m2" -Dliblock.native.dir="$root/build" "$@" test
# The quick start, as documented, from the packaged jar (its bundled liblock.so), on 3 nodes.
[ $# -eq 0 ] && "$root/build/redisnodes" -n 3 -- bash "$root/bindings/java/scripts/example.sh"
true
