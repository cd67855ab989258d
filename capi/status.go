package main

import (
	"context"
	"errors"

	"github.com/liblock/liblock/core"
)

// Status codes: the numbers are the ABI (liblock.h).
const (
	statusOK              = 0
	statusNotAcquired     = 1
	statusLost            = 2
	statusInvalidArgument = 3
	statusInvalidHandle   = 4
	statusUnavailable     = 5
	statusCanceled        = 6
	statusInternal        = 7
)

const abiVersion = 1

// statusOf maps a core error to its status code.
func statusOf(err error) int32 {
	switch {
	case err == nil:
		return statusOK
	case errors.Is(err, core.ErrInvalidArgument):
		return statusInvalidArgument
	case errors.Is(err, core.ErrNotAcquired):
		return statusNotAcquired
	case errors.Is(err, core.ErrLost):
		return statusLost
	case errors.Is(err, core.ErrUnavailable):
		return statusUnavailable
	case errors.Is(err, context.Canceled), errors.Is(err, core.ErrClosed):
		return statusCanceled
	}
	return statusInternal
}

// Messages for the statuses that have no core error.
const (
	msgInvalidHandle = "liblock: invalid handle: unknown, freed, or of the wrong kind"
	msgCanceled      = "liblock: canceled"
)
