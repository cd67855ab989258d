//go:build liblock_nootel

package core

import (
	"context"

	"go.opentelemetry.io/otel/trace"

	"github.com/liblock/liblock/core/engine"
)

// Built with -tags liblock_nootel (liblock.so: its Go client never has
// telemetry, capi/parse.go), the Client has none either: the engine makes
// no reports, and the OpenTelemetry packages behind otel.go (the global
// providers, propagation, semconv) stay out of the binary. Config's
// MeterProvider, TracerProvider, Logger and ResourceLabel are then ignored.
type telemetry struct{ quiet bool }

func (t *telemetry) silent() bool { return true }

func newTelemetry(Config, []engine.Node) *telemetry { return nil }

func (t *telemetry) start(_ context.Context, _, _ string, _ engine.LockID, begin func() (engine.OpID, error)) (func() (engine.OpID, error), trace.Span) {
	return begin, nil
}

func (t *telemetry) report(engine.Action, func(engine.LockID) string) {}

func (t *telemetry) done(engine.Action) {}

func failedIf(trace.Span, error) {}

// telemetryBuilt: no reports are asked of the engine.
const telemetryBuilt = false
