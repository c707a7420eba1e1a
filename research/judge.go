package research

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/llm"
)

// Judge is the citation check's second opinion: a language model reads
// each cited passage with the source text it cites and says whether that
// text supports it. It catches what word overlap cannot: a negation, a
// swapped subject, a claim stronger than its source.
type Judge interface {
	Judge(ctx context.Context, items []JudgeItem) ([]Verdict, llm.Usage, error)
}

// JudgeItem is one cited passage and the evidence it cites: the source
// sentences that best match it, each prefixed with its source id.
type JudgeItem struct {
	ID       string
	Passage  string
	Evidence string
}

// Verdict is a judge's decision on one item.
type Verdict struct {
	ID        string `json:"id"`
	Supported bool   `json:"supported"`
	Reason    string `json:"reason"`
}

// JudgeBatch is how many passages one judge call reads.
const JudgeBatch = 12

// Evidence shown to a judge: the best-matching sentences of each cited
// source, within a size per source.
const (
	judgeSentences      = 2
	judgeCharsPerSource = 500
)

// judgeMethod is appended to the method of a judged check.
const judgeMethod = "; then a language model judge read each passage that passed and is not a source sentence quoted word for word, with the best-matching sentences of its cited sources"

// judgeChecks asks j about the passages the lexical check passed and moves
// those it rejects to Unsupported. Batches run while the budget allows
// (fits reports whether a call estimated at n tokens does); usage is
// reported per call through add. It returns how many passages needed a
// judge, how many of those went unjudged, and the first error.
func judgeChecks(ctx context.Context, j Judge, ck *Checks, passed []cited, fits func(n int) bool, add func(llm.Usage)) (needed, unjudged int, err error) {
	// A passage quoted word for word from a cited source needs no judge.
	var items []JudgeItem
	var of []int // index in passed of each item
	ev := sentenceCache{}
	for i, p := range passed {
		if quoted(p, ev) {
			continue
		}
		items = append(items, JudgeItem{ID: "P" + strconv.Itoa(len(items)+1), Passage: p.passage, Evidence: judgeEvidence(p, ev)})
		of = append(of, i)
	}
	var firstErr error
	for from := 0; from < len(items); from += JudgeBatch {
		batch := items[from:min(from+JudgeBatch, len(items))]
		if firstErr != nil || !fits(judgeEstimate(batch)) {
			unjudged += len(batch)
			continue
		}
		verdicts, usage, err := j.Judge(ctx, batch)
		add(usage)
		if err != nil {
			firstErr = err
			unjudged += len(batch)
			continue
		}
		got := map[string]Verdict{}
		for _, v := range verdicts {
			got[strings.TrimSpace(v.ID)] = v
		}
		for k, it := range batch {
			v, ok := got[it.ID]
			if !ok {
				unjudged++
				continue
			}
			ck.Judged++
			if v.Supported {
				continue
			}
			p := passed[of[from+k]]
			reason := "the judge found the cited text does not support it"
			if r := textseg.OneLine(v.Reason); r != "" {
				reason += ": " + clip(r, 300)
			}
			ck.Supported--
			ck.Unsupported = append(ck.Unsupported, Unsupported{Text: p.passage, Citations: p.nums, SourceIDs: p.ids, Reason: reason})
		}
	}
	ck.rate()
	return len(items), unjudged, firstErr
}

// judgeEstimate is a batch's tokens: its prompt and a short verdict each.
func judgeEstimate(items []JudgeItem) int {
	n := 400
	for _, it := range items {
		n += (len(it.Passage)+len(it.Evidence))/3 + 60
	}
	return n
}

// quoted reports a passage that is a whole sentence of one of its cited
// sources, word for word (case, white space and the final mark aside).
func quoted(p cited, cache sentenceCache) bool {
	want := trimEnd(textseg.OneLine(p.passage))
	for _, s := range p.sources {
		for _, js := range cache.of(s) {
			if strings.EqualFold(trimEnd(js.text), want) {
				return true
			}
		}
	}
	return false
}

func trimEnd(s string) string { return strings.TrimRight(s, ".!?;: ") }

// judgeEvidence picks, from each cited source, the sentences that share
// the most terms with the passage, in source order.
func judgeEvidence(p cited, cache sentenceCache) string {
	want := termSet(p.passage)
	var b strings.Builder
	for _, s := range p.sources {
		sents := cache.of(s)
		type hit struct{ i, score int }
		var hits []hit
		for i, js := range sents {
			if n := overlap(want, js.terms); n > 0 {
				hits = append(hits, hit{i, n})
			}
		}
		sort.SliceStable(hits, func(a, b int) bool { return hits[a].score > hits[b].score })
		hits = hits[:min(len(hits), judgeSentences)]
		sort.Slice(hits, func(a, b int) bool { return hits[a].i < hits[b].i })
		var parts []string
		size := 0
		for _, h := range hits {
			t := sents[h.i].text
			if size+len(t) > judgeCharsPerSource {
				t = clip(t, judgeCharsPerSource-size)
			}
			if t == "" {
				break
			}
			parts = append(parts, t)
			size += len(t)
		}
		if len(parts) == 0 {
			parts = []string{"(no sentence of this source shares a word with the passage)"}
		}
		fmt.Fprintf(&b, "[%s] %s\n", s.ID, strings.Join(parts, " … "))
	}
	return strings.TrimSpace(b.String())
}
