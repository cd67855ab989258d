//go:build !liblockwasm

package hostabi

import (
	"context"
	"errors"
)

// contextEnded reports whether err is a context's end: canceled or past
// its deadline.
func contextEnded(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
