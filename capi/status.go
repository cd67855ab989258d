package main

import (
	"github.com/liblock/liblock/core/hostabi"
)

// The status codes (statusOK …) and their default messages (msgCanceled …)
// are in status_gen.go, from core/hostabi/spec/protocol.json.

const abiVersion = hostabi.ABIVersion

// engineProtocolVersion is lock_engine_protocol_version's: the spec's.
const engineProtocolVersion = hostabi.ProtocolVersion

// statusOf maps an error to its status code: hostabi's table, the one
// liblock.wasm uses too.
func statusOf(err error) int32 { return hostabi.StatusOf(err) }
