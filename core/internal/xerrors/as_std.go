//go:build !liblockwasm

package xerrors

import "errors"

// As is errors.As(err, target).
func As[T any](err error, target *T) bool { return errors.As(err, target) }
