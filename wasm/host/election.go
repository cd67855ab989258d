package host

import "github.com/liblock/liblock/core/engine"

// Leader election's watches through the module's engine (core's Client
// finds Watch and Unwatch by interface; InspectWith is in engine.go).

// Watch starts a watch of an election (engine.Engine.Watch).
func (e *Engine) Watch(r engine.WatchRequest) (engine.OpID, error) {
	if e.freed {
		if err := r.Validate(); err != nil {
			return 0, err
		}
		return 0, engine.ErrClosed
	}
	return e.a.Watch(r)
}

// Unwatch ends a watch (engine.Engine.Unwatch).
func (e *Engine) Unwatch(op engine.OpID) bool {
	if e.freed {
		return false
	}
	return e.a.Unwatch(op)
}
