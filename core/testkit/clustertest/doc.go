// Package clustertest is the behaviour suite of Redis Cluster nodes,
// against real clusters (redistest.StartRedisCluster) moved and failed for
// real: slot migration (IMPORTING/MIGRATING, MIGRATE, SETSLOT NODE),
// CLUSTER FAILOVER, SIGKILL of a primary, SIGSTOP of a replica. Every
// backend of the Go driver runs it (core, wasm/host).
//
// Layer: a test kit, beside the library, never under it: only tests import
// it. It imports core, core/engine, the other test kits (locktest,
// redistest) and testify.
package clustertest
