// Package engine is liblock's Redlock client with no I/O of its own
// (Engine): the host feeds it operation requests and I/O events and carries
// out the actions it returns. It owns every decision — tokens, quorum,
// validity, cleanup, waiting, extension, loss, every lock kind — and the
// Redis wire; time and randomness come through one seam (Env), which lets
// its simulation (sim*_test.go) drive it.
//
// Layer: the bottom of the library; only nodeurl and the stand-ins in
// core/internal (xsort, xtime) are under it. It imports the standard
// library (no net, os/exec, goroutines or sleeps), core/engine/nodeurl,
// core/internal/xsort and xtime, github.com/google/uuid and, on Linux,
// golang.org/x/sys/unix for getrandom; never core, core/hostabi or a test
// kit.
package engine
