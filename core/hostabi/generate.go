package hostabi

// The kinds, flags and status table (protocol_gen.go), the Go codec
// (codec_gen.go), the engine's limits, capi's status codes and the Node and
// Python codecs come from spec/protocol.json.
//go:generate go run ./internal/protogen
