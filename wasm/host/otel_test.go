package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestTelemetryOverWasm: the Go driver over liblock.wasm's engine gets its
// reports through the protocol (REPORT actions) and maps them as it maps
// the native engine's: two acquires granted, one refused, the releases,
// a span each with its node replies.
func TestTelemetryOverWasm(t *testing.T) {
	cl := redistest.Start(t, 3)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	c, err := mod.NewClient(core.Config{Nodes: cl.URLs(), NodeTimeout: 500 * time.Millisecond, MeterProvider: mp, TracerProvider: tp})
	require.NoError(t, err)
	ctx := context.Background()
	a, err := c.Acquire(ctx, "otel-a", 10*time.Second)
	require.NoError(t, err)
	b, err := c.Acquire(ctx, "otel-b", 10*time.Second)
	require.NoError(t, err)
	_, err = c.Acquire(ctx, "otel-a", 10*time.Second)
	require.ErrorIs(t, err, core.ErrNotAcquired)
	require.NoError(t, a.Release(ctx))
	require.NoError(t, b.Release(ctx))
	require.NoError(t, c.Close())

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	sum := func(name, outcome string) int64 {
		var n int64
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				if s, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == name {
					for _, p := range s.DataPoints {
						if v, _ := p.Attributes.Value(attribute.Key("liblock.outcome")); v.AsString() == outcome {
							n += p.Value
						}
					}
				}
			}
		}
		return n
	}
	assert.Equal(t, int64(2), sum("liblock.acquires", "ok"))
	assert.Equal(t, int64(1), sum("liblock.acquires", "not_acquired"))
	assert.Equal(t, int64(2), sum("liblock.releases", "ok"))
	names := map[string]int{}
	for _, s := range spans.Ended() {
		names[s.Name()]++
		replies := 0
		for _, ev := range s.Events() {
			if ev.Name == "liblock.node.reply" {
				replies++
			}
		}
		assert.GreaterOrEqual(t, replies, 2, s.Name())
	}
	assert.Equal(t, map[string]int{"liblock.acquire": 3, "liblock.release": 2}, names)
}
