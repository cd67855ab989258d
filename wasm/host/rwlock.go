package host

import "github.com/liblock/liblock/core/engine"

// InspectWith starts an inspection of the lock r names (a read-write lock:
// its writer; the readers' list does not cross the host protocol yet), so
// that core.Client.InspectWith works over liblock.wasm as natively.
func (e *Engine) InspectWith(r engine.InspectRequest) (engine.OpID, error) {
	if e.freed {
		if err := r.Validate(); err != nil {
			return 0, err
		}
		return 0, engine.ErrClosed
	}
	return e.a.InspectWith(r)
}
