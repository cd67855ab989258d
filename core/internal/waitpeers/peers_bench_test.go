package waitpeers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	redsyncredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/wasm/host"
)

// releaseLua is the compare-and-delete every Redlock peer releases with.
const releaseLua = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

// burst is how many pairs an implementation runs in a row in each round.
const burst = 50

// impl is one implementation of the uncontended acquire+release pair.
// Exactly one of pair and bursts is set: bursts runs a whole burst itself
// and returns each pair's latency (the C thread).
type impl struct {
	name string
	peer bool // a Go peer (the ratios' denominator); raw go-redis is the floor, not a peer
	pair func(b *testing.B)
	runs func(n int) ([]time.Duration, error)
}

// BenchmarkWaitPeers measures the uncontended acquire+release pair of each
// liblock caller beside the Go peers in one process on the same
// redis-servers, each library with its defaults: liblock's Go driver
// (core.New), a C thread calling into Go for each acquire and each release
// (how the C ABI's blocking calls are entered: the Go runtime locks the
// call's goroutine to that thread), the Go driver over liblock.wasm
// (wasm/host), bsm/redislock (one node only), go-redsync, and raw go-redis
// (SET NX PX, then EVALSHA; on 5 nodes in parallel goroutines: the floor).
// Each round runs a burst of pairs of every implementation, in an order
// rotated round by round; b.N is the number of rounds.
//
// Reported per implementation: the median pair (NAME-p50-µs), the process
// CPU (user + system, all threads) per pair (NAME-cpu-µs), and the median
// over rounds of its round p50 divided by the best Go peer's in the same
// round (NAME-ratio). This VM's round trips are bimodal (a wake-up of an
// idle vCPU is fast or slow for a while): rounds are split into a fast and
// a slow regime at the largest gap between the best peer's round p50s
// (when that gap is a factor 1.3 or more), and each regime's median ratio
// is reported as NAME-ratio-fast and NAME-ratio-slow, with the number of
// rounds in each (rounds-fast, rounds-slow).
//
// WAITPEERS_ONLY=NAME runs that implementation alone (for strace -c or
// perf stat on the process); LIBLOCK_WASM names liblock.wasm (default:
// build/liblock.wasm of the repository).
func BenchmarkWaitPeers(b *testing.B) {
	wasmPath := os.Getenv("LIBLOCK_WASM")
	if wasmPath == "" {
		wasmPath = filepath.Join("..", "..", "..", "build", "liblock.wasm")
	}
	mod, err := host.Load(wasmPath, host.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer mod.Close()
	ct, err := StartCThread()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{1, 5} {
		cl := redistest.Start(b, n)
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			benchWait(b, cl, mod, ct)
		})
		cl.Close()
	}
}

func benchWait(b *testing.B, cl *redistest.Cluster, mod *host.Module, ct *CThread) {
	ctx := context.Background()
	newClient := func(mk func(core.Config) (*core.Client, error)) *core.Client {
		// The defaults but the node timeout: the peers' clients wait 3 s
		// for a reply; liblock's 50 ms can end a pair on this shared,
		// loaded machine, which is not what is measured here.
		c, err := mk(core.Config{Nodes: cl.URLs(), NodeTimeout: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = c.Close() })
		return c
	}
	liblockPair := func(c *core.Client, res string) func(*testing.B) {
		return func(b *testing.B) {
			l, err := c.Acquire(ctx, res, 10*time.Second)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	clients := make([]*redis.Client, len(cl.Nodes))
	for i, n := range cl.Nodes {
		clients[i] = redis.NewClient(&redis.Options{Addr: n.Addr()})
		b.Cleanup(func() { _ = clients[i].Close() })
	}
	cc := newClient(core.New)
	impls := []impl{
		{name: "liblock", pair: liblockPair(newClient(core.New), "bench-go")},
		{name: "liblock-c", runs: func(n int) ([]time.Duration, error) { return ct.Burst(cc, n) }},
		{name: "liblock-wasm", pair: liblockPair(newClient(mod.NewClient), "bench-wasm")},
	}
	if len(clients) == 1 {
		rl := redislock.New(clients[0])
		impls = append(impls, impl{name: "redislock", peer: true, pair: func(b *testing.B) {
			l, err := rl.Obtain(ctx, "bench-redislock", 10*time.Second, nil)
			if err != nil {
				b.Fatal(err)
			}
			if err := l.Release(ctx); err != nil {
				b.Fatal(err)
			}
		}})
	}
	pools := make([]redsyncredis.Pool, len(clients))
	for i, c := range clients {
		pools[i] = goredis.NewPool(c)
	}
	rs := redsync.New(pools...)
	impls = append(impls, impl{name: "redsync", peer: true, pair: func(b *testing.B) {
		m := rs.NewMutex("bench-redsync", redsync.WithExpiry(10*time.Second))
		if err := m.LockContext(ctx); err != nil {
			b.Fatal(err)
		}
		if ok, err := m.UnlockContext(ctx); err != nil || !ok {
			b.Fatalf("go-redsync unlock: %v %v", ok, err)
		}
	}})
	script := redis.NewScript(releaseLua)
	tok := 0
	one := func(rc *redis.Client, t string) {
		if ok, err := rc.SetNX(ctx, "bench-raw", t, 10*time.Second).Result(); err != nil || !ok {
			b.Fatalf("SET NX: %v %v", ok, err)
		}
		if err := script.Run(ctx, rc, []string{"bench-raw"}, t).Err(); err != nil {
			b.Fatal(err)
		}
	}
	impls = append(impls, impl{name: "go-redis-raw", pair: func(b *testing.B) {
		tok++
		t := strconv.Itoa(tok)
		if len(clients) == 1 {
			one(clients[0], t)
			return
		}
		var wg sync.WaitGroup
		for _, rc := range clients {
			wg.Go(func() { one(rc, t) })
		}
		wg.Wait()
	}})
	if only := os.Getenv("WAITPEERS_ONLY"); only != "" {
		impls = slices.DeleteFunc(impls, func(im impl) bool { return im.name != only })
		if len(impls) == 0 {
			b.Skipf("no implementation %q here", only)
		}
	}
	run := func(im impl, n int) []time.Duration {
		if im.runs != nil {
			d, err := im.runs(n)
			if err != nil {
				b.Fatal(err)
			}
			return d
		}
		d := make([]time.Duration, n)
		for i := range n {
			t0 := time.Now()
			im.pair(b)
			d[i] = time.Since(t0)
		}
		return d
	}
	for _, im := range impls { // warm up: connections, scripts, the C thread
		run(im, burst)
	}

	rounds := b.N
	all := make([][]time.Duration, len(impls))
	roundP50 := make([][]float64, len(impls)) // [impl][round] µs
	cpu := make([]time.Duration, len(impls))
	b.ResetTimer()
	for r := range rounds {
		for k := range impls {
			i := (r + k) % len(impls)
			c0 := cpuTime()
			d := run(impls[i], burst)
			cpu[i] += cpuTime() - c0
			all[i] = append(all[i], d...)
			roundP50[i] = append(roundP50[i], p50(d))
		}
	}
	b.StopTimer()

	// The best Go peer of each round, and the regimes.
	best := make([]float64, rounds)
	for r := range rounds {
		for i, im := range impls {
			if im.peer && (best[r] == 0 || roundP50[i][r] < best[r]) {
				best[r] = roundP50[i][r]
			}
		}
	}
	fast := regimes(best)
	nFast := 0
	for _, f := range fast {
		if f {
			nFast++
		}
	}
	if best[0] > 0 {
		b.ReportMetric(float64(nFast), "rounds-fast")
		b.ReportMetric(float64(rounds-nFast), "rounds-slow")
	}
	for i, im := range impls {
		b.ReportMetric(p50(all[i]), im.name+"-p50-µs")
		b.ReportMetric(float64(cpu[i].Nanoseconds())/1e3/float64(len(all[i])), im.name+"-cpu-µs")
		if best[0] == 0 {
			continue
		}
		var ra, rf, rs []float64
		for r := range rounds {
			q := roundP50[i][r] / best[r]
			ra = append(ra, q)
			if fast[r] {
				rf = append(rf, q)
			} else {
				rs = append(rs, q)
			}
		}
		b.ReportMetric(median(ra), im.name+"-ratio")
		if len(rf) > 0 {
			b.ReportMetric(median(rf), im.name+"-ratio-fast")
		}
		if len(rs) > 0 {
			b.ReportMetric(median(rs), im.name+"-ratio-slow")
		}
	}
	if testing.Verbose() {
		var sb strings.Builder
		fmt.Fprintf(&sb, "round p50 µs (best peer's regime):\n%6s", "round")
		for _, im := range impls {
			fmt.Fprintf(&sb, " %13s", im.name)
		}
		for r := range rounds {
			reg := "slow"
			if fast[r] {
				reg = "fast"
			}
			fmt.Fprintf(&sb, "\n%6d", r)
			for i := range impls {
				fmt.Fprintf(&sb, " %13.0f", roundP50[i][r])
			}
			sb.WriteString(" " + reg)
		}
		b.Log(sb.String())
	}
}

// regimes splits rounds at the largest gap between the sorted values of
// best (a factor 1.3 or more): fast[r] for the rounds below it; every round
// is fast when there is no such gap.
func regimes(best []float64) []bool {
	s := slices.Clone(best)
	slices.Sort(s)
	cut, gap := s[len(s)-1], 1.3
	for i := 1; i < len(s); i++ {
		if s[i-1] > 0 && s[i]/s[i-1] >= gap {
			gap, cut = s[i]/s[i-1], s[i-1]
		}
	}
	fast := make([]bool, len(best))
	for r, v := range best {
		fast[r] = v <= cut
	}
	return fast
}

func p50(d []time.Duration) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	return float64(s[len(s)/2].Nanoseconds()) / 1e3
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// cpuTime is the process's CPU time so far (user + system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
