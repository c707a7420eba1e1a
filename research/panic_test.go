package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

// panicWriter is the offline engine with a writer that panics.
type panicWriter struct{ offline.Engine }

func (panicWriter) Write(context.Context, research.WriteInput) (*research.Draft, llm.Usage, error) {
	var ss []int
	_ = ss[1:] // slice bounds out of range [1:0], as the offline writer once did
	return nil, llm.Usage{}, nil
}

// panicSource panics on every search.
type panicSource struct{}

func (panicSource) Name() string { return "boom" }
func (panicSource) Search(context.Context, string, int) ([]search.Result, error) {
	panic("source exploded")
}

// textSource answers every query with one document.
type textSource struct{ title, text string }

func (s textSource) Name() string { return "kb" }
func (s textSource) Search(context.Context, string, int) ([]search.Result, error) {
	return []search.Result{{URL: "kb://notes/doc", Title: s.title, Content: s.text, Kind: "kb", Credibility: 0.8}}, nil
}

// TestPanicFailsOnlyItsResearch: a panic in an engine ends that research
// failed with the panic's message, never the process; a source that
// panics is a source that failed; the next research on the same runner
// completes.
func TestPanicFailsOnlyItsResearch(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	rn := &research.Runner{Engine: panicWriter{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err == nil || !strings.Contains(err.Error(), "panic") || !strings.Contains(err.Error(), "slice bounds out of range") {
		t.Fatalf("err = %v, want the panic's message", err)
	}
	if r.Status != research.StatusFailed || r.FailedStage != research.StageSynthesizing || !strings.Contains(r.Error, "panic") {
		t.Fatalf("status %s at %s: %q", r.Status, r.FailedStage, r.Error)
	}
	stored, err := research.Load(context.Background(), st, r.ID)
	if err != nil || stored.Status != research.StatusFailed || stored.Attempts != 0 {
		t.Fatalf("stored: %v %+v", err, stored)
	}

	rn2 := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{panicSource{}, &researchtest.Source{SourceName: "web"}}, Store: st}
	r2, err := rn2.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil || r2.Status != research.StatusCompleted || !containsAny(r2.Warnings, "source exploded") {
		t.Fatalf("a panicking source beside a working one: %v, status %s, warnings %q", err, r2.Status, r2.Warnings)
	}
}

// TestOfflineWriterSurvivesAFragment: a sentence followed by a short
// fragment (a Markdown line whose link was stripped) once made the
// offline writer slice an empty list and crash-loop the server.
func TestOfflineWriterSurvivesAFragment(t *testing.T) {
	t.Parallel()
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{textSource{"notes", "Paris is the capital of France. data)"}}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is the capital of France?", research.Options{Sources: []string{"kb:notes"}, Level: "quick"})
	if err != nil || r.Status != research.StatusCompleted {
		t.Fatalf("%v, status %s: %s", err, r.Status, r.Error)
	}
}

// TestAttemptsAreBounded: a queued research whose runs keep dying with
// their process (nothing recovers a SIGKILL or an out-of-memory kill) is
// failed by the next worker after MaxAttempts, instead of run again.
func TestAttemptsAreBounded(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st}
	ctx := context.Background()
	r, err := rn.Create(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	// As a process that died mid-run leaves it: processing, its attempt
	// counted.
	r.Status, r.Stage, r.Attempts = research.StatusProcessing, research.StageExecuting, research.MaxAttempts
	state, _ := json.Marshal(r)
	if err := st.ResearchSave(ctx, store.Research{ID: r.ID, Question: r.Question, Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, State: state}, nil); err != nil {
		t.Fatal(err)
	}
	got, err := rn.Work(ctx, r.ID)
	if err == nil || got.Status != research.StatusFailed || !strings.Contains(got.Error, "gave up after 3 runs") {
		t.Fatalf("work: %v, status %s: %q", err, got.Status, got.Error)
	}
	// A person resuming it by hand is heard: it runs again.
	got, err = rn.Resume(ctx, r.ID)
	if err != nil || got.Status != research.StatusCompleted || got.Attempts != 0 {
		t.Fatalf("resume: %v, status %s, attempts %d", err, got.Status, got.Attempts)
	}
}

// TestPanicBeforeTheRunLeavesNoGoroutine: a panic on the way into a run
// (its sources failing to open by panicking) reaches the caller, which a
// job queue recovers, and leaves no goroutine of the run behind: its
// event delivery and its lease are stopped. Not parallel: goleak looks at
// every goroutine.
func TestPanicBeforeTheRunLeavesNoGoroutine(t *testing.T) {
	st := researchtest.Store(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the store's own are closed later
	rn := &research.Runner{Engine: offline.Engine{}, Store: st, OpenSources: func(context.Context, []string) ([]search.Source, error) {
		panic("the sources exploded")
	}}
	r, err := rn.Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	recovered := func() (v any) {
		defer func() { v = recover() }()
		_, _ = rn.Work(context.Background(), r.ID)
		return nil
	}()
	if recovered != "the sources exploded" {
		t.Fatalf("recovered %v", recovered)
	}
}

// cancelPanics is a store whose check for a cancel asked elsewhere panics
// once the research's search has begun (the runner's own check, before
// the run, passes).
type cancelPanics struct {
	store.Store
	searching <-chan struct{}
}

func (c cancelPanics) ResearchCancelRequested(ctx context.Context, id string) (bool, error) {
	select {
	case <-c.searching:
		panic("cancel check exploded")
	default:
	}
	return c.Store.ResearchCancelRequested(ctx, id)
}

// waitSource says when its first search begins, and answers once that
// search is cancelled.
type waitSource struct {
	once      *sync.Once
	searching chan struct{}
}

func (waitSource) Name() string { return "web" }
func (w waitSource) Search(ctx context.Context, _ string, _ int) ([]search.Result, error) {
	w.once.Do(func() { close(w.searching) })
	<-ctx.Done()
	return nil, context.Cause(ctx)
}

// TestLeaseWatchPanicFailsItsResearch: a panic in the goroutine that
// watches a running research's lease and cancel requests ends that
// research, with the panic's message, and not the process.
func TestLeaseWatchPanicFailsItsResearch(t *testing.T) {
	t.Parallel()
	src := waitSource{once: new(sync.Once), searching: make(chan struct{})}
	st := cancelPanics{researchtest.Store(t), src.searching}
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{src}, Store: st}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err == nil || r == nil || r.Status == research.StatusCompleted || !strings.Contains(err.Error()+r.Error, "cancel check exploded") {
		t.Fatalf("research ended %v: %v", r, err)
	}
}

// TestFailRecordsTheCause: Fail stores the research failed with the cause
// as its error, and reports no error once that is stored.
func TestFailRecordsTheCause(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	rn := &research.Runner{Engine: offline.Engine{}, Store: st}
	r, err := rn.Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := rn.Fail(context.Background(), r.ID, errors.New("every attempt failed"))
	if err != nil || got.Status != research.StatusFailed || got.Error != "every attempt failed" {
		t.Fatalf("Fail = %+v, %v", got, err)
	}
	stored, err := research.Load(context.Background(), st, r.ID)
	if err != nil || stored.Status != research.StatusFailed || stored.Error != "every attempt failed" {
		t.Fatalf("stored: %+v, %v", stored, err)
	}
}

// TestLoadGivenUpWithUnreadableState: a research its job queue gave up on
// because its state cannot be read reads as failed, saying why.
func TestLoadGivenUpWithUnreadableState(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	now := time.Now().UTC()
	if err := st.ResearchSave(context.Background(), store.Research{ID: "r-bad", Question: "What is alpha?", Status: research.StatusProcessing, CreatedAt: now, UpdatedAt: now, State: []byte("{not json")}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := research.Load(context.Background(), st, "r-bad"); err == nil {
		t.Fatal("an unreadable state read without an error before it was given up")
	}
	if err := st.ResearchGiveUp(context.Background(), "r-bad", now); err != nil {
		t.Fatal(err)
	}
	got, err := research.Load(context.Background(), st, "r-bad")
	if err != nil || got.Status != research.StatusFailed || got.Question != "What is alpha?" || !strings.Contains(got.Error, "cannot be read") {
		t.Fatalf("given up: %+v, %v", got, err)
	}
}

// TestWatchEndsWhenGivenUp: a watch already following a research that
// its job queue then gives up on (its status column alone set to failed,
// no event) returns, having delivered what was stored.
func TestWatchEndsWhenGivenUp(t *testing.T) {
	t.Parallel()
	st := researchtest.Store(t)
	ctx := context.Background()
	now := time.Now().UTC()
	ev := store.ResearchEvent{Seq: 1, Type: research.EventStatus, Data: []byte(`{"status":{"status":"processing"}}`), At: now}
	if err := st.ResearchSave(ctx, store.Research{ID: "r-stuck", Question: "What is alpha?", Status: research.StatusProcessing, CreatedAt: now, UpdatedAt: now, State: []byte("{not json")}, []store.ResearchEvent{ev}); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	got := make(chan int, 1)
	done := make(chan error, 1)
	following := make(chan struct{})
	go func() {
		n := 0
		done <- research.Watch(wctx, st, "r-stuck", research.WatchOptions{Poll: 10 * time.Millisecond}, func(store.ResearchEvent) error {
			if n++; n == 1 {
				close(following) // its status was read: it follows
			}
			return nil
		})
		got <- n
	}()
	<-following
	if err := st.ResearchGiveUp(ctx, "r-stuck", time.Now().UTC()); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("watch of a research given up: %v (it must return when the status says failed)", err)
	}
	if n := <-got; n != 1 {
		t.Errorf("%d events delivered, want the 1 stored", n)
	}
}
