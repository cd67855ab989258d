package core_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// BenchmarkContention: 10 contenders (one Client each, as processes would
// be) on 3 nodes run 1 ms critical sections on one name, through the
// mutex and through a 3-permit semaphore, for b.N sections in all. It
// reports sections/s and the least share of sections a contender got,
// relative to a fair share (1.0: perfectly even; the aim is ≥ 0.08).
func BenchmarkContention(b *testing.B) {
	c := redistest.Start(b, 3)
	for _, tc := range []struct {
		name string
		opts []core.AcquireOption
	}{
		{"mutex", nil},
		{"semaphore3", []core.AcquireOption{core.Permits(3)}},
		{"semaphore1", []core.AcquireOption{core.Permits(1)}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const contenders = 10
			var clients []*core.Client
			for range contenders {
				cl, err := core.New(core.Config{Nodes: c.URLs()})
				if err != nil {
					b.Fatal(err)
				}
				clients = append(clients, cl)
			}
			defer func() {
				for _, cl := range clients {
					_ = cl.Close()
				}
			}()
			ctx := context.Background()
			var left, retries atomic.Int64
			left.Store(int64(b.N))
			counts := make([]int, contenders)
			opts := append([]core.AcquireOption{core.Wait(30 * time.Second)}, tc.opts...)
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i, cl := range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for left.Add(-1) >= 0 {
						l, err := cl.Acquire(ctx, "contended-bench", 5*time.Second, opts...)
						if err != nil {
							b.Error(err)
							return
						}
						time.Sleep(time.Millisecond) // the critical section
						counts[i]++
						if err := releaseRetrying(ctx, l, &retries); err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			least := counts[0]
			for _, n := range counts {
				least = min(least, n)
			}
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "sections/s")
			b.ReportMetric(float64(least)/(float64(b.N)/contenders), "least-share")
			b.ReportMetric(float64(retries.Load()), "release-retries")
		})
	}
}

// releaseRetrying releases l, calling Release again (up to 4 more times)
// while it fails with ErrUnavailable, as that error asks: on this shared
// VM a node sometimes answers a release after the 50 ms node timeout, and
// the benchmark measures throughput, not that. Each retry is counted.
//
// A repeated Release that answers ErrLost found the permit's keys gone:
// the release that failed with ErrUnavailable had deleted them after all,
// its answers arriving after the node timeout. That is the release done,
// not a lost permit.
func releaseRetrying(ctx context.Context, l *core.Lock, retries *atomic.Int64) error {
	err := l.Release(ctx)
	for i := 0; i < 4 && errors.Is(err, core.ErrUnavailable); i++ {
		retries.Add(1)
		err = l.Release(ctx)
		if errors.Is(err, core.ErrLost) {
			return nil
		}
	}
	return err
}

// BenchmarkSemaphorePairAB measures a 3-permit semaphore's acquire+release
// pair against the mutex pair (the aim: at most 1.2x), alternating pair by
// pair on one Client, so that both see the same machine (on a shared VM,
// BenchmarkPair's sequential rows move by more than the difference
// sought). It reports the semaphore's median latency and median process
// CPU per pair as p50-µs and cpu-µs, and the mutex's as single-p50-µs and
// single-cpu-µs: benchreport prints the ratio of the two.
func BenchmarkSemaphorePairAB(b *testing.B) {
	benchPairAB(b, "semaphore3-vs-mutex", core.Permits(3))
}
