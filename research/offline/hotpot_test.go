package offline_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/kbsource"
	"github.com/quarryhq/quarry/store/sqlite"
)

const hotpotDir = "../../../shared/data/hotpotqa"

type hotpotQuestion struct {
	ID            string   `json:"_id"`
	Question      string   `json:"question"`
	Type          string   `json:"type"`
	SupportingIDs []string `json:"supporting_ids"`
}

// BenchmarkHotpotQA runs the 40 HotpotQA dev questions offline over the
// mini-corpus and reports how many gold supporting paragraphs are among
// each report's references, per paragraph and both at once, at depth 0
// (one round), the standard level and comprehensive:
//
//	go test ./research/offline -run '^$' -bench HotpotQA -benchtime 1x
func BenchmarkHotpotQA(b *testing.B) {
	qs := loadHotpot(b)
	ctx := context.Background()
	st, svc, emb := hotpotKB(b)
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{kbsource.New(svc, "hotpot", emb)}, Store: st}
	// Warm the index once so the first question does not pay for loading.
	if _, err := svc.Search(ctx, "hotpot", emb, kb.Query{Text: "warm", K: 1}); err != nil {
		b.Fatal(err)
	}
	for _, cfg := range []struct {
		name string
		opts research.Options
	}{
		{"depth0", research.Options{Breadth: 6, Depth: 0, DepthSet: true}},
		{"standard", research.Options{Level: research.LevelStandard}},
		{"comprehensive", research.Options{Level: research.LevelComprehensive}},
	} {
		b.Run(cfg.name, func(b *testing.B) {
			for range b.N {
				var found, both, refs int
				var passages, supported int
				var worst time.Duration
				t0 := time.Now()
				for _, q := range qs {
					opts := cfg.opts
					opts.Sources = []string{"kb:hotpot"}
					t1 := time.Now()
					r, err := rn.Start(ctx, q.Question, opts)
					if err != nil {
						b.Fatal(err)
					}
					worst = max(worst, time.Since(t1))
					passages += r.Checks.CitedPassages
					supported += r.Checks.Supported
					if os.Getenv("HOTPOT_VERBOSE") != "" {
						for _, u := range r.Checks.Unsupported {
							fmt.Printf("UNSUPPORTED %q: %s\n", u.Text, u.Reason)
						}
					}
					got := map[string]bool{}
					for _, ref := range r.Report.References {
						got[ref.URL[strings.LastIndexByte(ref.URL, '/')+1:]] = true
					}
					refs += len(r.Report.References)
					n := 0
					for _, id := range q.SupportingIDs {
						if got[id] {
							n++
						}
					}
					found += n
					if n == len(q.SupportingIDs) {
						both++
					}
					if os.Getenv("HOTPOT_VERBOSE") != "" && n < len(q.SupportingIDs) {
						fmt.Printf("MISS %s %q gold=%v refs=%d\n", cfg.name, q.Question, q.SupportingIDs, len(r.Report.References))
					}
				}
				elapsed := time.Since(t0)
				b.ReportMetric(float64(found)/float64(2*len(qs)), "para_recall")
				b.ReportMetric(float64(both)/float64(len(qs)), "both_recall")
				b.ReportMetric(float64(supported)/float64(max(1, passages)), "citation_support")
				b.ReportMetric(float64(refs)/float64(len(qs)), "refs/research")
				b.ReportMetric(float64(elapsed.Milliseconds())/float64(len(qs)), "ms/research")
				b.ReportMetric(float64(worst.Milliseconds()), "max_ms")
			}
		})
	}
}

// hotpotKB ingests the HotpotQA corpus into a knowledge base "hotpot" in a
// fresh SQLite store, closed when the benchmark ends.
func hotpotKB(b *testing.B) (*sqlite.Store, *kb.Service, embed.Embedder) {
	b.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := kb.New(st, nil)
	emb := embed.Hash{}
	if _, err := svc.Create(ctx, "hotpot", "", emb); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "hotpot", []string{filepath.Join(hotpotDir, "corpus.jsonl")}, kb.AddOptions{Embedder: emb}); err != nil {
		b.Fatal(err)
	}
	return st, svc, emb
}

func loadHotpot(tb testing.TB) []hotpotQuestion {
	f, err := os.Open(filepath.Join(hotpotDir, "questions_dev.jsonl"))
	if err != nil {
		tb.Skipf("HotpotQA data not found beside the checkout: %v", err)
	}
	defer f.Close()
	var qs []hotpotQuestion
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var q hotpotQuestion
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			tb.Fatal(err)
		}
		qs = append(qs, q)
	}
	return qs
}

// BenchmarkHotpotQACost runs the research loop with a scripted model (it
// plans six sub-questions, opens three directions per round and never
// declares the question complete, so every level runs its full depth) over
// the HotpotQA corpus and reports LLM calls and prompt/completion tokens
// per research (the fake counts 4 characters as a token, close to cl100k
// on English):
//
//	go test ./research/offline -run '^$' -bench HotpotQACost -benchtime 1x
func BenchmarkHotpotQACost(b *testing.B) {
	qs := loadHotpot(b)[:10]
	ctx := context.Background()
	st, svc, emb := hotpotKB(b)
	for _, level := range []string{research.LevelQuick, research.LevelStandard, research.LevelComprehensive} {
		b.Run(level, func(b *testing.B) {
			for range b.N {
				var calls, in, out int
				for qi, q := range qs {
					n := 0
					fake := &llmtest.Fake{Model: "m", Reply: func(_ int, req llm.Request) (string, error) {
						switch req.Schema.Name {
						case "research_plan":
							var sqs []string
							for i, w := range strings.Fields(q.Question)[:min(6, len(strings.Fields(q.Question)))] {
								sqs = append(sqs, fmt.Sprintf(`{"text":%q,"priority":%d,"queries":[%q]}`, q.Question+" "+w, i+1, w+" "+q.Question))
							}
							return `{"strategy":"s","keywords":["k"],"steps":[],"sub_questions":[` + strings.Join(sqs, ",") + `],"estimated_seconds":60}`, nil
						case "research_analysis":
							n++
							return fmt.Sprintf(`{"learnings":[{"text":"a learning of about twenty words that states what the sources say about the question in one sentence","source_ids":["S1"]}],"directions":[{"text":"direction %d-%d a","parent_id":"Q1","queries":[%q]},{"text":"direction %d-%d b","parent_id":"Q1","queries":[%q]},{"text":"direction %d-%d c","parent_id":"Q2","queries":[%q]}],"is_complete":false,"confidence":0.3,"relevance":0.5,"quality":0.5}`, qi, n, q.Question+" a", qi, n, q.Question+" b", qi, n, q.Question+" c"), nil
						default:
							return `{"title":"t","summary":"` + strings.Repeat("A summary sentence that cites its source [cite:S1]. ", 20) + `","sections":[{"heading":"h","body":"` + strings.Repeat("A body sentence that cites a source [cite:S2]. ", 60) + `"}]}`, nil
						}
					}}
					rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Sources: []search.Source{kbsource.New(svc, "hotpot", emb)}, Store: st}
					r, err := rn.Start(ctx, q.Question, research.Options{Sources: []string{"kb:hotpot"}, Level: level})
					if err != nil {
						b.Fatal(err)
					}
					calls += r.Usage.Calls
					in += r.Usage.InputTokens
					out += r.Usage.OutputTokens
				}
				b.ReportMetric(float64(calls)/float64(len(qs)), "llm_calls/research")
				b.ReportMetric(float64(in)/float64(len(qs)), "prompt_tokens/research")
				b.ReportMetric(float64(out)/float64(len(qs)), "completion_tokens/research")
			}
		})
	}
}
