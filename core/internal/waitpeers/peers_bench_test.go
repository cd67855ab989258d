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
	"github.com/liblock/liblock/core/ownthread"
	"github.com/liblock/liblock/core/testkit/redistest"
	"github.com/liblock/liblock/wasm/host"
)

// releaseLua is the compare-and-delete every Redlock peer releases with.
const releaseLua = `if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`

// burstSize is how many pairs an implementation runs in a row in each
// round: WAITPEERS_BURST, else 50 (make bench: 1, pair by pair).
func burstSize() int {
	if n, err := strconv.Atoi(os.Getenv("WAITPEERS_BURST")); err == nil && n > 0 {
		return n
	}
	return 50
}

// impl is one implementation of the uncontended acquire+release pair.
// Exactly one of pair and runs is set: runs runs a whole burst itself
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
// rotated round by round (WAITPEERS_BURST pairs, default 50; 1 alternates
// pair by pair); b.N is the number of rounds.
//
// Reported per implementation, and logged as a table: the median pair
// (NAME-p50-µs), the process CPU (user + system, all threads) per pair
// (NAME-cpu-µs), how often a CPU of the machine went idle per pair
// (NAME-idles: cpuidle entries, each a halt on this VM), and that median
// divided by the best Go peer's (NAME-ratio). This VM's round trips are bimodal (fast while its vCPUs
// are busy, slow while they halt between round trips): rounds are split
// into a fast and a slow regime at the largest gap between the best peer's
// round p50s (when that gap is a factor 1.3 or more), and each regime's
// median of the per-round ratios is reported as NAME-ratio-fast and
// NAME-ratio-slow, with the number of rounds in each (rounds-fast,
// rounds-slow) and the machine's median idle share in each (idle%-fast,
// idle%-slow, from /proc/stat). The regimes mean something with bursts of
// many pairs; pair by pair they only set the slowest pairs apart.
//
// liblock-poll and liblock-wasm-poll are the Go callers with the C ABI's
// wait (poll(2) on the caller's thread; over liblock.wasm the socket stays
// in the netpoller's epoll set), liblock-c-netpoller the C thread
// with the Go caller's (Go's netpoller): each caller with the other wait,
// for the choice of each.
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
	liblockPair := func(ctx context.Context, c *core.Client, res string) func(*testing.B) {
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
	cc, ccNetpoller := newClient(core.New), newClient(core.New)
	// The C ABI's blocking calls mark their context (ownthread): the
	// caller's own thread waits for a one-node reply in poll(2), on a
	// socket outside Go's netpoller. The …-poll and …-netpoller rows are
	// each caller with the other wait, each on a client of its own (a
	// client's sockets are chosen by the callers it has seen).
	own := ownthread.With(ctx)
	impls := []impl{
		{name: "liblock", pair: liblockPair(ctx, newClient(core.New), "bench-go")},
		{name: "liblock-poll", pair: liblockPair(own, newClient(core.New), "bench-go-poll")},
		{name: "liblock-c", runs: func(n int) ([]time.Duration, error) { return ct.Burst(cc, own, n) }},
		{name: "liblock-c-netpoller", runs: func(n int) ([]time.Duration, error) { return ct.Burst(ccNetpoller, ctx, n) }},
		{name: "liblock-wasm", pair: liblockPair(ctx, newClient(mod.NewClient), "bench-wasm")},
		{name: "liblock-wasm-poll", pair: liblockPair(own, newClient(mod.NewClient), "bench-wasm-poll")},
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
	burst := burstSize()
	for _, im := range impls { // warm up: connections, scripts, the C thread
		run(im, 50)
	}

	rounds := b.N
	all := make([][]time.Duration, len(impls))
	roundP50 := make([][]float64, len(impls)) // [impl][round] µs
	cpu := make([]time.Duration, len(impls))
	halts := make([]uint64, len(impls)) // idle entries of every CPU during each implementation's bursts
	idle := make([]float64, rounds)     // the machine's idle share during each round, %
	b.ResetTimer()
	for r := range rounds {
		i0, t0 := machineIdle()
		for k := range impls {
			i := (r + k) % len(impls)
			c0, h0 := cpuTime(), idleEntries()
			d := run(impls[i], burst)
			cpu[i] += cpuTime() - c0
			halts[i] += idleEntries() - h0
			all[i] = append(all[i], d...)
			roundP50[i] = append(roundP50[i], p50(d))
		}
		if i1, t1 := machineIdle(); t1 > t0 {
			idle[r] = 100 * float64(i1-i0) / float64(t1-t0)
		}
	}
	b.StopTimer()

	// The best Go peer of each round, and the regimes (with bursts of 10
	// pairs or more: a round of one pair has no p50 to classify).
	best := make([]float64, rounds)
	bestAll := 0.0 // the best peer's p50 over every pair
	for i, im := range impls {
		if !im.peer {
			continue
		}
		if v := p50(all[i]); bestAll == 0 || v < bestAll {
			bestAll = v
		}
		for r := range rounds {
			if best[r] == 0 || roundP50[i][r] < best[r] {
				best[r] = roundP50[i][r]
			}
		}
	}
	var fast []bool
	nFast := 0
	if bestAll > 0 && burst >= 10 {
		fast = regimes(best)
		for _, f := range fast {
			if f {
				nFast++
			}
		}
		b.ReportMetric(float64(nFast), "rounds-fast")
		b.ReportMetric(float64(rounds-nFast), "rounds-slow")
		var idf, ids []float64
		for r := range rounds {
			if fast[r] {
				idf = append(idf, idle[r])
			} else {
				ids = append(ids, idle[r])
			}
		}
		if len(idf) > 0 {
			b.ReportMetric(median(idf), "idle%-fast")
		}
		if len(ids) > 0 {
			b.ReportMetric(median(ids), "idle%-slow")
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "%d rounds of %d pairs each, alternating; load average %s\n", rounds, burst, loadAvg())
	fmt.Fprintf(&table, "%-20s %9s %9s %9s %9s %9s %9s\n", "pair", "p50 µs", "CPU µs", "idles", "÷peer", "÷peer,", "÷peer,")
	fmt.Fprintf(&table, "%-20s %9s %9s %9s %9s %9s %9s\n", "", "", "per pair", "per pair", "", "fast", "slow")
	for i, im := range impls {
		v, c := p50(all[i]), float64(cpu[i].Nanoseconds())/1e3/float64(len(all[i]))
		b.ReportMetric(v, im.name+"-p50-µs")
		b.ReportMetric(c, im.name+"-cpu-µs")
		if im.runs != nil && burst < 10 {
			// The C thread's CPU then counts the hand-off of each burst.
			fmt.Fprintf(&table, "%-20s %9.1f %9s", im.name, v, "-")
		} else {
			fmt.Fprintf(&table, "%-20s %9.1f %9.1f", im.name, v, c)
		}
		if h := float64(halts[i]) / float64(len(all[i])); im.runs != nil && burst < 10 {
			fmt.Fprintf(&table, " %9s", "-") // the hand-off of each burst again
		} else {
			b.ReportMetric(h, im.name+"-idles")
			fmt.Fprintf(&table, " %9.2f", h)
		}
		if bestAll == 0 {
			table.WriteString("\n")
			continue
		}
		b.ReportMetric(v/bestAll, im.name+"-ratio")
		fmt.Fprintf(&table, " %8.2fx", v/bestAll)
		var rf, rs []float64
		for r := range rounds {
			if q := roundP50[i][r] / best[r]; fast == nil || fast[r] {
				rf = append(rf, q)
			} else {
				rs = append(rs, q)
			}
		}
		for _, q := range [][]float64{rf, rs} {
			if len(q) == 0 || burst < 10 {
				fmt.Fprintf(&table, " %9s", "-")
				continue
			}
			fmt.Fprintf(&table, " %8.2fx", median(q))
		}
		table.WriteString("\n")
		if len(rf) > 0 && burst >= 10 {
			b.ReportMetric(median(rf), im.name+"-ratio-fast")
		}
		if len(rs) > 0 && burst >= 10 {
			b.ReportMetric(median(rs), im.name+"-ratio-slow")
		}
	}
	table.WriteString("idles: how often a CPU of the machine went idle (cpuidle entries: on this VM each is a halt, and a reply to a halted vCPU waits for the hypervisor to wake it)\n")
	if bestAll > 0 && burst < 10 {
		table.WriteString("÷peer: p50 ÷ the best Go peer's p50 (regimes: with bursts of 10 pairs or more)\n")
	} else if bestAll > 0 {
		fmt.Fprintf(&table, "÷peer: p50 ÷ the best Go peer's p50; fast/slow: the median of each round's ratio in the rounds of each regime (%d fast, %d slow)\n", nFast, rounds-nFast)
	}
	if b.N > 1 { // not go test's first, one-round run
		fmt.Printf("\nthe caller's wait, %s (core/internal/waitpeers):\n%s", strings.TrimPrefix(b.Name(), "BenchmarkWaitPeers/"), table.String())
	}
	if testing.Verbose() {
		var sb strings.Builder
		fmt.Fprintf(&sb, "round p50 µs (the machine's idle %%, the best peer's regime):\n%6s", "round")
		for _, im := range impls {
			fmt.Fprintf(&sb, " %13s", im.name)
		}
		for r := range rounds {
			reg := "slow"
			if fast == nil || fast[r] {
				reg = "fast"
			}
			fmt.Fprintf(&sb, "\n%6d", r)
			for i := range impls {
				fmt.Fprintf(&sb, " %13.0f", roundP50[i][r])
			}
			fmt.Fprintf(&sb, " %5.1f%% %s", idle[r], reg)
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

// loadAvg is /proc/loadavg's three load averages.
func loadAvg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// machineIdle is the machine's idle and total time so far, in clock ticks
// of every CPU (/proc/stat; 0, 0 where it cannot be read).
func machineIdle() (idle, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal …
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i < 8 {
			total += n
		}
		if i == 3 || i == 4 {
			idle += n
		}
	}
	return idle, total
}

// idleEntries is how many times the machine's CPUs entered an idle state
// so far (the sum of /sys/devices/system/cpu/cpu*/cpuidle/state*/usage; 0
// where cpuidle is not exposed). With the haltpoll driver and
// guest_halt_poll_ns 0, as on this VM, every entry is a halt.
func idleEntries() uint64 {
	files, _ := filepath.Glob("/sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*/usage")
	var n uint64
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		n += v
	}
	return n
}

// cpuTime is the process's CPU time so far (user + system, all threads).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
