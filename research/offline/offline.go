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
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research"
)

// Engine is the offline engine. The zero value is ready to use.
type Engine struct{}

var _ research.Engine = Engine{}

// Name implements research.Engine.
func (Engine) Name() string { return "offline" }

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
		steps[i] = research.Step{Number: i + 1, Description: fmt.Sprintf("Search %s for %q", strings.Join(in.Sources, ", "), sq.Text), Sources: in.Sources, Keywords: keywords(sq.Text)}
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

// scored is a source sentence with its relevance.
type scored struct {
	text     string
	terms    map[string]bool
	sourceID string
	score    float64
}

// scorer rates sentences against the question and a sub-question.
type scorer struct {
	q, sub map[string]bool
}

func newScorer(question, sub string) scorer {
	return scorer{q: termSet(question), sub: termSet(sub)}
}

// sent is a sentence of a source with its analysed terms.
type sent struct {
	text  string
	terms map[string]bool
	words int
}

// reader splits each source into sentences and analyses them once per
// engine call: every sub-question's scorer reads the same sources.
type reader struct {
	// chars is the CharsPerSource the runner budgets for a model reading
	// the source; reading costs the offline engine no tokens, so it reads
	// four times as many bytes. 0 = all.
	chars int
	cache map[string][]sent
}

func newReader(chars int) *reader { return &reader{chars: chars, cache: map[string][]sent{}} }

func (rd *reader) sentences(src *research.Source) []sent {
	if ss, ok := rd.cache[src.ID]; ok {
		return ss
	}
	text := src.Content
	if n := rd.chars * 4; rd.chars > 0 && len(text) > n {
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n]
	}
	var out []sent
	for _, t := range sentences(text) {
		out = append(out, sent{text: t, terms: termSet(t), words: len(strings.Fields(t))})
	}
	rd.cache[src.ID] = out
	return out
}

// score counts distinct question terms (1 each) and sub-question terms not
// in the question (0.5 each), damped for long sentences.
func (s scorer) score(st sent) float64 {
	var v float64
	for t := range st.terms {
		switch {
		case s.q[t]:
			v++
		case s.sub[t]:
			v += 0.5
		}
	}
	return v / (1 + math.Log1p(float64(st.words)/30))
}

// best returns the sentences of a source in descending score.
func (s scorer) best(rd *reader, src *research.Source) []scored {
	var out []scored
	for i, st := range rd.sentences(src) {
		sc := s.score(st)
		if i == 0 {
			sc += 0.25 // a lead sentence says what the document is about
		}
		out = append(out, scored{text: st.text, terms: st.terms, sourceID: src.ID, score: sc})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// Analyze implements research.Engine.
func (Engine) Analyze(_ context.Context, in research.AnalyzeInput) (*research.Analysis, llm.Usage, error) {
	qTerms := termSet(in.Question)
	qKWs := keywords(in.Question)
	qKW := map[string]bool{}
	for _, w := range qKWs {
		qKW[w] = true
	}
	rd := newReader(in.CharsPerSource)
	read := map[string]bool{}
	for _, s := range in.Sources {
		t := strings.ToLower(s.Title)
		read[t] = true
		// "Leviathan (2014 film)" has been read as "Leviathan" too.
		if i := strings.Index(t, " ("); i > 0 {
			read[t[:i]] = true
		}
	}
	covered := map[string]bool{}
	var learnings []research.Learning
	dirScore := map[string]float64{}
	dirParent := map[string]string{}
	var order []string
	used, total := 0, 0
	var cred float64
	for _, sq := range in.SubQuestions {
		sc := newScorer(in.Question, sq.Text)
		for rank, id := range sq.SourceIDs {
			src := in.Sources[id]
			if src == nil {
				continue
			}
			total++
			sents := sc.best(rd, src)
			if len(sents) == 0 || sents[0].score <= 0 {
				continue
			}
			used++
			cred += src.Credibility
			top := sents[0]
			learnings = append(learnings, research.Learning{Text: top.text, SourceIDs: []string{id}, SubQuestionID: sq.ID, Score: round2(top.score)})
			for t := range top.terms {
				if qTerms[t] {
					covered[t] = true
				}
			}
			// Names the best sentences mention that neither the question
			// nor a source already read covers are the next hop.
			w := 1 / float64(1+rank)
			for _, s := range sents[:min(3, len(sents))] {
				for _, n := range names(s.text) {
					if read[strings.ToLower(n)] || coveredBy(n, qKW) {
						continue
					}
					if _, ok := dirScore[n]; !ok {
						order = append(order, n)
						dirParent[n] = sq.ID
					}
					// A one-word name ("University") is a weaker lead
					// than a full one ("University of Kansas").
					nw := w
					if !strings.Contains(n, " ") {
						nw /= 2
					}
					dirScore[n] += nw * (s.score + 0.1)
				}
			}
		}
	}
	sort.SliceStable(learnings, func(i, j int) bool { return learnings[i].Score > learnings[j].Score })
	if len(learnings) > research.MaxLearnings {
		learnings = learnings[:research.MaxLearnings]
	}
	sort.SliceStable(order, func(i, j int) bool { return dirScore[order[i]] > dirScore[order[j]] })
	var dirs []research.Direction
	for _, n := range order {
		if in.MaxDirections > 0 && len(dirs) == in.MaxDirections*2 {
			break
		}
		queries := []string{n}
		if rest := without(qKWs, n); len(rest) > 0 {
			queries = append(queries, n+" "+strings.Join(first(rest, 2), " "))
		}
		dirs = append(dirs, research.Direction{Text: n, ParentID: dirParent[n], Queries: queries, Score: round2(dirScore[n])})
	}
	a := &research.Analysis{Learnings: learnings, Directions: dirs}
	if len(qTerms) > 0 {
		a.Confidence = round2(float64(len(covered)) / float64(len(qTerms)))
	}
	// Complete when the evidence covers the whole question and names
	// nothing it has not read: otherwise the answer may be one hop away.
	a.IsComplete = a.Confidence >= 0.999 && len(dirs) == 0
	if total > 0 {
		a.Relevance = round2(float64(used) / float64(total))
	}
	if used > 0 {
		a.Quality = round2(cred / float64(used))
	}
	return a, llm.Usage{}, nil
}

// coveredBy reports whether every keyword of a name is a question keyword.
func coveredBy(name string, qKW map[string]bool) bool {
	kws := keywords(name)
	if len(kws) == 0 {
		return true
	}
	for _, w := range kws {
		if !qKW[w] {
			return false
		}
	}
	return true
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// Write implements research.Engine: an executive summary of the sentences
// that best match the question across all sources, then one section per
// sub-question quoting the best sentence of each of its sources. Every
// sentence is quoted verbatim and cites its source.
func (Engine) Write(_ context.Context, in research.WriteInput) (*research.Draft, llm.Usage, error) {
	d := &research.Draft{Title: in.Question}
	rd := newReader(in.CharsPerSource)
	used := map[string]bool{}
	// A quoted sentence that is one of the facts cites the fact.
	factIDs := map[string]string{}
	for _, f := range in.Facts {
		factIDs[f.SourceID+"\x00"+f.Text] = f.ID
	}
	cite := func(s scored) string {
		if id, ok := factIDs[s.sourceID+"\x00"+s.text]; ok {
			return s.text + " [cite:" + id + "]"
		}
		return s.text + " [cite:" + s.sourceID + "]"
	}
	// Summary: the best sentence of the best sources for the question.
	sc := newScorer(in.Question, "")
	var cands []scored
	for _, sq := range in.SubQuestions {
		for _, id := range sq.SourceIDs {
			if src := in.Sources[id]; src != nil {
				if b := sc.best(rd, src); len(b) > 0 {
					cands = append(cands, b[0])
				}
			}
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	var summary []string
	seenSrc := map[string]bool{}
	for _, c := range cands {
		if len(summary) == 5 {
			break
		}
		if c.score <= 0 || used[c.text] || seenSrc[c.sourceID] {
			continue
		}
		used[c.text], seenSrc[c.sourceID] = true, true
		summary = append(summary, cite(c))
	}
	if len(summary) == 0 {
		d.Summary = "The sources searched returned nothing that matches the question."
	} else {
		d.Summary = strings.Join(summary, " ")
	}
	for _, sq := range ordered(in.SubQuestions) {
		sc := newScorer(in.Question, sq.Text)
		var lines []string
		for _, id := range sq.SourceIDs {
			src := in.Sources[id]
			if src == nil {
				continue
			}
			for _, s := range sc.best(rd, src) {
				if s.score <= 0 {
					break
				}
				if !used[s.text] {
					used[s.text] = true
					lines = append(lines, cite(s))
					break
				}
			}
		}
		if len(lines) == 0 {
			continue
		}
		heading := sq.Text
		if sq.ParentID != "" {
			heading = "Follow-up: " + sq.Text
		}
		d.Sections = append(d.Sections, research.Section{Heading: heading, Body: strings.Join(lines, " ")})
	}
	return d, llm.Usage{}, nil
}

// ordered lists root sub-questions by priority, each followed by its
// descendants.
func ordered(sqs []research.SubQuestion) []research.SubQuestion {
	children := map[string][]research.SubQuestion{}
	var roots []research.SubQuestion
	for _, sq := range sqs {
		if sq.ParentID == "" {
			roots = append(roots, sq)
		} else {
			children[sq.ParentID] = append(children[sq.ParentID], sq)
		}
	}
	sort.SliceStable(roots, func(i, j int) bool { return roots[i].Priority < roots[j].Priority })
	var out []research.SubQuestion
	var walk func(sq research.SubQuestion)
	walk = func(sq research.SubQuestion) {
		out = append(out, sq)
		for _, c := range children[sq.ID] {
			walk(c)
		}
	}
	for _, r := range roots {
		walk(r)
	}
	return out
}
