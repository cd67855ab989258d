// Command wasm is liblock's core as a WASI (wasip1) reactor module,
// build/liblock.wasm:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o build/liblock.wasm ./wasm
//
// followed by wasm-opt -Oz: wasm/scripts/build.sh (make build) does both.
//
// It runs the same Redlock code as package core, over a core.Transport
// whose Exec is one batched host call (liblock.exec, msgpack). Its exports
// mirror the C ABI. PROTOCOL.md describes imports, exports and messages;
// package host (wasm/host) is the Go host, on wazero.
//
// Only the exports and imports need GOOS=wasip1; this file lets the package
// build (and go vet ./... run) on other systems too.
package main

func main() {}
