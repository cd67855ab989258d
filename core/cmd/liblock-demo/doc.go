// Command liblock-demo tells liblock's seed story in Go against the nodes
// in LIBLOCK_NODES (make demo starts three): ten workers contend for one
// account and are served one at a time, and a second "nightly report" is
// turned away while the first one runs; then eight workers share three
// permits to a rate-limited API (semaphore.go); then three replicas elect
// a leader, the leader is killed, and another takes over with a higher term
// (election.go).
//
// Layer: a command, at the top, over the Go driver: it imports only core
// and the standard library.
package main
