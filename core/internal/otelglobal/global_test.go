package otelglobal_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/liblock/liblock/core"
	"github.com/liblock/liblock/core/testkit/redistest"
)

// TestSDKSetAfterTheClient: a Client made while otel's globals are the
// API's defaults records nothing (its engine makes no reports), and once an
// application sets an SDK globally, its next operations get spans and
// metrics. Whether anything records is asked before each operation: had it
// been decided when the Client was made, the second pair would record
// nothing.
func TestSDKSetAfterTheClient(t *testing.T) {
	c := redistest.Start(t, 1)
	cl, err := core.New(core.Config{Nodes: c.URLs()})
	require.NoError(t, err)
	defer cl.Close()
	pair := func() {
		l, err := cl.Acquire(context.Background(), "otel-global", time.Second)
		require.NoError(t, err)
		require.NoError(t, l.Release(context.Background()))
	}
	pair() // nothing records this one

	spans := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))
	pair()

	var names []string
	for _, s := range spans.Ended() {
		names = append(names, s.Name())
	}
	require.Equal(t, []string{"liblock.acquire", "liblock.release"}, names, "the pair after the SDK was set")
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	acquires := int64(-1)
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == "liblock.acquires" {
				acquires = 0
				for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
					acquires += dp.Value
				}
			}
		}
	}
	require.Equal(t, int64(1), acquires, "one acquire counted: the one after the SDK was set")
}
