// Package hostabi is liblock's engine interface as bytes: the protocol of
// PROTOCOL.md (in this directory), implemented once for liblock.so (capi)
// and liblock.wasm. It keeps the engines in a handle table, decodes one
// event per Step, calls the engine and encodes the actions it emits; Decode
// reads actions back for Go hosts (the wazero adapter) and tests.
//
// It is linked into liblock.wasm, whose size budget forbids fmt, reflect,
// encoding/json and os: use strconv, strings, errors and unicode/utf8. The
// one exception is native only (tlsfiles.go, not built for wasip1): the
// reader of the configuration's TLS files, which the C ABI and the liblock
// command share.
//
// Layer: over the engine, under the artifacts: capi (its configuration and
// liblock.so's engine extension), wasm/module, wasm/host and the liblock
// command (TLSFiles) import it. It imports only the
// standard library, core/engine, core/internal/xerrors and xtime: never
// core (the Go driver) or a test kit, so that liblock.wasm links neither.
package hostabi
