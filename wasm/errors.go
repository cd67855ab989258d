//go:build wasip1

package main

import (
	"errors"
	"strconv"
)

// The module builds its messages without fmt: fmt, with reflect and
// internal/fmtsort, would add ≈ 190 KB, and the module must stay under
// 3 MiB (wasm/README.md).

var errInvalidHandle = errors.New("liblock: invalid handle")

// handleError says that a handle is not a live one of its kind. It reads
// "liblock: invalid handle: not a live <what> handle" and unwraps to
// errInvalidHandle, as fmt.Errorf("%w: ...") did.
type handleError struct{ what string }

func (e *handleError) Error() string {
	return errInvalidHandle.Error() + ": not a live " + e.what + " handle"
}
func (e *handleError) Unwrap() error { return errInvalidHandle }

// internalError is the error for a recovered panic value r:
// "liblock: internal error: " + what fmt's %v prints for errors, strings,
// Stringers and integers (the panics the module can raise). Other values
// are described by a fixed text: naming their type would need reflect.
func internalError(r any) error {
	return errors.New("liblock: internal error: " + panicText(r))
}

func panicText(r any) string {
	switch v := r.(type) {
	case error:
		return v.Error()
	case interface{ String() string }:
		return v.String()
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case uint:
		return strconv.FormatUint(uint64(v), 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case bool:
		return strconv.FormatBool(v)
	}
	return "panic with a value of another type"
}
