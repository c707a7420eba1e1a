// Package telemetry sets up OpenTelemetry tracing from the standard
// environment: off unless OTEL_TRACES_EXPORTER or an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set. Researches, their stages, rounds and searches, and model calls
// make spans (research and llm packages); with tracing off those are
// no-ops.
package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
)

// Setup installs the global tracer provider the environment asks for
// (env looks variables up; console output goes to w) and returns what
// flushes and stops it. Exporters: otlp (HTTP/protobuf, the default when
// an endpoint is set), console, none.
func Setup(ctx context.Context, env func(string) (string, bool), w io.Writer, version string, log *slog.Logger) (shutdown func(context.Context) error, err error) {
	get := func(k string) string { v, _ := env(k); return v }
	kind := get("OTEL_TRACES_EXPORTER")
	endpoint := get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	base := get("OTEL_EXPORTER_OTLP_ENDPOINT")
	if kind == "" && (endpoint != "" || base != "") {
		kind = "otlp"
	}
	var exp sdktrace.SpanExporter
	switch kind {
	case "", "none":
		return func(context.Context) error { return nil }, nil
	case "otlp":
		var opts []otlptracehttp.Option
		switch {
		case endpoint != "":
			opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
		case base != "":
			opts = append(opts, otlptracehttp.WithEndpointURL(base+"/v1/traces"))
		}
		if exp, err = otlptracehttp.New(ctx, opts...); err != nil {
			return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)
		}
	case "console":
		if exp, err = stdouttrace.New(stdouttrace.WithWriter(w)); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER: must be otlp, console or none, got %q", kind)
	}
	// An exporter that refuses or hangs costs spans, never a research:
	// the batcher exports off the research's path; its failures are
	// logged, the first one only.
	var once sync.Once
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		once.Do(func() { log.Warn("tracing: spans are not exported", "err", err) })
	}))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("quarry"), semconv.ServiceVersion(version))))
	otel.SetTracerProvider(tp)
	return tp.Shutdown, nil
}
