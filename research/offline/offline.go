// Package offline is Quarry's offline research engine: honest extractive
// work with no language model. It plans from the question's named entities
// and keyword facets, learns the source sentences that best match the
// question, finds new directions in the names those sentences mention that
// the question does not (which is how it reaches the second hop of a
// multi-hop question), judges completeness by how much of the question the
// evidence covers, and writes a report stitched from quoted, cited source
// sentences. It never generates text of its own beyond headings and labels.
package offline

import (
	"context"
	"fmt"
	"strings"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research"
)

// Engine is the offline engine. The zero value is ready to use.
type Engine struct{}

var _ research.Engine = Engine{}

// Name implements research.Engine.
func (Engine) Name() string { return research.OfflineEngine }

// Plan implements research.Engine: the whole question first, then each
// named entity, then keyword facets, up to the effort's maximum.
func (Engine) Plan(_ context.Context, in research.PlanInput) (*research.PlanOutput, llm.Usage, error) {
	q := in.Question
	kws := keywords(q)
	ents := names(q)
	out := &research.PlanOutput{}
	var sqs []research.PlannedQuestion
	seen := map[string]bool{}
	add := func(text string, queries ...string) {
		k := strings.ToLower(strings.TrimSpace(text))
		if k == "" || seen[k] || len(sqs) >= in.Effort.MaxSub {
			return
		}
		seen[k] = true
		sqs = append(sqs, research.PlannedQuestion{Text: text, Priority: len(sqs) + 1, Queries: queries})
	}
	add(q, q)
	if len(ents) == 0 && len(in.History) > 0 {
		// A follow-up that names nothing ("when did he die?") is about
		// what the last question named: search it with those names.
		last := in.History[len(in.History)-1]
		for _, e := range names(last.Question) {
			add(q+" ("+e+")", e+" "+strings.Join(first(kws, 4), " "))
		}
	}
	covered := map[string]bool{}
	for _, e := range ents {
		rest := without(kws, e)
		queries := []string{e}
		if len(rest) > 0 {
			queries = append(queries, e+" "+strings.Join(first(rest, 3), " "))
		}
		add(e, queries...)
		for _, w := range keywords(e) {
			covered[w] = true
		}
	}
	var free []string
	for _, w := range kws {
		if !covered[w] {
			free = append(free, w)
		}
	}
	// Keyword facets: windows of three uncovered keywords, then pairs.
	for size := 3; size >= 2 && len(sqs) < in.Effort.MaxSub; size-- {
		for i := 0; i+size <= len(free) && len(sqs) < in.Effort.MaxSub; i += max(1, size-1) {
			f := strings.Join(free[i:i+size], " ")
			add(f, f)
		}
	}
	for _, w := range kws {
		if len(sqs) >= in.Effort.MinSub {
			break
		}
		add(w, w+" "+strings.Join(first(without(kws, w), 2), " "))
	}
	out.SubQuestions = sqs
	steps := make([]research.Step, len(sqs))
	for i, sq := range sqs {
		steps[i] = research.SearchStep(i+1, in.Sources, sq.Text, keywords(sq.Text))
	}
	out.Plan = research.Plan{
		Strategy: fmt.Sprintf("Offline extractive plan: search the whole question, then each named entity (%s), then keyword facets; follow names the evidence mentions that the question does not.",
			orNone(ents)),
		Keywords:         kws,
		Steps:            steps,
		EstimatedSeconds: 1 + len(sqs)/4,
	}
	return out, llm.Usage{}, nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none found"
	}
	return strings.Join(xs, "; ")
}

func first(xs []string, n int) []string { return xs[:min(n, len(xs))] }

// without returns kws minus the keywords of phrase.
func without(kws []string, phrase string) []string {
	drop := map[string]bool{}
	for _, w := range keywords(phrase) {
		drop[w] = true
	}
	var out []string
	for _, w := range kws {
		if !drop[w] {
			out = append(out, w)
		}
	}
	return out
}
