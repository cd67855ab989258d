// Command protogen writes, from the host protocol's spec
// (core/hostabi/spec/protocol.json), the tables and codecs every host uses:
// Go constants for core/hostabi, core/engine and capi, core/hostabi's Go
// codec (gencodec.go says how the spec's go keys map it), the JavaScript
// and Python codecs of the Node and Python hosts, and the Java binding's
// status codes and limits. Run it with
// `go generate ./core/hostabi`; TestGeneratedUpToDate fails when a
// committed file differs from what it would write.
//
// Layer: a build tool (go generate), beside the host protocol: it imports
// only the standard library and writes the generated files of core/hostabi,
// core/engine, capi and the bindings; nothing imports it.
package main
