package core_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/poll"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestSoak (make soak; skipped unless LIBLOCK_SOAK is a duration) runs
// every primitive against five real redis-servers for that long, with a
// fault every few seconds on one node of five (SIGSTOP for a while, or
// SIGKILL and a restart), and samples the process every
// LIBLOCK_SOAK_SAMPLE (default 10s): RSS, open fds, goroutines, threads,
// heap, and the keys in Redis. It fails when a series grows over the
// second half of the run (the least-squares slope times that half's length
// beyond the series' allowance) or when a key is left once the workers
// stopped. It prints the samples and a table: start, end, slope per
// minute, and the operations per second.
func TestSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("LIBLOCK_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("set LIBLOCK_SOAK to a duration (make soak SOAK_TIME=30m) to run the soak")
	}
	every := 10 * time.Second
	if s, err := time.ParseDuration(os.Getenv("LIBLOCK_SOAK_SAMPLE")); err == nil && s > 0 {
		every = s
	}
	c := redistest.Start(t, 5)
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 200 * time.Millisecond, KeyPrefix: "soak:"})
	require.NoError(t, err)

	ctx, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	var ops, fails atomic.Int64
	var errMu sync.Mutex
	errKinds := map[string]int{}
	note := func(err error) {
		if err == nil {
			ops.Add(1)
			return
		}
		fails.Add(1)
		kind := "other"
		switch {
		case errors.Is(err, core.ErrNotAcquired):
			kind = "not acquired"
		case errors.Is(err, core.ErrUnavailable):
			kind = "unavailable"
		case errors.Is(err, core.ErrLost):
			kind = "lost"
		case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
			kind = "canceled"
		}
		errMu.Lock()
		errKinds[kind]++
		errMu.Unlock()
	}
	type primitive struct {
		name string
		run  func(ctx context.Context, i int) error
	}
	hold := func(ctx context.Context, l *core.Lock, err error) error {
		if err != nil {
			return err
		}
		if rand.IntN(4) == 0 {
			if err := l.Extend(ctx, 2*time.Second); err != nil {
				note(err)
			}
		}
		return l.Release(context.Background())
	}
	wait := core.Wait(500 * time.Millisecond)
	prims := []primitive{
		{"mutex", func(ctx context.Context, i int) error {
			l, err := cl.Acquire(ctx, "m"+strconv.Itoa(i%4), 2*time.Second, wait)
			return hold(ctx, l, err)
		}},
		{"mutex auto-extended", func(ctx context.Context, i int) error {
			l, err := cl.Acquire(ctx, "a"+strconv.Itoa(i%2), time.Second, wait, core.AutoExtend())
			return hold(ctx, l, err)
		}},
		{"fenced", func(ctx context.Context, i int) error {
			l, err := cl.Acquire(ctx, "f"+strconv.Itoa(i%2), 2*time.Second, wait, core.Fence())
			return hold(ctx, l, err)
		}},
		{"semaphore", func(ctx context.Context, i int) error {
			l, err := cl.Acquire(ctx, "s", 2*time.Second, wait, core.Permits(3))
			return hold(ctx, l, err)
		}},
		{"read", func(ctx context.Context, i int) error {
			l, err := cl.Acquire(ctx, "rw", 2*time.Second, wait, core.Read())
			return hold(ctx, l, err)
		}},
		{"write", func(ctx context.Context, i int) error {
			l, err := cl.Acquire(ctx, "rw", 2*time.Second, wait, core.Write())
			return hold(ctx, l, err)
		}},
		{"multi", func(ctx context.Context, i int) error {
			l, err := cl.AcquireAll(ctx, []string{"x" + strconv.Itoa(i%3), "y" + strconv.Itoa(i%3)}, 2*time.Second, wait)
			return hold(ctx, l, err)
		}},
		{"election", func(ctx context.Context, i int) error {
			cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
			defer cancel()
			ld, err := cl.Campaign(cctx, "e", "w"+strconv.Itoa(i), core.CampaignTTL(2*time.Second))
			if err != nil {
				return err
			}
			return ld.Resign(context.Background())
		}},
	}
	var wg sync.WaitGroup
	for _, p := range prims {
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; ctx.Err() == nil; i += 2 {
					note(p.run(ctx, i))
				}
			}()
		}
	}
	// Faults: every 2 to 5 s one node of five (a minority) is frozen for a
	// while or killed and restarted empty.
	wg.Add(1)
	var faults atomic.Int64
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(2000+rand.IntN(3000)) * time.Millisecond):
			}
			n := c.Nodes[rand.IntN(len(c.Nodes))]
			faults.Add(1)
			if rand.IntN(2) == 0 {
				if n.Freeze() == nil {
					select {
					case <-ctx.Done():
					case <-time.After(time.Duration(300+rand.IntN(1500)) * time.Millisecond):
					}
					_ = n.Thaw()
				}
			} else {
				_ = n.Restart()
			}
		}
	}()

	series := []string{"rss_mb", "fds", "goroutines", "threads", "heap_mb", "keys"}
	var at []float64
	samples := map[string][]float64{}
	start := time.Now()
	sample := func() {
		at = append(at, time.Since(start).Minutes())
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := procStatus()
		keys := 0
		for _, n := range c.Nodes {
			if k, err := n.Keys(); err == nil {
				keys += len(k)
			}
		}
		for name, v := range map[string]float64{
			"rss_mb": st["VmRSS"] / 1024, "threads": st["Threads"], "fds": float64(countFDs()),
			"goroutines": float64(runtime.NumGoroutine()), "heap_mb": float64(ms.HeapAlloc) / (1 << 20), "keys": float64(keys),
		} {
			samples[name] = append(samples[name], v)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "soak t=%5.1fmin ops=%d fails=%d faults=%d", at[len(at)-1], ops.Load(), fails.Load(), faults.Load())
		for _, s := range series {
			fmt.Fprintf(&b, " %s=%.1f", s, samples[s][len(samples[s])-1])
		}
		t.Log(b.String())
	}
	sample()
	tick := time.NewTicker(every)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			sample()
		}
	}
	tick.Stop()
	wg.Wait()
	for _, n := range c.Nodes {
		_ = n.Thaw()
	}
	elapsed := time.Since(start)
	require.NoError(t, cl.Close())

	// The table, and the growth check over the second half.
	allow := map[string]float64{"rss_mb": 32, "fds": 8, "goroutines": 16, "threads": 4, "heap_mb": 16, "keys": 200}
	t.Logf("soak: %s, %d operations (%.0f/s), %d failed (%v), %d faults", elapsed.Round(time.Second), ops.Load(),
		float64(ops.Load())/elapsed.Seconds(), fails.Load(), errKinds, faults.Load())
	t.Logf("%-11s %10s %10s %14s %14s", "series", "start", "end", "slope/min (2nd half)", "growth over it")
	half := len(at) / 2
	for _, s := range series {
		v := samples[s]
		slope := fitSlope(at[half:], v[half:])
		growth := slope * (at[len(at)-1] - at[half])
		t.Logf("%-11s %10.1f %10.1f %14.3f %14.1f", s, v[0], v[len(v)-1], slope, growth)
		if len(at)-half >= 3 && growth > allow[s] {
			t.Errorf("%s grows over the second half: %.1f (slope %.3f/min), more than %.0f", s, growth, slope, allow[s])
		}
	}
	// No key left once the workers stopped, but the fence counters, which
	// live on by design (a fence never goes back).
	poll.Eventually(t, 30*time.Second, "no key left but the fence counters", func() bool {
		for _, n := range c.Nodes {
			keys, err := n.Keys()
			if err != nil {
				return false
			}
			for _, k := range keys {
				if !strings.HasSuffix(k, engine.FenceKey("")) {
					return false
				}
			}
		}
		return true
	})
}

// fitSlope is the least-squares slope of y over x.
func fitSlope(x, y []float64) float64 {
	n := float64(len(x))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range x {
		sx += x[i]
		sy += y[i]
		sxx += x[i] * x[i]
		sxy += x[i] * y[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / den
}

// procStatus reads /proc/self/status's numeric fields (kB for sizes).
func procStatus() map[string]float64 {
	m := map[string]float64{}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		f := strings.Fields(v)
		if len(f) > 0 {
			if x, err := strconv.ParseFloat(f[0], 64); err == nil {
				m[k] = x
			}
		}
	}
	return m
}

func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
