package hostabi

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/liblock/liblock/core/engine"
)

// TestLimitBoundInRejection: every argument the engine refuses for being
// out of its range comes back over the protocol (REJECTED, decoded) with
// the argument's name, the bound it crossed, that bound's value and unit,
// and the value given — what each binding words in its own units — and
// with nothing started (no STARTED, no connection opened).
func TestLimitBoundInRejection(t *testing.T) {
	h := newFixed(t, "redis://127.0.0.1:1", "redis://127.0.0.1:2", "redis://127.0.0.1:3")
	out := make([]byte, MinOut)
	long := strings.Repeat("r", engine.MaxResourceLength+1)
	for _, tc := range []struct {
		name       string
		ev         Event
		arg, bound string
		limit, got int64
		unit       string
	}{
		{"ttl 0", Event{Kind: EvAcquire, Resource: "r", TTLms: 0}, "ttl_ms", "min", 1, 0, "ms"},
		{"ttl above", Event{Kind: EvAcquire, Resource: "r", TTLms: 1 << 31}, "ttl_ms", "max", engine.MaxTTL.Milliseconds(), 1 << 31, "ms"},
		{"wait -1", Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, WaitMS: -1}, "wait_ms", "min", 0, -1, "ms"},
		{"wait above", Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, WaitMS: engine.MaxWait.Milliseconds() + 1}, "wait_ms", "max", engine.MaxWait.Milliseconds(), engine.MaxWait.Milliseconds() + 1, "ms"},
		{"resource empty", Event{Kind: EvAcquire, Resource: "", TTLms: 1000}, "resource", "min", 1, 0, "bytes"},
		{"resource long", Event{Kind: EvAcquire, Resource: long, TTLms: 1000}, "resource", "max", engine.MaxResourceLength, int64(len(long)), "bytes"},
		{"token short", Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, Token: "short"}, "token", "min", engine.MinToken, 5, "bytes"},
		{"token long", Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, Token: strings.Repeat("t", engine.MaxToken+1)}, "token", "max", engine.MaxToken, engine.MaxToken + 1, "bytes"},
		{"permits above", Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, Permits: engine.MaxPermits + 1}, "permits", "max", engine.MaxPermits, engine.MaxPermits + 1, "count"},
		{"resources above", Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, Resources: strings.Split(strings.Repeat(",", engine.MaxResources-1), ",")}, "resources", "max", engine.MaxResources, engine.MaxResources + 1, "count"},
		{"resources[2] empty", Event{Kind: EvAcquire, Resource: "a", TTLms: 1000, Resources: []string{"b", ""}}, "resources[2]", "min", 1, 0, "bytes"},
		{"value long", Event{Kind: EvAcquire, Resource: "e", TTLms: 1000, Election: true, Value: strings.Repeat("v", engine.MaxElectionValue+1)}, "value", "max", engine.MaxElectionValue, engine.MaxElectionValue + 1, "bytes"},
		{"election name empty", Event{Kind: EvAcquire, Resource: "", TTLms: 1000, Election: true, Value: "v"}, "name", "min", 1, 0, "bytes"},
		{"inspect permits above", Event{Kind: EvInspect, Resource: "r", Permits: engine.MaxPermits + 1}, "permits", "max", engine.MaxPermits, engine.MaxPermits + 1, "count"},
		{"inspect resource long", Event{Kind: EvInspect, Resource: long}, "resource", "max", engine.MaxResourceLength, int64(len(long)), "bytes"},
		{"watch poll -1", Event{Kind: EvWatch, Resource: "e", PollMS: -1}, "poll_ms", "min", 0, -1, "ms"},
		{"watch poll huge", Event{Kind: EvWatch, Resource: "e", PollMS: 1 << 62}, "poll_ms", "max", engine.MaxWait.Milliseconds(), 1 << 62, "ms"},
		// Beyond what a Duration holds: saturated for the engine's check, never wrapped into range.
		{"ttl huge", Event{Kind: EvAcquire, Resource: "r", TTLms: 1<<63 - 1}, "ttl_ms", "max", engine.MaxTTL.Milliseconds(), 1<<63 - 1, "ms"},
		{"ttl wraps", Event{Kind: EvAcquire, Resource: "r", TTLms: (1<<63-1)/1_000_000 + 1000}, "ttl_ms", "max", engine.MaxTTL.Milliseconds(), (1<<63-1)/1_000_000 + 1000, "ms"},
		{"wait very negative", Event{Kind: EvAcquire, Resource: "r", TTLms: 1000, WaitMS: -1 << 63}, "wait_ms", "min", 0, -1 << 63, "ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			acts := step(t, h, &tc.ev, out)
			require.Len(t, acts, 1, "one REJECTED, nothing started or opened")
			require.Equal(t, ActRejected, acts[0].Kind)
			var ae *engine.ArgumentError
			require.True(t, errors.As(acts[0].Err, &ae), "%v", acts[0].Err)
			assert.Equal(t, InvalidArgument, StatusOf(acts[0].Err))
			assert.Equal(t, tc.arg, ae.Arg)
			assert.Equal(t, tc.bound, ae.Bound, "bound")
			assert.Equal(t, tc.limit, ae.Limit, "limit")
			assert.Equal(t, tc.unit, ae.Unit, "unit")
			assert.Equal(t, tc.got, ae.Got, "got")
			assert.NotEmpty(t, ae.Reason)
		})
	}
	// A rejection that is not of a value out of range carries no bound.
	for _, ev := range []Event{
		{Kind: EvAcquire, Resource: "a", TTLms: 1000, Resources: []string{"b", "a"}}, // a duplicate
		{Kind: EvAcquire, Resource: "\xff", TTLms: 1000},                             // not UTF-8
		{Kind: EvAcquire, Resource: "r", TTLms: 1000, Token: "0123456789abcdef", Fence: true},
	} {
		acts := step(t, h, &ev, out)
		require.Len(t, acts, 1)
		var ae *engine.ArgumentError
		require.True(t, errors.As(acts[0].Err, &ae), "%v", acts[0].Err)
		assert.Empty(t, ae.Bound, "%s: %s", ae.Arg, ae.Reason)
		assert.Zero(t, ae.Limit)
		assert.Empty(t, ae.Unit)
	}
}

// TestFitReaders: an INSPECTED lists as many readers as fit in MinOut (a
// host's smallest output buffer), and every one when they fit.
func TestFitReaders(t *testing.T) {
	in := &engine.Inspection{}
	for range 10 {
		in.Readers = append(in.Readers, engine.ReaderState{Owner: strings.Repeat("o", engine.MaxOwner)})
	}
	assert.Len(t, fitReaders(in, 100), 10)
	for range 2000 {
		in.Readers = append(in.Readers, engine.ReaderState{Owner: strings.Repeat("o", engine.MaxOwner)})
	}
	fit := fitReaders(in, 100)
	assert.Less(t, len(fit), len(in.Readers))
	assert.Greater(t, len(fit), 300)
	b, whole := appendAction(nil, &Action{Action: engine.Action{Kind: ActInspected, Op: 1, Inspection: in}}, MinOut)
	require.True(t, whole, "the INSPECTED of %d readers fits in MinOut", len(in.Readers))
	acts, err := Decode(nil, b)
	require.NoError(t, err)
	require.Len(t, acts, 1)
	assert.Len(t, acts[0].Inspection.Readers, len(fit))
}
