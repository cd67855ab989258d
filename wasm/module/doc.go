// Command module is liblock's engine as a WASI (wasip1) reactor module,
// build/liblock.wasm:
//
//	GOOS=wasip1 GOARCH=wasm go build -tags liblockwasm -buildmode=c-shared -o build/liblock.wasm ./wasm/module
//
// followed by wasm-opt -Oz: wasm/scripts/build.sh (make build) does both. The
// liblockwasm tag swaps in the engine's small stand-ins for package time,
// sort.Slice and errors.As (core/internal/xtime, xsort, xerrors);
// without it the module builds too, larger.
//
// It exports the engine interface of core/hostabi/PROTOCOL.md
// (lock_engine_new, lock_engine_step, lock_engine_free, lock_buffer,
// lock_abi_version) and imports nothing but WASI: the host owns the
// sockets and one timer, and the engine tells it what to do. Package host
// (wasm/host) is the Go host, on wazero.
//
// Layer: an artifact, at the top, over the host protocol: under wasip1 it
// imports only core/hostabi and the standard library
// (wasm/module/deps_test.go keeps out what would swell the module); never
// core (the Go driver), wazero or a test kit. Nothing imports it: hosts
// load liblock.wasm.
package main
