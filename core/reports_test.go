package core_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/engine"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// reportLog collects a Client's raw reports (SetReports).
type reportLog struct {
	mu  sync.Mutex
	all []core.Report
}

func (r *reportLog) add(rep core.Report) {
	r.mu.Lock()
	r.all = append(r.all, rep)
	r.mu.Unlock()
}

func (r *reportLog) take() []core.Report {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.all
	r.all = nil
	return out
}

func kinds(reps []core.Report) []engine.ReportKind {
	var k []engine.ReportKind
	for _, r := range reps {
		k = append(k, r.What)
	}
	return k
}

// TestReportsRaw: a Client made with Reporting hands its engine's reports
// to SetReports's function, each with its call's tag and its lock; none
// before a function is set (NoTelemetry as liblock.so's clients) or after
// it is taken away.
func TestReportsRaw(t *testing.T) {
	c := redistest.Start(t, 3)
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: time.Second, NoTelemetry: true, Reporting: true})
	require.NoError(t, err)
	defer func() { _ = cl.Close() }()
	var log reportLog
	l, err := cl.Acquire(context.Background(), "before", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(context.Background()))

	cl.SetReports(log.add)
	require.Empty(t, log.take(), "no reports before SetReports")
	ctx := core.ReportTag(context.Background(), "acq")
	l, err = cl.Acquire(ctx, "raw", time.Minute)
	require.NoError(t, err)
	reps := log.take()
	nodes := 0
	var start, end *core.Report
	for i := range reps {
		r := &reps[i]
		switch r.What {
		case engine.RepAcquireStart:
			start = r
			assert.Equal(t, "acq", r.Tag)
		case engine.RepNode:
			// The call's (a late reply to the release before is no
			// operation's any more, and carries no tag).
			if r.Tag != nil {
				nodes++
				assert.Equal(t, "acq", r.Tag)
			}
		case engine.RepAcquireEnd:
			end = r
		}
	}
	assert.GreaterOrEqual(t, nodes, 2, "a node report per answer of the quorum, before the end: %v", kinds(reps))
	require.NotNil(t, start, "%v", kinds(reps))
	require.NotNil(t, end, "%v", kinds(reps))
	assert.Equal(t, "acq", end.Tag)
	assert.Equal(t, uint8(engine.StatusOK), end.Outcome)
	assert.Equal(t, uint32(1), end.Attempts)

	require.NoError(t, l.Extend(core.ReportTag(context.Background(), "ext"), time.Minute))
	require.NoError(t, l.Release(context.Background())) // untagged
	reps = log.take()
	var sawExtEnd, sawRelEnd, sawHold bool
	for _, r := range reps {
		switch r.What {
		case engine.RepExtendEnd:
			sawExtEnd = true
			assert.Equal(t, "ext", r.Tag)
			assert.Same(t, l, r.Lock)
		case engine.RepReleaseEnd:
			sawRelEnd = true
			assert.Nil(t, r.Tag, "an untagged call's reports carry no tag")
			assert.Same(t, l, r.Lock)
		case engine.RepHold:
			sawHold = true
			assert.Equal(t, uint8(engine.StatusOK), r.Outcome)
		}
	}
	assert.True(t, sawExtEnd && sawRelEnd && sawHold, "%v", kinds(reps))

	cl.SetReports(nil)
	l, err = cl.Acquire(ctx, "after", time.Minute)
	require.NoError(t, err)
	require.NoError(t, l.Release(context.Background()))
	assert.Empty(t, log.take(), "no reports after SetReports(nil)")
}
