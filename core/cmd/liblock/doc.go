// Command liblock runs a command under a Redlock lock, inspects and
// releases locks, and checks a set of Redis nodes against Redlock's
// assumptions (doctor). See `liblock --help` and the README's
// "The liblock command".
//
// Layer: a command, at the top, over the Go driver. It imports core,
// core/engine, core/engine/nodeurl, core/hostabi (the TLS files' reader),
// go-redis and golang.org/x/sys/unix;
// nothing imports it.
package main
