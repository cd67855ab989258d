// Package ownthread marks a call whose caller waits on a thread Go did not
// create: a C program's or Python's, entering through the C ABI's blocking
// calls, whose goroutine the Go runtime locks to that thread for the call.
//
// The Go driver reads a one-node client's reply on the caller's goroutine.
// A goroutine of a Go program waits best parked on Go's netpoller: the M
// that wakes in epoll_wait runs it at once. A goroutine locked to a C
// thread does not: that M must hand it to its own thread, a second wake-up
// per round trip, so such a caller waits in a poll(2) of its own instead,
// where the kernel wakes its thread directly. A one-node Client such a
// caller has used also dials sockets the netpoller never watches
// (core's rawConn): otherwise every reply would still wake the runtime's
// poller thread.
//
// Layer: beside the Go driver (core), which reads the mark, and under capi,
// which sets it on its blocking calls. It imports only the standard
// library.
package ownthread
