package research_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

// TestThreads: a research opens a thread; a follow-up in it is planned and
// written with the earlier answer as context; a closed thread refuses new
// questions and keeps its old ones; an active thread turns idle.
func TestThreads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := researchtest.Store(t)
	now := time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	fake := &llmtest.Fake{Reply: researchtest.ReplyBySchema(researchtest.Analysis1)}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st, Now: clock}
	first, err := rn.Start(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	if first.ThreadID == "" {
		t.Fatal("a research without --thread opens a thread")
	}
	calls := len(fake.Requests())
	now = now.Add(time.Minute)
	second, err := rn.Start(ctx, "And where is it used?", research.Options{Sources: []string{"web"}, Level: "quick", Thread: first.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	if second.ThreadID != first.ThreadID || len(second.History) != 1 || second.History[0].Question != "What is alpha?" || !strings.Contains(second.History[0].Answer, "Alpha is documented") {
		t.Fatalf("history: %+v", second.History)
	}
	if strings.Contains(second.History[0].Answer, "[1]") {
		t.Fatalf("the old report's citation numbers reached the context: %q", second.History[0].Answer)
	}
	var sawPlan, sawWrite bool
	for _, req := range fake.Requests()[calls:] {
		p := req.Messages[0].Content
		switch req.Schema.Name {
		case "research_plan":
			sawPlan = strings.Contains(p, "Q: What is alpha?") && strings.Contains(p, "A: Alpha is documented")
		case "research_report":
			sawWrite = strings.Contains(p, "Earlier in this conversation") && strings.Contains(p, "Q: What is alpha?")
		}
	}
	if !sawPlan || !sawWrite {
		t.Fatalf("context given to the planner %v, to the writer %v", sawPlan, sawWrite)
	}

	v, err := rn.Thread(ctx, first.ThreadID)
	if err != nil || v.Status != research.ThreadActive || len(v.Queries) != 2 || v.Queries[0].Question != "What is alpha?" || v.Queries[1].Answer == "" || v.Title != "What is alpha?" {
		t.Fatalf("thread view: %+v %v", v, err)
	}
	now = now.Add(11 * time.Minute)
	if ts, err := rn.Threads(ctx, 0); err != nil || len(ts) != 1 || ts[0].Status != research.ThreadIdle {
		t.Fatalf("after 11 minutes: %+v %v", ts, err)
	}
	if err := rn.CloseThread(ctx, first.ThreadID); err != nil {
		t.Fatal(err)
	}
	if _, err := rn.Create(ctx, "One more?", research.Options{Sources: []string{"web"}, Thread: first.ThreadID}); errcode.Of(err) != errcode.Conflict || errcode.Field(err) != "thread" || !strings.Contains(err.Error(), "closed") {
		t.Fatalf("question on a closed thread: %v", err)
	}
	if err := rn.CloseThread(ctx, first.ThreadID); errcode.Of(err) != errcode.Conflict {
		t.Fatalf("closing twice: %v", err)
	}
	if v, _ := rn.Thread(ctx, first.ThreadID); v.Status != research.ThreadClosed || len(v.Queries) != 2 {
		t.Fatalf("closed thread: %+v", v)
	}
	if _, err := rn.Create(ctx, "Hm?", research.Options{Sources: []string{"web"}, Thread: "no-such-thread"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown thread: %v", err)
	}
}

// TestOfflineFollowUp: the offline engine resolves a follow-up that names
// nothing with the names of the question before it.
func TestOfflineFollowUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := &researchtest.Source{SourceName: "web"}
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{src}, Store: researchtest.Store(t)}
	first, err := rn.Start(ctx, "Who was Giuseppe Verdi?", research.Options{Sources: []string{"web"}, Level: "quick"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := rn.Start(ctx, "When did he die?", research.Options{Sources: []string{"web"}, Level: "quick", Thread: first.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, sq := range second.SubQuestions {
		for _, q := range sq.Queries {
			found = found || strings.Contains(q, "Giuseppe Verdi")
		}
	}
	if !found {
		t.Fatalf("the follow-up's queries do not name Giuseppe Verdi: %+v", second.SubQuestions)
	}
	// The pronoun is read as the thread's subject, and the research says so.
	if second.Question != "When did Giuseppe Verdi die?" || !containsAny(second.Warnings, `asked as "When did he die?"`) {
		t.Fatalf("question %q, warnings %q", second.Question, second.Warnings)
	}
}

// TestPublicListsAreNeverNull: a research just created prints its lists
// as [] (clients iterate them without a null check).
func TestPublicListsAreNeverNull(t *testing.T) {
	t.Parallel()
	rn := &research.Runner{Engine: offline.Engine{}, Store: researchtest.Store(t)}
	r, err := rn.Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(research.Public(r))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "null") {
		t.Fatalf("null in %s", b)
	}
}
