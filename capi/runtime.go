package main

import (
	"os"
	"runtime"
)

// The Go runtime inside liblock.so runs nothing but the library's own
// goroutines: a caller's operation (on the caller's thread), a reader per
// connection and the completion workers, which wait on sockets almost all
// the time and run for microseconds in between. One P is enough for that,
// and it is cheaper: with one P per core, idle Ps spin looking for work and
// wake more threads at every hand-off from a reader to a waiting caller
// (measured from Python's synchronous API and Node's engine steps:
// capi/README.md "The Go runtime inside"). A
// host process that wants otherwise sets GOMAXPROCS in its environment
// before the library is loaded, which this leaves alone.
func init() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(1)
	}
}
