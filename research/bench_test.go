package research_test

import (
	"context"
	"testing"
	"time"

	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
)

// BenchmarkCriticalPath runs researches against a fake model that answers
// after a fixed latency and a fake source with its own latency, and prints
// the wall time beside the critical path: the calls that must run in
// sequence (plan, then per round the slowest search and the analysis, then
// the report and the citation judge: every model call the run makes).
// Searches within a round run concurrently.
//
//	go test ./research -run '^$' -bench CriticalPath -benchtime 5x
func BenchmarkCriticalPath(b *testing.B) {
	const llmLatency, searchLatency = 40 * time.Millisecond, 25 * time.Millisecond
	for _, level := range []string{research.LevelQuick, research.LevelStandard, research.LevelComprehensive} {
		b.Run(level, func(b *testing.B) {
			st := researchtest.Store(b)
			var wall, critical time.Duration
			var calls, in, out int
			for range b.N {
				fake := &llmtest.Fake{Model: "m", Latency: llmLatency, Reply: researchtest.ReplyBySchema(researchtest.Analysis0, researchtest.Analysis0, researchtest.Analysis1)}
				rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Sources: []search.Source{&researchtest.Source{SourceName: "web", Latency: searchLatency}}, Store: st, Concurrency: 8}
				t0 := time.Now()
				r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: level})
				if err != nil {
					b.Fatal(err)
				}
				wall += time.Since(t0)
				// Every model call here runs after the one before it (plan,
				// one analysis per round, report, citation judge), and a
				// round's searches, run concurrently, take one search
				// latency.
				rounds := time.Duration(len(r.Rounds))
				if r.Usage.Calls < 3 || rounds == 0 {
					b.Fatalf("cannot measure: %d model calls, %d rounds", r.Usage.Calls, rounds)
				}
				critical += time.Duration(r.Usage.Calls)*llmLatency + rounds*searchLatency
				calls, in, out = r.Usage.Calls, r.Usage.InputTokens, r.Usage.OutputTokens
			}
			b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall_ms")
			b.ReportMetric(float64(critical.Milliseconds())/float64(b.N), "critical_ms")
			b.ReportMetric(float64(wall)/float64(critical), "wall/critical")
			b.ReportMetric(float64(calls), "llm_calls")
			b.ReportMetric(float64(in), "prompt_tokens")
			b.ReportMetric(float64(out), "completion_tokens")
		})
	}
}
