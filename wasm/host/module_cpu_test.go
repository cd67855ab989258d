package host

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/locktest"
)

// BenchmarkModuleCPU measures the CPU one acquire+release pair costs in the
// module and the host, without Redis: the client's node I/O is replaced by a
// transport that answers at once with the replies of a free key (SET → OK,
// EVALSHA → 1). That cost is a floor under every wasm host's latency. It
// reports the medians of the pair, of Acquire and of Release (lock_release
// and lock_free), in µs.
//
// With a module built with the liblockdebug tag (GOFLAGS=-tags=liblockdebug
// go test -run '^$' -bench ModuleCPU ./wasm/host/), whose extra export
// lock_debug_mallocs counts the module's heap allocations, it also reports
// allocations per pair inside the module.
func BenchmarkModuleCPU(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run("nodes="+strconv.Itoa(n), func(b *testing.B) {
			benchModuleCPU(b, n)
		})
	}
}

func benchModuleCPU(b *testing.B, n int) {
	m := loadTestModule(b)
	urls := make([]string, n)
	for i := range urls {
		urls[i] = "redis://127.0.0.1:" + strconv.Itoa(1+i) // never dialed
	}
	c, err := m.NewClient(core.Config{Nodes: urls, NodeTimeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	real := c.nodes
	c.nodes = &nodeSet{t: locktest.FreeKeyTransport{Addrs: real.t.Nodes()}}
	real.close()

	ctx := context.Background()
	var acq, rel time.Duration
	pair := func() {
		start := time.Now()
		l, err := c.Acquire(ctx, "bench", 10*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := l.Release(ctx); err != nil {
			b.Fatal(err)
		}
		acq, rel = mid.Sub(start), time.Since(mid)
	}
	for range 200 {
		pair()
	}
	mallocs := debugMallocs(c)
	pairs := make([]time.Duration, 0, b.N)
	acqs := make([]time.Duration, 0, b.N)
	rels := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		pair()
		pairs, acqs, rels = append(pairs, acq+rel), append(acqs, acq), append(rels, rel)
	}
	b.StopTimer()
	b.ReportMetric(medianMicros(pairs), "pair-µs")
	b.ReportMetric(medianMicros(acqs), "acquire-µs")
	b.ReportMetric(medianMicros(rels), "release-µs")
	if mallocs >= 0 {
		b.ReportMetric(float64(debugMallocs(c)-mallocs)/float64(b.N), "module-allocs/pair")
	}
}

func medianMicros(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds()) / 1e3
}

// debugMallocs returns the module's count of heap allocations so far, from
// the export lock_debug_mallocs of a liblockdebug build; -1 without it. The
// count includes lock_debug_mallocs's own reading (a constant).
func debugMallocs(c *Client) int64 {
	in, err := c.get()
	if err != nil {
		return -1
	}
	defer c.put(in)
	f := in.mod.ExportedFunction("lock_debug_mallocs")
	if f == nil {
		return -1
	}
	v, err := f.Call(context.Background())
	if err != nil {
		return -1
	}
	return int64(v[0])
}
