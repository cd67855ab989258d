// Package waitpeers holds the one-process peer benchmark of the caller's
// wait (peers_bench_test.go): liblock's acquire+release pair through the
// Go driver, through a C thread calling into Go (as the C ABI's blocking
// call is entered) and through the Go driver over liblock.wasm, beside
// bsm/redislock, go-redsync and raw go-redis on the same redis-servers,
// alternating in bursts. It is a module of its own so that the peers stay
// out of liblock's go.mod.
//
// Layer: a benchmark, outside the library: it imports core, core/ownthread,
// wasm/host, core/testkit/redistest, go-redis, bsm/redislock and
// go-redsync; nothing imports it.
package waitpeers
