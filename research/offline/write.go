package offline

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research"
)

// Write implements research.Engine: an executive summary that opens with
// what answers the question — the best sentences of the pair of sources
// that answer it together, or for a comparison each side quoted beside
// the other — then the sentences that best match the question across the
// sources chosen as evidence; then one section per sub-question whose
// sources are among them. Only the sources evidence selection chose
// (evidence.go) are cited, and the page whose answer window opens the
// summary (answerWindow). Every sentence is quoted verbatim and cites its
// source (or the fact it is); headings and the labels of a comparison are
// the only words of the engine's own.
func (Engine) Write(_ context.Context, in research.WriteInput) (*research.Draft, llm.Usage, error) {
	w := &writer{in: in, rd: newReader(), used: quoted{}, factIDs: map[string]string{}, lang: analyze.Language(in.Question)}
	for _, f := range in.Facts {
		w.factIDs[f.SourceID+"\x00"+f.Text] = f.ID
	}
	sqs := research.OrderedSubQuestions(in.SubQuestions)
	read := research.ReadOrder(sqs, in.Sources)
	w.ev, w.read = newEvidence(in.Question, read, in.Sources), read
	w.qf, w.kind = w.ev.unscoped(w.ev.focus), answerType(in.Question)
	w.all = w.ev.order
	if in.Evidence != nil {
		// The runner's choice (the same ranking) stands.
		w.all = in.Evidence
	}
	w.chosen = map[string]bool{}
	for _, id := range w.all {
		w.chosen[id] = true
	}
	d := &research.Draft{Title: in.Question}
	if len(w.ev.missing) > 0 && len(w.all) == 0 {
		d.Summary = say(w.lang, msgNoneMentions, len(read), strings.Join(w.ev.missing, ", "))
		return d, llm.Usage{}, nil
	}
	if refusal := answerable(w.lang, in.Question, read, in.Sources); refusal != "" {
		// Nothing read answers: the summary says so and cites nothing;
		// the sections quote what the sources say near the question.
		d.Summary = refusal
	} else if d.Summary = w.inLanguage(); d.Summary == "" {
		d.Summary = say(w.lang, msgNothingMatches)
	}
	// A keyword facet of the question ("page size SQLite") is a way to
	// search, not a topic a reader would head a section with ("page size
	// does SQLite use"), and the question heads the report already: what
	// their sources say is quoted under the page it comes from, each page
	// where the section that first quoted it would stand, so the pages
	// are cited in the order they were (bySource). The names the question
	// gives and the follow-ups keep sections of their own, as does a
	// comparison answered from its two sides (its pages alone: section).
	// A follow-up on a word that is no name (asWritten) was a search too.
	var pooled []placed
	for _, sq := range sqs {
		p := w.section(sq)
		if p == nil {
			continue
		}
		heading := sq.Text
		switch {
		case sq.ParentID != "":
			name, named := w.asWritten(sq)
			if named {
				heading = say(w.lang, msgFollowUp) + name
				break
			}
			// Followed, but no name: a search, as a facet is.
			fallthrough
		case sq.Text == in.Question && w.derived == nil, sq.Text != in.Question && sq.Text == strings.Join(keywords(sq.Text), " "):
			for _, s := range p.said {
				pooled = append(pooled, placed{at: len(d.Sections), s: s})
			}
			continue
		default:
			heading = nameHeading(in.Question, heading)
		}
		d.Sections = append(d.Sections, research.Section{Heading: heading, Body: strings.Join(p.lines, " ")})
	}
	if len(pooled) > 0 {
		var out []research.Section
		pages := w.bySource(pooled)
		for i := 0; i <= len(d.Sections); i++ {
			for len(pages) > 0 && pages[0].at == i {
				out = append(out, pages[0].Section)
				pages = pages[1:]
			}
			if i < len(d.Sections) {
				out = append(out, d.Sections[i])
			}
		}
		d.Sections = out
	}
	return d, llm.Usage{}, nil
}

// nameHeading is a name the question gives as the question writes it,
// searched as its words: "ECONNREFUSED ::1" for "ECONNREFUSED 1". Not
// where the marks between its words part them ("INSERT, UPDATE", a
// label's "Warning: Possible …") or open what they do not close
// ("Rc<Mutex").
func nameHeading(question, name string) string {
	written := passage.AsWritten(question, name)
	if strings.ContainsAny(written, ",;<>()[]{}\"'“”‘’") || strings.Contains(written, ": ") {
		return name
	}
	return written
}

// firstRead is how many of the sources read first answerable reads
// again for the value a question asks for: as many as one search keeps
// (research.ResultsPerSearch, and as many as the chunks ask reads), the
// pages the question's own search ranked first when it found as many
// (the offline plan searches the question as asked first), else with
// the first of a facet's.
const firstRead = research.ResultsPerSearch

// answerable returns a refusal when the sources read do not answer the
// question: none of the passage.MaxQuoted windows that answer best
// (passage.Find) gives the value it asks for (a date, a release, an
// amount: passage.ValueMissing), in all the sources or in the first
// firstRead, or the best holds less of it than passage.Weights.Answered,
// or what the question names is in none of them. Empty when they answer.
func answerable(lang, question string, ids []string, sources map[string]*research.Source) string {
	_, docs := sourceDocs(ids, sources, nil)
	if len(docs) == 0 {
		return ""
	}
	// The value asked for stands in one of the windows an answer quotes
	// (passage.MaxQuoted), not further down: a best window that lacks
	// it is not proof that none gives it, but a value only the tenth
	// gives is another thing's (an API's deprecation, for when Node.js
	// 18 reaches its end of life; dev sets, five chunk sizes: refused
	// 0.498 -> 0.512 at three windows, 0.505 at five, against ten).
	found, missing := passage.Find(question, docs, passage.MaxQuoted)
	if v := passage.ValueMissing(question, found); v != passage.NoValue {
		return say(lang, msgNoValue, len(docs), say(lang, valueName(v))) + say(lang, msgNothingCited)
	}
	// Nor is a value that only the sources read for the question's
	// facets give, where the best windows of the first sources read give
	// none: a date of Python 3.0's release, for when 3.11.0 came out (dev
	// sets, five chunk sizes: unanswerable questions refused 0.512 ->
	// 0.557, no answer lost). First sources that hold no word of the
	// question have no window, and refuse nothing here.
	if len(docs) > firstRead && !passage.Ablate["firstread"] {
		first, _ := passage.Find(question, docs[:firstRead], passage.MaxQuoted)
		if v := passage.ValueMissing(question, first); v != passage.NoValue {
			return say(lang, msgNoValueFirst, firstRead, say(lang, valueName(v))) + say(lang, msgNothingCited)
		}
	}
	conf := passage.Coverage(question, found, missing)
	if conf >= passage.Weights.Answered {
		return ""
	}
	msg := say(lang, msgNotAnswered, len(docs), conf*100)
	if len(missing) > 0 {
		msg += say(lang, msgNoneNames, strings.Join(missing, ", "))
	}
	return msg + say(lang, msgNothingCited)
}

// The engine's own words in a report, in English and, for a question
// asked in Korean, in Korean (as ask answers).
const (
	msgNoneMentions = iota
	msgNotAnswered
	msgNoneNames
	msgNothingCited
	msgNothingMatches
	msgFollowUp
	msgClosest
	msgNoValue
	msgNoValueFirst
	msgDate
	msgRelease
	msgAmount
)

// valueName is the message that names the value a question asks for
// that no passage gives.
func valueName(v passage.Value) int {
	switch v {
	case passage.DateValue:
		return msgDate
	case passage.ReleaseValue:
		return msgRelease
	}
	return msgAmount
}

var messages = map[string][]string{
	"en": {
		msgNoneMentions:   "None of the %d sources read mentions %s, so none of them answers the question; nothing is cited.",
		msgNotAnswered:    "The %d sources read do not answer the question: the passage that comes closest holds %.0f%% of what it asks",
		msgNoneNames:      ", and none of them names %s",
		msgNothingCited:   ". Nothing is cited as an answer; the sections below quote what the sources say near it.",
		msgNothingMatches: "The sources searched returned nothing that matches the question.",
		msgFollowUp:       "Follow-up: ",
		msgClosest:        "The sources read do not fully answer the question; the closest evidence found:",
		msgNoValue:        "The %d sources read do not answer the question: none of the passages that come closest gives %s",
		msgNoValueFirst:   "The sources read do not answer the question: none of the passages that come closest in the first %d sources read gives %s",
		msgDate:           "a date",
		msgRelease:        "a release or a year",
		msgAmount:         "an amount",
	},
	"ko": {
		msgNoneMentions:   "읽은 출처 %d개 중 어느 것도 %s을(를) 언급하지 않으므로 질문에 답하는 출처가 없으며, 인용한 것도 없습니다.",
		msgNotAnswered:    "읽은 출처 %d개는 질문에 답하지 않습니다: 가장 가까운 구절도 질문이 묻는 것의 %.0f%%만 담고 있습니다",
		msgNoneNames:      ", 어느 출처도 %s을(를) 언급하지 않습니다",
		msgNothingCited:   ". 답으로 인용한 것은 없으며, 아래 절에서는 출처들이 질문과 가까운 곳에서 말하는 내용을 인용합니다.",
		msgNothingMatches: "검색한 출처에서 질문과 맞는 내용을 찾지 못했습니다.",
		msgFollowUp:       "후속 질문: ",
		msgClosest:        "읽은 출처들은 질문에 온전히 답하지 않으며, 가장 가까운 근거는 다음과 같습니다:",
		msgNoValue:        "읽은 출처 %d개는 질문에 답하지 않습니다: 가장 가까운 구절들도 %s 말하지 않습니다",
		msgNoValueFirst:   "읽은 출처들은 질문에 답하지 않습니다: 처음 읽은 출처 %d개의 가장 가까운 구절들도 %s 말하지 않습니다",
		msgDate:           "날짜를",
		msgRelease:        "버전이나 연도를",
		msgAmount:         "수나 양을",
	},
}

// say formats the engine's message m in lang (English when there is no
// translation).
func say(lang string, m int, args ...any) string {
	tr, ok := messages[lang]
	if !ok {
		tr = messages["en"]
	}
	if len(args) == 0 {
		return tr[m]
	}
	return fmt.Sprintf(tr[m], args...)
}

// writer assembles the offline report; used keeps a sentence from being
// quoted twice, whichever source it is read from.
type writer struct {
	in      research.WriteInput
	rd      *reader
	all     []string
	read    []string // the sources in the order they were read
	used    quoted
	factIDs map[string]string
	// qf is what the question is about (focus); kind is the kind of
	// answer it asks for (answerType).
	qf   map[string]bool
	kind int
	// ev ranks the sources read; chosen are those the report may cite.
	ev     *evidence
	chosen map[string]bool
	// derived holds the two sources of a derived comparison sentence
	// (the answer, computed), when the opening has one.
	derived map[string]bool
	// lang is the question's language; written, while the summary is
	// written for a question in a script of its own, accepts only the
	// sentences written in it (inScript).
	lang    string
	written func(string) bool
	// lower is the words the sources read write in lower case
	// (lowerCased), read when first asked.
	lower map[string]bool
}

// cite quotes a sentence with its marker: the fact it is, or its source.
func (w *writer) cite(s scored) string {
	if id, ok := w.factIDs[s.sourceID+"\x00"+s.text]; ok {
		return s.text + " [cite:" + id + "]"
	}
	return s.text + " [cite:" + s.sourceID + "]"
}

// quotes collects quoted sentences up to a word target and cap.
type quotes struct {
	lines []string
	said  []scored // what add quoted, in order
	words int
	// further is how many of words the opening's further windows
	// quote (furtherWindows): they answer beside the best, and leave the
	// rest of the summary its length.
	further int
	sources map[string]bool
	last    string // the source of the last line
}

// add quotes s unless it was quoted, would pass max words or is not in
// the summary's script. A sentence that points back with a pronoun ("It
// is based on …") at what its source said before is labelled with its
// source's title when the line before it is another source's: a reader
// would take the pronoun for that line's subject.
func (p *quotes) add(w *writer, s scored, max int) bool {
	n := len(strings.Fields(s.text))
	if w.used.has(s.text) || len(p.lines) > 0 && p.words+n > max || w.foreign(s.text) {
		return false
	}
	w.used.mark(s.text)
	line := w.cite(s)
	if src := w.in.Sources[s.sourceID]; src != nil && p.last != s.sourceID && textseg.PointsBack(s.text) {
		if t := strings.TrimSpace(src.Title); t != "" {
			line = t + ": " + line
		}
	}
	p.lines = append(p.lines, line)
	p.said = append(p.said, s)
	p.words += n
	p.sources[s.sourceID] = true
	p.last = s.sourceID
	return true
}

// ranked is every source's relevant sentences, best first, by a scorer;
// keep filters them (nil keeps all that score above zero).
func (w *writer) ranked(sc scorer, ids []string, keep func(scored) bool) [][]scored {
	var out [][]scored
	for _, id := range ids {
		var ss []scored
		for _, s := range sc.best(w.rd, w.in.Sources[id]) {
			if s.score > 0 && (keep == nil || keep(s)) {
				ss = append(ss, s)
			}
		}
		if len(ss) > 0 {
			out = append(out, ss)
		}
	}
	return out
}

// fill quotes the k-th sentence of each source in turn (k = 0, 1, …),
// best source first, until the quotes reach min words (and minSources
// sources), never beyond max. A sentence beyond a source's first must
// score within passage.Weights.Relevant of the best, and leave reserve sentences of
// its source unquoted.
func (w *writer) fill(p *quotes, ranked [][]scored, minWords, maxWords, minSources, reserve int, top float64, inOrder bool) {
	for k := 0; ; k++ {
		var round []scored
		for _, ss := range ranked {
			if k < len(ss) && (k == 0 || k < len(ss)-reserve && ss[k].score >= passage.Weights.Relevant*top) {
				round = append(round, ss[k])
			}
		}
		if len(round) == 0 {
			return
		}
		if !inOrder {
			sort.SliceStable(round, func(i, j int) bool { return round[i].score > round[j].score })
		}
		for _, s := range round {
			if p.words >= minWords && len(p.sources) >= minSources {
				return
			}
			p.add(w, s, maxWords)
		}
	}
}

// focus is what a text is about: the terms of the names it mentions, or
// all its terms when it names nothing.
func focus(text string) map[string]bool {
	m := map[string]bool{}
	for _, n := range names(text) {
		analyze.TermsFunc(n, func(t string) { m[t] = true })
	}
	if len(m) == 0 {
		return termSet(text)
	}
	return m
}

// mentions reports a sentence that has at least need of the terms.
func mentions(s scored, terms map[string]bool, need int) bool {
	n := 0
	for t := range terms {
		if s.terms[t] {
			n++
		}
	}
	return n >= need
}

// filter keeps the sentences keep accepts, dropping sources left with none.
func filter(ranked [][]scored, keep func(scored) bool) [][]scored {
	var out [][]scored
	for _, ss := range ranked {
		var kept []scored
		for _, s := range ss {
			if keep(s) {
				kept = append(kept, s)
			}
		}
		if len(kept) > 0 {
			out = append(out, kept)
		}
	}
	return out
}

func topScore(ranked [][]scored) float64 {
	var top float64
	for _, ss := range ranked {
		top = max(top, ss[0].score)
	}
	return top
}

// summary opens with the answer (opening), then quotes the sentences
// that best answer the question, one per chosen source that bears on it
// first, in the evidence's order; beyond that it leaves each source a
// relevant sentence for the sections.
func (w *writer) summary() string {
	open := w.opening()
	// A source whose best sentence bears on the question less than
	// passage.Weights.Relevant as much as the best one's is no evidence for the
	// summary: its length comes from the sources that bear on it.
	ranked := w.summaryRanked()
	top := topScore(ranked)
	ranked = slices.DeleteFunc(ranked, func(ss []scored) bool { return ss[0].score < passage.Weights.Relevant*top })
	p := &quotes{sources: map[string]bool{}, words: open.words - open.further}
	w.fill(p, ranked, research.SummaryMinWords, research.SummaryMaxWords, 0, 1, top, true)
	parts := open.lines
	if rest := strings.Join(p.lines, " "); rest != "" {
		parts = append(parts, rest)
	}
	return strings.Join(parts, "\n\n")
}

// inLanguage is the summary, for a question in a script of its own made
// of sentences written in it; when its sources say nothing in it, of
// what they say in theirs.
func (w *writer) inLanguage() string {
	if w.written = inScript(w.lang); w.written != nil {
		used := maps.Clone(w.used)
		sum := w.summary()
		w.written = nil
		if len(research.ParseMarkers(sum)) > 0 {
			return sum
		}
		w.used, w.derived = used, nil
	}
	return w.summary()
}

// foreign reports a sentence the summary being written leaves out: not
// in the question's script, while it asks for that (written).
func (w *writer) foreign(text string) bool { return w.written != nil && !w.written(text) }

// compared reports a sentence that bears on what a comparison compares:
// it holds the relation asked about ("born") or the kind of value asked
// for (a year).
func (w *writer) compared(s scored) bool {
	return w.ev.askedIn(s) > 0 || hasAnswerType(w.kind, s.text, w.in.Question)
}

// inScript returns, for a question written in a script of its own
// (Korean, Japanese, Chinese), whether a sentence is written in it too;
// nil for any other question. A manual translated in part leaves
// sentences in its original language (LibreOffice's Korean help keeps
// English ones), which a reader who asked in Korean did not ask for.
func inScript(lang string) func(string) bool {
	var scripts []*unicode.RangeTable
	switch lang {
	case "ko":
		scripts = []*unicode.RangeTable{unicode.Hangul}
	case "ja":
		scripts = []*unicode.RangeTable{unicode.Hiragana, unicode.Katakana, unicode.Han}
	case "zh":
		scripts = []*unicode.RangeTable{unicode.Han}
	default:
		return nil
	}
	return func(s string) bool {
		return strings.IndexFunc(s, func(r rune) bool { return unicode.IsOneOf(scripts, r) }) >= 0
	}
}

// summaryRanked is the summary's candidate sentences after its opening,
// per source in the evidence's order.
func (w *writer) summaryRanked() [][]scored {
	// Each source chosen as evidence gives its best sentence, in the
	// evidence's order (a second hop's may name nothing the question
	// does: "Shainsky … born 12 December 1925"). Beyond that, a sentence
	// that shares only generic words with the question ("composer",
	// "born") is not evidence: it must name what the question is about.
	var ranked [][]scored
	for _, id := range w.all {
		var ss []scored
		d := w.ev.byID[id]
		if d == nil {
			continue // a ranker's id this engine did not read
		}
		if w.derived != nil && !w.derived[id] {
			// The comparison is answered from its two sides' sources:
			// the rest of the summary is theirs, not padding from pages
			// that merely name a side (an opera, a film, a theatre).
			continue
		}
		for i, s := range w.answerSentences(d, nil) {
			if w.ev.comparison && !w.compared(s) {
				// A comparison's summary holds what is compared ("born",
				// a year), not whatever else its sides' pages say.
				continue
			}
			if i == 0 || mentions(s, w.qf, 1) {
				ss = append(ss, s)
			}
		}
		if len(ss) > 0 {
			ranked = append(ranked, ss)
		}
	}
	return ranked
}

// opening is the summary's first lines: what answers the question. For a
// comparison, each side's best sentence, labelled with its subject; else
// the best sentence of each source of the best pair, the one holding more
// of what the other lacks first. When the evidence does not cover what the
// question names, it says so before the closest evidence.
func (w *writer) opening() *quotes {
	p := &quotes{sources: map[string]bool{}}
	ev := w.ev
	if ev == nil || ev.pair[0] == nil {
		return p
	}
	var win *window
	var found []passage.Answer // the finder's windows (windows), from their sources
	var from []string
	if !ev.comparison {
		// The window that answers (passage.Find: the best-matching
		// sentence with the one of its paragraph holding the kind of
		// answer asked for) opens, when it is prose of a cited source.
		// Its neighbour quoted for context, when it has one, follows the
		// opening lines when one of them adds to what the window holds
		// (the other side or hop of the question), else the window.
		found, from = w.windows()
		win = w.answerWindow(p, found, from)
	}
	if !ev.answered && len(p.lines) == 0 {
		p.lines = append(p.lines, say(w.lang, msgClosest))
	}
	var best, next []scored
	for i, d := range ev.pair {
		if d == nil || !w.chosen[d.src.ID] {
			continue // not cited: it bears on nothing the question asks
		}
		ss := w.answerSentences(d, ev.pair[1-i])
		if len(ss) > 0 {
			best = append(best, ss[0])
		}
		// A second sentence of the pair's source when it comes close, or
		// else the one holding more of the relation asked about than its
		// best ("His books, including …" beside "Edmunds is Professor of
		// Finance").
		if len(ss) > 1 && ss[1].score >= passage.Weights.SecondSentence*ss[0].score {
			next = append(next, ss[1])
		} else if !ev.comparison && len(ss) > 1 {
			for _, s := range ss[1:] {
				if ev.askedIn(s) > ev.askedIn(ss[0]) {
					next = append(next, s)
					break
				}
			}
		}
	}
	if !ev.comparison && len(best) == 2 && best[1].score > best[0].score {
		best[0], best[1] = best[1], best[0]
	}
	lines := append(best, next...)
	if !ev.comparison {
		// What holds more of the relation asked about comes first.
		sort.SliceStable(lines, func(i, j int) bool { return ev.askedIn(lines[i]) > ev.askedIn(lines[j]) })
	}
	if ev.comparison && len(best) == 2 && best[0].sourceID != best[1].sourceID {
		labels := [2]string{w.label(best[0].sourceID), w.label(best[1].sourceID)}
		if d := derivedOrder(w.in.Question, labels, [2]string{best[0].text, best[1].text}); d != "" {
			// Computed from the two quotes it cites, and says so.
			p.lines = append(p.lines, d+" [cite:"+best[0].sourceID+"] [cite:"+best[1].sourceID+"]")
			w.derived = map[string]bool{best[0].sourceID: true, best[1].sourceID: true}
		}
	}
	if win != nil && !slices.ContainsFunc(lines, func(s scored) bool {
		return !w.used.has(s.text) && !w.foreign(s.text) && ev.adds(s, win) >= passage.Weights.Gain
	}) {
		// No other line adds to what the window holds (no second side
		// or hop to give): its neighbour completes it, right after it.
		w.answerContext(p, win)
		win = nil
	}
	for _, s := range lines {
		if w.used.has(s.text) || w.foreign(s.text) {
			continue
		}
		w.used.mark(s.text)
		line := w.cite(s)
		if ev.comparison {
			line = w.label(s.sourceID) + ": " + line
		}
		p.lines = append(p.lines, line)
		p.words += len(strings.Fields(s.text))
		p.sources[s.sourceID] = true
		p.last = s.sourceID
	}
	w.answerContext(p, win) // after the lines that add to the window
	if !ev.comparison {
		w.furtherWindows(p, found, from)
	}
	return p
}

// windowSources is how many of the sources read first hold a preferred
// answer window: the pages the question's own search ranked first (the
// offline plan searches the question as asked first).
const windowSources = 3

// answerWindow adds the best answer window to p, and returns it when it
// did. It is sought in the cited sources and the first windowSources
// sources read, cited or not (its source is cited then), in the order
// they were read (research.ReadOrder: by the sub-questions' priority):
// as ask favours its search's first chunks, Find favours the documents
// read first (the first pages, cited or not, are among Find's
// documents, so a later page's rank and the terms' counts are read
// beside them too). The best window stands unless one of the first
// windowSources sources scores nearly as well
// (passage.Weights.Alternative of its score) and has a sentence of its
// own in the question's script: a page a facet's search found may hold
// the question's words in another sense, ahead of the page that
// answers.
// (Dev sets, five chunk sizes: the answer in the summary's first two
// sentences 0.463 -> 0.489, no set lower; the window sought only in the
// first 1-5 sources read: 0.496, 0.510, 0.509, 0.491, 0.489, but a
// HotpotQA question whose answer a facet's page gives lost its lead.)
func (w *writer) answerWindow(p *quotes, found []passage.Answer, from []string) *window {
	a, id, ok := w.window(found, from)
	if !ok {
		return nil
	}
	if w.quoteWindow(p, a, id) == 0 {
		return nil
	}
	return &window{a, id}
}

// quoteWindow adds a window's own sentences to p, under the option or
// setting it defines when they do not name it, and cites its source; it
// returns how many words it quoted.
func (w *writer) quoteWindow(p *quotes, a passage.Answer, id string) int {
	added, words := false, p.words
	// The sentence a window's demonstrative points back at ("This is not
	// the fastest …", "This tool …": passage.Answer.Back) comes before
	// it, as on the page; any other neighbour is placed by answerContext
	// (a "He …" or "It …" line is labelled with its source's title,
	// which it stands for).
	own := slices.Index(a.Context, false)
	antecedent := own > 0 && a.Back
	for i, text := range a.Sentences {
		if a.Context[i] && (i > own || !antecedent || !prose(text)) || w.foreign(text) {
			continue
		}
		w.used.mark(text)
		line := w.cite(scored{text: text, terms: termSet(text), sourceID: id})
		if !added && a.Term != "" && !strings.Contains(strings.ToLower(text), strings.ToLower(a.Term)) {
			// The option or setting the window defines, which its
			// sentences do not name (passage.Answer.Term).
			line = passage.InlineCode(a.Term) + ": " + line
		}
		p.lines = append(p.lines, line)
		p.words += len(strings.Fields(text))
		p.sources[id] = true
		p.last = id
		added = true
	}
	if added {
		w.chosen[id] = true // cited, though evidence selection may not have chosen it
	}
	return p.words - words
}

// furtherWindows adds to the opening the windows ask quotes beside the
// best (passage.Answers of the first passage.MaxQuoted of found, by gain,
// each from the source from names): one
// that scores nearly as well (another page's answer, or the page's
// runner-up) or one that adds what the best lacks (the question's other
// part), when it is prose no line quoted yet, of a source the evidence
// chose (a page read first, as the best window's may be, is not cited
// for a further one). The best window by the finder's measure need not
// be the one that answers: "Only VIRTUAL columns can be added using
// ALTER TABLE." opens, and "The value of a VIRTUAL column is computed
// when read, whereas …" is the window after. Their words do not count
// against the summary's length: the sentences after the opening are as
// many as before.
func (w *writer) furtherWindows(p *quotes, found []passage.Answer, from []string) {
	if passage.Ablate["further"] {
		return
	}
	quoted := passage.Answers(found[:min(len(found), passage.MaxQuoted)])
	if len(quoted) < 2 {
		return
	}
	for _, a := range quoted[1:] {
		id := from[a.Doc]
		if !w.chosen[id] {
			continue
		}
		if q, ok := quotable(a, w.used); ok && w.ownSaid(q) {
			p.further += w.quoteWindow(p, q, id)
		}
	}
}

// windows are the answer finder's windows over the sources an answer
// window is sought in (answerWindow: the cited ones and the first
// windowSources read), by gain, and the ids of their sources: a window
// per document (Find keeps each document's best, and its runner-up as an
// alternative, less those repeating another's sentences, when asked for
// as many).
func (w *writer) windows() (found []passage.Answer, from []string) {
	first := w.firstPages()
	from, docs := sourceDocs(slices.Concat(w.read, w.all), w.in.Sources, func(id string) bool {
		return w.chosen[id] || slices.Contains(first, id)
	})
	found, _ = passage.Find(w.in.Question, docs, 2*len(docs))
	return found, from
}

// firstPages are the first windowSources sources read (none when
// ablated: "firstpages").
func (w *writer) firstPages() []string {
	if passage.Ablate["firstpages"] {
		return nil
	}
	return w.read[:min(windowSources, len(w.read))]
}

// window picks answerWindow's window among the finder's (windows), one a
// summary can quote (quotable), and its source.
func (w *writer) window(found []passage.Answer, from []string) (passage.Answer, string, bool) {
	first := w.firstPages()
	if len(found) == 0 {
		return passage.Answer{}, "", false
	}
	// The best window of the first sources read, when it comes close.
	pick := -1
	for i, f := range found {
		if slices.Contains(first, from[f.Doc]) && f.Score >= passage.Weights.Alternative*found[0].Score && (pick < 0 || f.Score > found[pick].Score) {
			pick = i
		}
	}
	if pick >= 0 {
		if a, ok := quotable(found[pick], w.used); ok && w.ownSaid(a) {
			return a, from[a.Doc], true
		}
	}
	if a, ok := quotable(found[0], w.used); ok {
		return a, from[a.Doc], true
	}
	return passage.Answer{}, "", false
}

// sourceDocs are the sources ids names that keep keeps (nil: all), each
// once, as passage reads them, with their ids.
func sourceDocs(ids []string, sources map[string]*research.Source, keep func(id string) bool) ([]string, []passage.Doc) {
	var from []string
	var docs []passage.Doc
	seen := map[string]bool{}
	for _, id := range ids {
		if s := sources[id]; s != nil && !seen[id] && (keep == nil || keep(id)) {
			seen[id] = true
			from = append(from, id)
			docs = append(docs, passage.Doc{Title: s.Title, Body: s.Content})
		}
	}
	return from, docs
}

// ownSaid reports a window with a sentence of its own in the question's
// script (not foreign), which answerWindow quotes.
func (w *writer) ownSaid(a passage.Answer) bool {
	for i, text := range a.Sentences {
		if !a.Context[i] && !w.foreign(text) {
			return true
		}
	}
	return false
}

// quotable is what a summary quotes of a window: its own sentences
// that are prose (one that ends in a call, "… obtained with
// len(os.sched_getaffinity(0))", too: endsInCall), with the neighbour
// quoted for context; a line of its own that is not prose is left out.
// When none of its own sentences is prose, the neighbour stands for it
// as its own. It is also what the window is taken to have said. False
// when nothing of its own can be quoted, or a sentence of its own was
// quoted already.
func quotable(a passage.Answer, used quoted) (passage.Answer, bool) {
	keep := slices.Clone(a.Context) // what is quoted: the context, and own prose
	said := false
	for i, text := range a.Sentences {
		if a.Context[i] {
			continue
		}
		if used.has(text) {
			return a, false
		}
		keep[i] = proseWithCode(text) || endsInCall(text)
		said = said || keep[i]
	}
	context := a.Context
	if !said {
		i := slices.IndexFunc(a.Sentences, func(text string) bool { return prose(text) && !used.has(text) })
		if i < 0 || !a.Context[i] {
			return a, false
		}
		context = slices.Clone(a.Context)
		context[i] = false
	}
	out := a
	out.Sentences, out.Code, out.Context = nil, nil, nil
	for i, text := range a.Sentences {
		if keep[i] {
			out.Sentences = append(out.Sentences, text)
			out.Code = append(out.Code, a.Code[i])
			out.Context = append(out.Context, context[i])
		}
	}
	return out, true
}

// quoted holds the sentences a report has quoted, each by
// textseg.SentenceKey: a page read twice, as its source and as its HTML
// rendering, or mirrored at two addresses, gives the same sentence with
// other quotation marks or dashes ("the root logger's name" and "the
// root logger’s name"), which a reader would find quoted twice.
type quoted map[string]bool

func (q quoted) has(text string) bool { return q[textseg.SentenceKey(text)] }

func (q quoted) mark(text string) { q[textseg.SentenceKey(text)] = true }

// window is the answer window a summary opens with, and its source.
type window struct {
	passage.Answer
	sourceID string
}

// answerContext adds the neighbour quoted beside the window's sentence
// for context (passage.Answer.Context) to p, unless another line quotes
// it; labelled with its source's title, as any line, when it points back
// past another source's line ("Appendix E: It defaults to 2015 …").
func (w *writer) answerContext(p *quotes, win *window) {
	if win == nil {
		return
	}
	for i, text := range win.Sentences {
		if win.Context[i] && prose(text) {
			p.add(w, scored{text: text, terms: termSet(text), sourceID: win.sourceID}, math.MaxInt)
		}
	}
}

// label names a side of a comparison: its source's title, and the
// question's own name for it when the title does not hold it ("Caucete
// earthquake (1977 San Juan earthquake)").
func (w *writer) label(id string) string {
	t := baseTitle(w.in.Sources[id].Title)
	d := w.ev.byID[id]
	if d == nil || d.side == "" || strings.Contains(phraseOf(t), " "+d.side+" ") {
		return t
	}
	q := strings.ToLower(w.in.Question)
	if i := strings.Index(q, d.side); i >= 0 && len(q) == len(w.in.Question) {
		// The question's words as written.
		return w.in.Question[i:i+len(d.side)] + " (" + t + ")"
	}
	return d.side + " (" + t + ")"
}

// askedIn is the weight of the terms of the relation asked about that a
// sentence holds.
func (ev *evidence) askedIn(s scored) float64 {
	var v float64
	for _, q := range ev.qterms {
		if ev.asked[q.term] && s.terms[q.term] {
			v += q.weight
		}
	}
	return v
}

// answerSentences are a source's sentences, best first, by how well they
// answer the question beside the other source of its pair: question terms
// weighted by rarity, more for those the other source lacks, and more when
// it names the other source's subject (the bridge), damped for long
// sentences. Sentences that share nothing with the question are left out.
func (w *writer) answerSentences(d, other *evDoc) []scored {
	ev := w.ev
	var out []scored
	for i, st := range w.rd.sentences(d.src) {
		var v float64
		for _, q := range ev.qterms {
			if !st.terms[q.term] {
				continue
			}
			wt := ev.weigh(q)
			if other != nil && other.terms[q.term] {
				wt /= 2
			}
			v += wt
		}
		if ev.total > 0 {
			v /= ev.total
		}
		if other != nil && other.base != "" && strings.Contains(phraseOf(st.text), other.base) {
			v += passage.Weights.Bridge
		}
		if i == 0 {
			v += passage.Weights.WriterLead
		}
		if v > 0 && hasAnswerType(w.kind, st.text, w.in.Question) {
			v += passage.Weights.AnswerType
		}
		v /= 1 + math.Log1p(float64(st.words)/passage.Weights.LongSentence)
		if v > 0 {
			out = append(out, scored{text: st.text, terms: st.terms, sourceID: d.src.ID, score: v})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}

// section quotes a sub-question's own sources first, then sentences of
// other sources that name what the sub-question asks about; nil when
// none of its own sources says anything on it.
func (w *writer) section(sq research.SubQuestion) *quotes {
	sc := newScorer(w.in.Question, sq.Text)
	// A comparison answered from its two sides (derived) is discussed
	// from their sources alone, in what bears on what it compares ("born",
	// a year); the pages that merely name a side (an opera, a film, a
	// theatre) are left to the sections of the side they name.
	answered := w.derived != nil && sq.ParentID == "" && sq.Text == w.in.Question
	var own []string
	isOwn := map[string]bool{}
	for _, id := range sq.SourceIDs {
		if w.chosen[id] && !isOwn[id] && (!answered || w.derived[id]) {
			isOwn[id] = true
			own = append(own, id)
		}
	}
	var others []string
	for _, id := range w.all {
		if !isOwn[id] && (!answered || w.derived[id]) {
			others = append(others, id)
		}
	}
	var bears func(scored) bool
	if answered {
		bears = w.compared
	}
	p := &quotes{sources: map[string]bool{}}
	mine := w.ranked(sc, own, bears)
	// First the best sentence of each of its own sources, whatever the
	// target, as before any filling.
	for _, ss := range mine {
		for _, s := range ss {
			if p.add(w, s, 1<<30) {
				break
			}
		}
	}
	if len(p.lines) == 0 {
		return nil
	}
	// Beyond each source's best sentence, a sentence must name what the
	// question or the sub-question is about; another source's must name
	// the sub-question's subject.
	all := focus(sq.Text)
	sf := w.ev.unscoped(all)
	onTopic := func(s scored) bool { return mentions(s, w.qf, 1) || mentions(s, sf, 1) }
	about := func(s scored) bool {
		// Half of the sub-question's names, the collection's subject
		// counted (it is no longer required, but a sentence of another
		// source must still name as much).
		return mentions(s, sf, min(len(sf), max(1, (len(all)+1)/2))) && (bears == nil || bears(s))
	}
	maxWords := research.SectionMinWords * 3 / 2
	w.fill(p, filter(mine, onTopic), research.SectionMinWords, maxWords, research.SectionMinSources, 0, 0, false)
	w.fill(p, w.ranked(sc, others, about), research.SectionMinWords, maxWords, research.SectionMinSources, 0, topScore(mine), false)
	return p
}

// asWritten is a follow-up's name as its sources write it, and whether
// they write it as a name. A name is found as words (textseg.Names), so
// an identifier reads "SQLITE IOERR DATA" where its pages write
// SQLITE_IOERR_DATA, and a Korean particle run into a Latin name stays on
// it ("TIFF와"): the first place the sources read (the follow-up's own
// first) join its words by an underscore, a dot or a space gives how it
// is written, cut where Latin letters go on in Hangul. Words no source
// joins so ("Stability 0 Deprecated Please", read across "Stability: 0 -
// Deprecated. Please use …") are no name, nor is a capitalised word the
// sources write so only where a sentence opens ("Unfortunately, …") or
// also write in lower case (a listing's "Listing"): it was capitalised
// for opening its sentence.
func (w *writer) asWritten(sq research.SubQuestion) (string, bool) {
	name := cutScript(sq.Text)
	ws := strings.Fields(name)
	if len(ws) == 0 {
		return sq.Text, false
	}
	re := standingAlone(ws)
	seen := map[string]bool{}
	for _, id := range slices.Concat(sq.SourceIDs, w.read) {
		if seen[id] {
			continue // one of the follow-up's own, read first
		}
		seen[id] = true
		if src := w.in.Sources[id]; src != nil {
			if m := re.FindStringSubmatch(src.Content); m != nil {
				if len(ws) > 1 {
					name, named := w.withoutOpener(m[1], ws)
					if named {
						name = w.withoutCloser(name)
					}
					return name, named
				}
				return m[1], !w.lowerCased(m[1]) && !w.opensOnly(m[1]) && !w.numbering(m[1])
			}
		}
	}
	return name, false
}

// withoutOpener is a name of several words as written without the words
// that open it where those were capitalised for opening a sentence, an
// instruction's verb and its article ("Open Cargo.toml", "Use
// Buffer.alloc", "Return the IEEE …", "Hence NULL"): the name is written
// so only where a sentence or a line opens, its first words are ones the
// sources also write in lower case, and what follows them is written
// without them too ("The Cargo.toml file …") and holds a word that is a
// name, one of letters the sources do not write in lower case. A name
// written so within a sentence ("the Fetch API") keeps its first word.
// Words the sources all also write in lower case, the first capitalised,
// written so only where a sentence or a line opens ("We do not check",
// "Whether Git"), are no name (false); a command's lower-case words are
// one ("git-bisect run").
func (w *writer) withoutOpener(name string, words []string) (string, bool) {
	opens := func(x string) bool {
		r, _ := utf8.DecodeRuneInString(x)
		return unicode.IsLower(r) || titleCase(x) && w.lowerCased(x)
	}
	k := 0
	for k < len(words) && opens(words[k]) {
		k++
	}
	if k == len(words) {
		return name, !titleCase(words[0]) || !w.atOpenings(standingAlone(words))
	}
	if k == 0 || utf8.RuneCountInString(words[k]) < 2 {
		return name, true
	}
	if r, _ := utf8.DecodeRuneInString(words[k]); !unicode.IsLetter(r) {
		return name, true // a number, an option ("-m") or a quote: nothing to cut to
	}
	if !w.atOpenings(standingAlone(words)) {
		return name, true
	}
	at := make([]int, k+1) // where each word begins in name: one joiner after each
	for i := 1; i <= k; i++ {
		at[i] = at[i-1] + len(words[i-1]) + 1
	}
	for i := k; i > 0; i-- {
		if at[i] >= len(name) {
			return name, true
		}
		rest, opener := name[at[i]:], strings.ToLower(name[:at[i]-1])
		for text, m := range w.occurrences(standingAlone([]string{rest})) {
			if before := strings.TrimRightFunc(text[:m[2]], unicode.IsSpace); !strings.HasSuffix(strings.ToLower(before), opener) {
				return rest, true
			}
		}
	}
	return name, true
}

// withoutCloser is a name of several words as written without its last
// words where those open what the name heads, the definition of a term
// written on one line with it ("ECONNREFUSED Indicates that the network
// connection has been refused."): capitalised words the sources also
// write in lower case, after what stays, written where a line or a
// sentence opens and each time going on in lower case, as a sentence
// does; what stays holds a word that is no word of prose (a capital
// not only its first letter's, "ECONNREFUSED", that the sources do not
// write in lower case).
func (w *writer) withoutCloser(name string) string {
	words := strings.Fields(name)
	k := len(words)
	for k > 1 && titleCase(words[k-1]) && w.lowerCased(words[k-1]) {
		k--
	}
	if k == len(words) || !slices.ContainsFunc(words[:k], func(x string) bool { return !w.lowerCased(x) && !titleCase(x) }) {
		return name
	}
	re := standingAlone(words)
	if !w.atOpenings(re) {
		return name
	}
	for text, m := range w.occurrences(re) {
		if r, _ := utf8.DecodeRuneInString(strings.TrimLeft(text[m[3]:], " \u00a0")); !unicode.IsLower(r) {
			return name
		}
	}
	return strings.Join(words[:k], " ")
}

// numbering reports a word the sources read write only before a number,
// a label of what it numbers ("Listing 15-3", "Figure 2"), not a name of
// one thing.
func (w *writer) numbering(word string) bool {
	found := false
	for text, m := range w.occurrences(standingAlone([]string{word})) {
		if r, _ := utf8.DecodeRuneInString(strings.TrimLeft(text[m[3]:], " \u00a0")); !unicode.IsDigit(r) {
			return false
		}
		found = true
	}
	return found
}

// opensOnly reports a word the sources read write capitalised only where
// a sentence or a line opens ("Unfortunately, …", "Similarly, …"): it is
// capitalised for where it stands, not as a name, which a sentence also
// writes within it ("… in Listing 15-3").
func (w *writer) opensOnly(word string) bool {
	return titleCase(word) && w.atOpenings(standingAlone([]string{word}))
}

// atOpenings reports what re matches (its first group) written in the
// sources read, and only where a sentence or a line opens.
func (w *writer) atOpenings(re *regexp.Regexp) bool {
	found := false
	for text, m := range w.occurrences(re) {
		found = true
		before := strings.TrimRightFunc(text[:m[2]], func(r rune) bool {
			return unicode.IsSpace(r) || strings.ContainsRune(`"'“‘([*`, r)
		})
		gap := text[len(before):m[2]]
		if last, _ := utf8.DecodeLastRuneInString(before); before != "" && !strings.Contains(gap, "\n") && !strings.ContainsRune(".!?:;-–—", last) {
			return false // within a sentence
		}
	}
	return found
}

// occurrences yields each place re matches in the sources read: the
// source's text and the match's indexes (FindAllStringSubmatchIndex's).
func (w *writer) occurrences(re *regexp.Regexp) iter.Seq2[string, []int] {
	return func(yield func(string, []int) bool) {
		for _, src := range w.in.Sources {
			for _, m := range re.FindAllStringSubmatchIndex(src.Content, -1) {
				if !yield(src.Content, m) {
					return
				}
			}
		}
	}
}

// standingAlone matches words written one after the other, joined by an
// underscore, a dot or a space, with no Latin letter, digit or
// underscore run into either end (a Korean particle may follow); its
// first group is what it matched.
func standingAlone(words []string) *regexp.Regexp {
	parts := make([]string, len(words))
	for i, x := range words {
		parts[i] = regexp.QuoteMeta(x)
	}
	return regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])(` + strings.Join(parts, `[_. ]`) + `)(?:$|[^A-Za-z0-9_])`)
}

// titleCase reports a word of one capital, its first letter: not an
// acronym ("TIFF") or a name in camel case ("EventTarget").
func titleCase(word string) bool {
	r, size := utf8.DecodeRuneInString(word)
	return unicode.IsUpper(r) && strings.IndexFunc(word[size:], unicode.IsUpper) < 0
}

// lowerCased reports a capitalised word ("Unfortunately", not "TIFF" or
// "EventTarget") that the sources read also write in lower case.
func (w *writer) lowerCased(word string) bool {
	if !titleCase(word) {
		return false
	}
	if w.lower == nil {
		w.lower = map[string]bool{}
		for _, src := range w.in.Sources {
			for _, f := range strings.Fields(src.Content) {
				for _, x := range textseg.Words(f) {
					if r, _ := utf8.DecodeRuneInString(x); unicode.IsLower(r) {
						w.lower[x] = true
					}
				}
			}
		}
	}
	return w.lower[strings.ToLower(word)]
}

// cutScript cuts a name where a word in Latin letters or digits goes on
// in Hangul, a particle or a noun of the sentence it stood in, not the
// name ("LibreOffice Calc에서는" is "LibreOffice Calc").
func cutScript(name string) string {
	prev := rune(-1)
	for i, r := range name {
		if textseg.IsHangul(r) && prev >= 0 && prev < utf8.RuneSelf && (unicode.IsLetter(prev) || unicode.IsDigit(prev)) {
			return strings.TrimSpace(name[:i])
		}
		prev = r
	}
	return name
}

// bySource is a section for each page the sentences said are quoted
// from, headed by its title (its address when it has none), in the order
// the pages are first quoted, placed where the first quote's section
// would have stood; a page's sentences in the order its text
// gives them, so the section reads as an excerpt of it. Pages of one
// title (a page and its source's copy, the site's name after the title
// or not: sameTitle) share a section, headed by the shorter.
func (w *writer) bySource(said []placed) []placedSection {
	type line struct {
		s   scored
		src int // the page's place among the section's
		pos int // where the page's text gives it
	}
	type group struct {
		heading, key string
		at           int
		lines        []line
	}
	var groups []*group
	pages := map[string]int{}
	for _, q := range said {
		s := q.s
		src := w.in.Sources[s.sourceID]
		if src == nil {
			continue
		}
		h := cmp.Or(strings.TrimSpace(src.Title), src.URL, src.ID)
		key := titleKey(h)
		i := slices.IndexFunc(groups, func(g *group) bool { return sameTitle(g.key, key) })
		if i < 0 {
			i = len(groups)
			groups = append(groups, &group{heading: h, key: key, at: q.at})
		} else if len(key) < len(groups[i].key) {
			groups[i].heading, groups[i].key = h, key // the title without the site's name
		}
		if _, ok := pages[s.sourceID]; !ok {
			pages[s.sourceID] = len(pages)
		}
		pos := strings.Index(src.Content, s.text)
		if pos < 0 {
			pos = len(src.Content) // not found as written: after the rest
		}
		groups[i].lines = append(groups[i].lines, line{s: s, src: pages[s.sourceID], pos: pos})
	}
	out := make([]placedSection, 0, len(groups))
	for _, g := range groups {
		slices.SortStableFunc(g.lines, func(a, b line) int { return cmp.Or(cmp.Compare(a.src, b.src), cmp.Compare(a.pos, b.pos)) })
		body := make([]string, len(g.lines))
		for i, l := range g.lines {
			body[i] = w.cite(l.s)
		}
		out = append(out, placedSection{at: g.at, Section: research.Section{Heading: g.heading, Body: strings.Join(body, " ")}})
	}
	return out
}

// placed is a sentence quoted for a section that would have stood
// before the at-th of the report's other sections; placedSection is a
// page's section, to stand there.
type (
	placed struct {
		at int
		s  scored
	}
	placedSection struct {
		at int
		research.Section
	}
)

// titleKey is a page title compared with another: in lower case, its
// dashes one ("logging --- Logging facility" and "logging — Logging
// facility" are one title).
func titleKey(title string) string {
	return strings.Join(strings.Fields(titleDashes.Replace(strings.ToLower(title))), " ")
}

// titleDashes writes the dashes and bars that part a title from its
// site's name, or its subject from what it says of it, as one.
var titleDashes = strings.NewReplacer("---", "—", "--", "—", " – ", " — ", " - ", " — ", " | ", " — ")

// sameTitle reports two pages' titles (titleKey) that are one, or one of
// them the other followed by its site's name ("Logging HOWTO" and
// "Logging HOWTO — Python 3.11.2 documentation"): a page and its copy.
func sameTitle(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	return a == b || strings.HasPrefix(b, a+" — ")
}

// adds is the question's weight s holds that the window's own sentences
// and its heading do not (a sentence's terms hold its heading's), over
// the question's whole weight, each term as the opening weighs it
// (weigh).
func (ev *evidence) adds(s scored, win *window) float64 {
	if ev.total == 0 {
		return 0
	}
	held := termSet(win.Heading)
	for i, t := range win.Sentences {
		if !win.Context[i] {
			maps.Copy(held, termSet(t))
		}
	}
	var v float64
	for _, q := range ev.qterms {
		if s.terms[q.term] && !held[q.term] {
			v += ev.weigh(q)
		}
	}
	return v / ev.total
}

// weigh is a question term's weight in the opening: its rarity, more
// for a term of the relation asked about (Weights.Asked).
func (ev *evidence) weigh(q weighted) float64 {
	if ev.asked[q.term] {
		return q.weight * (1 + passage.Weights.Asked)
	}
	return q.weight
}
