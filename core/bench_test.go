package core_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

const releaseLua = `if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) else return 0 end`

// BenchmarkPair measures one acquire+release pair, per iteration, through
// liblock and through raw go-redis (SET NX PX, then EVALSHA of the release
// script; on N nodes, in parallel goroutines, as a minimal Redlock would),
// on the same nodes in the same run. liblock-goredis is the Client over the
// nodes of go-redis clients (NewFromClients: the engine dials with each
// client's dialer), beside liblock (core.New) and liblock-wait (core.New,
// acquiring with core.Wait(10 s): a wait budget the uncontended pair never
// uses, which must cost nothing). A …-frozen1 group freezes one node of
// five. It
// reports the median pair latency as p50-µs and the process CPU time (user
// + system, all threads; the redis-servers are other processes) per pair as
// cpu-µs; make bench prints the medians and the ratios. It checks with
// plain ifs, not testify: the checks sit inside the measured pairs, and
// testify's Helper calls would add their cost to the figures the README
// compares.
func BenchmarkPair(b *testing.B) {
	for _, n := range []int{1, 5} {
		c := redistest.Start(b, n)
		b.Run(fmt.Sprintf("nodes=%d/go-redis-raw", n), func(b *testing.B) { benchRaw(b, c) })
		b.Run(fmt.Sprintf("nodes=%d/liblock-goredis", n), func(b *testing.B) { benchLiblock(b, c, goRedisClient) })
		b.Run(fmt.Sprintf("nodes=%d/liblock", n), func(b *testing.B) { benchLiblock(b, c, respClient) })
		b.Run(fmt.Sprintf("nodes=%d/liblock-wait", n), func(b *testing.B) { benchLiblock(b, c, respClient, core.Wait(10*time.Second)) })
		// A permit of a 3-permit semaphore (semaphore.go), beside the mutex pair.
		b.Run(fmt.Sprintf("nodes=%d/liblock-semaphore3", n), func(b *testing.B) { benchLiblock(b, c, respClient, core.Permits(3)) })
		// The read-write lock's reader and writer, and multi-resource locks
		// of 2 and 8 resources (primitives_bench_test.go), beside the mutex
		// pair: benchreport prints their ratios to …/liblock.
		benchPrimitives(b, c, n)
		if n == 5 {
			// One node frozen (SIGSTOP): the engine decides as soon as a
			// quorum answered, so the pair should cost what a healthy one
			// does (each operation still writes to the frozen node, whose
			// connection is dropped and re-opened every node timeout).
			if err := c.Nodes[4].Freeze(); err != nil {
				b.Fatal(err)
			}
			b.Run("nodes=5-frozen1/liblock", func(b *testing.B) { benchLiblock(b, c, respClient) })
			if err := c.Nodes[4].Thaw(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkPairUnusedWait measures the cost of a wait budget that goes
// unused: one Client alternates acquire+release pairs with core.Wait(10 s)
// and without, pair by pair, so that both see the same machine (a noisy
// 2-core VM moves sequential runs by more than the difference sought). It
// reports each side's median latency and median process CPU per pair
// (getrusage around each pair): p50-µs and cpu-µs for the pairs with the
// wait, single-p50-µs and single-cpu-µs for those without.
func BenchmarkPairUnusedWait(b *testing.B) {
	benchPairAB(b, "liblock", core.Wait(10*time.Second))
}

// benchPairAB alternates, pair by pair on one Client over 1 and then 5
// nodes, acquire+release pairs with opt and without it, and reports each
// side's median latency and median process CPU per pair (getrusage around
// each pair): p50-µs and cpu-µs with opt, single-p50-µs and single-cpu-µs
// without (benchreport prints their ratio).
func benchPairAB(b *testing.B, name string, opt core.AcquireOption) {
	for _, n := range []int{1, 5} {
		c := redistest.Start(b, n)
		b.Run(fmt.Sprintf("nodes=%d/%s", n, name), func(b *testing.B) {
			cl := respClient(b, c)
			defer cl.Close()
			ctx := context.Background()
			pair := func(opts ...core.AcquireOption) {
				l, err := cl.Acquire(ctx, "bench", 10*time.Second, opts...)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			for range 200 {
				pair()
				pair(opt)
			}
			var lat, cpu [2][]time.Duration
			b.ResetTimer()
			for i := range 2 * b.N { // b.N pairs of each kind
				side := i % 2
				c0, t0 := cpuTime(), time.Now()
				if side == 0 {
					pair(opt)
				} else {
					pair()
				}
				lat[side] = append(lat[side], time.Since(t0))
				cpu[side] = append(cpu[side], cpuTime()-c0)
			}
			b.StopTimer()
			med := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Nanoseconds()) / 1e3
			}
			b.ReportMetric(med(lat[0]), "p50-µs")
			b.ReportMetric(med(cpu[0]), "cpu-µs")
			b.ReportMetric(med(lat[1]), "single-p50-µs")
			b.ReportMetric(med(cpu[1]), "single-cpu-µs")
		})
	}
}

// respClient is core.New.
func respClient(b *testing.B, c *redistest.Cluster) *core.Client {
	cl, err := core.New(core.Config{Nodes: c.URLs()})
	if err != nil {
		b.Fatal(err)
	}
	return cl
}

// goRedisClient makes Clients over go-redis, with the options core.New's
// go-redis transport used (deadlines from the context, no retries).
func goRedisClient(b *testing.B, c *redistest.Cluster) *core.Client {
	clients := make([]*redis.Client, len(c.Nodes))
	for i, n := range c.Nodes {
		t := core.DefaultNodeTimeout
		clients[i] = redis.NewClient(&redis.Options{
			Addr: n.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
			DialTimeout: t, ReadTimeout: t, WriteTimeout: t, PoolTimeout: t,
			DialerRetries: 1, DialerRetryTimeout: time.Millisecond, DisableIdentity: true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
		})
		b.Cleanup(func() { _ = clients[i].Close() })
	}
	cl, err := core.NewFromClients(core.Config{}, clients...)
	if err != nil {
		b.Fatal(err)
	}
	return cl
}

func benchLiblock(b *testing.B, c *redistest.Cluster, newClient func(*testing.B, *redistest.Cluster) *core.Client, opts ...core.AcquireOption) {
	cl := newClient(b, c)
	defer cl.Close()
	ctx := context.Background()
	pair := func() {
		l, err := cl.Acquire(ctx, "bench", 10*time.Second, opts...)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
	}
	measure(b, pair)
}

func benchRaw(b *testing.B, c *redistest.Cluster) {
	ctx := context.Background()
	clients := make([]*redis.Client, len(c.Nodes))
	for i, n := range c.Nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: n.Addr()})
		defer clients[i].Close()
	}
	script := redis.NewScript(releaseLua)
	one := func(rc *redis.Client, token string) {
		if ok, err := rc.SetNX(ctx, "bench", token, 10*time.Second).Result(); err != nil || !ok {
			b.Fatalf("SET NX: %v %v", ok, err)
		}
		if err := script.Run(ctx, rc, []string{"bench"}, token).Err(); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	pair := func() {
		i++
		token := strconv.Itoa(i)
		if len(clients) == 1 {
			one(clients[0], token)
			return
		}
		var wg sync.WaitGroup
		for _, rc := range clients {
			wg.Add(1)
			go func() { defer wg.Done(); one(rc, token) }()
		}
		wg.Wait()
	}
	measure(b, pair)
}

// measure warms up, times every iteration and reports the median, and the
// process CPU time per iteration.
func measure(b *testing.B, pair func()) {
	for range 200 {
		pair()
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	cpu0 := cpuTime()
	for range b.N {
		start := time.Now()
		pair()
		times = append(times, time.Since(start))
	}
	cpu := cpuTime() - cpu0
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(cpu.Nanoseconds())/1e3/float64(b.N), "cpu-µs")
}

// cpuTime is this process's user + system CPU time, all threads.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkPairTelemetry measures what the metrics and traces cost
// (README "Metrics, traces and logs"): three Clients on the same nodes take
// turns, pair by pair (so that all three see the same machine): off
// (Config.NoTelemetry: the engine reports nothing), api (the default: otel's
// global providers with no SDK installed, so no span and no report) and sdk (the metric SDK with an in-memory ManualReader, and
// the trace SDK recording every span, exported synchronously to a no-op
// exporter). It reports each side's median pair latency and median
// process CPU per pair (off-p50-µs, api-p50-µs, sdk-p50-µs, and -cpu-µs),
// and the ratios to off (api-x, sdk-x). It prints; it asserts nothing.
func BenchmarkPairTelemetry(b *testing.B) {
	for _, n := range []int{1, 3} {
		c := redistest.Start(b, n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			reader := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
			cfgs := []core.Config{
				{Nodes: c.URLs(), NoTelemetry: true},
				{Nodes: c.URLs()},
				{Nodes: c.URLs(), MeterProvider: mp, TracerProvider: tp},
			}
			clients := make([]*core.Client, len(cfgs))
			for i, cfg := range cfgs {
				cl, err := core.New(cfg)
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				clients[i] = cl
			}
			ctx := context.Background()
			pair := func(cl *core.Client) {
				l, err := cl.Acquire(ctx, "bench", 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := l.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
			for range 200 {
				for _, cl := range clients {
					pair(cl)
				}
			}
			lat := make([][]time.Duration, len(clients))
			cpu := make([][]time.Duration, len(clients))
			b.ResetTimer()
			for i := range len(clients) * b.N {
				side := i % len(clients)
				c0, t0 := cpuTime(), time.Now()
				pair(clients[side])
				lat[side] = append(lat[side], time.Since(t0))
				cpu[side] = append(cpu[side], cpuTime()-c0)
			}
			b.StopTimer()
			med := func(d []time.Duration) float64 {
				slices.Sort(d)
				return float64(d[len(d)/2].Nanoseconds()) / 1e3
			}
			var p50, c50 [3]float64
			for i, name := range []string{"off", "api", "sdk"} {
				p50[i], c50[i] = med(lat[i]), med(cpu[i])
				b.ReportMetric(p50[i], name+"-p50-µs")
				b.ReportMetric(c50[i], name+"-cpu-µs")
			}
			b.ReportMetric(p50[1]/p50[0], "api-x")
			b.ReportMetric(p50[2]/p50[0], "sdk-x")
			var rm metricdata.ResourceMetrics
			if err := reader.Collect(ctx, &rm); err != nil || len(rm.ScopeMetrics) == 0 {
				b.Fatalf("the sdk side recorded nothing: %v", err)
			}
		})
	}
}
