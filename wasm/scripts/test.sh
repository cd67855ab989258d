#!/usr/bin/env bash
# The wasm module's tests: the shared behaviour suite (core/testkit/locktest) run
# through the Go host (wasm/host, wazero) against real redis-servers, plus
# the module's own unit tests. The host tests build the module from this tree
# themselves, so a stale build/liblock.wasm cannot pass them.
set -euo pipefail
cd "$(dirname "$0")/../.."
GO=${GO:-go}
GOOS=wasip1 GOARCH=wasm "$GO" vet ./wasm/module/
GOOS=wasip1 GOARCH=wasm "$GO" vet -tags liblockwasm ./wasm/module/
"$GO" vet ./wasm/...
"$GO" test -race -count=1 -timeout 15m ./wasm/...
if [ -f build/liblock.wasm ]; then
  echo "build/liblock.wasm: $(stat -c %s build/liblock.wasm) bytes"
fi
