package llm

import (
	"context"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// TracerName names the tracer of model calls.
const TracerName = "github.com/quarryhq/quarry/llm"

// Traced wraps a provider so every call is a span, with the gen_ai
// attributes of the OpenTelemetry semantic conventions pinned at v1.37.0:
// the operation, the provider, the model asked for and answering, the
// token counts and the stop reason. No prompt or reply text is recorded.
// tp nil is the global tracer provider (a no-op unless one is set).
func Traced(p Provider, tp trace.TracerProvider) Provider {
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return &traced{Provider: p, tracer: tp.Tracer(TracerName)}
}

type traced struct {
	Provider
	tracer trace.Tracer
}

// Chat implements Provider.
func (t *traced) Chat(ctx context.Context, req Request, onDelta func(string)) (*Response, error) {
	provider, model, _ := strings.Cut(t.Name(), ":")
	ctx, span := t.tracer.Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(
		semconv.GenAIOperationNameChat,
		semconv.GenAIProviderNameKey.String(provider),
		semconv.GenAIRequestModel(model),
		semconv.GenAIRequestMaxTokens(req.MaxTokens),
		attribute.Bool("quarry.structured_output", req.Schema != nil),
	))
	defer span.End()
	resp, err := t.Provider.Chat(ctx, req, onDelta)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "model call failed")
		return resp, err
	}
	span.SetAttributes(
		semconv.GenAIResponseModel(resp.Model),
		semconv.GenAIUsageInputTokens(resp.Usage.InputTokens),
		semconv.GenAIUsageOutputTokens(resp.Usage.OutputTokens),
		semconv.GenAIResponseFinishReasons(resp.StopReason),
	)
	return resp, nil
}
