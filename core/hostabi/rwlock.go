package hostabi

import (
	"strconv"

	"github.com/liblock/liblock/core/engine"
)

// ParseMode parses the options' "mode": "read" or "write" (a side of the
// resource's read-write lock; "exclusive", the mutex, is the default).
func ParseMode(v jvalue) (engine.LockMode, error) {
	if v.kind != jString {
		return 0, argErr("mode", `must be a string: "read" or "write"`)
	}
	switch v.s {
	case "read":
		return engine.ModeRead, nil
	case "write":
		return engine.ModeWrite, nil
	case "exclusive":
		return engine.ModeExclusive, nil
	}
	return 0, argErr("mode", `must be "read" or "write", got `+strconv.Quote(v.s))
}
