package abi

import (
	"context"
	"errors"

	"github.com/liblock/liblock/core"
)

// Version is the module's ABI version (lock_abi_version), the C ABI's.
const Version = 1

// Status codes, the C ABI's.
const (
	OK              int32 = 0
	NotAcquired     int32 = 1
	Lost            int32 = 2
	InvalidArgument int32 = 3
	InvalidHandle   int32 = 4
	Unavailable     int32 = 5
	Canceled        int32 = 6
	Internal        int32 = 7
	// Pending is wasm-only: lock_op_result of an acquire still running.
	Pending int32 = 8
)

// StatusOf maps an error of the core to its status code.
func StatusOf(err error) int32 {
	switch {
	case err == nil:
		return OK
	case errors.Is(err, core.ErrInvalidArgument):
		return InvalidArgument
	case errors.Is(err, core.ErrUnavailable):
		return Unavailable
	case errors.Is(err, core.ErrNotAcquired):
		return NotAcquired
	case errors.Is(err, core.ErrLost):
		return Lost
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, core.ErrClosed):
		return Canceled
	}
	return Internal
}

// ErrorRecord is the JSON object a failed call returns through its err
// out-parameter. Message is always set; the rest only where it applies.
type ErrorRecord struct {
	Message string      `json:"message"`
	Arg     string      `json:"arg,omitempty"`    // INVALID_ARGUMENT: the argument or key
	Reason  string      `json:"reason,omitempty"` // INVALID_ARGUMENT, UNAVAILABLE
	Op      string      `json:"op,omitempty"`     // UNAVAILABLE: acquire, extend or release
	Nodes   []NodeError `json:"nodes,omitempty"`  // UNAVAILABLE: each failed node
}

// NodeError is one node's failure inside an ErrorRecord.
type NodeError struct {
	Node  int    `json:"node"`
	Addr  string `json:"addr"`
	Error string `json:"error"`
}

// RecordOf describes err.
func RecordOf(err error) ErrorRecord {
	rec := ErrorRecord{Message: err.Error()}
	var ae *core.ArgumentError
	var ue *core.UnavailableError
	switch {
	case errors.As(err, &ae):
		rec.Arg, rec.Reason = ae.Arg, ae.Reason
	case errors.As(err, &ue):
		rec.Op, rec.Reason = ue.Op, ue.Reason
		for _, n := range ue.Nodes {
			rec.Nodes = append(rec.Nodes, NodeError{Node: n.Node, Addr: n.Addr, Error: n.Err.Error()})
		}
	}
	return rec
}

// EncodeError is RecordOf as JSON.
func EncodeError(err error) []byte {
	rec := RecordOf(err)
	w := newJSONWriter()
	w.str("message", rec.Message)
	if rec.Arg != "" {
		w.str("arg", rec.Arg)
	}
	if rec.Reason != "" {
		w.str("reason", rec.Reason)
	}
	if rec.Op != "" {
		w.str("op", rec.Op)
	}
	if len(rec.Nodes) > 0 {
		b := []byte{'['}
		for i, n := range rec.Nodes {
			if i > 0 {
				b = append(b, ',')
			}
			nw := newJSONWriter()
			nw.int("node", int64(n.Node))
			nw.str("addr", n.Addr)
			nw.str("error", n.Error)
			b = append(b, nw.bytes()...)
		}
		w.raw("nodes", append(b, ']'))
	}
	return w.bytes()
}

// Info is what lock_info describes.
type Info struct {
	Resource   string `json:"resource"`
	Key        string `json:"key"`
	Token      string `json:"token"`
	ValidityMS int64  `json:"validity_ms"`
	TTLMS      int64  `json:"ttl_ms"`
	AutoExtend bool   `json:"auto_extend"`
	Lost       bool   `json:"lost"`
	Released   bool   `json:"released"`
}

// EncodeInfo writes in as a JSON object.
func EncodeInfo(in Info) []byte {
	w := newJSONWriter()
	w.str("resource", in.Resource)
	w.str("key", in.Key)
	w.str("token", in.Token)
	w.int("validity_ms", in.ValidityMS)
	w.int("ttl_ms", in.TTLMS)
	w.bool("auto_extend", in.AutoExtend)
	w.bool("lost", in.Lost)
	w.bool("released", in.Released)
	return w.bytes()
}
