package engine

import (
	"errors"
	"strconv"
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
	ErrClosed = errors.New("liblock: the client is closed")
)

// ArgumentError names the argument that was rejected.
type ArgumentError struct {
	Arg    string // the argument or configuration field, e.g. "ttl", "nodes[1]"
	Reason string
	// Bound, Limit, Unit and Got describe a value out of its range (the
	// host protocol carries them, so that each binding words the bound in
	// its caller's units without a table of its own): the bound it crossed
	// ("min" or "max"), that bound's value and the value given, both in
	// Unit ("ms", "bytes" or "count"). Bound is "" for every other
	// rejection (not UTF-8, a bad combination, ...).
	Bound string
	Limit int64
	Unit  string
	Got   int64
}

// The bounds of an ArgumentError.
const (
	BoundMin = "min"
	BoundMax = "max"
)

func (e *ArgumentError) Error() string {
	return "liblock: invalid argument: " + e.Arg + ": " + e.Reason
}

// Is makes errors.Is(err, ErrInvalidArgument) true.
func (e *ArgumentError) Is(target error) bool { return target == ErrInvalidArgument }

// invalidArg is the ArgumentError for arg. Callers build reason with
// strconv rather than fmt: fmt (with reflect) would add ≈ 190 KB to the wasm
// module, which must stay under 3 MiB (wasm/README.md).
func invalidArg(arg, reason string) error {
	return &ArgumentError{Arg: arg, Reason: reason}
}

// outOfRange is the ArgumentError of a value got (in unit) below its
// least allowed value min (low) or above its greatest max: the bound it
// crossed is named in the error's fields, reason says it in words. low is
// the caller's comparison, not got < min: a duration below its least
// value may round to it in unit (-1ns is 0 ms, and 0 is a wait's min).
func outOfRange(arg, reason string, low bool, got, min, max int64, unit string) error {
	e := &ArgumentError{Arg: arg, Reason: reason, Bound: BoundMax, Limit: max, Unit: unit, Got: got}
	if low {
		e.Bound, e.Limit = BoundMin, min
	}
	return e
}

// renamed is err (an *ArgumentError) naming arg instead: an element of a
// list ("resources[2]") or an election's name, with its bound kept.
func renamed(arg string, err error) error {
	e := *err.(*ArgumentError)
	e.Arg = arg
	return &e
}

// indexed names one element of a list argument: indexed("nodes", 1) is
// "nodes[1]".
func indexed(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// wrapError is fmt.Errorf("msg: %w", err) without fmt: errors.Is and
// errors.As see err through Unwrap.
type wrapError struct {
	msg string
	err error
}

func (e *wrapError) Error() string { return e.msg }
func (e *wrapError) Unwrap() error { return e.err }

// wrap returns an error that reads "prefix: " + err.Error() and unwraps to err.
func wrap(prefix string, err error) error {
	return &wrapError{msg: prefix + ": " + err.Error(), err: err}
}

// NodeError is one node's failure during an operation.
type NodeError struct {
	Node int    // index in the configured node list
	Addr string // the node's address, without credentials
	Err  error
}

func (e *NodeError) Error() string {
	return "node " + strconv.Itoa(e.Node) + " (" + e.Addr + "): " + errString(e.Err)
}

// errString is what fmt's %v prints for err, nil included.
func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
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
	b.WriteString("liblock: " + e.Op + ": unavailable: " + e.Reason)
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

// ErrNoAnswer is the cause an UnavailableError gives for a node that had
// not answered when the operation's outcome was already certain.
var ErrNoAnswer = errors.New("no answer yet when the outcome was certain")

// unavailable is op's UnavailableError over its nodes' states: every node
// that failed, with its cause, and every node still pending, with
// ErrNoAnswer (state nil: none is listed as pending). The reason counts
// them ("all 3 nodes failed", "2 of 3 nodes failed, 1 had not answered")
// and ends with the quorum and then suffix.
func (e *Engine) unavailable(op string, state []uint8, causes []*NodeError, suffix string) *UnavailableError {
	n := len(e.nodes)
	nodes := append(make([]*NodeError, 0, n), causes...)
	for i, st := range state {
		if st == pending {
			nodes = append(nodes, &NodeError{Node: i, Addr: e.nodes[i].name, Err: ErrNoAnswer})
		}
	}
	reason := strconv.Itoa(len(causes)) + " of " + strconv.Itoa(n) + " nodes failed"
	if len(causes) == n {
		reason = "all " + strconv.Itoa(n) + " nodes failed"
	}
	if k := len(nodes) - len(causes); k > 0 {
		reason += ", " + strconv.Itoa(k) + " had not answered"
	}
	return &UnavailableError{Op: op, Reason: reason + ", " + e.quorumText() + suffix, Nodes: sortCauses(nodes)}
}

// opError wraps a sentinel with the operation and resource it concerns.
type opError struct {
	op, resource, detail string
	kind                 error
}

func (e *opError) Error() string {
	if e.detail == "" {
		return errString(e.kind) + " (" + e.op + " " + strconv.Quote(e.resource) + ")"
	}
	return errString(e.kind) + ": " + e.detail + " (" + e.op + " " + strconv.Quote(e.resource) + ")"
}

func (e *opError) Unwrap() error { return e.kind }

// ErrCanceled: the operation was canceled by its caller (Engine.Cancel);
// drivers report their own cause (a context's error, an AbortSignal's
// reason) in its place.
var ErrCanceled = errors.New("liblock: canceled")

// errorf-free constructors used by the engine.

func errLost(op, resource, detail string) error {
	return &opError{op: op, resource: resource, kind: ErrLost, detail: detail}
}

func errNotAcquired(resource, detail string) error {
	return &opError{op: "acquire", resource: resource, kind: ErrNotAcquired, detail: detail}
}

// Wrap returns an error that reads "prefix: " + err.Error() and unwraps to
// err (fmt.Errorf's %w without fmt, which the wasm module cannot afford).
func Wrap(prefix string, err error) error { return wrap(prefix, err) }

// InvalidArg returns the *ArgumentError for arg.
func InvalidArg(arg, reason string) error { return invalidArg(arg, reason) }

// OutOfRange returns the *ArgumentError for arg's value got, in unit,
// below min (low) or above max, with its bound set (ArgumentError.Bound).
func OutOfRange(arg, reason string, low bool, got, min, max int64, unit string) error {
	return outOfRange(arg, reason, low, got, min, max, unit)
}

// LostError is the ErrLost error of an operation on resource, as the engine
// reports it ("liblock: lock lost: detail (op "resource")").
func LostError(op, resource, detail string) error { return errLost(op, resource, detail) }

// ScrubURL removes rawURL's password from msg, which might repeat it.
func ScrubURL(msg, rawURL string) string {
	if i := strings.Index(rawURL, "://"); i >= 0 {
		rest := rawURL[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if colon := strings.Index(rest[:at], ":"); colon >= 0 {
				msg = scrub(msg, rest[colon+1:at])
			}
		}
	}
	return msg
}
