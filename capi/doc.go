// Command capi is liblock's C ABI, built with -buildmode=c-shared into
// liblock.so. The contract is liblock.h and README.md. The
// exports (exports.go) only convert C values, call the Go logic in api.go, turn
// panics into LOCK_INTERNAL and report errors through the err out-parameter
// as C-heap strings. Objects live behind handles (handles.go).
//
// Layer: an artifact, at the top, over the Go driver (core) and the host
// protocol (core/hostabi, for the engine extension). It imports core,
// core/engine, core/hostabi, go-redis (to keep its logger quiet) and
// golang.org/x/sys/unix; nothing imports it: C callers link liblock.so.
package main
