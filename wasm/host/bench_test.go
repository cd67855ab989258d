package host_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/redistest"
	"github.com/liblock/liblock/wasm/host"
)

// BenchmarkPair measures one acquire+release pair, per iteration, through
// the native core and through the wasm module on the same nodes in the same
// run, and reports the median as p50-µs (wasm/scripts/bench.sh prints the
// ratio).
func BenchmarkPair(b *testing.B) {
	for _, n := range []int{1, 5} {
		c := redistest.Start(b, n)
		// A node timeout well above the default 50 ms: on a loaded 2-core
		// machine a stray slow round trip would fail the benchmark.
		cfg := core.Config{Nodes: c.URLs(), NodeTimeout: time.Second}
		b.Run(fmt.Sprintf("nodes=%d/native", n), func(b *testing.B) {
			cl, err := core.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			measure(b, func(ctx context.Context) error {
				l, err := cl.Acquire(ctx, "bench", 10*time.Second)
				if err != nil {
					return err
				}
				return l.Release(ctx)
			})
		})
		b.Run(fmt.Sprintf("nodes=%d/wasm", n), func(b *testing.B) {
			cl, err := mod.NewClient(cfg)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			measure(b, func(ctx context.Context) error {
				l, err := cl.Acquire(ctx, "bench", 10*time.Second)
				if err != nil {
					return err
				}
				return l.Release(ctx)
			})
		})
	}
}

// measure warms up, times every iteration and reports the median.
func measure(b *testing.B, pair func(context.Context) error) {
	ctx := context.Background()
	for range 200 {
		if err := pair(ctx); err != nil {
			b.Fatal(err)
		}
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if err := pair(ctx); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
}

// BenchmarkCompile compiles the module without a compilation cache.
func BenchmarkCompile(b *testing.B) {
	benchCompile(b, "-")
}

// BenchmarkCompileCached compiles it with a warm on-disk cache.
func BenchmarkCompileCached(b *testing.B) {
	dir := b.TempDir()
	m, err := host.Load(wasmPath, host.Options{CacheDir: dir})
	if err != nil {
		b.Fatal(err)
	}
	m.Close()
	benchCompile(b, dir)
}

func benchCompile(b *testing.B, cacheDir string) {
	wasm, err := os.ReadFile(wasmPath)
	if err != nil {
		b.Fatal(err)
	}
	var total time.Duration
	for range b.N {
		m, err := host.Compile(wasm, host.Options{CacheDir: cacheDir})
		if err != nil {
			b.Fatal(err)
		}
		total += m.CompileTime
		m.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "compile-ms")
	b.ReportMetric(float64(len(wasm)), "module-bytes")
}

// BenchmarkInstantiate makes a Client: one instance (instantiation and
// _initialize) and its guest client.
func BenchmarkInstantiate(b *testing.B) {
	var inst time.Duration
	for range b.N {
		cl, err := mod.NewClient(core.Config{Nodes: []string{"redis://127.0.0.1:1"}})
		if err != nil {
			b.Fatal(err)
		}
		inst += host.LastInstantiateTime()
		cl.Close()
	}
	b.ReportMetric(float64(inst.Microseconds())/1e3/float64(b.N), "instantiate-ms")
}
