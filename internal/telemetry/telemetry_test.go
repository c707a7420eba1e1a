package telemetry

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestSetup(t *testing.T) {
	ctx := context.Background()
	before := otel.GetTracerProvider()
	stop, err := Setup(ctx, envOf(nil), nil, "dev")
	if err != nil || otel.GetTracerProvider() != before {
		t.Fatalf("tracing set up with no variable: %v", err)
	}
	_ = stop(ctx)
	if _, err := Setup(ctx, envOf(map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}), nil, "dev"); err == nil || !strings.Contains(err.Error(), "OTEL_TRACES_EXPORTER") {
		t.Fatalf("an unknown exporter: %v", err)
	}
	var out bytes.Buffer
	stop, err = Setup(ctx, envOf(map[string]string{"OTEL_TRACES_EXPORTER": "console"}), &out, "dev")
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
