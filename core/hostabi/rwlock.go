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

// startedMode remembers the mode of an acquire in flight: the engine's DONE
// names its lock, whose mode INFO does not carry (Adapter.Lock).
func (a *Adapter) startedMode(op engine.OpID, m engine.LockMode) {
	if a.modes == nil {
		a.modes = map[engine.OpID]engine.LockMode{}
	}
	a.modes[op] = m
}

// noteMode files the mode of a finished acquire of a read-write lock with
// its lock's other extras (fences).
func (a *Adapter) noteMode(act *Action) {
	m, ok := a.modes[act.Op]
	if !ok {
		return
	}
	delete(a.modes, act.Op)
	if act.Lock == 0 {
		return
	}
	if a.fences == nil {
		a.fences = map[engine.LockID]engine.LockInfo{}
	}
	info := a.fences[act.Lock]
	info.Mode = m
	a.fences[act.Lock] = info
}
