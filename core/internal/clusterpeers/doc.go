// Package clusterpeers holds the Redis Cluster peer benchmark (see
// peers_bench_test.go): liblock beside go-redsync and raw go-redis on one
// cluster. It is a module of its own so that go-redsync stays out of
// liblock's go.mod.
package clusterpeers
