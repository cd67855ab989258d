//go:build !wasip1

package hostabi

import "sync"

// mutex guards the engine table and each engine: liblock.so's hosts may
// call it from any number of threads.
type mutex = sync.Mutex
