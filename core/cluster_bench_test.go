package core_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// BenchmarkClusterPair measures one acquire+release pair on a Redis
// Cluster node (cluster=yes: slot routing) against the same pair on a
// standalone node, alternating pair by pair so that both see the same
// machine: p50-µs is the cluster's median, standalone-p50-µs the
// standalone node's, ratio their quotient (target ≤ 1.1). WAIT is off on
// both (wait_replicas=0: the clusters have no replicas), so that only the
// routing differs.
func BenchmarkClusterPair(b *testing.B) {
	single := redistest.Start(b, 1)
	for _, primaries := range []int{1, 3} {
		rc := redistest.StartRedisCluster(b, primaries, 0)
		b.Run(fmt.Sprintf("primaries=%d", primaries), func(b *testing.B) {
			zero := 0
			cc, err := core.New(core.Config{Nodes: []string{rc.URL()}, WaitReplicas: &zero})
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			sc, err := core.New(core.Config{Nodes: single.URLs(), WaitReplicas: &zero})
			if err != nil {
				b.Fatal(err)
			}
			defer sc.Close()
			ctx := context.Background()
			pair := func(c *core.Client, res string) {
				l, err := c.Acquire(ctx, res, 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			for i := range 200 { // warm up: connections, scripts, the map
				pair(cc, "bench"+strconv.Itoa(i%16))
				pair(sc, "bench"+strconv.Itoa(i%16))
			}
			var lat [2][]time.Duration
			b.ResetTimer()
			for i := range 2 * b.N {
				side := i % 2
				res := "bench" + strconv.Itoa((i/2)%16)
				t0 := time.Now()
				if side == 0 {
					pair(cc, res)
				} else {
					pair(sc, res)
				}
				lat[side] = append(lat[side], time.Since(t0))
			}
			b.StopTimer()
			med := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Nanoseconds()) / 1e3
			}
			c, s := med(lat[0]), med(lat[1])
			b.ReportMetric(c, "p50-µs")
			b.ReportMetric(s, "standalone-p50-µs")
			b.ReportMetric(c/s, "ratio")
		})
	}
}

// BenchmarkClusterShards spreads single-attempt pairs over 256 independent
// resources on a cluster of 1 and of 3 primaries (parallel clients of one
// Client), and reports each shard's share of the commands (shardN-%, from
// INFO commandstats: the script and SET calls), and the pairs per second.
// On this 2-core machine the redis-servers share the cores with the
// client, so the throughput's scaling is not the point: the spread of the
// load over the shards is.
func BenchmarkClusterShards(b *testing.B) {
	for _, primaries := range []int{1, 3} {
		rc := redistest.StartRedisCluster(b, primaries, 0)
		b.Run(fmt.Sprintf("primaries=%d", primaries), func(b *testing.B) {
			zero := 0
			c, err := core.New(core.Config{Nodes: []string{rc.URL()}, WaitReplicas: &zero})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			ctx := context.Background()
			for i := range 256 { // warm up every shard's connection
				l, err := c.Acquire(ctx, "r"+strconv.Itoa(i), 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				_ = l.Release(ctx)
			}
			prim := rc.Nodes[:primaries]
			for _, n := range prim {
				if _, err := n.Do("CONFIG", "RESETSTAT"); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			t0 := time.Now()
			next := make(chan int, 1)
			next <- 0
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := <-next
					next <- i + 1
					l, err := c.Acquire(ctx, "r"+strconv.Itoa(i%256), 10*time.Second)
					if err != nil {
						continue // another goroutine holds it: a single attempt
					}
					_ = l.Release(ctx)
				}
			})
			el := time.Since(t0)
			b.StopTimer()
			var counts []float64
			total := 0.0
			for _, n := range prim {
				info, err := n.Do("INFO", "commandstats")
				if err != nil {
					b.Fatal(err)
				}
				k := 0.0
				for _, line := range strings.Split(info, "\n") {
					for _, cmd := range []string{"cmdstat_set:", "cmdstat_evalsha:", "cmdstat_eval:"} {
						if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
							f := strings.SplitN(strings.TrimPrefix(rest, "calls="), ",", 2)
							v, _ := strconv.Atoi(f[0])
							k += float64(v)
						}
					}
				}
				counts = append(counts, k)
				total += k
			}
			for i, k := range counts {
				b.ReportMetric(100*k/max(total, 1), "shard"+strconv.Itoa(i)+"-%")
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "pairs/s")
		})
	}
}

// BenchmarkClusterFailover runs b.N failover trials: on a cluster of 3
// primaries with a replica each, a lock is acquired with the default
// WAIT 1 on a resource of one shard, that shard's primary is SIGKILLed,
// and the cluster fails over by itself (cluster-node-timeout 1 s, the
// replica elected by the other primaries). It reports survived-% (the
// trials in which the lock was still held afterwards: a rival refused) and
// kill-to-acquire-ms, the median time from the kill to the next successful
// acquire of a fresh resource on the same shard (polled every 10 ms). A
// cluster serves three trials, one per shard.
func BenchmarkClusterFailover(b *testing.B) {
	var survived int
	var took []time.Duration
	ctx := context.Background()
	var rc *redistest.RedisCluster
	shard := 3
	b.ResetTimer()
	for i := range b.N {
		if shard == 3 {
			b.StopTimer()
			if rc != nil {
				rc.Close()
			}
			var err error
			if rc, err = redistest.StartRedisClusterIn("", 3, 1); err != nil {
				b.Fatal(err)
			}
			shard = 0
			b.StartTimer()
		}
		p := rc.Nodes[shard]
		shard++
		res := ""
		for j := 0; res == ""; j++ {
			r := "t" + strconv.Itoa(i) + "-" + strconv.Itoa(j)
			if rc.PrimaryOfKey(b, "{"+r+"}") == p {
				res = r
			}
		}
		c, err := core.New(core.Config{Nodes: []string{rc.URL()}, NodeTimeout: 500 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		zero := 0
		rival, err := core.New(core.Config{Nodes: []string{rc.URL()}, NodeTimeout: 500 * time.Millisecond, WaitReplicas: &zero})
		if err != nil {
			b.Fatal(err)
		}
		// With a wait budget: on this busy machine a replica's
		// acknowledgement can miss WAIT's 250 ms, which fails that grant
		// (and deletes its key); the retry is not what is measured.
		l, err := c.Acquire(ctx, res, time.Minute, core.Wait(10*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Kill(); err != nil {
			b.Fatal(err)
		}
		killed := time.Now()
		for k := 0; ; k++ {
			// The same hash tag: the same slot, the killed primary's.
			fresh, err := rival.Acquire(ctx, "{"+res+"}fresh"+strconv.Itoa(k), time.Second)
			if err == nil {
				took = append(took, time.Since(killed))
				_ = fresh.Release(ctx)
				break
			}
			if time.Since(killed) > time.Minute {
				b.Fatalf("no acquire within a minute of the kill: %v", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := rival.Acquire(ctx, res, time.Second); errors.Is(err, core.ErrNotAcquired) {
			survived++
		} else if err == nil {
			b.Logf("trial %d: the lock was lost in the failover", i)
		}
		_ = l.Release(ctx)
		_ = c.Close()
		_ = rival.Close()
		b.StopTimer()
		rc.WaitOK(b, time.Minute) // the next trial's kill must leave a majority of primaries
		b.StartTimer()
	}
	b.StopTimer()
	if rc != nil {
		rc.Close()
	}
	slices.Sort(took)
	b.ReportMetric(100*float64(survived)/float64(b.N), "survived-%")
	b.ReportMetric(float64(took[len(took)/2].Milliseconds()), "kill-to-acquire-ms")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "max-kill-to-acquire-ms")
}
