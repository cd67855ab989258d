#!/usr/bin/env bash
# Run by `make demo` under build/redisnodes, which has started a local
# 3-node Redis set and put its URLs in LIBLOCK_NODES (pids in
# LIBLOCK_NODE_PIDS). The nodes are stopped when this script ends.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== liblock demo on $LIBLOCK_NODES"
go run ./core/cmd/liblock-demo
for demo in node-example/demo.sh python-example/demo.sh; do   # python kills a node: last
  if [ -f "$demo" ]; then
    echo; echo "== $demo"; bash "$demo"
  fi
done
