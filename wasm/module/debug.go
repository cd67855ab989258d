//go:build wasip1 && liblockdebug

package main

import "runtime"

// lock_debug_mallocs returns the module's count of heap allocations so far
// (runtime.MemStats.Mallocs), for BenchmarkModuleCPU's allocations per pair.
// Only a module built with -tags=liblockdebug has it: the shipped one does
// not.
//
//go:wasmexport lock_debug_mallocs
func lockDebugMallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}
