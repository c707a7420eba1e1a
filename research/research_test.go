package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

func TestResearchWithLLM(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	fake := &llmtest.Fake{Model: "m", Reply: researchtest.ReplyBySchema(researchtest.Analysis0, researchtest.Analysis1)}
	src := &researchtest.Source{SourceName: "web"}
	var events []research.Event
	var mu sync.Mutex
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{src}, Store: st,
		OnEvent: func(e research.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }}
	r, err := rn.Start(context.Background(), "  What is alpha?  ", research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != research.StatusCompleted || r.Question != "What is alpha?" || r.Engine != "fake:m" {
		t.Fatalf("status %s question %q engine %s", r.Status, r.Question, r.Engine)
	}
	// Plan: priorities reordered and made unique; queries kept.
	if len(r.SubQuestions) != 3 || r.SubQuestions[0].Text != "alpha uses" || r.SubQuestions[0].Priority != 1 || r.SubQuestions[1].Priority != 2 {
		t.Fatalf("sub-questions: %+v", r.SubQuestions)
	}
	child := r.SubQuestions[2]
	if child.Depth != 1 || child.ParentID != "Q1" || child.Text != "alpha history" || child.Status != research.SubDone {
		t.Fatalf("child: %+v", child)
	}
	if !strings.Contains(r.StopReason, "complete with confidence 0.90") {
		t.Fatalf("stop reason %q", r.StopReason)
	}
	// The learning citing S99 (never read) was dropped.
	for _, l := range r.Learnings {
		if l.Text == "Invented." {
			t.Fatal("learning citing an unread source kept")
		}
	}
	// Citations resolve only to sources read; [cite:S42] is removed.
	md := r.Report.Markdown
	// The writer cited S1 and S3; any further references are sources the
	// "Conflicting evidence" part cites (the fake pages disagree on "the
	// value": 40 vs 41).
	if len(r.Report.References) < 2 || r.Report.References[0].SourceID != "S1" || r.Report.References[1].SourceID != "S3" {
		t.Fatalf("references: %+v", r.Report.References)
	}
	if len(r.Report.References) > 2 {
		conflicts := ""
		for _, c := range r.Report.Conflicts {
			conflicts += c.Text
		}
		for _, ref := range r.Report.References[2:] {
			if !strings.Contains(conflicts, fmt.Sprintf("[%d]", ref.Number)) {
				t.Errorf("reference %d (%s) is cited nowhere", ref.Number, ref.SourceID)
			}
		}
	}
	// The citation check passes the supported passages and catches the
	// claim its source does not make.
	if ck := r.Checks; ck == nil || ck.CitedPassages != 4 || ck.Supported != 3 || len(ck.Unsupported) != 1 ||
		!strings.Contains(ck.Unsupported[0].Text, "Mars") || !strings.Contains(ck.Unsupported[0].Reason, "1999") || ck.CitationSupportRate != 0.75 {
		t.Fatalf("checks: %+v", r.Checks)
	}
	for _, want := range []string{"# Alpha", "## Executive summary", "Alpha is documented [1].", "A made-up claim .", "The value is 40 per fact [1].", "The value is 40 [1][2].", "## References", "[2] ", "citation(s) to sources not read in this research were removed"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "S42") || strings.Contains(md, "[cite:") {
		t.Errorf("markers leaked:\n%s", md)
	}
	if ck := r.Checks; ck.Judge != "fake:m" || ck.Judged != 3 || !strings.Contains(ck.Method, "judge") {
		t.Fatalf("judge: %+v", ck)
	}
	// Usage: plan, two analyses, one report, one judge call.
	if r.Usage.Calls != 5 || r.Usage.Stages["planning"].Calls != 1 || r.Usage.Stages["analyzing"].Calls != 2 || r.Usage.Stages["synthesizing"].Calls != 1 || r.Usage.Stages["checking"].Calls != 1 {
		t.Fatalf("usage: %+v", r.Usage)
	}
	// Every query was searched once.
	if got := src.Calls(); got != 3 {
		t.Fatalf("searches: %d (%v)", got, src.Queries())
	}
	// Events: statuses through completed, agents, messages, sources.
	types := map[string]int{}
	for _, e := range events {
		types[e.Type]++
	}
	for _, ty := range []string{research.EventStatus, research.EventAgent, research.EventMessage, research.EventSource, research.EventLearning, research.EventUsage, research.EventReport} {
		if types[ty] == 0 {
			t.Errorf("no %s event", ty)
		}
	}
	if last := events[len(events)-1]; last.Type != research.EventStatus || last.Status.Status != research.StatusCompleted {
		t.Errorf("last event %+v", last)
	}
	// Persisted: the state and the whole event log, in order.
	stored, err := research.Load(context.Background(), st, r.ID)
	if err != nil || stored.Status != research.StatusCompleted || stored.Report.Markdown != md {
		t.Fatalf("stored: %v", err)
	}
	evs, err := st.ResearchEvents(context.Background(), r.ID, 0)
	if err != nil || len(evs) != len(events) {
		t.Fatalf("stored %d events, streamed %d (%v)", len(evs), len(events), err)
	}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, e.Seq)
		}
	}
	// The analysis prompt carries source ids and texts.
	var sawAnalysis bool
	for _, req := range fake.Requests() {
		if req.Schema.Name == "research_analysis" {
			sawAnalysis = true
			if !strings.Contains(req.Messages[0].Content, "[S1]") || !strings.Contains(req.Messages[0].Content, "is documented here") {
				t.Errorf("analysis prompt lacks sources:\n%s", req.Messages[0].Content)
			}
		}
	}
	if !sawAnalysis {
		t.Error("no analysis request")
	}
	// The writer is shown the facts it may cite, and only those resolve.
	for _, req := range fake.Requests() {
		if req.Schema.Name == "research_report" && (!strings.Contains(req.Messages[0].Content, "- [F1] ") || !strings.Contains(req.Messages[0].Content, "[cite:F12]")) {
			t.Errorf("writer prompt lacks the facts:\n%s", req.Messages[0].Content)
		}
	}
}

func TestResearchValidation(t *testing.T) {
	t.Parallel()
	rn := &research.Runner{Engine: offline.Engine{}, Store: researchtest.Store(t)}
	tests := []struct {
		q     string
		opts  research.Options
		field string
	}{
		{"", research.Options{Sources: []string{"web"}}, "question"},
		{"   \n ", research.Options{Sources: []string{"web"}}, "question"},
		{strings.Repeat("x", 2001), research.Options{Sources: []string{"web"}}, "question"},
		{"q", research.Options{}, "source"},
		{"q", research.Options{Sources: []string{"web"}, Level: "deep"}, "level"},
		{"q", research.Options{Sources: []string{"web"}, Breadth: 21}, "breadth"},
		{"q", research.Options{Sources: []string{"web"}, Breadth: -1}, "breadth"},
		{"q", research.Options{Sources: []string{"web"}, Depth: 6, DepthSet: true}, "depth"},
		{"q", research.Options{Sources: []string{"web"}, MaxTokens: 7999}, "max-tokens"},
		{"q", research.Options{Sources: []string{"web"}, Confidence: 1.5}, "confidence"},
	}
	for _, tt := range tests {
		_, err := rn.Start(context.Background(), tt.q, tt.opts)
		var ve *store.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.field {
			t.Errorf("Start(%.20q, %+v) = %v; want a validation error on %s", tt.q, tt.opts, err, tt.field)
		}
	}
	if _, err := rn.Start(context.Background(), strings.Repeat("x", 2000), research.Options{Sources: []string{"web"}, Breadth: 1, Depth: 0, DepthSet: true}); err != nil {
		t.Errorf("2,000 characters is allowed: %v", err)
	}
}

// A request validated once (NewRequest, as the CLI does before a long
// ingest) is stored as validated, with its defaults; a request that was
// not validated is refused.
func TestCreateRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rn := &research.Runner{Engine: offline.Engine{}, Store: researchtest.Store(t)}
	if _, err := research.NewRequest("q", research.Options{}); err == nil {
		t.Fatal("NewRequest without a source: no error")
	}
	req, err := research.NewRequest("  Who was Giuseppe Verdi?\x07 ", research.Options{Sources: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := rn.CreateRequest(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if r.Question != "Who was Giuseppe Verdi?" || r.Options.Level != research.LevelStandard || r.Status != research.StatusPending {
		t.Errorf("stored %q at level %q, status %s", r.Question, r.Options.Level, r.Status)
	}
	if _, err := rn.CreateRequest(ctx, research.Request{}); err == nil {
		t.Error("a zero Request was stored")
	}
}

func TestEffort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		opts research.Options
		want research.Effort
	}{
		{research.Options{}, research.Effort{MinSub: 5, MaxSub: 7, Depth: 1, PerSearch: 5}},
		{research.Options{Level: "quick"}, research.Effort{MinSub: 3, MaxSub: 5, Depth: 1, PerSearch: 5}},
		{research.Options{Level: "comprehensive"}, research.Effort{MinSub: 7, MaxSub: 10, Depth: 2, PerSearch: 5}},
		{research.Options{Breadth: 4, Depth: 3, DepthSet: true}, research.Effort{MinSub: 4, MaxSub: 4, Depth: 3, PerSearch: 5}},
		{research.Options{Breadth: 3}, research.Effort{MinSub: 3, MaxSub: 3, Depth: 2, PerSearch: 5}},
		{research.Options{Depth: 0, DepthSet: true}, research.Effort{MinSub: 5, MaxSub: 5, Depth: 0, PerSearch: 5}},
	}
	for _, tt := range tests {
		o := tt.opts
		o.Sources = []string{"web"}
		if _, err := research.Validate("q", &o); err != nil {
			t.Fatal(err)
		}
		if got := o.Effort(); got != tt.want {
			t.Errorf("%+v: effort %+v, want %+v", tt.opts, got, tt.want)
		}
	}
}

func TestFailingSourceIsAWarning(t *testing.T) {
	t.Parallel()
	good, bad := &researchtest.Source{SourceName: "good"}, &researchtest.Source{SourceName: "bad", Fail: true}
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{bad, good}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is Alpha Centauri?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != research.StatusCompleted || len(r.Report.References) == 0 {
		t.Fatalf("status %s, %d references", r.Status, len(r.Report.References))
	}
	if len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "source bad failed") || !strings.Contains(r.Warnings[0], "connection refused") {
		t.Fatalf("warnings: %v", r.Warnings)
	}
}

func TestLLMProseFailsClearlyAndKeepsState(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	fake := &llmtest.Fake{Reply: func(_ int, req llm.Request) (string, error) {
		if req.Schema.Name == "research_plan" {
			return researchtest.PlanJSON, nil
		}
		return researchtest.ProseNotJSON, nil
	}}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	var se *llm.StructuredError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "analyze round 0") {
		t.Fatalf("err = %v", err)
	}
	stored, lerr := research.Load(context.Background(), st, r.ID)
	if lerr != nil || stored.Status != research.StatusFailed || stored.Stage != research.StageFailed || len(stored.Sources) == 0 || stored.Error == "" {
		t.Fatalf("stored after failure: %+v %v", stored, lerr)
	}
}

func TestTokenBudgetIsNeverExceeded(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{8000, 12000, 30000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			t.Parallel()
			// Analyses never complete, so only the budget stops the loop.
			var n atomic.Int64
			fake := &llmtest.Fake{Reply: func(i int, req llm.Request) (string, error) {
				if req.Schema.Name != "research_analysis" {
					return researchtest.ReplyBySchema()(i, req)
				}
				k := n.Add(1)
				return fmt.Sprintf(`{"learnings":[{"text":"More.","source_ids":["S1"]}],"directions":[{"text":"d%d a","parent_id":"Q1","queries":["d%d a"]},{"text":"d%d b","parent_id":"Q1","queries":["d%d b"]}],"is_complete":false,"confidence":0.1,"relevance":0.5,"quality":0.5}`, k, k, k, k), nil
			}}
			rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web", Pad: 4000}}, Store: researchtest.Store(t)}
			r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Breadth: 3, Depth: 5, DepthSet: true, MaxTokens: limit})
			if err != nil {
				t.Fatal(err)
			}
			if r.Usage.Total() > limit {
				t.Fatalf("spent %d tokens of %d", r.Usage.Total(), limit)
			}
			t.Logf("budget %d: spent %d in %d calls, %d rounds, stop %q", limit, r.Usage.Total(), r.Usage.Calls, len(r.Rounds), r.StopReason)
			if r.Report == nil || len(r.Report.References) == 0 {
				t.Fatal("no cited report")
			}
			// Within the budget the analyst reads less of each source
			// rather than overspend.
			if limit == 8000 {
				for _, req := range fake.Requests() {
					if req.Schema.Name == "research_analysis" && len(req.Messages[0].Content) > 4*limit {
						t.Errorf("analysis prompt of %d bytes under a %d-token budget", len(req.Messages[0].Content), limit)
					}
				}
			}
		})
	}
}

func TestTimeBudgetWritesFromWhatWasFound(t *testing.T) {
	t.Parallel()
	// The model answers the plan, then hangs on analysis.
	fake := &llmtest.Fake{Reply: func(_ int, req llm.Request) (string, error) {
		if req.Schema.Name == "research_plan" {
			return researchtest.PlanJSON, nil
		}
		return "", errors.New("unreachable")
	}}
	hang := &hangingLLM{inner: fake}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: hang}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: researchtest.Store(t)}
	t0 := time.Now()
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick", Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(t0) > 10*time.Second {
		t.Fatalf("the time budget was not kept: %s", time.Since(t0))
	}
	if r.Status != research.StatusCompleted || r.StopReason != "time budget reached" || r.Report.Engine != "offline" || len(r.Report.References) == 0 {
		t.Fatalf("status %s stop %q engine %s refs %d", r.Status, r.StopReason, r.Report.Engine, len(r.Report.References))
	}
	if !strings.Contains(r.Report.Markdown, "assembled extractively") {
		t.Errorf("the report does not say it was written extractively:\n%s", r.Report.Markdown)
	}
}

// hangingLLM answers plans and hangs on everything else until ctx ends.
type hangingLLM struct{ inner llm.Provider }

func (h *hangingLLM) Name() string { return "hang:m" }

func (h *hangingLLM) Chat(ctx context.Context, req llm.Request, fn func(string)) (*llm.Response, error) {
	if req.Schema != nil && req.Schema.Name == "research_plan" {
		return h.inner.Chat(ctx, req, fn)
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestResumeAfterInterrupt(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	src := &researchtest.Source{SourceName: "web", Block: "origins"}
	ctx, cancel := context.WithCancel(context.Background())
	fake := &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Sources: []search.Source{src}, Store: st, Concurrency: 2,
		OnEvent: func(e research.Event) {
			// Interrupt once the first sub-question is done; the other
			// is blocked in its search.
			if e.Type == research.EventAgent && strings.HasPrefix(e.Agent.Result, "Q1: ") {
				cancel()
			}
		}}
	r, err := rn.Start(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	stored, err := research.Load(context.Background(), st, r.ID)
	if err != nil || stored.Status != research.StatusFailed || stored.SubQuestions[0].Status != research.SubDone || stored.SubQuestions[1].Status != research.SubPending {
		t.Fatalf("checkpoint: %+v %v", stored.SubQuestions, err)
	}
	planCalls := len(fake.Requests())
	// Resume with a source that no longer blocks: only the unfinished
	// sub-question is searched, and the plan is not redone.
	src2 := &researchtest.Source{SourceName: "web"}
	rn2 := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Sources: []search.Source{src2}, Store: st}
	r2, err := rn2.Resume(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r2.Status != research.StatusCompleted || r2.Report == nil {
		t.Fatalf("resumed: %s", r2.Status)
	}
	if q := src2.Queries(); len(q) != 1 || q[0] != "alpha origins" {
		t.Fatalf("resume searched %v, want only the unfinished sub-question", q)
	}
	for _, req := range fake.Requests()[planCalls:] {
		if req.Schema.Name == "research_plan" {
			t.Fatal("resume planned again")
		}
	}
	// Events continue the sequence.
	evs, _ := st.ResearchEvents(context.Background(), r.ID, 0)
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d seq %d", i, e.Seq)
		}
	}
	var raw map[string]any
	if err := json.Unmarshal(mustState(t, st, r.ID), &raw); err != nil {
		t.Fatal(err)
	}
}

func mustState(t *testing.T, st store.Store, id string) []byte {
	t.Helper()
	rec, err := st.ResearchGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec.State
}

// pageSource is a source that can find pages: it counts which kind of
// search it was asked for.
type pageSource struct {
	*researchtest.Source
	pages, passages atomic.Int64
}

func (p *pageSource) Search(ctx context.Context, q string, k int) ([]search.Result, error) {
	p.passages.Add(1)
	return p.Source.Search(ctx, q, k)
}

func (p *pageSource) SearchPages(ctx context.Context, q string, pages int) ([]search.Result, error) {
	p.pages.Add(1)
	return p.Source.Search(ctx, q, pages)
}

// A model reads pages (PageReader): the runner asks a source that can
// for pages; the offline engine asks for passages.
func TestModelReadsPages(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		engine research.Engine
		pages  bool
	}{
		{"model", &research.LLMEngine{Provider: &llmtest.Fake{Model: "m", Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}}, true},
		{"offline", offline.Engine{}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &pageSource{Source: &researchtest.Source{SourceName: "kb:docs"}}
			rn := &research.Runner{Engine: tc.engine, Fallback: offline.Engine{}, Sources: []search.Source{src}, Store: researchtest.Store(t)}
			if _, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"kb:docs"}, Level: research.LevelQuick}); err != nil {
				t.Fatal(err)
			}
			if got := src.pages.Load() > 0 && src.passages.Load() == 0; got != tc.pages {
				t.Errorf("%d searches for pages, %d for passages", src.pages.Load(), src.passages.Load())
			}
		})
	}
}
