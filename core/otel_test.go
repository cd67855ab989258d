package core_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// metrics collects what a ManualReader has and answers sums and counts
// by instrument and attributes.
type metrics struct {
	t  *testing.T
	rm metricdata.ResourceMetrics
}

func collect(t *testing.T, r *sdkmetric.ManualReader) metrics {
	t.Helper()
	m := metrics{t: t}
	require.NoError(t, r.Collect(context.Background(), &m.rm))
	return m
}

func match(set attribute.Set, want map[string]string) bool {
	for k, v := range want {
		got, ok := set.Value(attribute.Key(k))
		if !ok || got.Emit() != v {
			return false
		}
	}
	return true
}

// sum is a counter's (or up-down counter's) value over the points whose
// attributes include want; count is a histogram's count likewise.
func (m metrics) sum(name string, want map[string]string) int64 {
	var n int64
	for _, sm := range m.rm.ScopeMetrics {
		for _, in := range sm.Metrics {
			if in.Name != name {
				continue
			}
			if s, ok := in.Data.(metricdata.Sum[int64]); ok {
				for _, p := range s.DataPoints {
					if match(p.Attributes, want) {
						n += p.Value
					}
				}
			}
		}
	}
	return n
}

func (m metrics) count(name string, want map[string]string) uint64 {
	var n uint64
	for _, sm := range m.rm.ScopeMetrics {
		for _, in := range sm.Metrics {
			if h, ok := in.Data.(metricdata.Histogram[float64]); ok && in.Name == name {
				for _, p := range h.DataPoints {
					if match(p.Attributes, want) {
						n += p.Count
					}
				}
			}
		}
	}
	return n
}

// syncBuffer is a log sink for the test's slog handler, written under the
// client's lock and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestTelemetry does ten acquires on three real redis-servers — seven
// granted (one after a wait, one fenced), three refused — loses one lock,
// extends one, kills a node and releases the rest, and checks the
// metrics, spans and log lines against exactly that.
func TestTelemetry(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 3)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// A long node timeout: a loaded machine must not turn a slow reply
	// into a node error the counts below do not expect.
	cl, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 500 * time.Millisecond,
		MeterProvider: mp, TracerProvider: tp, Logger: logger})
	require.NoError(t, err)
	defer cl.Close()
	other, err := core.New(core.Config{Nodes: c.URLs(), NodeTimeout: 500 * time.Millisecond, NoTelemetry: true})
	require.NoError(t, err)
	defer other.Close()

	ctx, parent := tp.Tracer("test").Start(context.Background(), "parent")
	const ttl = 10 * time.Second
	var held []*core.Lock
	var tokens []string

	// One acquire that waits: it is counted as a waiter while it waits.
	blocker, err := other.Acquire(ctx, "otel-wait", ttl)
	require.NoError(t, err)
	type res struct {
		l   *core.Lock
		err error
	}
	got := make(chan res, 1)
	go func() {
		l, err := cl.Acquire(ctx, "otel-wait", ttl, core.Wait(10*time.Second))
		got <- res{l, err}
	}()
	require.Eventually(t, func() bool { return collect(t, reader).sum("liblock.acquire.waiters", nil) == 1 },
		10*time.Second, 5*time.Millisecond, "the waiting acquire is counted as a waiter")
	require.NoError(t, blocker.Release(ctx))
	r := <-got
	require.NoError(t, r.err)
	// Released at once: it may be held on just a quorum (the blocker's
	// release reached a node after its attempt), and with a node killed
	// below, its release could not tell.
	tokens = append(tokens, r.l.Token())
	require.NoError(t, r.l.Release(ctx))
	assert.Equal(t, int64(0), collect(t, reader).sum("liblock.acquire.waiters", nil), "no waiter left")

	// Five plain acquires and a fenced one.
	for _, res := range []string{"otel-0", "otel-1", "otel-2", "otel-3", "otel-4"} {
		l, err := cl.Acquire(ctx, res, ttl)
		require.NoError(t, err)
		held = append(held, l)
	}
	l, err := cl.Acquire(ctx, "otel-fenced", ttl, core.Fence())
	require.NoError(t, err)
	held = append(held, l)
	require.Len(t, held, 6)
	for _, l := range held {
		tokens = append(tokens, l.Token())
	}

	// Three refused: held by the other client.
	for _, res := range []string{"otel-busy-0", "otel-busy-1", "otel-busy-2"} {
		b, err := other.Acquire(ctx, res, ttl)
		require.NoError(t, err)
		defer b.Release(context.Background()) //nolint:errcheck // cleanup
		_, err = cl.Acquire(ctx, res, ttl)
		require.ErrorIs(t, err, core.ErrNotAcquired)
	}

	// One lost: its key deleted on every node, found out by an extension.
	for _, n := range c.Nodes {
		_, err := n.Do("DEL", held[0].Key())
		require.NoError(t, err)
	}
	require.ErrorIs(t, held[0].Extend(ctx, ttl), core.ErrLost)
	// One extended.
	require.NoError(t, held[1].Extend(ctx, ttl))

	// A node killed: the releases still succeed (2 of 3), and the node's
	// failures are counted against it.
	// The lost lock's release comes before the kill: with a node dead, one
	// "not ours" and no answer yet from the other node is ErrUnavailable
	// (cannot tell), not ErrLost, depending on the replies' order.
	require.ErrorIs(t, held[0].Release(ctx), core.ErrLost)
	require.NoError(t, c.Nodes[2].Kill())
	for _, l := range held[1:] {
		require.NoError(t, l.Release(ctx))
	}
	parent.End()

	m := collect(t, reader)
	ok, refused := map[string]string{"liblock.outcome": "ok"}, map[string]string{"liblock.outcome": "not_acquired"}
	assert.Equal(t, int64(7), m.sum("liblock.acquires", ok), "acquires ok")
	assert.Equal(t, int64(3), m.sum("liblock.acquires", refused), "acquires refused")
	assert.Equal(t, int64(10), m.sum("liblock.acquires", nil), "acquires")
	assert.Equal(t, uint64(7), m.count("liblock.acquire.duration", ok))
	assert.Equal(t, uint64(3), m.count("liblock.acquire.duration", refused))
	assert.Equal(t, int64(1), m.sum("liblock.losses", nil), "losses")
	assert.Equal(t, int64(1), m.sum("liblock.extends", ok), "extends ok")
	assert.Equal(t, int64(1), m.sum("liblock.extends", map[string]string{"liblock.outcome": "lost"}), "extends lost")
	assert.Equal(t, int64(6), m.sum("liblock.releases", ok), "releases ok")
	assert.Equal(t, int64(1), m.sum("liblock.releases", map[string]string{"liblock.outcome": "lost"}), "releases of the lost lock")
	assert.Equal(t, uint64(6), m.count("liblock.hold.duration", ok), "holdings released")
	assert.Equal(t, uint64(1), m.count("liblock.hold.duration", map[string]string{"liblock.outcome": "lost"}), "holdings lost")
	assert.Equal(t, int64(1), m.sum("liblock.fence.rounds", ok), "fence rounds")
	assert.Equal(t, int64(0), m.sum("liblock.acquire.waiters", nil))
	for i := range 2 {
		assert.Equal(t, int64(0), m.sum("liblock.node.errors", map[string]string{"liblock.node": string(rune('0' + i))}), "node %d errors", i)
		assert.Positive(t, m.count("liblock.node.request.duration", map[string]string{"liblock.node": string(rune('0' + i)), "server.address": c.Nodes[i].Addr()}), "node %d requests", i)
	}
	assert.Positive(t, m.sum("liblock.node.errors", map[string]string{"liblock.node": "2", "error.type": "connection"}), "the killed node's errors")

	// Spans: one per acquire, extend and release, children of the caller's.
	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range spans.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
		if s.Name() != "parent" {
			assert.Equal(t, parent.SpanContext().SpanID(), s.Parent().SpanID(), "%s: the caller's span is its parent", s.Name())
		}
	}
	require.Len(t, byName["liblock.acquire"], 10)
	require.Len(t, byName["liblock.extend"], 2)
	require.Len(t, byName["liblock.release"], 7)
	failedSpans, waited, replies := 0, 0, 0
	for _, s := range byName["liblock.acquire"] {
		if s.Status().Code == codes.Error {
			failedSpans++
			assert.NotEmpty(t, s.Events(), "the error is recorded")
		}
		for _, ev := range s.Events() {
			switch ev.Name {
			case "liblock.wait":
				waited++
			case "liblock.node.reply":
				replies++
			}
		}
	}
	assert.Equal(t, 3, failedSpans, "refused acquires are errors")
	assert.Equal(t, 1, waited, "one acquire waited")
	assert.GreaterOrEqual(t, replies, 2*10, "a node reply event per node answer (a quorum at least)")

	// Logs: the loss at Warn; never a token.
	text := logs.String()
	assert.Contains(t, text, "lock lost")
	assert.Contains(t, text, "otel-0")
	for _, tok := range tokens {
		assert.NotContains(t, text, tok, "a token in the log")
	}
}

// TestTelemetryOff: NoTelemetry makes no instrument and the engine no
// report, even with a provider given; a nil provider uses the global
// no-op (nothing to see, nothing to fail).
func TestTelemetryOff(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 1)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	cl, err := core.New(core.Config{Nodes: c.URLs(), MeterProvider: mp, TracerProvider: tp, NoTelemetry: true})
	require.NoError(t, err)
	defer cl.Close()
	l, err := cl.Acquire(context.Background(), "otel-off", time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Release(context.Background()))
	assert.Empty(t, collect(t, reader).rm.ScopeMetrics)
	assert.Empty(t, spans.Ended())

	// The negative control of the above: the same with telemetry on sees
	// the acquire.
	on, err := core.New(core.Config{Nodes: c.URLs(), MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)
	defer on.Close()
	l, err = on.Acquire(context.Background(), "otel-off", time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Release(context.Background()))
	assert.Equal(t, int64(1), collect(t, reader).sum("liblock.acquires", nil))
	assert.Len(t, spans.Ended(), 2)

	global, err := core.New(core.Config{Nodes: c.URLs()})
	require.NoError(t, err)
	defer global.Close()
	l, err = global.Acquire(context.Background(), "otel-off", time.Second)
	require.NoError(t, err)
	require.NoError(t, l.Release(context.Background()))
}

// TestTelemetrySilentWithoutSDK: with otel's global providers still the
// API's defaults (no SDK, as in this package) and no logger or label hook,
// the engine is told to make no reports; a provider given in the Config, or
// a logger, keeps every report coming (core/internal/otelglobal checks that
// an SDK set globally after the Client was made records its next
// operations).
func TestTelemetrySilentWithoutSDK(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 1)
	pair := func(cl *core.Client) {
		l, err := cl.Acquire(context.Background(), "otel-silent", time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Release(context.Background()))
	}
	mk := func(cfg core.Config) *core.Client {
		cfg.Nodes = c.URLs()
		cl, err := core.New(cfg)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cl.Close() })
		return cl
	}
	silent := mk(core.Config{})
	pair(silent)
	assert.True(t, core.TelemetryQuiet(silent), "no SDK, no logger: no reports")

	// The controls: whatever may record keeps the reports on.
	reader := sdkmetric.NewManualReader()
	metered := mk(core.Config{MeterProvider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))})
	pair(metered)
	assert.False(t, core.TelemetryQuiet(metered), "a meter provider given")
	assert.Equal(t, int64(1), collect(t, reader).sum("liblock.acquires", nil))
	var logs syncBuffer
	logged := mk(core.Config{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	pair(logged)
	assert.False(t, core.TelemetryQuiet(logged), "a logger given")
	assert.Contains(t, logs.String(), "otel-silent", "its debug line")
	labeled := mk(core.Config{ResourceLabel: func(string) string { return "x" }})
	pair(labeled)
	assert.False(t, core.TelemetryQuiet(labeled), "a label hook given")
	// A report function wants every report, quiet or not.
	var reports atomic.Int32
	silent.SetReports(func(core.Report) { reports.Add(1) })
	pair(silent)
	assert.Positive(t, reports.Load(), "SetReports' function gets reports")
	silent.SetReports(nil)
}

// TestTelemetryResourceLabel: the opt-in hook labels the lock metrics and
// spans with what it returns (never the resource itself unless it says
// so).
func TestTelemetryResourceLabel(t *testing.T) {
	leakCheck(t)
	c := redistest.Start(t, 1)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	cl, err := core.New(core.Config{Nodes: c.URLs(), MeterProvider: mp,
		ResourceLabel: func(r string) string { return strings.SplitN(r, ":", 2)[0] }})
	require.NoError(t, err)
	defer cl.Close()
	for _, r := range []string{"jobs:1", "jobs:2", "users:7"} {
		l, err := cl.Acquire(context.Background(), r, time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Release(context.Background()))
	}
	m := collect(t, reader)
	assert.Equal(t, int64(2), m.sum("liblock.acquires", map[string]string{"liblock.resource": "jobs"}))
	assert.Equal(t, int64(1), m.sum("liblock.releases", map[string]string{"liblock.resource": "users"}))
	assert.Equal(t, int64(0), m.sum("liblock.acquires", map[string]string{"liblock.resource": "jobs:1"}))
}
