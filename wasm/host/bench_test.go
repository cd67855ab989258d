package host_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/wasm/host"
	"github.com/stretchr/testify/require"
)

// BenchmarkPair: acquire+release pairs against real redis-servers on 1 and
// 5 nodes through the Go driver (core.Client) over the native engine
// (core.New) and over liblock.wasm's (Module.NewClient): one driver, two
// engines, as a user of either gets them. Reported: the p50 of a pair in
// µs.
func BenchmarkPair(b *testing.B) {
	ctx := context.Background()
	for _, n := range []int{1, 5} {
		cl := redistest.Start(b, n)
		for _, kind := range []string{"native", "wasm"} {
			b.Run(strconv.Itoa(n)+"-nodes/"+kind, func(b *testing.B) {
				cfg := core.Config{Nodes: cl.URLs(), NodeTimeout: time.Second}
				newClient := core.New
				if kind == "wasm" {
					newClient = mod.NewClient
				}
				c, err := newClient(cfg)
				require.NoError(b, err)
				defer c.Close()
				pair := func() time.Duration {
					start := time.Now()
					// Plain checks: inside the measured pair, they cost nothing.
					l, err := c.Acquire(ctx, "bench", 10*time.Second)
					if err != nil {
						b.Fatal(err)
					}
					if err := l.Release(ctx); err != nil {
						b.Fatal(err)
					}
					return time.Since(start)
				}
				for range 100 {
					pair()
				}
				times := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for range b.N {
					times = append(times, pair())
				}
				b.StopTimer()
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Nanoseconds())/1e3, "p50-µs")
			})
		}
	}
}

// BenchmarkCompile compiles the module without a compilation cache.
func BenchmarkCompile(b *testing.B) {
	benchCompile(b, "-")
}

// BenchmarkCompileCached compiles it with a warm on-disk cache.
func BenchmarkCompileCached(b *testing.B) {
	dir := b.TempDir()
	m, err := host.Load(wasmPath, host.Options{CacheDir: dir})
	require.NoError(b, err)
	m.Close()
	benchCompile(b, dir)
}

func benchCompile(b *testing.B, cacheDir string) {
	wasm, err := os.ReadFile(wasmPath)
	require.NoError(b, err)
	var total time.Duration
	for range b.N {
		m, err := host.Compile(wasm, host.Options{CacheDir: cacheDir})
		require.NoError(b, err)
		total += m.CompileTime
		m.Close()
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "compile-ms")
	b.ReportMetric(float64(len(wasm)), "module-bytes")
}

// BenchmarkInstantiate makes an Engine: one instance (instantiation and
// _initialize) and its engine.
func BenchmarkInstantiate(b *testing.B) {
	var inst time.Duration
	for range b.N {
		e, err := mod.NewEngine(core.Config{Nodes: []string{"redis://127.0.0.1:1"}})
		require.NoError(b, err)
		inst += host.LastInstantiateTime()
		e.Free()
	}
	b.ReportMetric(float64(inst.Microseconds())/1e3/float64(b.N), "instantiate-ms")
}
