#!/usr/bin/env bash
# make test-interop: re-entry by token across runtimes (bindings/interop/*.test.js), then
# the shared behaviour suite over the Node and Python bindings (bindings/interop/suite_test.go).
# Sets up everything the children need itself: the Node package's locked
# dependencies (npm ci), the Python test venv (build/venv-python, shared with
# make test-python) and the Go child (build/interop-child-go); then runs node's
# test runner, with LIBLOCK_INTEROP_REQUIRED=1 so that a missing piece fails
# instead of skipping.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
for f in build/liblock.so build/liblock.wasm build/redisnodes; do
  [ -f "$f" ] || { echo "test-interop: $f is missing: run \`make build\` at the repository root" >&2; exit 1; }
done
command -v redis-server >/dev/null 2>&1 || { echo "test-interop: redis-server is missing: apt-get install -y redis-server" >&2; exit 1; }
GO="${GO:-go}"
"$GO" build -o build/interop-child-go ./bindings/interop/children/go
# The Java child (children/Suite.java, run from source) needs the binding's jar and JNA's: build
# them (Maven's downloads cached in build/m2) and write their classpath. The build holds
# build/.java-build.lock, as make test-java does, since both write bindings/java/target; the
# children run from a copy of the jar, which a later build there cannot change under them.
(
  flock 7
  cd bindings/java
  mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$root/build/m2" -Dliblock.native.dir="$root/build" package -DskipTests
  mvn -B -q -Dstyle.color=never -Dmaven.repo.local="$root/build/m2" dependency:build-classpath -DincludeScope=runtime -Dmdep.outputFile="$root/build/interop-java-deps.txt"
  cp "target/liblock-$(tr -d '[:space:]' < "$root/VERSION").jar" "$root/build/interop-liblock.jar"
) 7>"$root/build/.java-build.lock"
echo "$root/build/interop-liblock.jar:$(cat build/interop-java-deps.txt)" > build/java-classpath.txt
bash bindings/node/scripts/npm-ci.sh
source bindings/python/scripts/venv.sh requirements-test.txt   # sets PY
cd "$root"
export LIBLOCK_PATH="${LIBLOCK_PATH:-$root/build/liblock.so}"
export LIBLOCK_WASM_PATH="${LIBLOCK_WASM_PATH:-$root/build/liblock.wasm}"
export LIBLOCK_INTEROP_REQUIRED=1
# Compile liblock.wasm for wasmtime once (its on-disk cache), so that the
# first Python wasm child does not spend its first answer's time compiling.
PYTHONPATH="$root/bindings/python" "$PY" -c 'import liblock._wasm as w; w.compiled()'
# The shared behaviour suite (core/testkit/locktest) on every binding and backend: Node
# native and wasm, Python asyncio and blocking, native and wasm, and Java, each through its
# child (children/suite.js, suite.py, Suite.java): about 25-35 s each. The hosts run in
# INTEROP_JOBS processes at once (default 2, the re-entry tests counted): the scenarios
# mostly wait (on ttls, node timeouts, frozen nodes), and each process has its own
# redis-servers on free ports and its own goroutine-leak baseline, which is why they are
# processes and not parallel subtests.
"$GO" test -c -o build/interop.test ./bindings/interop/
logs=build/interop-logs
rm -rf "$logs" && mkdir -p "$logs"
groups=('TestNodeNative|TestNodeWasm' 'TestPythonAsyncNative|TestPythonAsyncWasm' 'TestPythonSyncNative|TestPythonSyncWasm' 'TestJava')
jobs_max="${INTEROP_JOBS:-2}"
pids=() names=()
node --test --test-concurrency=1 --test-timeout=300000 bindings/interop/*.test.js >"$logs/reenter.log" 2>&1 &
pids+=($!) names+=(reenter)
for g in "${groups[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  name="${g//|/+}"
  (cd bindings/interop && ../../build/interop.test -test.count=1 -test.timeout=25m -test.v -test.run "^($g)\$") >"$logs/$name.log" 2>&1 &
  pids+=($!) names+=("$name")
done
failed=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then rc=0; else rc=$?; fi
  echo "===== ${names[$i]} (exit $rc) ====="
  if [ "$rc" = 0 ]; then grep -E '^(--- |ok|PASS|FAIL|# (pass|fail|skip))' "$logs/${names[$i]}.log" | grep -v '^    ' | grep -Ev '^--- PASS: Test[A-Za-z]+/' || true
  else cat "$logs/${names[$i]}.log"; failed=1; fi
done
[ "$failed" = 0 ] && echo "test-interop: ok" || { echo "test-interop: FAILED" >&2; exit 1; }
