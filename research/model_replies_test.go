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
		plan, analysis, report, judge := tc[0], tc[1], tc[2], tc[3]
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
		if ctx.Err() != nil {
			t.Fatalf("case %d ran past 10 s: %v", i, err)
		}
		if r == nil {
			t.Fatalf("case %d: no research: %v", i, err)
		}
		if strings.Contains(r.Error, "panic") {
			t.Fatalf("case %d: the research panicked: %s", i, r.Error)
		}
		if r.Status != research.StatusCompleted && r.Status != research.StatusFailed {
			t.Fatalf("case %d: status %s: %v", i, r.Status, err)
		}
		if r.Report == nil {
			continue
		}
		read := map[string]bool{}
		for _, s := range r.Sources {
			read[s.ID] = true
		}
		for _, ref := range r.Report.References {
			if !read[ref.SourceID] {
				t.Fatalf("case %d: reference %d cites %s, a source not read", i, ref.Number, ref.SourceID)
			}
		}
		body, _, _ := strings.Cut(r.Report.Markdown, "\n## References")
		for _, m := range refMark.FindAllStringSubmatch(body, -1) {
			if n, _ := strconv.Atoi(m[1]); n < 1 || n > len(r.Report.References) {
				t.Fatalf("case %d: the report cites [%d] of %d references", i, n, len(r.Report.References))
			}
		}
	}
}
