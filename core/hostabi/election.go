package hostabi

import "github.com/liblock/liblock/core/engine"

// The Adapter's leader election (engine.Engine's Watch and Unwatch over the
// byte protocol; InspectWith is in adapter.go): core's Client finds them by
// interface.

// Watch starts a watch of an election (engine.Engine.Watch).
func (a *Adapter) Watch(r engine.WatchRequest) (engine.OpID, error) {
	if err := r.Validate(); err != nil {
		return 0, err
	}
	return started(a.input(Event{Kind: EvWatch, Resource: r.Name, PollMS: millis(r.Poll)}))
}

// Unwatch ends a watch (engine.Engine.Unwatch).
func (a *Adapter) Unwatch(op engine.OpID) bool {
	return a.input(Event{Kind: EvUnwatch, Op: uint64(op)}).WasPending
}
