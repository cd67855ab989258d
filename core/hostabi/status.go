package hostabi

import (
	"errors"

	"github.com/liblock/liblock/core/engine"
)

// ABIVersion and the status codes (the C ABI's LOCK_* numbers) are in
// protocol_gen.go, from spec/protocol.json.

// MsgInvalidHandle is the message of LOCK_INVALID_HANDLE.
const MsgInvalidHandle = msgInvalidHandle

// ErrInvalidHandle: an engine handle that names no engine (never one, or
// freed).
var ErrInvalidHandle = errors.New(MsgInvalidHandle)

// StatusOf maps an error to its status code. It is the one status table of
// liblock.so and liblock.wasm.
//
// A context that ended (canceled or past its deadline) is LOCK_CANCELED in
// both: the caller's own budget ran out, nothing failed in liblock.
func StatusOf(err error) int32 {
	if err == nil {
		return OK
	}
	if s, ok := statusOf(err); ok {
		return s
	}
	return Internal
}

func statusOf(err error) (int32, bool) {
	switch {
	case errors.Is(err, engine.ErrInvalidArgument):
		return InvalidArgument, true
	case errors.Is(err, engine.ErrUnavailable):
		return Unavailable, true
	case errors.Is(err, engine.ErrNotAcquired):
		return NotAcquired, true
	case errors.Is(err, engine.ErrLost):
		return Lost, true
	case errors.Is(err, engine.ErrCanceled), errors.Is(err, engine.ErrClosed), contextEnded(err):
		return Canceled, true
	case errors.Is(err, engine.ErrUnknownLock), errors.Is(err, ErrInvalidHandle):
		return InvalidHandle, true
	}
	return 0, false
}
