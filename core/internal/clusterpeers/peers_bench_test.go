package clusterpeers

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/internal/benchreport/results"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// releaseLua is the compare-and-delete every Redlock peer releases with:
// the floor's release (one EVALSHA on the key's shard).
const releaseLua = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

// impl is one implementation of the acquire+release pair on the cluster;
// pair runs one pair on resource res and fails the benchmark on an error
// (an uncontended pair must always succeed).
type impl struct {
	name, slug string // slug: the benchmark metrics' prefix
	pair       func(b *testing.B, res string)
}

// BenchmarkClusterPeers measures the uncontended acquire+release pair on
// one Redis Cluster of 3 primaries, liblock beside go-redsync over a
// go-redis ClusterClient and raw go-redis (SET NX PX, then EVALSHA of the
// compare-and-delete: the floor), alternating the implementations pair by
// pair in one loop so that all of them see the same moments of the
// machine, and reports each one's median (NAME-p50-µs) and its ratio to
// the fastest peer's (NAME-ratio; the floor is not a peer).
//
// replicas=0: a cluster without replicas and WAIT off on liblock's side
// (WaitReplicas 0), since go-redsync sends no WAIT: like with like.
// replicas=1: a replica per primary and liblock's default (WAIT 1 after
// each grant on a cluster node), what a user gets by default, beside the
// same peers (which still send no WAIT) and liblock with WAIT off.
//
// With LIBLOCK_BENCH_JSON set, the medians are also written as results
// rows (make bench plots them).
func BenchmarkClusterPeers(b *testing.B) {
	var rows []results.Row
	for _, replicas := range []int{0, 1} {
		rc := redistest.StartRedisCluster(b, 3, replicas)
		var last []results.Row // the last run's (go test runs b.N=1 first)
		b.Run(fmt.Sprintf("primaries=3,replicas=%d", replicas), func(b *testing.B) {
			last = benchPeers(b, rc, replicas)
		})
		rows = append(rows, last...)
		rc.Close() // the next cluster gets the cores to itself (Close is idempotent)
	}
	if out := os.Getenv("LIBLOCK_BENCH_JSON"); out != "" && len(rows) > 0 {
		if err := results.Write(out, results.File{Part: "Go, Redis Cluster", Rows: rows}); err != nil {
			b.Fatal(err)
		}
	}
}

func benchPeers(b *testing.B, rc *redistest.RedisCluster, replicas int) []results.Row {
	ctx := context.Background()
	zero := 0
	addrs := make([]string, 0, 3)
	for _, n := range rc.Nodes[:3] {
		addrs = append(addrs, n.Addr())
	}
	newCC := func() *redis.ClusterClient {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		b.Cleanup(func() { _ = cc.Close() })
		return cc
	}
	newLiblock := func(cfg core.Config) *core.Client {
		cfg.Nodes = []string{rc.URL()}
		c, err := core.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
	lockPair := func(c *core.Client, opts ...core.AcquireOption) func(*testing.B, string) {
		return func(b *testing.B, res string) {
			l, err := c.Acquire(ctx, res, 10*time.Second, opts...)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	var impls []impl
	if replicas == 0 {
		// The default call (a single attempt in Go) on a client whose only
		// setting is WAIT off, then tuned: telemetry off as well.
		impls = append(impls,
			impl{"liblock", "liblock", lockPair(newLiblock(core.Config{WaitReplicas: &zero}))},
			impl{"liblock, no telemetry", "liblock-notelemetry", lockPair(newLiblock(core.Config{WaitReplicas: &zero, NoTelemetry: true}))})
		uc, err := core.NewFromUniversalClients(core.Config{WaitReplicas: &zero}, newCC())
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = uc.Close() })
		impls = append(impls, impl{"liblock via NewFromUniversalClients(ClusterClient)", "liblock-universal", lockPair(uc)})
	} else {
		impls = append(impls,
			impl{"liblock, defaults (WAIT 1)", "liblock-wait1", lockPair(newLiblock(core.Config{}))},
			impl{"liblock, WAIT off", "liblock-wait0", lockPair(newLiblock(core.Config{WaitReplicas: &zero}))})
	}
	rs := redsync.New(goredis.NewPool(newCC()))
	redsyncPair := func(opts ...redsync.Option) func(*testing.B, string) {
		return func(b *testing.B, res string) {
			m := rs.NewMutex(res, append([]redsync.Option{redsync.WithExpiry(10 * time.Second)}, opts...)...)
			if err := m.LockContext(ctx); err != nil {
				b.Fatal(err)
			}
			if ok, err := m.UnlockContext(ctx); err != nil || !ok {
				b.Fatalf("go-redsync unlock: %v %v", ok, err)
			}
		}
	}
	raw := newCC()
	script := redis.NewScript(releaseLua)
	tok := 0
	impls = append(impls,
		impl{"go-redsync", "redsync", redsyncPair()},
		impl{"go-redsync, tries 1", "redsync-tries1", redsyncPair(redsync.WithTries(1))},
		impl{"go-redis raw SET NX + EVALSHA (floor)", "raw", func(b *testing.B, res string) {
			tok++
			t := strconv.Itoa(tok)
			if ok, err := raw.SetNX(ctx, res, t, 10*time.Second).Result(); err != nil || !ok {
				b.Fatalf("SET NX: %v %v", ok, err)
			}
			if err := script.Run(ctx, raw, []string{res}, t).Err(); err != nil {
				b.Fatal(err)
			}
		}})

	// 16 resources, spread over the shards (each its own slot), the same
	// sequence for every implementation; liblock's keys differ from the
	// peers' (its prefix), so no implementation ever meets another's key.
	resource := func(i int) string { return "bench" + strconv.Itoa(i%16) }
	for i := range 100 { // warm up: connections, scripts, slot maps
		for _, im := range impls {
			im.pair(b, resource(i))
		}
	}
	lat := make([][]time.Duration, len(impls))
	b.ResetTimer()
	for i := range b.N {
		for k := range impls {
			im := impls[(i+k)%len(impls)] // rotate who goes first
			t0 := time.Now()
			im.pair(b, resource(i))
			lat[(i+k)%len(impls)] = append(lat[(i+k)%len(impls)], time.Since(t0))
		}
	}
	b.StopTimer()

	med := make([]float64, len(impls))
	peer := 0.0
	for k, im := range impls {
		slices.Sort(lat[k])
		med[k] = float64(lat[k][len(lat[k])/2].Nanoseconds()) / 1e3
		if strings.HasPrefix(im.name, "go-redsync") && (peer == 0 || med[k] < peer) {
			peer = med[k]
		}
	}
	scenario := "Redis Cluster pair, 3 primaries, no replicas"
	if replicas > 0 {
		scenario = "Redis Cluster pair, 3 primaries, a replica each"
	}
	var rows []results.Row
	for k, im := range impls {
		b.ReportMetric(med[k], im.slug+"-p50-µs")
		b.ReportMetric(med[k]/peer, im.slug+"-ratio")
		rows = append(rows, results.Row{Scenario: scenario, Unit: "µs per acquire+release pair (p50)",
			Impl: im.name, Value: med[k], Liblock: strings.HasPrefix(im.name, "liblock")})
	}
	return rows
}
