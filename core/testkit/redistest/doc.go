// Package redistest starts real redis-server processes on free loopback
// ports for tests, and fails them for real: SIGKILL, SIGSTOP/SIGCONT and
// restart. It is the only Redis the project's behaviour tests talk to.
//
// A Cluster is a set of independent masters (no replication), which is what
// Redlock runs over. Every node lives in its own temporary directory with
// persistence switched off, listens on 127.0.0.1 only, and dies with the
// process that started it (Pdeathsig), so a crashed test leaves nothing behind.
//
// Freeze and Kill act at the moment a test calls them. To fail a node at an
// exact point of the protocol — as a given command reaches it, e.g. the
// second round of a fenced acquire — put package faultproxy between the
// client and the nodes: it signals a node's PID just before it forwards the
// matching bytes. Command redisnodes (this harness for other languages) and
// command faultproxy do the same from outside Go.
//
// Layer: a test kit, beside the library, never under it: only tests, other
// test kits and test commands import it. It imports the standard library,
// testify and core/testkit/poll: no liblock package, so any backend's tests
// can use it.
package redistest
