package host_test

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/hostabitest"
	"github.com/stretchr/testify/require"
)

// BenchmarkModuleCPU measures the CPU one acquire+release pair costs in the
// module and this package's adapter, without Redis: a host that answers
// every command at once as for a free key (PING → PONG, SET → OK, the
// scripts → 1). It is a floor under every wasm host's latency. engine=native
// is the same engine compiled natively, driven the same way, for scale.
// Reported: the medians of the pair, of the acquire and of the release, in
// µs.
func BenchmarkModuleCPU(b *testing.B) {
	for _, n := range []int{1, 5} {
		for _, kind := range []string{"wasm", "native"} {
			b.Run("nodes="+strconv.Itoa(n)+"/engine="+kind, func(b *testing.B) {
				urls := make([]string, n)
				for i := range urls {
					urls[i] = "redis://127.0.0.1:" + strconv.Itoa(1+i) // never dialed
				}
				var e hostabitest.Engine
				if kind == "wasm" {
					e = newEngine(b, core.Config{Nodes: urls, NodeTimeout: time.Second})
				} else {
					nodes, err := engine.ParseNodes(urls)
					require.NoError(b, err)
					ne, err := engine.New(engine.Config{Nodes: nodes, NodeTimeout: time.Second}, engine.SystemEnv())
					require.NoError(b, err)
					e = ne
				}
				benchCPU(b, e)
			})
		}
	}
}

func benchCPU(b *testing.B, e hostabitest.Engine) {
	h := &hostabitest.Instant{E: e}
	var acq, rel time.Duration
	pair := func() {
		start := time.Now()
		mid, err := h.Pair("bench")
		acq, rel = mid.Sub(start), time.Since(mid)
		if err != nil { // after the clock is read: the check costs nothing measured
			b.Fatal(err)
		}
	}
	for range 200 {
		pair()
	}
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
}

func medianMicros(d []time.Duration) float64 {
	slices.Sort(d)
	return float64(d[len(d)/2].Nanoseconds()) / 1e3
}
