package research_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/search"
)

// TestPlannerLimits: a model that proposes more sub-questions than the
// level allows, each with five queries, gets the level's number of
// sub-questions with two queries each — searched concurrently — and a
// warning for each cut.
func TestPlannerLimits(t *testing.T) {
	t.Parallel()
	var subs []string
	for i := range 8 {
		subs = append(subs, fmt.Sprintf(`{"text":"alpha part %d","priority":%d,"queries":["a%d one","a%d two","a%d three","a%d four","a%d five"]}`, i, i+1, i, i, i, i, i))
	}
	plan := `{"strategy":"s","sub_questions":[` + strings.Join(subs, ",") + `],"estimated_seconds":1}`
	fake := &llmtest.Fake{Reply: func(_ int, req llm.Request) (string, error) {
		switch req.Schema.Name {
		case "research_plan":
			return plan, nil
		case "research_analysis":
			return `{"learnings":[{"text":"Alpha is documented.","source_ids":["S1"]}],"directions":[],"is_complete":true,"confidence":0.9,"relevance":1,"quality":1}`, nil
		case "research_report":
			return `{"title":"Alpha","summary":"Alpha is documented [cite:S1].","sections":[]}`, nil
		case "citation_judge":
			return `{"verdicts":[]}`, nil
		}
		return "", fmt.Errorf("unexpected %s", req.Schema.Name)
	}}
	src := &researchtest.Source{SourceName: "web", Latency: 50 * time.Millisecond}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{src}, Store: researchtest.Store(t)}
	r, err := rn.Create(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	if err != nil {
		t.Fatal(err)
	}
	done, err := rn.Work(context.Background(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(done.SubQuestions) != 5 {
		t.Fatalf("%d sub-questions, the level allows 5", len(done.SubQuestions))
	}
	if n := src.Calls(); n != 5*research.MaxQueriesPerSub {
		t.Fatalf("%d searches, want %d (5 sub-questions × %d queries)", n, 5*research.MaxQueriesPerSub, research.MaxQueriesPerSub)
	}
	warned := strings.Join(done.Warnings, "\n")
	if !strings.Contains(warned, "proposed 8 sub-questions; the level allows 5") || !strings.Contains(warned, "more than 2 search queries") {
		t.Fatalf("warnings: %v", done.Warnings)
	}
}
