package core_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
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
}

func (o soakOverrun) String() string {
	return fmt.Sprintf("%s took %.0f ms (wait %v) at %s: %s", o.Prim, o.TookMs, soakWait, time.UnixMicro(int64(o.At*1e6)).UTC().Format("15:04:05.000"), o.Outcome)
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
		time.Sleep(soakWait + soakOverrunAllowance + 100*time.Millisecond) // the negative control's overrun
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
	o := soakOverrun{Prim: prim, TookMs: float64(took.Microseconds()) / 1000, Outcome: soakOutcome(err), At: float64(time.Now().UnixMicro()) / 1e6}
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
// with its primitive and outcome.
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
	require.Equal(t, got, tm.overruns())
	require.Equal(t, int64(2), tm.times()["write"].N)
}
