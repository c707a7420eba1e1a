package research_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/research/researchtest"
	"github.com/quarryhq/quarry/research/verify"
	"github.com/quarryhq/quarry/search"
)

func hasWarning(r *research.Research, part string) bool {
	for _, w := range r.Warnings {
		if strings.Contains(w, part) {
			return true
		}
	}
	return false
}

// A negation keeps every word of its source, so the lexical check passes
// it; the judge reads it against the source sentence and catches it.
func TestCitationJudgeCatchesWhatWordsMiss(t *testing.T) {
	t.Parallel()
	// The third passage is a sentence of S1 word for word: no judge needed.
	report := `{"title":"Alpha","summary":"Alpha uses are documented here [cite:S1]. Alpha uses are not documented anywhere [cite:S1]. Alpha uses is documented here [cite:S1].","sections":[]}`
	fake := &llmtest.Fake{Model: "m", Reply: func(_ int, req llm.Request) (string, error) {
		switch req.Schema.Name {
		case "research_report":
			return report, nil
		case "citation_judge":
			return researchtest.JudgeAll(req, func(p string) bool { return strings.Contains(p, " not ") }), nil
		}
		return researchtest.ReplyBySchema(researchtest.Analysis1)(0, req)
	}}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	if err != nil {
		t.Fatal(err)
	}
	ck := r.Checks
	if ck.CitedPassages != 3 || ck.Supported != 2 || ck.Judged != 2 || len(ck.Unsupported) != 1 {
		t.Fatalf("checks %+v", ck)
	}
	u := ck.Unsupported[0]
	if u.Text != "Alpha uses are not documented anywhere" || !strings.Contains(u.Reason, "judge") || !strings.Contains(u.Reason, "opposite") || u.SourceIDs[0] != "S1" {
		t.Fatalf("unsupported %+v", u)
	}
	if !hasWarning(r, "citation check: 1 of 3") {
		t.Fatalf("warnings %v", r.Warnings)
	}
	// The judge read each passage with its source's best sentences.
	var prompt string
	for _, req := range fake.Requests() {
		if req.Schema.Name == "citation_judge" {
			prompt = req.Messages[0].Content
		}
	}
	for _, want := range []string{"Passage P1: Alpha uses are documented here\nEvidence:\n[S1] alpha uses is documented here.", "Passage P2: Alpha uses are not documented anywhere\n"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("judge prompt lacks %q:\n%s", want, prompt)
		}
	}
	if r.Usage.Stages["checking"].Calls != 1 {
		t.Fatalf("usage %+v", r.Usage.Stages)
	}
}

// A judge that cannot answer leaves the lexical verdicts, and says so.
func TestCitationJudgeFailureKeepsLexicalCheck(t *testing.T) {
	t.Parallel()
	fake := &llmtest.Fake{Model: "m", Reply: func(_ int, req llm.Request) (string, error) {
		if req.Schema.Name == "citation_judge" {
			return researchtest.ProseNotJSON, nil
		}
		return researchtest.ReplyBySchema(researchtest.Analysis1)(0, req)
	}}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	if err != nil {
		t.Fatal(err)
	}
	if ck := r.Checks; ck.Judge != "" || ck.Judged != 0 || ck.Method != research.CheckMethod || ck.Supported != 3 || ck.CitedPassages != 4 {
		t.Fatalf("checks %+v", ck)
	}
	if !hasWarning(r, "citation judge fake:m failed") || !hasWarning(r, "3 of 3 passages were checked lexically only") {
		t.Fatalf("warnings %v", r.Warnings)
	}
}

var promptSource = regexp.MustCompile(`(?m)^\[(S\d+)\] [^\n]*\n([^\n]*)$`)

// On the LLM path facts come from the analysis' structured output: quotes
// found in their source become facts on the model's topics; a quote that
// is not there is rejected, and said to be.
func TestModelFacts(t *testing.T) {
	t.Parallel()
	analysis := func(req llm.Request) string {
		type fact struct {
			SourceID string `json:"source_id"`
			Quote    string `json:"quote"`
			Topic    string `json:"topic"`
			Value    string `json:"value"`
		}
		var facts []fact
		for i, m := range promptSource.FindAllStringSubmatch(req.Messages[0].Content, -1) {
			// "<q> is documented here. Fact 1 about <q>: the value is 41."
			sent := m[2][strings.Index(m[2], "Fact "):]
			facts = append(facts, fact{SourceID: m[1], Quote: sent, Topic: "the value", Value: sent[len(sent)-3 : len(sent)-1]})
			if i == 0 {
				facts = append(facts, fact{SourceID: m[1], Quote: "The value is 99.", Topic: "the value", Value: "99"})
			}
		}
		out, _ := json.Marshal(map[string]any{"learnings": []any{}, "directions": []any{}, "is_complete": true, "confidence": 0.9, "relevance": 0.9, "quality": 0.5, "facts": facts})
		return string(out)
	}
	fake := &llmtest.Fake{Model: "m", Reply: func(_ int, req llm.Request) (string, error) {
		if req.Schema.Name == "research_analysis" {
			return analysis(req), nil
		}
		return researchtest.ReplyBySchema(researchtest.Analysis1)(0, req)
	}}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: researchtest.Store(t)}
	r, err := rn.Start(context.Background(), "What is alpha?", research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Sources) != 4 || len(r.Facts) != 4 {
		t.Fatalf("%d sources, facts %+v", len(r.Sources), r.Facts)
	}
	for _, f := range r.Facts {
		src := r.Sources[0]
		for _, s := range r.Sources {
			if s.ID == f.SourceID {
				src = s
			}
		}
		if f.Method != verify.MethodModel || f.Section != "the value" || src.Content[f.Start:f.End] != f.Text || !strings.HasPrefix(f.Text, "Fact ") {
			t.Fatalf("fact %+v", f)
		}
	}
	if len(r.RejectedClaims) != 1 || r.RejectedClaims[0].Text != "The value is 99." || !hasWarning(r, "1 of 5 facts the model reported were rejected") {
		t.Fatalf("rejected %+v, warnings %v", r.RejectedClaims, r.Warnings)
	}
	// Two sources say 40 and two say 41 on the model's topic.
	if len(r.Discrepancies) != 1 || r.Discrepancies[0].Strategy != verify.Uncertainty || len(r.Discrepancies[0].FactIDs) != 4 || !strings.HasPrefix(r.Discrepancies[0].Topic, "the value") {
		t.Fatalf("discrepancies %+v", r.Discrepancies)
	}
	if !strings.Contains(r.Report.Markdown, "## Conflicting evidence") {
		t.Fatalf("report:\n%s", r.Report.Markdown)
	}
}

// The judge's verdicts land on the right passages; a missing verdict and a
// batch the budget cannot pay for keep the lexical result and are counted.
func TestJudgeBatchesBudgetAndMissingVerdicts(t *testing.T) {
	t.Parallel()
	src := research.Source{ID: "S1", Content: "The tower is tall. It was built in 1889. It is made of iron."}
	var passed []research.CitedForTest
	for i := range 30 {
		passed = append(passed, research.CitedForTest{Passage: fmt.Sprintf("claim number %d about the tower", i), Source: &src})
	}
	j := &scriptedJudge{}
	calls := 0
	fits := func(int) bool { calls++; return calls <= 2 } // the third batch does not fit
	ck, needed, unjudged, err := research.JudgeChecksForTest(context.Background(), j, passed, fits)
	if err != nil {
		t.Fatal(err)
	}
	// Batch 1 (P1–P12): P5 unsupported. Batch 2 (P13–P24): P13's verdict
	// missing. Batch 3 (P25–P30): over budget.
	if needed != 30 || unjudged != 1+6 || ck.Judged != 23 || ck.Supported != 29 || len(ck.Unsupported) != 1 || ck.Unsupported[0].Text != "claim number 4 about the tower" {
		t.Fatalf("needed %d unjudged %d checks %+v", needed, unjudged, ck)
	}
	if len(j.batches) != 2 || len(j.batches[0]) != research.JudgeBatch || j.batches[1][0].ID != "P13" {
		t.Fatalf("batches %+v", j.batches)
	}
}

type scriptedJudge struct{ batches [][]research.JudgeItem }

func (s *scriptedJudge) Judge(_ context.Context, items []research.JudgeItem) ([]research.Verdict, llm.Usage, error) {
	s.batches = append(s.batches, items)
	var out []research.Verdict
	for _, it := range items {
		switch it.ID {
		case "P13":
			continue
		case "P5":
			out = append(out, research.Verdict{ID: it.ID, Supported: false, Reason: "no"})
		default:
			out = append(out, research.Verdict{ID: it.ID, Supported: true})
		}
	}
	return out, llm.Usage{Calls: 1}, nil
}
