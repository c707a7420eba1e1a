package offline

import (
	"context"
	"math"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research"
)

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
// engine call: every sub-question's scorer reads the same sources. It
// reads the whole of a source (at most research.MaxContentChars): which
// of its sentences count is the scorers' choice, not their position.
type reader struct {
	cache map[string][]sent
}

func newReader() *reader { return &reader{cache: map[string][]sent{}} }

// sentences are a source's prose sentences (not its headings or lines
// of code: a comment in a listing is no sentence). A sentence's terms include
// those of the heading it sits under: under "gc.auto", "The default
// value is 6700." is about gc.auto.
func (rd *reader) sentences(src *research.Source) []sent {
	if ss, ok := rd.cache[src.ID]; ok {
		return ss
	}
	us := passage.Units(src.Content)
	var out []sent
	for _, u := range us {
		if u.Kind != passage.Sentence || !prose(u.Text) {
			continue
		}
		terms := termSet(u.Text)
		if u.Heading >= 0 {
			for t := range termSet(us[u.Heading].Text) {
				terms[t] = true
			}
		}
		out = append(out, sent{text: u.Text, terms: terms, words: len(strings.Fields(u.Text))})
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
			v += passage.Weights.SubQuestion
		}
	}
	return v / (1 + math.Log1p(float64(st.words)/passage.Weights.LongSentence))
}

// best returns the sentences of a source in descending score.
func (s scorer) best(rd *reader, src *research.Source) []scored {
	var out []scored
	for i, st := range rd.sentences(src) {
		sc := s.score(st)
		if i == 0 {
			sc += passage.Weights.Lead // a lead sentence says what the document is about
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
	rd := newReader()
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
	next := &leads{score: map[string]float64{}, parent: map[string]string{}}
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
			next.add(sents, rank, sq.ID, read, qKW)
		}
	}
	sort.SliceStable(learnings, func(i, j int) bool { return learnings[i].Score > learnings[j].Score })
	if len(learnings) > research.MaxLearnings {
		learnings = learnings[:research.MaxLearnings]
	}
	var dirs []research.Direction
	if !comparedRead(in.Question, read) {
		dirs = next.directions(in.MaxDirections, qKWs)
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

// comparedRead reports a comparison whose every side is the title of a
// source read ("Which composer was born first, Antonín Dvořák or
// Giuseppe Verdi?" once both are read): what it compares it names, so
// nothing it asks is one hop away, and the names its sources mention (a
// theatre named after one side) are not followed.
func comparedRead(question string, read map[string]bool) bool {
	sd := sides(question)
	if len(sd) == 0 || !comparative(question) {
		return false
	}
	for _, side := range sd {
		if !read[side] {
			return false
		}
	}
	return true
}

// leads are the names the best sentences of the sources mention that
// neither the question nor a source already read covers: the next hop,
// each scored by the sentences that name it and the rank of their source.
type leads struct {
	score  map[string]float64
	parent map[string]string // the sub-question whose sources named it
	order  []string
}

// add scores the names of a source's best three sentences; rank is the
// source's rank among the sub-question's.
func (l *leads) add(sents []scored, rank int, subQuestion string, read, qKW map[string]bool) {
	w := 1 / float64(1+rank)
	for _, s := range sents[:min(3, len(sents))] {
		for _, n := range names(s.text) {
			if read[strings.ToLower(n)] || coveredBy(n, qKW) || !entity(n, s.text) {
				continue
			}
			if _, ok := l.score[n]; !ok {
				l.order = append(l.order, n)
				l.parent[n] = subQuestion
			}
			// A one-word name ("University") is a weaker lead than a
			// full one ("University of Kansas").
			nw := w
			if !strings.Contains(n, " ") {
				nw /= 2
			}
			l.score[n] += nw * (s.score + passage.Weights.NameFloor)
		}
	}
}

// directions are the best leads, at most twice maxDirections (0: all),
// each searched alone and with the question's first two other keywords.
func (l *leads) directions(maxDirections int, qKWs []string) []research.Direction {
	sort.SliceStable(l.order, func(i, j int) bool { return l.score[l.order[i]] > l.score[l.order[j]] })
	var dirs []research.Direction
	for _, n := range l.order {
		if maxDirections > 0 && len(dirs) == maxDirections*2 {
			break
		}
		queries := []string{n}
		if rest := without(qKWs, n); len(rest) > 0 {
			queries = append(queries, n+" "+strings.Join(first(rest, 2), " "))
		}
		dirs = append(dirs, research.Direction{Text: n, ParentID: l.parent[n], Queries: queries, Score: round2(l.score[n])})
	}
	return dirs
}

// months start dates, which are not entities to follow.
var months = map[string]bool{"January": true, "February": true, "March": true, "April": true, "May": true, "June": true, "July": true, "August": true, "September": true, "October": true, "November": true, "December": true}

// entity reports whether a name found in a sentence is an entity worth a
// search of its own: not a date ("July 9 1944") and not a one-word
// adjective ("Czech composer", "American actress") — a capitalised word
// followed by a lower-case one qualifies a noun rather than naming
// something. Quoted titles always are.
func entity(name, sentence string) bool {
	ws := strings.Fields(name)
	if months[ws[0]] || textseg.Number(ws[0]) {
		return false
	}
	if len(ws) > 1 || strings.Contains(sentence, `"`+name+`"`) || strings.Contains(sentence, "“"+name+"”") {
		return true
	}
	for rest := sentence; ; {
		i := strings.Index(rest, name)
		if i < 0 {
			return true
		}
		rest = rest[i+len(name):]
		if r, _ := utf8.DecodeRuneInString(strings.TrimPrefix(rest, " ")); strings.HasPrefix(rest, " ") && unicode.IsLower(r) {
			return false
		}
	}
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
