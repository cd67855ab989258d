// Package sentineltest is the behaviour suite of Sentinel nodes and the
// replica check (WAIT), against a real Sentinel deployment (a primary, two
// replicas, three sentinels: redistest.StartSentinel) failed for real:
// SIGKILL of the primary, SIGSTOP of the replicas, SENTINEL FAILOVER. Every
// backend of the Go driver runs it (core, wasm/host).
//
// Layer: a test kit, beside the library, never under it: only tests import
// it. It imports core, the other test kits (locktest, redistest) and
// testify.
package sentineltest
