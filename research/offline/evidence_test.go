package offline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store/sqlite"
)

// TestModelWriterSeesEvidence: with a ranker, a model writes its report
// from the sources that bear on the question only, and is told to answer
// first; a page about something else never reaches its prompt.
func TestModelWriterSeesEvidence(t *testing.T) {
	t.Parallel()
	pages := planted{
		{URL: "https://a.example/verdi", Title: "Giuseppe Verdi", Content: "Giuseppe Verdi (9 October 1813 – 27 January 1901) was an Italian opera composer.", Credibility: 0.5, Kind: "web"},
		{URL: "https://b.example/dvorak", Title: "Antonín Dvořák", Content: "Antonín Dvořák (8 September 1841 – 1 May 1904) was a Czech composer.", Credibility: 0.5, Kind: "web"},
		{URL: "https://c.example/gaga", Title: "Lady Gaga", Content: "Lady Gaga is an American singer, songwriter and actress born in 1986.", Credibility: 0.5, Kind: "web"},
	}
	var mu sync.Mutex
	var prompt string
	fake := &llmtest.Fake{Reply: func(_ int, req llm.Request) (string, error) {
		switch req.Schema.Name {
		case "research_plan":
			return `{"strategy":"compare","sub_questions":[{"text":"Which composer was born first, Antonín Dvořák or Giuseppe Verdi?","priority":1,"queries":["Verdi Dvořák born"]}],"estimated_seconds":5}`, nil
		case "research_analysis":
			return `{"learnings":[{"text":"Verdi was born in 1813.","source_ids":["S1"]}],"directions":[],"is_complete":true,"confidence":0.9,"relevance":1,"quality":1}`, nil
		case "research_report":
			mu.Lock()
			prompt = req.Messages[len(req.Messages)-1].Content
			mu.Unlock()
			return `{"title":"Verdi","summary":"Giuseppe Verdi, born in 1813, was born before Antonín Dvořák, born in 1841 [cite:S1] [cite:S2].","sections":[]}`, nil
		case "citation_judge":
			return `{"verdicts":[]}`, nil
		}
		return "", fmt.Errorf("unexpected %s", req.Schema.Name)
	}}
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Ranker: offline.Engine{}, Sources: []search.Source{pages}, Store: st}
	r, err := rn.Start(context.Background(), "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?", research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(prompt, "Giuseppe Verdi (9 October 1813") || !strings.Contains(prompt, "Antonín Dvořák (8 September 1841") {
		t.Fatalf("the writer was not shown the evidence:\n%s", prompt)
	}
	if strings.Contains(prompt, "Lady Gaga") {
		t.Fatalf("the writer was shown a source about something else:\n%s", prompt)
	}
	if !strings.Contains(prompt, "opens with the answer") {
		t.Fatalf("the writer was not asked to answer first:\n%s", prompt)
	}
	if len(r.Report.References) != 2 {
		t.Fatalf("references %+v", r.Report.References)
	}
}
