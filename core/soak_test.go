package core_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
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
	"github.com/liblock/liblock/wasm/host"
)

// TestSoak (make soak; skipped unless LIBLOCK_SOAK is a duration) runs
// every primitive against five real redis-servers for that long, in every
// runtime and backend at once: Go native in this process, and one worker
// process each for Go over liblock.wasm (this test binary again, see
// TestSoakWorker), Node native and wasm (bindings/node/test/soak-worker.js)
// and Python blocking and asyncio, native and wasm
// (bindings/python/tests/soak_worker.py). A fault every few seconds hits
// one node of five (SIGSTOP for a while, or SIGKILL and a restart empty).
// Every LIBLOCK_SOAK_SAMPLE (default 10s) this process samples itself (RSS,
// open fds, goroutines, threads, heap) and the keys in Redis, and each
// worker prints its own samples (RSS, fds, threads, and what its runtime
// tells: heap, goroutines, Node's active handles, Python's live library
// handles and asyncio tasks). It fails when a series of any runtime grows
// over the second half of the run (the least-squares slope times that
// half's length beyond the series' allowance), when a worker fails or does
// not exit once told to, or when a key is left once every worker stopped.
// It prints a table per runtime: start, end, slope per minute, and the
// operations per second. LIBLOCK_SOAK_WORKERS (comma-separated names, or
// "none") narrows the workers; make soak runs them all.
// LIBLOCK_SOAK_LEAK names a worker that leaks on purpose (a goroutine, a
// timer or a file descriptor every 100 operations): the negative control
// of the whole chain, from a worker's samples to the verdict; that run
// must fail.
//
// Every runtime also times each acquire and campaign (from the call to its
// return, whatever the outcome) against its wait: one that returns later
// than soakOverrunAllowance after its wait is an overrun, printed at once
// (primitive, time taken, outcome, when), and the run fails naming every
// one. LIBLOCK_SOAK_OVERRUN names a runtime (any worker, or "go native")
// that overruns on purpose (every 50th reader acquire is held inside the
// timed span past the allowance): the negative control of that chain.
// Each runtime also probes its own scheduling (a 25 ms timer's lateness):
// an overrun is counted without the time its runtime was stalled (the
// machine too busy to run it), which is not time the library waited.
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
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: soakNodeTimeout, KeyPrefix: "soak:go-native:"})
	require.NoError(t, err)

	ctx, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	start := time.Now()
	faultLog := &soakFaultLog{start: start}
	workers := startSoakWorkers(t, c.URLs(), every, start)

	tally := newSoakTally()
	var wg sync.WaitGroup
	native := &soakTimer{start: start, overrun: os.Getenv("LIBLOCK_SOAK_OVERRUN") == "go native", lag: &soakLag{}}
	go native.lag.run(ctx)
	pressure := &soakPressure{}
	go pressure.run(ctx)
	native.late = func(o soakOverrun) {
		t.Logf("go native: overrun: %s (faults then: %s)", o, faultLog.around(o.At))
	}
	soakLoad(ctx, cl, tally.note, native, &wg)
	// Faults: every 2 to 5 s one node of five (a minority) is frozen for a
	// while, killed and restarted empty at once, or killed and restarted
	// empty after staying down for a while (a delayed restart, as the
	// failure model advises after a crash).
	wg.Add(1)
	var faults atomic.Int64
	go func() {
		defer wg.Done()
		pause := func(lo, span int) {
			select {
			case <-ctx.Done():
			case <-time.After(time.Duration(lo+rand.IntN(span)) * time.Millisecond):
			}
		}
		for ctx.Err() == nil {
			pause(2000, 3000)
			if ctx.Err() != nil {
				return
			}
			n := c.Nodes[rand.IntN(len(c.Nodes))]
			faults.Add(1)
			switch rand.IntN(3) {
			case 0:
				if n.Freeze() == nil {
					faultLog.note("node %d frozen", n.Index)
					pause(300, 1500)
					_ = n.Thaw()
					faultLog.note("node %d thawed", n.Index)
				}
			case 1:
				_ = n.Restart()
				faultLog.note("node %d restarted", n.Index)
			default:
				_ = n.Kill()
				faultLog.note("node %d killed", n.Index)
				pause(800, 1700)
				_ = n.Restart()
				faultLog.note("node %d restarted after a delay", n.Index)
			}
		}
	}()

	self := &soakSeries{name: "go native", series: map[string][]float64{}}
	sample := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := procStatus("self")
		keys := 0
		for _, n := range c.Nodes {
			if k, err := n.Keys(); err == nil {
				keys += len(k)
			}
		}
		self.add(time.Since(start).Minutes(), float64(tally.ops.Load()), map[string]float64{
			"rss_mb": st["VmRSS"] / 1024, "threads": st["Threads"], "fds": float64(countFDs("self")),
			"goroutines": float64(runtime.NumGoroutine()), "heap_mb": float64(ms.HeapAlloc) / (1 << 20), "keys": float64(keys),
		})
		var b strings.Builder
		fmt.Fprintf(&b, "soak t=%5.1fmin faults=%d %s", self.at[len(self.at)-1], faults.Load(), self.last())
		for _, w := range workers {
			fmt.Fprintf(&b, "\n  %-16s %s", w.name, w.last())
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
	for _, w := range workers {
		w.stop(t)
	}

	// The table, and the growth check over the second half, per runtime.
	t.Logf("soak: %s, %d faults; go native: %d operations, %d failed (%v)", elapsed.Round(time.Second), faults.Load(),
		tally.ops.Load(), tally.fails.Load(), tally.kinds())
	for _, w := range workers {
		t.Logf("%s: errors by kind %v", w.name, w.errors)
	}
	// Every acquire and campaign ended within its wait and the allowance.
	overruns := map[string][]soakOverrun{"go native": native.overruns()}
	timed := map[string]soakTimes{"go native": native.times()}
	names := []string{"go native"}
	for _, w := range workers {
		w.mu.Lock()
		overruns[w.name], timed[w.name] = w.late, w.timed
		w.mu.Unlock()
		names = append(names, w.name)
	}
	for _, name := range names {
		t.Logf("%-16s timed %s", name, timed[name])
		for _, o := range overruns[name] {
			if o.late() {
				t.Errorf("%s: an acquire outlived its wait by more than %v: %s (faults then: %s; %s)", name, soakOverrunAllowance, o, faultLog.around(o.At), pressure.explain(o))
			} else {
				t.Logf("%s: an acquire outlived its wait by more than %v while its runtime stalled (not counted): %s (faults then: %s; %s)", name, soakOverrunAllowance, o, faultLog.around(o.At), pressure.explain(o))
			}
		}
	}
	t.Logf("%-16s %-11s %10s %10s %12s %12s %8s", "runtime", "series", "start", "end", "slope/min", "2nd-half Δ", "ops/s")
	for _, s := range append([]*soakSeries{self}, workerSeries(workers)...) {
		s.check(t)
	}
	// No key left once every worker stopped, but the fence counters, which
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

// soakAllow is how much a series may grow over the second half of the run
// (the fitted slope times that half's length): above it, the series is
// said to grow without bound. The margins absorb a garbage collector's
// sawtooth and a pool's warm-up, not a leak of a few bytes per operation
// over millions of them (that is megabytes).
var soakAllow = map[string]float64{
	"rss_mb": 32, "heap_mb": 16, "fds": 8, "goroutines": 16, "threads": 4, "keys": 200,
	"handles": 16, "live": 32, "tasks": 8,
}

// soakSeries are one runtime's samples: at (minutes since the start), the
// operations done so far, and each series.
type soakSeries struct {
	name   string
	mu     sync.Mutex
	at     []float64
	ops    []float64
	order  []string
	series map[string][]float64
}

func (s *soakSeries) add(at, ops float64, v map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.order == nil {
		for k := range v {
			s.order = append(s.order, k)
		}
		sort.Strings(s.order)
	}
	s.at = append(s.at, at)
	s.ops = append(s.ops, ops)
	for _, k := range s.order {
		s.series[k] = append(s.series[k], v[k])
	}
}

func (s *soakSeries) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.at) == 0 {
		return "(no sample yet)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ops=%.0f", s.ops[len(s.ops)-1])
	for _, k := range s.order {
		fmt.Fprintf(&b, " %s=%.1f", k, s.series[k][len(s.series[k])-1])
	}
	return b.String()
}

// check logs the runtime's rows of the table and fails a series growing
// beyond its allowance over the second half.
func (s *soakSeries) check(t *testing.T) {
	t.Helper()
	rows, problems := s.verdict()
	for _, r := range rows {
		t.Log(r)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// verdict is the runtime's rows of the table (start, end, slope per
// minute and growth over the second half, operations per second) and what
// is wrong: a series growing beyond its allowance over the second half (a
// least-squares fit, so that a garbage collector's sawtooth averages out
// and a warm-up in the first half does not count), a series without an
// allowance, too few samples, or no operation done.
func (s *soakSeries) verdict() (rows, problems []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.at)
	if n < 2 {
		return nil, []string{fmt.Sprintf("%s: %d samples, too few to tell", s.name, n)}
	}
	rate := (s.ops[n-1] - s.ops[0]) / ((s.at[n-1] - s.at[0]) * 60)
	half := n / 2
	for _, k := range s.order {
		v := s.series[k]
		slope := fitSlope(s.at[half:], v[half:])
		growth := slope * (s.at[n-1] - s.at[half])
		rows = append(rows, fmt.Sprintf("%-16s %-11s %10.1f %10.1f %12.3f %12.1f %8.0f", s.name, k, v[0], v[n-1], slope, growth, rate))
		allow, ok := soakAllow[k]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: series %s has no allowance", s.name, k))
		}
		if n-half >= 3 && growth > allow {
			problems = append(problems, fmt.Sprintf("%s: %s grows over the second half: %.1f (slope %.3f/min), more than %.0f", s.name, k, growth, slope, allow))
		}
	}
	if s.ops[n-1] <= s.ops[0] {
		problems = append(problems, fmt.Sprintf("%s: no operation succeeded over the run", s.name))
	}
	return rows, problems
}

// TestSoakVerdict is the growth check's negative control: a series
// growing steadily (a leak of one fd a minute, of a megabyte a minute, of
// a handle per sample) fails it; the same series flat with noise, or
// growing only in the first half (a warm-up), passes; a run without
// operations fails.
func TestSoakVerdict(t *testing.T) {
	run := func(f func(i int, at float64) map[string]float64, ops func(i int) float64) []string {
		s := &soakSeries{name: "x", series: map[string][]float64{}}
		for i := range 180 { // 30 minutes at 10 s
			at := float64(i) / 6
			s.add(at, ops(i), f(i, at))
		}
		_, problems := s.verdict()
		return problems
	}
	busy := func(i int) float64 { return float64(1000 * i) }
	noise := func(i int) float64 { return float64((i*7919)%13) - 6 } // deterministic, ±6
	flat := run(func(i int, at float64) map[string]float64 {
		return map[string]float64{"rss_mb": 80 + noise(i), "fds": 30 + noise(i)/3, "handles": 5 + noise(i)/2, "keys": 300 + 20*noise(i)}
	}, busy)
	require.Empty(t, flat, "flat series with noise")
	warm := run(func(i int, at float64) map[string]float64 {
		return map[string]float64{"rss_mb": 40 + 60*min(at/15, 1) + noise(i)}
	}, busy)
	require.Empty(t, warm, "a warm-up in the first half")
	for name, leak := range map[string]func(i int, at float64) map[string]float64{
		"fds":     func(i int, at float64) map[string]float64 { return map[string]float64{"fds": 30 + at + noise(i)/3} },
		"rss_mb":  func(i int, at float64) map[string]float64 { return map[string]float64{"rss_mb": 80 + 3*at + noise(i)} },
		"handles": func(i int, at float64) map[string]float64 { return map[string]float64{"handles": 5 + float64(i)} },
		"keys":    func(i int, at float64) map[string]float64 { return map[string]float64{"keys": 300 + float64(4*i)} },
	} {
		problems := run(leak, busy)
		require.Len(t, problems, 1, name)
		require.Contains(t, problems[0], name+" grows over the second half", name)
	}
	idle := run(func(i int, at float64) map[string]float64 { return map[string]float64{"fds": 30} }, func(int) float64 { return 5 })
	require.Equal(t, []string{"x: no operation succeeded over the run"}, idle)
	unknown := run(func(i int, at float64) map[string]float64 { return map[string]float64{"bogus": 1} }, busy)
	require.Equal(t, []string{"x: series bogus has no allowance"}, unknown)
}

// soakTally counts the operations of a Go client and its errors by kind.
type soakTally struct {
	ops, fails atomic.Int64
	mu         sync.Mutex
	byKind     map[string]int
}

func newSoakTally() *soakTally { return &soakTally{byKind: map[string]int{}} }

func (s *soakTally) note(err error) {
	if err == nil {
		s.ops.Add(1)
		return
	}
	s.fails.Add(1)
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
	s.mu.Lock()
	s.byKind[kind]++
	s.mu.Unlock()
}

func (s *soakTally) kinds() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byKind)
}

// soakLoad starts two goroutines per primitive (mutex, auto-extended,
// fenced, semaphore, reader, writer, multi, election), each running it in
// a loop on cl until ctx ends, counting through note and timing each
// acquire and campaign through timer.
func soakLoad(ctx context.Context, cl *core.Client, note func(error), timer *soakTimer, wg *sync.WaitGroup) {
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
	wait := core.Wait(soakWait)
	// acquire times one acquire of the primitive named prim.
	acquire := func(ctx context.Context, prim string, f func() (*core.Lock, error)) (*core.Lock, error) {
		t0 := time.Now()
		l, err := f()
		timer.done(prim, t0, err)
		return l, err
	}
	prims := []func(ctx context.Context, i int) error{
		func(ctx context.Context, i int) error { // mutex
			l, err := acquire(ctx, "mutex", func() (*core.Lock, error) {
				return cl.Acquire(ctx, "m"+strconv.Itoa(i%4), 2*time.Second, wait)
			})
			return hold(ctx, l, err)
		},
		func(ctx context.Context, i int) error { // auto-extended
			l, err := acquire(ctx, "auto-extended", func() (*core.Lock, error) {
				return cl.Acquire(ctx, "a"+strconv.Itoa(i%2), time.Second, wait, core.AutoExtend())
			})
			return hold(ctx, l, err)
		},
		func(ctx context.Context, i int) error { // fenced
			l, err := acquire(ctx, "fenced", func() (*core.Lock, error) {
				return cl.Acquire(ctx, "f"+strconv.Itoa(i%2), 2*time.Second, wait, core.Fence())
			})
			return hold(ctx, l, err)
		},
		func(ctx context.Context, i int) error { // semaphore
			l, err := acquire(ctx, "semaphore", func() (*core.Lock, error) {
				return cl.Acquire(ctx, "s", 2*time.Second, wait, core.Permits(3))
			})
			return hold(ctx, l, err)
		},
		func(ctx context.Context, i int) error { // reader
			l, err := acquire(ctx, "read", func() (*core.Lock, error) {
				return cl.Acquire(ctx, "rw", 2*time.Second, wait, core.Read())
			})
			return hold(ctx, l, err)
		},
		func(ctx context.Context, i int) error { // writer
			l, err := acquire(ctx, "write", func() (*core.Lock, error) {
				return cl.Acquire(ctx, "rw", 2*time.Second, wait, core.Write())
			})
			return hold(ctx, l, err)
		},
		func(ctx context.Context, i int) error { // multi
			l, err := acquire(ctx, "multi", func() (*core.Lock, error) {
				return cl.AcquireAll(ctx, []string{"x" + strconv.Itoa(i%3), "y" + strconv.Itoa(i%3)}, 2*time.Second, wait)
			})
			return hold(ctx, l, err)
		},
		func(ctx context.Context, i int) error { // election
			cctx, cancel := context.WithTimeout(ctx, soakWait)
			defer cancel()
			t0 := time.Now()
			ld, err := cl.Campaign(cctx, "e", "go-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(i), core.CampaignTTL(2*time.Second))
			timer.done("campaign", t0, err)
			if err != nil {
				return err
			}
			return ld.Resign(context.Background())
		},
	}
	for _, run := range prims {
		for w := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := w; ctx.Err() == nil; i += 2 {
					note(run(ctx, i))
				}
			}()
		}
	}
}

// soakWorker is one worker process of the soak and the samples it printed.
type soakWorker struct {
	soakSeries
	cmd      *exec.Cmd
	stdin    io.WriteCloser
	done     chan struct{} // closed once its stdout ended
	errors   map[string]float64
	late     []soakOverrun // the overruns it printed
	timed    soakTimes     // its acquires' times, from its last sample
	final    bool          // it printed its sample after closing its client
	stopping bool          // told to stop: later samples are not the run's
	stderr   strings.Builder
}

// soakWorkerSpec is how to start one worker: its name and command.
type soakWorkerSpec struct {
	name string
	argv func(cfg map[string]any) []string
}

// startSoakWorkers starts the worker processes (every runtime and backend
// but Go native); each one's stdout is read into its series as it comes.
// A worker that cannot start fails the test: make soak sets up Node's
// modules, the Python venv and the builds (LIBLOCK_SOAK_NODE,
// LIBLOCK_SOAK_PYTHON, LIBLOCK_PATH, LIBLOCK_WASM_PATH).
func startSoakWorkers(t *testing.T, urls []string, every time.Duration, start time.Time) []*soakWorker {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	node := cmpOr(os.Getenv("LIBLOCK_SOAK_NODE"), "node")
	py := cmpOr(os.Getenv("LIBLOCK_SOAK_PYTHON"), filepath.Join(root, "build", "venv-python", "bin", "python"))
	self, err := os.Executable()
	require.NoError(t, err)
	nodeW := func(backend string) func(map[string]any) []string {
		return func(cfg map[string]any) []string {
			cfg["backend"] = backend
			return []string{node, filepath.Join(root, "bindings", "node", "test", "soak-worker.js"), soakJSON(cfg)}
		}
	}
	pyW := func(mode, backend string) func(map[string]any) []string {
		return func(cfg map[string]any) []string {
			cfg["backend"], cfg["mode"] = backend, mode
			return []string{py, filepath.Join(root, "bindings", "python", "tests", "soak_worker.py"), soakJSON(cfg)}
		}
	}
	specs := []soakWorkerSpec{
		{"go wasm", func(cfg map[string]any) []string {
			return []string{self, "-test.run=^TestSoakWorker$", "-test.v=false", soakJSON(cfg)}
		}},
		{"node native", nodeW("native")},
		{"node wasm", nodeW("wasm")},
		{"python native", pyW("sync", "native")},
		{"python wasm", pyW("sync", "wasm")},
		{"asyncio native", pyW("async", "native")},
		{"asyncio wasm", pyW("async", "wasm")},
	}
	only := os.Getenv("LIBLOCK_SOAK_WORKERS")
	var out []*soakWorker
	for _, sp := range specs {
		if only != "" && !slices.Contains(strings.Split(only, ","), sp.name) {
			continue
		}
		// Each runtime its own keys, so that its primitives mostly succeed
		// (its two loops per primitive contend with each other) and a key
		// left behind names its runtime.
		cfg := map[string]any{"urls": urls, "every": every.Milliseconds(), "prefix": "soak:" + strings.ReplaceAll(sp.name, " ", "-") + ":"}
		if os.Getenv("LIBLOCK_SOAK_LEAK") == sp.name {
			cfg["leak"] = true
		}
		// The workers time their acquires against the same rule.
		cfg["wait_ms"], cfg["allow_ms"] = soakWait.Milliseconds(), soakOverrunAllowance.Milliseconds()
		if os.Getenv("LIBLOCK_SOAK_OVERRUN") == sp.name {
			cfg["overrun"] = true
		}
		argv := sp.argv(cfg)
		w := &soakWorker{soakSeries: soakSeries{name: sp.name, series: map[string][]float64{}}, done: make(chan struct{})}
		w.cmd = exec.Command(argv[0], argv[1:]...)
		w.cmd.Dir = root
		w.cmd.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "bindings", "python"), "LIBLOCK_SOAK_WORKER=1")
		w.cmd.Stderr = &w.stderr
		w.stdin, err = w.cmd.StdinPipe()
		require.NoError(t, err)
		stdout, err := w.cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, w.cmd.Start(), "starting the %s worker", sp.name)
		go w.read(t, stdout, start)
		out = append(out, w)
		t.Cleanup(func() {
			if w.cmd.ProcessState == nil {
				_ = w.cmd.Process.Kill()
				_ = w.cmd.Wait()
			}
		})
	}
	return out
}

func soakJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// read parses the worker's sample lines: numbers are series but ops (the
// operations so far); errors (by kind) and done are kept apart.
func (w *soakWorker) read(t *testing.T, r io.Reader, start time.Time) {
	defer close(w.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			if sc.Text() == "PASS" { // the worker test binary's verdict
				continue
			}
			t.Logf("%s: not a sample: %q", w.name, sc.Text())
			continue
		}
		if _, ok := m["late"]; ok {
			// An overrun, printed as it happened: not a sample.
			var l struct{ Late soakOverrun }
			if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
				t.Errorf("%s: a malformed overrun line %q: %v", w.name, sc.Text(), err)
				continue
			}
			w.mu.Lock()
			w.late = append(w.late, l.Late)
			w.mu.Unlock()
			t.Logf("%s: overrun: %s", w.name, l.Late)
			continue
		}
		if x, ok := m["timed"]; ok {
			var tm struct{ Timed soakTimes }
			if b, err := json.Marshal(map[string]any{"timed": x}); err == nil && json.Unmarshal(b, &tm) == nil {
				w.mu.Lock()
				w.timed = tm.Timed
				w.mu.Unlock()
			}
			delete(m, "timed")
		}
		// The worker's own clock (seconds since it started), so that a
		// sample read late is not taken for a sample taken late.
		at := time.Since(start).Minutes()
		v := map[string]float64{}
		var ops float64
		for k, x := range m {
			switch k {
			case "t":
				if f, ok := x.(float64); ok {
					at = f / 60
				}
			case "ops":
				ops, _ = x.(float64)
			case "errors":
				errs := map[string]float64{}
				if e, ok := x.(map[string]any); ok {
					for kind, n := range e {
						errs[kind], _ = n.(float64)
					}
				}
				w.mu.Lock()
				w.errors = errs
				w.mu.Unlock()
			case "done":
				w.mu.Lock()
				w.final = true
				w.mu.Unlock()
			default:
				if f, ok := x.(float64); ok {
					v[k] = f
				}
			}
		}
		w.mu.Lock()
		stopping := w.stopping
		w.mu.Unlock()
		// Only the samples of the run: not one taken while it stops.
		if _, done := m["done"]; !done && !stopping {
			w.add(at, ops, v)
		}
	}
}

// stop closes the worker's stdin (it stops, closes its client and prints
// a last sample) and waits for it to exit, within a minute.
func (w *soakWorker) stop(t *testing.T) {
	t.Helper()
	w.mu.Lock()
	w.stopping = true
	w.mu.Unlock()
	_ = w.stdin.Close()
	select {
	case <-w.done:
	case <-time.After(time.Minute):
		t.Errorf("%s: did not stop within a minute of being told to", w.name)
		_ = w.cmd.Process.Kill()
	}
	err := w.cmd.Wait()
	if err != nil || !w.final {
		t.Errorf("%s: exited with %v (closed its client: %v); stderr:\n%s", w.name, err, w.final, w.stderr.String())
	}
}

func workerSeries(ws []*soakWorker) []*soakSeries {
	out := make([]*soakSeries, len(ws))
	for i, w := range ws {
		out[i] = &w.soakSeries
	}
	return out
}

// TestSoakWorker is the soak's Go over liblock.wasm worker: TestSoak runs
// this test binary again with LIBLOCK_SOAK_WORKER set and the worker's
// JSON config as its last argument. It runs soakLoad on a client of the
// wasm module (wasm/host) until its stdin closes, printing its samples as
// JSON lines like the Node and Python workers.
func TestSoakWorker(t *testing.T) {
	if os.Getenv("LIBLOCK_SOAK_WORKER") == "" {
		t.Skip("a worker process of TestSoak")
	}
	var cfg struct {
		URLs    []string `json:"urls"`
		Every   int64    `json:"every"`
		Prefix  string   `json:"prefix"`
		Leak    bool     `json:"leak"`
		Overrun bool     `json:"overrun"`
	}
	require.NoError(t, json.Unmarshal([]byte(os.Args[len(os.Args)-1]), &cfg))
	path := cmpOr(os.Getenv("LIBLOCK_WASM_PATH"), filepath.Join("build", "liblock.wasm")) // run from the repository root
	m, err := host.Load(path, host.Options{})
	require.NoError(t, err)
	defer m.Close()
	cl, err := m.NewClient(core.Config{Nodes: cfg.URLs, NodeTimeout: soakNodeTimeout, KeyPrefix: cfg.Prefix})
	require.NoError(t, err)
	ctx, stop := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		stop()
	}()
	tally := newSoakTally()
	var wg sync.WaitGroup
	t0 := time.Now()
	timer := &soakTimer{start: t0, overrun: cfg.Overrun, lag: &soakLag{}}
	go timer.lag.run(ctx)
	var outMu sync.Mutex // one line at a time on stdout
	timer.late = func(o soakOverrun) {
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Println(soakJSON(map[string]any{"late": o}))
	}
	note := tally.note
	leaked := make(chan struct{})
	if cfg.Leak {
		note = func(err error) {
			tally.note(err)
			if err == nil && tally.ops.Load()%100 == 0 {
				go func() { <-leaked }()
			}
		}
	}
	soakLoad(ctx, cl, note, timer, &wg)
	sample := func(done bool) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		st := procStatus("self")
		line := map[string]any{
			"t": time.Since(t0).Seconds(), "rss_mb": st["VmRSS"] / 1024, "threads": st["Threads"], "fds": countFDs("self"),
			"goroutines": runtime.NumGoroutine(), "heap_mb": float64(ms.HeapAlloc) / (1 << 20),
			"ops": tally.ops.Load(), "errors": tally.kinds(), "timed": timer.times(),
		}
		if done {
			line["done"] = true
		}
		outMu.Lock()
		defer outMu.Unlock()
		fmt.Println(soakJSON(line))
	}
	sample(false)
	tick := time.NewTicker(time.Duration(cfg.Every) * time.Millisecond)
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			sample(false)
		}
	}
	tick.Stop()
	wg.Wait()
	close(leaked)
	require.NoError(t, cl.Close())
	sample(true)
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

// procStatus reads /proc/<pid>/status's numeric fields (kB for sizes).
func procStatus(pid string) map[string]float64 {
	m := map[string]float64{}
	b, err := os.ReadFile("/proc/" + pid + "/status")
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

func countFDs(pid string) int {
	ents, err := os.ReadDir("/proc/" + pid + "/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}
