package research_test

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
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

var refMark = regexp.MustCompile(`\[(\d+)\]`)

// TestAdversarialModelReplies: whatever a model answers each structured
// call with — the plan, the analyses, the report, the citation judge: odd
// citations, citation-like text, out-of-range numbers, prose, nothing — a
// research ends completed or failed, never by a panic, and its report
// cites only sources it read, each reference number one it lists.
func TestAdversarialModelReplies(t *testing.T) {
	st := researchtest.Store(t)
	for i, tc := range [][4]string{
		{researchtest.PlanJSON, researchtest.Analysis0, researchtest.ReportJSON, ""},
		{researchtest.PlanJSON, researchtest.Analysis1, `{"title":"T","summary":"x [cite:S1] [cite:F9] [cite:] [7] [0] [cite:S1\u0000]","sections":[{"heading":"[cite:S1]","body":"[cite:S1,S1,S2] [[cite:S3]] [cite:s1]"}]}`, `{"verdicts":[{"id":"P1","supported":false}]}`},
		{researchtest.PlanJSON, `{"learnings":[{"text":"[cite:S1] Alpha [2].","source_ids":["S1","S1",""]}],"directions":[{"text":"x","parent_id":"Q9","queries":["","x"]}],"is_complete":true,"confidence":-3}`, `{"title":"","summary":"","sections":[]}`, `[]`},
		{`{"sub_questions":[{"text":"","priority":-1,"queries":[]}]}`, `{"learnings":[{"text":"","source_ids":[]}],"confidence":7}`, researchtest.ProseNotJSON, "null"},
		{"", "", "", ""},
	} {
		if msg := researchWithReplies(st, tc); msg != "" {
			t.Fatalf("case %d: %s", i, msg)
		}
	}
}

// FuzzModelReplies is TestAdversarialModelReplies over any replies. Run it
// with a short -fuzzminimizetime (docs/development.md): almost every new
// input reaches new code in a research, and minimising each for the
// default minute leaves the fuzzer no time to fuzz.
func FuzzModelReplies(f *testing.F) {
	f.Add(researchtest.PlanJSON, researchtest.Analysis0, researchtest.ReportJSON, "")
	f.Add(researchtest.PlanJSON, researchtest.Analysis1, `{"title":"T","summary":"x [cite:S1] [7]","sections":[{"heading":"H","body":"[cite:S1,S2] [[cite:S3]]"}]}`, `{"verdicts":[{"id":"P1","supported":false}]}`)
	f.Add(`{"sub_questions":[{"text":"","priority":-1,"queries":[]}]}`, `{"learnings":[{"text":"","source_ids":[]}],"confidence":7}`, researchtest.ProseNotJSON, "null")
	st := researchtest.Store(f)
	f.Fuzz(func(t *testing.T, plan, analysis, report, judge string) {
		if msg := researchWithReplies(st, [4]string{plan, analysis, report, judge}); msg != "" {
			t.Fatal(msg)
		}
	})
}

// researchWithReplies runs a quick research whose model answers its plan,
// analysis, report and citation judge calls with replies (an empty judge
// reply: every citation supported) and says what is wrong with how it
// ended, or "".
func researchWithReplies(st store.Store, replies [4]string) string {
	plan, analysis, report, judge := replies[0], replies[1], replies[2], replies[3]
	fake := &llmtest.Fake{Model: "m", Reply: func(_ int, req llm.Request) (string, error) {
		switch req.Schema.Name {
		case "research_plan":
			return plan, nil
		case "research_analysis":
			return analysis, nil
		case "research_report":
			return report, nil
		case "citation_judge":
			if judge == "" {
				return researchtest.JudgeAll(req, nil), nil
			}
			return judge, nil
		}
		return "", fmt.Errorf("unexpected schema %s", req.Schema.Name)
	}}
	rn := &research.Runner{Engine: &research.LLMEngine{Provider: fake}, Fallback: offline.Engine{}, Sources: []search.Source{&researchtest.Source{SourceName: "web"}}, Store: st, Logger: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := rn.Start(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("ran past 10 s: %v", err)
	case r == nil:
		return fmt.Sprintf("no research: %v", err)
	case strings.Contains(r.Error, "panic"):
		return "the research panicked: " + r.Error
	case r.Status != research.StatusCompleted && r.Status != research.StatusFailed:
		return fmt.Sprintf("status %s: %v", r.Status, err)
	case r.Report == nil:
		return ""
	}
	read := map[string]bool{}
	for _, s := range r.Sources {
		read[s.ID] = true
	}
	for _, ref := range r.Report.References {
		if !read[ref.SourceID] {
			return fmt.Sprintf("reference %d cites %s, a source not read", ref.Number, ref.SourceID)
		}
	}
	body, _, _ := strings.Cut(r.Report.Markdown, "\n## References")
	for _, m := range refMark.FindAllStringSubmatch(body, -1) {
		if n, _ := strconv.Atoi(m[1]); n < 1 || n > len(r.Report.References) {
			return fmt.Sprintf("the report cites [%d] of %d references:\n%s", n, len(r.Report.References), r.Report.Markdown)
		}
	}
	return ""
}
