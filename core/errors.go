package core

import "github.com/liblock/liblock/core/engine"

// Sentinel errors. Test for them with errors.Is; the errors returned carry
// more detail. They are the engine's, so every driver reports the same.
var (
	// ErrNotAcquired: another owner holds the resource (no quorum of grants
	// before the wait ran out).
	ErrNotAcquired = engine.ErrNotAcquired
	// ErrUnavailable: too many nodes failed (errors, timeouts, refused
	// connections) for a quorum to be possible. See *UnavailableError.
	ErrUnavailable = engine.ErrUnavailable
	// ErrLost: the lock is no longer held on a quorum (it expired, was
	// released, or another owner holds it now).
	ErrLost = engine.ErrLost
	// ErrInvalidArgument: a bad argument or configuration; nothing was sent
	// to any node. See *ArgumentError.
	ErrInvalidArgument = engine.ErrInvalidArgument
	// ErrClosed: the Client was closed.
	ErrClosed = engine.ErrClosed
	// ErrNoAnswer is the cause an UnavailableError names for a node that
	// had not answered when the outcome was already certain.
	ErrNoAnswer = engine.ErrNoAnswer
)

// ArgumentError names the argument that was rejected; for a value out of
// its range, Bound (BoundMin or BoundMax), Limit, Unit and Got say which
// bound it crossed.
type ArgumentError = engine.ArgumentError

// The bounds an ArgumentError's value may cross.
const (
	BoundMin = engine.BoundMin
	BoundMax = engine.BoundMax
)

// NodeError is one node's failure during an operation.
type NodeError = engine.NodeError

// UnavailableError reports an operation that could not reach a quorum
// because nodes failed. errors.Is(err, ErrUnavailable) is true.
type UnavailableError = engine.UnavailableError

func invalidArg(arg, reason string) error { return engine.InvalidArg(arg, reason) }

func wrap(prefix string, err error) error { return engine.Wrap(prefix, err) }

func errLost(op, resource, detail string) error { return engine.LostError(op, resource, detail) }
