//go:build wasip1 && liblockwasm

package hostabi

// mutex is no lock in liblock.wasm (the liblockwasm tag is its build,
// wasm/scripts/build.sh): nothing there can run at the same time as
// anything else. A wasm instance runs one call at a time (its Go runtime
// cannot be entered twice), the module's only imports are WASI's, none of
// which calls back into it, and it starts no goroutine, so no Step can
// start while another is under way, even one parked in a GC assist. A
// sync.Mutex cost four calls per Lock+Unlock there (the atomics are calls
// in wasm), and a step took three (the table twice, the engine once).
type mutex struct{}

func (*mutex) Lock()   {}
func (*mutex) Unlock() {}
