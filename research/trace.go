package research

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// TracerName names the tracer of researches.
const TracerName = "github.com/quarryhq/quarry/research"

// Span attributes of a research. Only ids, counts, names and levels: no
// question, page text or secret.
const (
	attrResearchID = attribute.Key("quarry.research.id")
	attrLevel      = attribute.Key("quarry.research.level")
	attrEngine     = attribute.Key("quarry.research.engine")
	attrRound      = attribute.Key("quarry.research.round")
	attrSource     = attribute.Key("quarry.source")
	attrResults    = attribute.Key("quarry.search.results")
	attrStatus     = attribute.Key("quarry.research.status")
)

// tracer is the runner's tracer: Runner.Tracing, else the global
// provider's (a no-op unless tracing was set up).
func (rn *Runner) tracer() trace.Tracer {
	tp := rn.Tracing
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	return tp.Tracer(TracerName)
}

// span starts a child span of ctx; end records err on it.
func (x *run) span(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, func(err error)) {
	ctx, sp := x.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
	return ctx, func(err error) {
		if err != nil {
			sp.RecordError(err)
			sp.SetStatus(codes.Error, "failed")
		}
		sp.End()
	}
}
