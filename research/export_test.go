package research

import (
	"context"

	"github.com/quarryhq/quarry/llm"
)

// CitedForTest is a passage the lexical check passed, citing one source.
type CitedForTest struct {
	Passage string
	Source  *Source
}

// JudgeChecksForTest runs judgeChecks on passages that all passed.
func JudgeChecksForTest(ctx context.Context, j Judge, passed []CitedForTest, fits func(int) bool) (Checks, int, int, error) {
	ck := Checks{CitedPassages: len(passed), Supported: len(passed), Unsupported: []Unsupported{}}
	cs := make([]cited, len(passed))
	for i, p := range passed {
		cs[i] = cited{passage: p.Passage, nums: []int{1}, ids: []string{p.Source.ID}, sources: []*Source{p.Source}}
	}
	needed, unjudged, err := judgeChecks(ctx, j, &ck, cs, fits, func(llm.Usage) {})
	return ck, needed, unjudged, err
}

// RenderCitations renders text's markers as a report does, with one
// source read (S1): written says a model wrote it.
func RenderCitations(written bool, text string) (string, int) {
	c := newCiter(map[string]*Source{"S1": {ID: "S1"}})
	c.written = written
	out := c.render(text)
	return out, c.dropped
}
