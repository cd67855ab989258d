// Package clusterpeers holds the Redis Cluster peer benchmark (see
// peers_bench_test.go): liblock beside go-redsync and raw go-redis on one
// cluster. It is a module of its own so that go-redsync stays out of
// liblock's go.mod.
//
// Layer: a benchmark, outside the library: it imports core,
// core/internal/benchreport/results, core/testkit/redistest, go-redis and
// go-redsync; nothing imports it.
package clusterpeers
