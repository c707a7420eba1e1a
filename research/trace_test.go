package research_test

import (
	"context"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
)

// TestTraceTree: one research is one trace — the research span, a span
// per stage and round under it, a search span per source call under its
// round, a model call span (gen_ai attributes) under the stage that made
// it — and no attribute holds the question, page text or a key.
func TestTraceTree(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer func() { _ = tp.Shutdown(context.Background()) }()
	fake := &llmtest.Fake{Model: "m", Reply: researchtest.ReplyBySchema(researchtest.Analysis0, researchtest.Analysis1)}
	src := &researchtest.Source{SourceName: "web"}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: llm.Traced(fake, tp)}, Fallback: offline.Engine{}, Sources: []search.Source{src}, Store: researchtest.Store(t), Tracing: tp}
	const question = "What is alpha?"
	r, err := rn.Start(context.Background(), question, research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	if err != nil || r.Status != research.StatusCompleted {
		t.Fatalf("research: %v %v", err, r)
	}
	spans := exp.GetSpans()
	byID := map[string]tracetest.SpanStub{}
	var root tracetest.SpanStub
	for _, s := range spans {
		byID[s.SpanContext.SpanID().String()] = s
		if s.Name == "research" {
			root = s
		}
	}
	if !root.SpanContext.IsValid() {
		t.Fatalf("no research span among %d", len(spans))
	}
	parentName := func(s tracetest.SpanStub) string { return byID[s.Parent.SpanID().String()].Name }
	count := map[string]int{}
	for _, s := range spans {
		if s.SpanContext.TraceID() != root.SpanContext.TraceID() {
			t.Errorf("span %s is in another trace", s.Name)
		}
		name := s.Name
		switch {
		case strings.HasPrefix(name, "search "):
			name = "search"
			if p := parentName(s); p != "execute" {
				t.Errorf("search span under %q, want execute", p)
			}
		case strings.HasPrefix(name, "chat "):
			name = "chat"
			if p := parentName(s); p != "plan" && p != "analyze" && p != "write" && p != "verify" {
				t.Errorf("model call span under %q", p)
			}
			attrs := map[string]bool{}
			for _, a := range s.Attributes {
				attrs[string(a.Key)] = true
			}
			for _, k := range []string{"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
				if !attrs[k] {
					t.Errorf("model call span lacks %s", k)
				}
			}
		case name == "plan" || name == "execute" || name == "analyze" || name == "verify" || name == "write":
			if p := parentName(s); p != "research" {
				t.Errorf("%s span under %q, want research", name, p)
			}
		}
		count[name]++
		for _, a := range s.Attributes {
			v := a.Value.String()
			if strings.Contains(v, question) || strings.Contains(v, "alpha") || strings.Contains(strings.ToLower(v), "key") {
				t.Errorf("span %s attribute %s holds %q", s.Name, a.Key, v)
			}
		}
	}
	for _, name := range []string{"research", "plan", "execute", "analyze", "verify", "write", "search", "chat"} {
		if count[name] == 0 {
			t.Errorf("no %s span (spans: %v)", name, count)
		}
	}
	if count["execute"] < 2 || count["analyze"] < 2 {
		t.Errorf("want a span per round (two rounds): %v", count)
	}
}

// BenchmarkTracing is the same research with tracing off (the global
// no-op provider) and on (every span recorded, batched to memory): the
// cost of the spans.
func BenchmarkTracing(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on"
		}
		b.Run(name, func(b *testing.B) {
			var tp *sdktrace.TracerProvider
			if on {
				tp = sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewInMemoryExporter()))
				defer func() { _ = tp.Shutdown(context.Background()) }()
			}
			st := researchtest.Store(b)
			for b.Loop() {
				fake := &llmtest.Fake{Model: "m", Reply: researchtest.ReplyBySchema(researchtest.Analysis0, researchtest.Analysis1)}
				var p llm.Provider = fake
				rn := &research.Runner{Engine: &research.LLMEngine{Provider: p}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st}
				if on {
					rn.Engine = &research.LLMEngine{Provider: llm.Traced(fake, tp)}
					rn.Tracing = tp
				}
				if _, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: research.LevelQuick}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
