package core

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors. Test for them with errors.Is; the errors returned carry
// more detail.
var (
	// ErrNotAcquired: another owner holds the resource (no quorum of grants
	// before the wait ran out).
	ErrNotAcquired = errors.New("liblock: not acquired: the resource is held by another owner")
	// ErrUnavailable: too many nodes failed (errors, timeouts, refused
	// connections) for a quorum to be possible. See *UnavailableError.
	ErrUnavailable = errors.New("liblock: unavailable: too many nodes failed for a quorum")
	// ErrLost: the lock is no longer held on a quorum (it expired, was
	// released, or another owner holds it now).
	ErrLost = errors.New("liblock: lock lost")
	// ErrInvalidArgument: a bad argument or configuration; nothing was sent
	// to any node. See *ArgumentError.
	ErrInvalidArgument = errors.New("liblock: invalid argument")
	// ErrClosed: the Client was closed.
	ErrClosed = errors.New("liblock: client closed")
)

// ArgumentError names the argument that was rejected.
type ArgumentError struct {
	Arg    string // the argument or configuration field, e.g. "ttl", "nodes[1]"
	Reason string
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("liblock: invalid argument: %s: %s", e.Arg, e.Reason)
}

// Is makes errors.Is(err, ErrInvalidArgument) true.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

func argError(arg, format string, a ...any) error {
	return &ArgumentError{Arg: arg, Reason: fmt.Sprintf(format, a...)}
}

// NodeError is one node's failure during an operation.
type NodeError struct {
	Node int    // index in the configured node list
	Addr string // the node's address, without credentials
	Err  error
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %d (%s): %v", e.Node, e.Addr, e.Err) }
func (e *NodeError) Unwrap() error { return e.Err }

// UnavailableError reports an operation that could not reach a quorum
// because nodes failed. errors.Is(err, ErrUnavailable) is true.
type UnavailableError struct {
	Op     string // "acquire", "extend" or "release"
	Reason string // what went wrong overall
	Nodes  []*NodeError
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "liblock: %s: unavailable: %s", e.Op, e.Reason)
	for _, n := range e.Nodes {
		b.WriteString("; ")
		b.WriteString(n.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUnavailable) true.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap exposes the per-node causes to errors.Is and errors.As.
func (e *UnavailableError) Unwrap() []error {
	errs := make([]error, len(e.Nodes))
	for i, n := range e.Nodes {
		errs[i] = n
	}
	return errs
}

// opError wraps a sentinel with the operation and resource it concerns.
type opError struct {
	op, resource, detail string
	kind                 error
}

func (e *opError) Error() string {
	if e.detail == "" {
		return fmt.Sprintf("%v (%s %q)", e.kind, e.op, e.resource)
	}
	return fmt.Sprintf("%v: %s (%s %q)", e.kind, e.detail, e.op, e.resource)
}

func (e *opError) Unwrap() error { return e.kind }
