#!/usr/bin/env bash
# Run by `make demo` under build/redisnodes, which has started a local
# 3-node Redis set and put its URLs in LIBLOCK_NODES (pids in
# LIBLOCK_NODE_PIDS). The nodes are stopped when this script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== liblock demo on $LIBLOCK_NODES"
go run ./core/cmd/liblock-demo

echo; echo "== read-write lock: readers serve, the nightly report comes in as the writer"
go run ./core/cmd/liblock-demo-rw

echo; echo "== the liblock command: one cron job, two machines (build/liblock run --wait 0, like flock -n)"
job='echo "  [$LIBLOCK_RESOURCE] report running, token ${LIBLOCK_TOKEN:0:8}…"; sleep 1; echo "  report done"'
build/liblock run --ttl 10s --wait 0 nightly-report -- bash -c "$job" & first=$!
# The second "machine" starts once the first one holds the lock: poll for
# it, 5 s at most. (The job's `sleep 1` is deliberate: the report's work,
# long enough for the second copy to find the lock held.)
held=0
for _ in $(seq 100); do
  build/liblock inspect --json nightly-report | grep -q '"held":true' && { held=1; break; }
  sleep 0.05
done
[ "$held" = 1 ] || { echo "demo: the first copy did not hold the lock within 5 s" >&2; exit 1; }
set +e
build/liblock run --ttl 10s --wait 0 nightly-report -- sh -c 'echo "  second copy ran: a bug"'
echo "  second copy: exit $? (65: held elsewhere; its command never started)"
wait "$first"; echo "  first copy: exit $?"
echo; echo "== liblock elect: run a command only while leading (a standby would wait its turn)"
build/liblock elect --ttl 2s shell-leader --value "replica-$$" -- bash -c 'echo "  leading as $LIBLOCK_VALUE with term $LIBLOCK_TERM"'
echo "  exit $? (the command's; it resigned on the way out)"
build/liblock elect --observe --count 1 shell-leader
echo; echo "== build/liblock doctor (the demo's nodes run without persistence: warnings, explained)"
build/liblock doctor; echo "  doctor: exit $? (1 only on a fail)"
echo; echo "== a Redis Cluster as one node (cluster=yes): 3 shards with a replica each, the engine routing by slot"
build/redisnodes -cluster -n 3 -dir build/demo/cluster -- bash -c '
  build/liblock run --nodes "$LIBLOCK_CLUSTER_URL" --ttl 10s --wait 0 orders:42 -- \
    sh -c "echo \"  [\$LIBLOCK_RESOURCE] ran under the lock: the key {orders:42} lives on one shard, granted once a replica acknowledged it (WAIT 1, the cluster default)\""
  echo "  run: exit $?"
  echo "  doctor, its topology rows (then the data checks on each shard primary):"
  build/liblock doctor --nodes "$LIBLOCK_CLUSTER_URL" | grep -E "cluster state|  shard [0-9]|wait_replicas|^[0-9]+ checks" | sed -e "s/^/  /" -e "s/redis:[^ ]*cluster=yes/CLUSTER_URL/"
'
echo "  cluster stopped: exit $?"
set -e
echo; echo "== Java (bindings/java/examples/QuickStart.java, the jar with its bundled liblock.so)"
bash bindings/java/scripts/example.sh
for demo in node-example/demo.sh python-example/demo.sh; do   # python kills a node: last
  if [ -f "$demo" ]; then
    echo; echo "== $demo"; bash "$demo"
  fi
done
