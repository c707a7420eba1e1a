package research_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
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

// silentLLM never answers: every call waits for ctx's end.
type silentLLM struct{}

func (silentLLM) Name() string { return "silent:m" }

func (silentLLM) Chat(ctx context.Context, _ llm.Request, _ func(string)) (*llm.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestPlanThatNeverComesFails: a model that hangs must not give a
// "completed" research that read nothing; the failure names the cause
// and a resume with a working model finishes it.
func TestPlanThatNeverComesFails(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	src := &researchtest.Source{SourceName: "web"}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: silentLLM{}}, Fallback: offline.Engine{}, Sources: []search.Source{src}, Store: st}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick", Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "no plan within the time budget") || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a failure naming the missing plan and the deadline", err)
	}
	if r.Status != research.StatusFailed || len(r.Sources) != 0 || src.Calls() != 0 || r.Report != nil {
		t.Fatalf("status %s, %d sources, %d searches, report %v", r.Status, len(r.Sources), src.Calls(), r.Report != nil)
	}
	fake := &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}
	rn2 := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{src}, Store: st}
	r2, err := rn2.Resume(context.Background(), r.ID)
	if err != nil || r2.Status != research.StatusCompleted || len(r2.Report.References) == 0 {
		t.Fatalf("resume: %v %+v", err, r2)
	}
}

// TestTokenBudgetBelowThePlanFails: a budget that cannot pay for a plan is
// a failure, not an empty report.
func TestReadNothingBecauseSearchesFailedFails(t *testing.T) {
	t.Parallel()
	bad := &researchtest.Source{SourceName: "bad", Fail: true}
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{bad}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || r.Status != research.StatusFailed {
		t.Fatalf("err = %v status %s", err, r.Status)
	}
}

// TestAnalysisFailureDegrades: sources were read and the analyst keeps
// failing; the round is read extractively with a warning, the research
// completes, and the report does not claim no model was used.
func TestAnalysisFailureDegrades(t *testing.T) {
	t.Parallel()
	fake := &llmtest.Fake{Reply: func(_ int, req llm.Request) (string, error) {
		switch req.Schema.Name {
		case "research_plan":
			return researchtest.PlanJSON, nil
		case "research_report":
			return researchtest.ReportJSON, nil
		case "citation_judge":
			return researchtest.JudgeAll(req, nil), nil
		}
		return "", &llm.APIError{Provider: "fake", StatusCode: 500, Message: "internal error"}
	}}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != research.StatusCompleted || len(r.Report.References) == 0 || r.Report.Engine != "fake:" {
		t.Fatalf("status %s engine %s refs %d", r.Status, r.Report.Engine, len(r.Report.References))
	}
	if !containsAny(r.Warnings, "could not analyze the sources", "internal error") {
		t.Fatalf("warnings %v", r.Warnings)
	}
}

// TestWriterFallbackSaysWhatHappened: only the writer failed; the note
// says the model planned and analysed and the offline engine wrote.
func TestWriterFallbackSaysWhatHappened(t *testing.T) {
	t.Parallel()
	fake := &llmtest.Fake{Reply: func(i int, req llm.Request) (string, error) {
		if req.Schema.Name == "research_report" {
			return "", &llm.APIError{Provider: "fake", StatusCode: 429, Message: "rate limited"}
		}
		return researchtest.ReplyBySchema(researchtest.Analysis1)(i, req)
	}}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	md := r.Report.Markdown
	if r.Report.Engine != "offline" || strings.Contains(md, "no language model was used") ||
		!strings.Contains(md, "fake: planned and analysed the research") || !strings.Contains(md, "rate limited") {
		t.Fatalf("engine %s, report notes:\n%s", r.Report.Engine, md[:min(len(md), 1500)])
	}
}

func containsAny(ws []string, subs ...string) bool {
	for _, w := range ws {
		all := true
		for _, s := range subs {
			all = all && strings.Contains(w, s)
		}
		if all {
			return true
		}
	}
	return false
}

// gateSource holds every search until open is closed, and says when the
// first one started.
type gateSource struct {
	researchtest.Source
	started chan struct{}
	once    sync.Once
	open    chan struct{}
}

func (g *gateSource) Search(ctx context.Context, q string, k int) ([]search.Result, error) {
	g.once.Do(func() { close(g.started) })
	select {
	case <-g.open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return g.Source.Search(ctx, q, k)
}

// interrupted makes a failed, resumable research: cancelled once its
// first sub-question is done.
func interrupted(t *testing.T, st store.Store) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}}, Sources: []search.Source{&researchtest.Source{SourceName: "web", Block: "origins"}}, Store: st, Concurrency: 2,
		OnEvent: func(e research.Event) {
			if e.Type == research.EventAgent && strings.HasPrefix(e.Agent.Result, "Q1: ") {
				cancel()
			}
		}}
	r, err := rn.Start(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	return r.ID
}

// TestTwoResumesAtOnce: one runs; the other is refused as already running
// before it spends a model call or a search.
func TestTwoResumesAtOnce(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	id := interrupted(t, st)
	gate := &gateSource{Source: researchtest.Source{SourceName: "web"}, started: make(chan struct{}), open: make(chan struct{})}
	first := &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}
	rn1 := &research.Runner{Engine: &research.LLMEngine{Provider: first}, Sources: []search.Source{gate}, Store: st}
	done := make(chan error, 1)
	go func() {
		r, err := rn1.Resume(context.Background(), id)
		if err == nil && r.Status != research.StatusCompleted {
			err = fmt.Errorf("status %s", r.Status)
		}
		done <- err
	}()
	<-gate.started
	second := &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}
	src2 := &researchtest.Source{SourceName: "web"}
	rn2 := &research.Runner{Engine: &research.LLMEngine{Provider: second}, Sources: []search.Source{src2}, Store: st}
	_, err := rn2.Resume(context.Background(), id)
	var le *store.LeaseError
	if !errors.Is(err, store.ErrBusy) || !errors.As(err, &le) || !strings.Contains(err.Error(), "already running") {
		t.Fatalf("second resume: err = %v, want already running", err)
	}
	if n := len(second.Requests()); n != 0 || src2.Calls() != 0 {
		t.Fatalf("the refused resume spent %d model calls and %d searches", n, src2.Calls())
	}
	close(gate.open)
	if err := <-done; err != nil {
		t.Fatalf("first resume: %v", err)
	}
	// Once it finished, the lease is free again (a completed research is
	// returned as it is).
	if r, err := rn2.Resume(context.Background(), id); err != nil || r.Status != research.StatusCompleted {
		t.Fatalf("after: %v", err)
	}
}

// TestResumeAfterCrashTakesADeadHoldersLease: a process that died keeps
// its lease on the books; a resume on the same host sees the holder's pid
// is gone and takes over at once. A live holder keeps it.
func TestResumeAfterCrashTakesADeadHoldersLease(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	id := interrupted(t, st)
	host, _ := os.Hostname()
	now := time.Now()
	if err := st.ResearchClaim(context.Background(), id, fmt.Sprintf("%s:%d/dead0001", host, 1<<22+12345), now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st}
	if r, err := rn.Resume(context.Background(), id); err != nil || r.Status != research.StatusCompleted {
		t.Fatalf("resume after a crash: %v", err)
	}

	id2 := interrupted(t, st)
	if err := st.ResearchClaim(context.Background(), id2, fmt.Sprintf("%s:%d/live0001", host, os.Getpid()), now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := rn.Resume(context.Background(), id2); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("a live holder's lease was taken: %v", err)
	}
}

// TestInterruptAtEachStage: Ctrl-C at any stage leaves a failed,
// resumable research; the resume finishes it, never plans twice, and the
// event sequence has no gap.
func TestInterruptAtEachStage(t *testing.T) {
	t.Parallel()
	for _, stage := range []string{research.StagePlanning, research.StageExecuting, research.StageVerifying, research.StageSynthesizing} {
		t.Run(stage, func(t *testing.T) {
			t.Parallel()
			st := researchtest.Store(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fake := &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}
			rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st,
				OnEvent: func(e research.Event) {
					if e.Type == research.EventStatus && e.Status.Stage == stage {
						cancel()
					}
				}}
			r, err := rn.Start(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
			if !errors.Is(err, context.Canceled) || r.Status != research.StatusFailed {
				t.Fatalf("interrupted at %s: err = %v, status %s", stage, err, r.Status)
			}
			plans := 0
			for _, req := range fake.Requests() {
				if req.Schema.Name == "research_plan" {
					plans++
				}
			}
			rn.OnEvent = nil
			r2, err := rn.Resume(context.Background(), r.ID)
			if err != nil || r2.Status != research.StatusCompleted || r2.Report == nil {
				t.Fatalf("resume: %v", err)
			}
			after := 0
			for _, req := range fake.Requests() {
				if req.Schema.Name == "research_plan" {
					after++
				}
			}
			if r.Plan != nil && after != plans {
				t.Fatalf("planned again on resume (%d plans)", after)
			}
			evs, _ := st.ResearchEvents(context.Background(), r.ID, 0)
			for i, e := range evs {
				if e.Seq != int64(i+1) {
					t.Fatalf("event %d has seq %d", i, e.Seq)
				}
			}
		})
	}
}
