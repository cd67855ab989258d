package main

import (
	"github.com/liblock/liblock/core/hostabi"
)

// Status codes: the numbers are the ABI (liblock.h, hostabi's constants).
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

const abiVersion = hostabi.ABIVersion

// statusOf maps an error to its status code: hostabi's table, the one
// liblock.wasm uses too.
func statusOf(err error) int32 { return hostabi.StatusOf(err) }

// Messages for the statuses that have no core error.
const (
	msgInvalidHandle = hostabi.MsgInvalidHandle
	msgCanceled      = "liblock: canceled"
)
