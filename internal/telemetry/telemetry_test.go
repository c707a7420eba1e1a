package telemetry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestSetup(t *testing.T) {
	ctx := context.Background()
	before := otel.GetTracerProvider()
	stop, err := Setup(ctx, envOf(nil), nil, "dev", slog.New(slog.DiscardHandler))
	if err != nil || otel.GetTracerProvider() != before {
		t.Fatalf("tracing set up with no variable: %v", err)
	}
	_ = stop(ctx)
	if _, err := Setup(ctx, envOf(map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}), nil, "dev", slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER") {
		t.Fatalf("an unknown exporter: %v", err)
	}
	var out bytes.Buffer
	stop, err = Setup(ctx, envOf(map[string]string{"OTEL_TRACES_EXPORTER": "console"}), &out, "dev", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer otel.SetTracerProvider(before)
	_, sp := otel.Tracer("t").Start(ctx, "one")
	sp.End()
	if err := stop(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), `"Name":"one"`) || !strings.Contains(out.String(), "quarry") {
		t.Fatalf("console exporter wrote %q", out.String())
	}
}

// TestRefusingEndpoint: an OTLP endpoint that refuses costs the spans,
// with one warning, and nothing else.
func TestRefusingEndpoint(t *testing.T) {
	ctx := context.Background()
	before := otel.GetTracerProvider()
	defer otel.SetTracerProvider(before)
	var logged bytes.Buffer
	stop, err := Setup(ctx, envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:1"}), nil, "dev", slog.New(slog.NewTextHandler(&logged, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		_, sp := otel.Tracer("t").Start(ctx, "lost")
		sp.End()
	}
	sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_ = stop(sctx) // the flush fails; the caller goes on
	otel.Handle(errors.New("a second failure"))
	if n := strings.Count(logged.String(), "spans are not exported"); n != 1 {
		t.Fatalf("%d warnings, want one:\n%s", n, logged.String())
	}
}
