package core

import (
	"context"
	"strings"
)

// Command is one Redis command, as the argument strings sent on the wire.
type Command []string

// Reply is one node's answer to one Command.
type Reply struct {
	// Err is set when the node could not be reached, timed out, or answered
	// with an error reply (whose text then starts with the Redis error code,
	// e.g. "NOSCRIPT ...").
	Err error
	Nil bool   // a nil reply (SET NX on an existing key)
	Int int64  // an integer reply
	Str string // a status or bulk-string reply
}

// Transport carries commands to N independent Redis nodes. It is the whole
// I/O boundary of the algorithm: implement it to run liblock over another
// client or, as the wasm module does, over host calls.
type Transport interface {
	// Nodes returns each node's address without credentials, in node order.
	// Its length is the node count and never changes.
	Nodes() []string
	// Exec sends cmds[i] to node i, for every i where cmds[i] is non-nil,
	// all at once, and returns one Reply per node (the zero Reply for
	// skipped nodes). Each node's exchange must end within the transport's
	// node timeout, or sooner when ctx ends; a node that does not answer in
	// time gets a Reply with Err set. Exec must be safe for concurrent use.
	Exec(ctx context.Context, cmds []Command) []Reply
	// Close releases the transport's connections.
	Close() error
}

// isNoScript reports the error Redis gives for EVALSHA of a script it does
// not have cached (after a restart or SCRIPT FLUSH).
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
