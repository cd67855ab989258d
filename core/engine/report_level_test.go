package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// levelHost plays one node that answers at once (PING, SET → OK) and whose
// scripts (release, extend) find our token (:1) or, once gone is set, do not
// (:0): the lock was lost. It collects the reports and DONEs.
type levelHost struct {
	e       *Engine
	gone    bool
	reports []Report
	lost    []LockID
	done    []Action
}

func (h *levelHost) run(t *testing.T) {
	t.Helper()
	for a, ok := h.e.Next(); ok; a, ok = h.e.Next() {
		switch a.Kind {
		case ActOpen:
			h.e.Opened(a.Conn)
		case ActWrite:
			var reply []byte
			for rest := a.Data; len(rest) > 0; {
				n, first := commandLen(rest)
				require.NotZero(t, n, "cannot read %q", rest)
				switch {
				case first == 'S':
					reply = append(reply, "+OK\r\n"...)
				case first == 'P':
					reply = append(reply, "+PONG\r\n"...)
				case h.gone:
					reply = append(reply, ":0\r\n"...)
				default:
					reply = append(reply, ":1\r\n"...)
				}
				rest = rest[n:]
			}
			h.e.Received(a.Conn, reply)
		case ActReport:
			h.reports = append(h.reports, a.Rep)
		case ActLost:
			h.lost = append(h.lost, a.Lock)
		case ActDone:
			h.done = append(h.done, a)
		}
	}
}

func (h *levelHost) kinds() []ReportKind {
	var k []ReportKind
	for _, r := range h.reports {
		k = append(k, r.What)
	}
	h.reports = nil
	return k
}

// TestSetReports: at ReportWarnings an engine made with Config.Report emits
// only the reports a host logs as warnings (a loss, a failed
// auto-extension), at ReportNone none, at ReportAll (its start) every one;
// an engine made without Config.Report emits none whatever the level.
func TestSetReports(t *testing.T) {
	env := &fakeEnv{}
	e, err := New(Config{Nodes: oneNode, NodeTimeout: time.Second, Report: true}, env)
	require.NoError(t, err)
	h := &levelHost{e: e}
	pair := func() {
		_, err := e.Acquire(AcquireRequest{Resource: "r", TTL: 10 * time.Second})
		require.NoError(t, err)
		h.run(t)
		require.NotEmpty(t, h.done)
		lock := h.done[len(h.done)-1].Lock
		require.NotZero(t, lock)
		_, err = e.Release(lock)
		require.NoError(t, err)
		h.run(t)
	}

	pair()
	all := h.kinds()
	assert.Contains(t, all, RepAcquireEnd, "all, the level Config.Report starts at")
	assert.Contains(t, all, RepHold)

	e.SetReports(ReportWarnings)
	pair()
	assert.Empty(t, h.kinds(), "warnings only: an uneventful pair reports nothing")

	// A release that finds the lock gone: a loss, reported once.
	_, err = e.Acquire(AcquireRequest{Resource: "gone", TTL: 10 * time.Second})
	require.NoError(t, err)
	h.run(t)
	lock := h.done[len(h.done)-1].Lock
	h.gone = true
	_, err = e.Release(lock)
	require.NoError(t, err)
	h.run(t)
	assert.Equal(t, []ReportKind{RepLost}, h.kinds(), "warnings only: the release that found it gone")

	// An auto-extension that finds it gone: the failed extension and the loss.
	h.gone = false
	_, err = e.Acquire(AcquireRequest{Resource: "auto", TTL: 3 * time.Second, AutoExtend: true})
	require.NoError(t, err)
	h.run(t)
	auto := h.done[len(h.done)-1].Lock
	require.NotZero(t, auto)
	h.gone = true
	env.now += 2 * time.Second // past ttl/3: the auto-extension is due
	e.Tick()
	h.run(t)
	got := h.reports
	assert.ElementsMatch(t, []ReportKind{RepLost, RepExtendEnd}, h.kinds(), "warnings only: a failed auto-extension")
	for _, r := range got {
		if r.What == RepExtendEnd {
			assert.EqualValues(t, StatusLost, r.Outcome)
		}
	}
	assert.Contains(t, h.lost, auto, "the LOST action comes at every level")
	h.gone = false

	e.SetReports(ReportNone)
	pair()
	assert.Empty(t, h.kinds(), "none")

	e.SetReports(ReportAll)
	pair()
	assert.Contains(t, h.kinds(), RepAcquireEnd, "all again")

	// Without Config.Report no level turns reports on.
	e2, err := New(Config{Nodes: oneNode, NodeTimeout: time.Second}, &fakeEnv{})
	require.NoError(t, err)
	e2.SetReports(ReportAll)
	h = &levelHost{e: e2}
	e = e2
	pair()
	assert.Empty(t, h.kinds(), "an engine made without Config.Report")
}
