//go:build !(wasip1 && liblockwasm)

package hostabi

import "sync"

// mutex guards the engine table and each engine: liblock.so's hosts may
// call it from any number of threads, and a program of goroutines may
// call Step from several.
type mutex = sync.Mutex
