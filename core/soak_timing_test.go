package core_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
)

// The soak's clients: their node timeout, and the wait of every acquire
// (and campaign) they make.
const (
	soakNodeTimeout = 200 * time.Millisecond
	soakWait        = 500 * time.Millisecond
)

// soakOverrunAllowance is how much later than its wait an acquire may
// return: the round in flight when the wait ends may take two node
// timeouts (one to connect and answer the handshake, one for the command
// then written), and the rest is scheduling on a loaded machine (the
// soak runs eight runtimes' clients and five servers on two cores).
const soakOverrunAllowance = 2*soakNodeTimeout + 250*time.Millisecond

// soakOverrun is one acquire or campaign that returned later than its wait
// plus soakOverrunAllowance.
type soakOverrun struct {
	Prim    string  `json:"prim"`    // mutex, read, write, campaign, ...
	TookMs  float64 `json:"took_ms"` // from the call to its return
	Outcome string  `json:"outcome"` // "acquired", or the error
	At      float64 `json:"at"`      // when it returned: Unix time in seconds
	// StallMs is how long the runtime could not run during the acquire's
	// span: the lateness its lag probe (a 25 ms timer, on the goroutines,
	// event loop, or threads that run the acquires) measured, summed.
	StallMs float64 `json:"stall_ms"`
}

// late reports whether the acquire outlived its wait and the allowance
// even without the time its runtime was stalled: time the process did not
// run (a loaded machine) is not time the library waited for a node.
func (o soakOverrun) late() bool {
	return o.TookMs-o.StallMs > float64((soakWait + soakOverrunAllowance).Milliseconds())
}

func (o soakOverrun) String() string {
	return fmt.Sprintf("%s took %.0f ms (wait %v; the runtime stalled %.0f ms of it) at %s: %s", o.Prim, o.TookMs, soakWait, o.StallMs,
		time.UnixMicro(int64(o.At*1e6)).UTC().Format("15:04:05.000"), o.Outcome)
}

// soakLagEvery is the lag probe's period.
const soakLagEvery = 25 * time.Millisecond

// soakLag is a runtime's lag probe: a timer every soakLagEvery whose
// lateness is time the runtime could not run.
type soakLag struct {
	mu    sync.Mutex
	ends  []time.Time // when each late wake-up came
	lags  []time.Duration
	since time.Time // when the probe's current sleep began
}

// run probes until ctx ends.
func (l *soakLag) run(ctx context.Context) {
	for ctx.Err() == nil {
		t0 := time.Now()
		l.mu.Lock()
		l.since = t0
		l.mu.Unlock()
		time.Sleep(soakLagEvery)
		now := time.Now()
		if lag := now.Sub(t0) - soakLagEvery; lag > time.Millisecond {
			l.mu.Lock()
			l.ends, l.lags = append(l.ends, now), append(l.lags, lag)
			if len(l.ends) > 4096 {
				l.ends, l.lags = append([]time.Time(nil), l.ends[2048:]...), append([]time.Duration(nil), l.lags[2048:]...)
			}
			l.mu.Unlock()
		}
	}
}

// stalled sums the lateness the probe saw within [from, to], the current
// wake-up's included when it is overdue at to (a runtime that resumes may
// end the acquire before it runs the probe).
func (l *soakLag) stalled(from, to time.Time) time.Duration {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var sum time.Duration
	overlap := func(start, end time.Time) {
		if end.After(from) && start.Before(to) {
			sum += minTime(end, to).Sub(maxTime(start, from))
		}
	}
	for i, end := range l.ends {
		overlap(end.Add(-l.lags[i]), end)
	}
	if !l.since.IsZero() {
		overlap(l.since.Add(soakLagEvery), to)
	}
	return sum
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// soakTimes is, per primitive, how many acquires were timed and the
// longest one (ms).
type soakTimes map[string]soakTime

type soakTime struct {
	N     int64   `json:"n"`
	MaxMs float64 `json:"max_ms"`
}

func (s soakTimes) String() string {
	prims := make([]string, 0, len(s))
	for p := range s {
		prims = append(prims, p)
	}
	sort.Strings(prims)
	var b strings.Builder
	for _, p := range prims {
		fmt.Fprintf(&b, " %s=%d (max %.0f ms)", p, s[p].N, s[p].MaxMs)
	}
	return strings.TrimSpace(b.String())
}

// soakTimer times one runtime's acquires and campaigns: late is called at
// once for each overrun. overrun (the negative control) holds every 50th
// reader acquire inside its timed span past the allowance.
type soakTimer struct {
	start   time.Time
	overrun bool
	late    func(soakOverrun)
	lag     *soakLag // nil: no probe
	mu      sync.Mutex
	byPrim  soakTimes
	list    []soakOverrun
}

// done records an acquire of prim called at t0 that returned err.
func (s *soakTimer) done(prim string, t0 time.Time, err error) {
	s.mu.Lock()
	if s.byPrim == nil {
		s.byPrim = soakTimes{}
	}
	st := s.byPrim[prim]
	st.N++
	n := st.N
	s.byPrim[prim] = st
	s.mu.Unlock()
	if s.overrun && prim == "read" && n%50 == 0 {
		time.Sleep(2 * (soakWait + soakOverrunAllowance)) // the negative control's overrun
	}
	took := time.Since(t0)
	s.mu.Lock()
	st = s.byPrim[prim]
	st.MaxMs = max(st.MaxMs, float64(took.Microseconds())/1000)
	s.byPrim[prim] = st
	s.mu.Unlock()
	if took <= soakWait+soakOverrunAllowance {
		return
	}
	now := time.Now()
	o := soakOverrun{Prim: prim, TookMs: float64(took.Microseconds()) / 1000, Outcome: soakOutcome(err), At: float64(now.UnixMicro()) / 1e6,
		StallMs: float64(s.lag.stalled(t0, now).Microseconds()) / 1000}
	s.mu.Lock()
	s.list = append(s.list, o)
	s.mu.Unlock()
	if s.late != nil {
		s.late(o)
	}
}

func (s *soakTimer) overruns() []soakOverrun {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]soakOverrun(nil), s.list...)
}

func (s *soakTimer) times() soakTimes {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := soakTimes{}
	for k, v := range s.byPrim {
		out[k] = v
	}
	return out
}

// soakOutcome names an acquire's outcome: its error's kind and text.
func soakOutcome(err error) string {
	kind := "other"
	switch {
	case err == nil:
		return "acquired"
	case errors.Is(err, core.ErrNotAcquired):
		kind = "not acquired"
	case errors.Is(err, core.ErrUnavailable):
		kind = "unavailable"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		kind = "canceled"
	}
	msg := err.Error()
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return kind + ": " + msg
}

// soakPressure samples the machine's pressure stall information
// (/proc/pressure: the time in which every runnable task of the machine
// waited for I/O, or for memory — "full" — and in which some task waited
// for a CPU — "some"), to tell an overrun during which the whole machine
// stood still. Without /proc/pressure it records nothing.
type soakPressure struct {
	mu sync.Mutex
	at []time.Time
	v  [][3]float64 // cumulative µs: io full, memory full, cpu some
}

func readPressure() ([3]float64, bool) {
	var v [3]float64
	for i, f := range []struct{ file, line string }{{"io", "full"}, {"memory", "full"}, {"cpu", "some"}} {
		b, err := os.ReadFile("/proc/pressure/" + f.file)
		if err != nil {
			return v, false
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, f.line+" ") {
				continue
			}
			for _, fld := range strings.Fields(line) {
				if x, ok := strings.CutPrefix(fld, "total="); ok {
					v[i], _ = strconv.ParseFloat(x, 64)
				}
			}
		}
	}
	return v, true
}

// run samples every 50 ms until ctx ends.
func (p *soakPressure) run(ctx context.Context) {
	for ctx.Err() == nil {
		v, ok := readPressure()
		if !ok {
			return
		}
		p.mu.Lock()
		p.at, p.v = append(p.at, time.Now()), append(p.v, v)
		p.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
}

// within returns the stalls (io full, memory full, cpu some) the machine
// accumulated between the samples around [from, to], and whether there
// were samples.
func (p *soakPressure) within(from, to time.Time) ([3]time.Duration, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := sort.Search(len(p.at), func(i int) bool { return p.at[i].After(from) }) - 1
	j := sort.Search(len(p.at), func(i int) bool { return !p.at[i].Before(to) })
	var d [3]time.Duration
	if i < 0 || j >= len(p.at) {
		return d, false
	}
	for k := range d {
		d[k] = time.Duration(p.v[j][k]-p.v[i][k]) * time.Microsecond
	}
	return d, true
}

// explain is what the machine's pressure says about an overrun.
func (p *soakPressure) explain(o soakOverrun) string {
	end := time.UnixMicro(int64(o.At * 1e6))
	d, ok := p.within(end.Add(-time.Duration(o.TookMs*float64(time.Millisecond))), end)
	if !ok {
		return "machine pressure: not sampled"
	}
	return fmt.Sprintf("machine pressure within its span: every task stalled on I/O %v, on memory %v; some task waited for a CPU %v",
		d[0].Round(time.Millisecond), d[1].Round(time.Millisecond), d[2].Round(time.Millisecond))
}

// soakFaultLog is when each fault of the soak began and ended, to name the
// faults around an overrun.
type soakFaultLog struct {
	start time.Time
	mu    sync.Mutex
	at    []time.Time
	what  []string
}

func (f *soakFaultLog) note(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.at = append(f.at, time.Now())
	f.what = append(f.what, fmt.Sprintf(format, args...))
}

// around lists the faults from 3 s before an acquire that returned at
// (Unix seconds) to 0.5 s after, each at its time since the soak began.
func (f *soakFaultLog) around(at float64) string {
	end := time.UnixMicro(int64(at * 1e6))
	f.mu.Lock()
	defer f.mu.Unlock()
	var parts []string
	for i, t := range f.at {
		if t.After(end.Add(-3*time.Second)) && t.Before(end.Add(500*time.Millisecond)) {
			parts = append(parts, fmt.Sprintf("%+.3fs %s", t.Sub(end).Seconds(), f.what[i]))
		}
	}
	if len(parts) == 0 {
		return "none within 3 s"
	}
	return strings.Join(parts, ", ") + " (relative to its return)"
}

// TestSoakTimer is the overrun check's negative control in make test: an
// acquire that returns within its wait and the allowance is no overrun;
// one held past them (the LIBLOCK_SOAK_OVERRUN control's way) is, named
// with its primitive and outcome; one whose runtime stalled for the excess
// is printed but not counted.
func TestSoakTimer(t *testing.T) {
	var got []soakOverrun
	tm := &soakTimer{start: time.Now(), late: func(o soakOverrun) { got = append(got, o) }}
	tm.done("write", time.Now(), core.ErrNotAcquired)
	require.Empty(t, got, "an acquire that returned at once")
	tm.done("write", time.Now().Add(-(soakWait + soakOverrunAllowance + time.Second)), core.ErrNotAcquired)
	require.Len(t, got, 1)
	require.Equal(t, "write", got[0].Prim)
	require.Contains(t, got[0].Outcome, "not acquired")
	require.Greater(t, got[0].TookMs, float64((soakWait + soakOverrunAllowance).Milliseconds()))
	require.True(t, got[0].late(), "no stall explains it")
	require.Equal(t, got, tm.overruns())
	require.Equal(t, int64(2), tm.times()["write"].N)

	// The same overrun while the runtime's probe saw it stalled for most
	// of the span: printed, but not late.
	tm.lag = &soakLag{}
	now := time.Now()
	tm.lag.ends, tm.lag.lags = []time.Time{now.Add(-100 * time.Millisecond)}, []time.Duration{1500 * time.Millisecond}
	tm.done("read", now.Add(-(soakWait + soakOverrunAllowance + time.Second)), nil)
	require.Len(t, got, 2)
	require.InDelta(t, 1500, got[1].StallMs, 1)
	require.False(t, got[1].late(), "a stall of the runtime explains it")
	require.Equal(t, "acquired", got[1].Outcome)

	// A probe whose wake-up is overdue when the acquire ends: the runtime
	// resumed and ended the acquire before it ran the probe.
	tm.lag = &soakLag{since: time.Now().Add(-1500 * time.Millisecond)}
	tm.done("read", time.Now().Add(-(soakWait + soakOverrunAllowance + time.Second)), nil)
	require.Len(t, got, 3)
	require.InDelta(t, 1475, got[2].StallMs, 50)
	require.False(t, got[2].late(), "an overdue probe explains it")
}

// TestSoakPressure: the machine's stalls within an overrun's span are the
// differences of the cumulative counters between the samples around it.
func TestSoakPressure(t *testing.T) {
	t0 := time.Now()
	p := &soakPressure{}
	for i := range 5 {
		p.at = append(p.at, t0.Add(time.Duration(i)*100*time.Millisecond))
		p.v = append(p.v, [3]float64{float64(i) * 50000, 0, float64(i) * 90000}) // 50 ms I/O, 90 ms CPU per sample
	}
	d, ok := p.within(t0.Add(150*time.Millisecond), t0.Add(250*time.Millisecond))
	require.True(t, ok)
	require.Equal(t, [3]time.Duration{100 * time.Millisecond, 0, 180 * time.Millisecond}, d) // samples 1 to 3
	_, ok = p.within(t0.Add(-time.Second), t0)
	require.False(t, ok, "a span before the first sample")
	o := soakOverrun{TookMs: 100, At: float64(t0.Add(250*time.Millisecond).UnixMicro()) / 1e6}
	require.Contains(t, p.explain(o), "every task stalled on I/O 100ms")
}
