package passage

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// Doc is a text answers are looked for in: a chunk a search returned, a
// source a research read.
type Doc struct {
	Title string
	Body  string
}

// Answer is a window of one document that answers a question: its best
// matching sentence and, when another sentence of the same paragraph
// holds the kind of answer asked for, that one too ("When there are more
// than this many loose objects … git gc --auto will pack them." and "The
// default value is 6700."); when none does, the sentence beside it, for
// context; when it opens by pointing back ("This tool is …"), the
// sentence it points at, for context.
type Answer struct {
	Doc       int      // index into the documents
	Sentences []string // in document order
	// Code[i] reports Sentences[i] a line of code (a how-to's command),
	// to be quoted as code.
	Code []bool
	// Context[i] reports Sentences[i] the neighbour quoted beside a
	// sentence that holds no kind of answer asked for (neighbour; for a
	// how-to, the step of its procedure that names the menu or command:
	// step), or the sentence a window points back at (refersBack, Back),
	// not counted in Coverage: ask quotes it in place; a
	// research's summary before its window when the window's "This …"
	// points back at it, else right after its window, or after the
	// opening's lines that add to the window (the question's other side
	// or hop).
	Context []bool
	// Back: the window opens by pointing back at the sentence before it
	// ("This tool is …"), quoted as its Context before it (refersBack).
	Back    bool
	Heading string // what the window sits under, if anything
	// Term is the Heading when it is the name of an option or a setting
	// the window defines (Unit.Term): an answer quotes it with the
	// window, as the window does not say it ("--reset-author": "When
	// used with -C/-c/--amend options, …").
	Term string
	// Coverage is the share of the question's weight the window holds:
	// each term weighed by its rarity among the documents' sentences, a
	// term held only by the heading or the title at half weight.
	Coverage float64
	// Fits: a sentence holds the kind of answer the question asks for.
	Fits  bool
	Score float64
	// Gain is the share of the question's weight it adds to the answers
	// before it (its Coverage for the first).
	Gain     float64
	held     map[string]bool
	units    []int // the window's sentences, by their index in the document
	runnerUp bool
}

// Weights are every tuned weight of the offline engine — the answer
// finder (Find, for ask and research), the passages chosen for a model
// (Select) and research's offline analysis, evidence and writer
// (research/offline) — each with what it stands for. Shares are of the
// question's weight (0–1) unless said otherwise.
var Weights = struct {
	// The answer finder.

	// Heading and Title: a term the sentence does not say but the
	// heading it sits under or its document's title does.
	Heading, Title float64
	// Neighbour: a term the sentence lacks that a sentence beside it in
	// the same paragraph holds: context, not the answer.
	Neighbour float64
	// Fit is added to a window holding the kind of answer asked for
	// (a how-to's window, too, when the step of its procedure quoted
	// with it does: step).
	Fit float64
	// Rank favours the documents the search ranked higher, Rank/(1+r).
	Rank float64
	// Scene: a term only the question's scene-setting sentences hold.
	Scene float64
	// Gain: a further answer is quoted when it adds at least this share
	// of the question's weight to those before it.
	Gain float64
	// Alternative: a further answer whose score is at least this share
	// of the best's is quoted however little it adds (its Gain at least
	// Gain), the first such next after the best, ahead of those that add
	// more; be it another document's best or a document's runner-up (the
	// best window that shares no sentence with the document's best,
	// quoted only as such an alternative): two windows that answer
	// almost equally well are both shown,
	// as the one holding more of the question's words often restates it
	// and the other answers ("The values emitted by the RETURNING clause
	// are …" and "The effect of the RETURNING clause is to cause the
	// statement to return one result row for each …").
	Alternative float64
	// WindowCost is what each sentence of a window beyond the first costs
	// it: a sentence that says it all is quoted alone.
	WindowCost float64
	// Phrase is added to a window, times the share of the weight of the
	// question's pairs of words (kind.go: pair) it writes as the question
	// does, one just before the other (phrased): "password reset link"
	// in "The number of seconds a password reset link is valid for."
	// says what the question asks about, where "reset password link"
	// and "password" and "link" apart in one sentence only mention its
	// words. Proximity as retrieval's term-dependence models weigh it.
	Phrase float64
	// Answered is the confidence under which the documents a research
	// read do not answer; AskAnswered is ask's, over the five chunks it
	// reads (a research reads twenty or more, and its best window holds
	// more of a question). Set on the seven documentation dev sets
	// (eval/testdata/research): the share of answerable questions
	// answered right, of unanswerable ones refused and of false refusals
	// were best balanced there.
	Answered, AskAnswered float64
	// Long is what ask's confidence gains for each of a question's words
	// beyond LongWords, and loses for each it has fewer, counting at most
	// twice LongWords (Confidence): a long question spreads its weight
	// over words a passage that answers it need not repeat ("Since moving
	// to Node 18, clients that upload big files … get a 408 …"), a short
	// one's few words are what it asks. Set on the seven documentation dev
	// sets beside ask's threshold (five chunk sizes): ask right 0.654 ->
	// 0.660, unanswerable refused 0.724 -> 0.738, false refusals 0.077 ->
	// 0.069, confident-and-wrong 0.127 -> 0.124, none the wrong way in any
	// set or at any size; the AUC among answered questions 0.608 -> 0.604
	// (Git's 0.54 -> 0.51, Rust's 0.69 -> 0.67).
	Long, LongWords float64
	// Unheld scales the weight of a question's word that no sentence
	// read holds, and that is not a name the question marks: the
	// sources speak of the thing in other words ("clobbering commits a
	// colleague may have pushed meanwhile"; "without installing the
	// uuid package"), and a word no window can hold does not tell one
	// window from another. A name none holds, and a word in a script
	// none is written in (Hangul over English sources), still weighs
	// whole.
	Unheld float64
	// UnheldWords is the fewest content words (stop words and repeats
	// left out) a question has for Unheld to apply: in a short question
	// a word no source holds is what it asks about ("시립 미술관 관람료는
	// 얼마인가요?", the museum's fee, over a city's notes that have no
	// museum).
	UnheldWords int
	// Scope is the share of a knowledge base's chunks that write a name
	// for it to be what the knowledge base is about ("Writer" across
	// LibreOffice's help, "Linux" across Node.js's API): a passage may
	// leave such a name unsaid, so the chunks read not holding it does
	// not lower the confidence (ask). A name the knowledge base writes
	// more rarely, or never, still does.
	Scope float64

	// The passages a model is shown of a source (Select).

	// Further: a term of a further text (a sub-question, the search that
	// found the source) that the question lacks, against the question's
	// own terms' 1.
	Further float64
	// HeadingShare: what a term counts for when only the heading a
	// sentence sits under holds it: the sentence is about the heading,
	// but does not say it.
	HeadingShare float64
	// FragmentShare damps the score of a heading, a line of code and a
	// fragment of a few words.
	FragmentShare float64

	// Research's offline engine (research/offline).

	// SubQuestion: a sub-question's term the question lacks, in the
	// analysis of a source, against the question's own terms' 1.
	SubQuestion float64
	// Lead is added to a source's first sentence in its analysis and,
	// as WriterLead, in the writer: a lead says what the document is
	// about.
	Lead, WriterLead float64
	// NameFloor is added to a sentence's score before it weighs the names
	// it mentions as leads to follow, so a name in a sentence that
	// scores nothing is still a lead.
	NameFloor float64
	// LongSentence is the number of words at which a sentence's score is
	// damped by 1/(1 + ln 2): longer sentences hold more words by
	// length alone.
	LongSentence float64
	// PairTitle and PairLink: a pair of sources scores the question's
	// coverage, plus PairTitle when a source is titled by what the
	// question names, plus PairLink when one names the other's subject
	// (the bridge of a two-hop question); PartialLink when it names only
	// that subject's first significant word, capitalised.
	PairTitle, PairLink, PartialLink float64
	// Keep: how close to the best pair's score a further pair must come
	// for its sources to be cited.
	Keep float64
	// Bear: the share of the question a source must cover alone to be
	// cited when it names nothing the question does and links to no
	// source cited.
	Bear float64
	// MinGain: the least share of the question a source must add to what
	// the chosen ones cover to be chosen for it.
	MinGain float64
	// Unanswered: when the question's focus words that no source holds
	// weigh this share of the question, it is left unanswered.
	Unanswered float64
	// Relevant: how close to the best sentence's score a further
	// sentence must come to be quoted beyond the first of its source.
	Relevant float64
	// SecondSentence: how close to its source's best a second sentence
	// must come to be quoted with it in the summary.
	SecondSentence float64
	// AnswerType is added to a sentence holding the kind of answer the
	// question asks for (a year for "when", a place for "where").
	AnswerType float64
	// Asked: the extra weight, times a term's own, of the terms of the
	// relation the question asks about ("administrative centre" in "… a
	// comarca whose administrative centre is which town?").
	Asked float64
	// Bridge is added to a sentence that names the other source of its
	// pair's subject.
	Bridge float64
}{
	Heading: 0.5, Title: 0.5, Neighbour: 0.25, Fit: 0.2, Rank: 0.05, Scene: 0.5, Gain: 0.1, Alternative: 0.8, WindowCost: 0.01, Phrase: 0.1, Answered: 0.25, AskAnswered: 0.28, Long: 0.0025, LongWords: 10, Unheld: 0.5, UnheldWords: 6, Scope: 0.01,
	Further: 0.5, HeadingShare: 0.5, FragmentShare: 0.5,
	SubQuestion: 0.5, Lead: 0.25, WriterLead: 0.1, NameFloor: 0.1, LongSentence: 30,
	PairTitle: 0.5, PairLink: 0.5, PartialLink: 0.5, Keep: 0.6, Bear: 0.25, MinGain: 0.05, Unanswered: 0.35,
	Relevant: 0.34, SecondSentence: 0.5, AnswerType: 0.15, Asked: 1.0, Bridge: 0.3,
}

// Ablate switches rules off by name, for the benchmark that shows what
// each is worth: "heading", "title", "neighbour", "fit", "rank",
// "codeword" (a how-to's fit only an option, a command or a menu, not
// keywords in capitals, a camelCase name, an extension or code in
// backticks: codeWordRE),
// "content" (the words that only ask kept as terms: Korean question
// words, the "many", "much", "long" or "often" after "how"),
// "context" (a sentence holding no kind of answer asked for quoted
// alone, without its paragraph neighbour or, for a how-to, its
// procedure's step, which then earns its window no Fit; and no window
// quoted after the sentence it points back at),
// "continued" (a sentence that goes on from the window's last, or what
// its colon introduces, left out), "field" (a "Label: value" line in an
// entry's head read as a heading, as any short line before prose, no
// field of its entry quoted with a window, a signature's defaults no
// fit, a signature longer than a heading titling nothing, and a list
// item's name not quoted as its window's term: Unit.Field, entryField,
// signatureGives, titleLen, itemName), "joined" (two words of the
// question not held by the term they make written as one: "thread pool"
// by "threadpool"), "window" (no sentence of its paragraph
// holding the kind of answer asked for sought for the best), "asking"
// (the scene-setting sentences weigh as much as the one that asks),
// "unheld" (a word of a long question that no sentence read holds
// weighs whole), "term" (an option's or a setting's name alone above
// the prose that defines it read as a line of code, not as the heading
// that prose sits under: Units), "back" (the sentence a window points
// back at quoted, as before the rule, only as the neighbour of a window
// holding no kind of answer asked for whose first sentence opens with a
// pronoun: refersBack), "alternative" (a further answer nearly as good
// as the best quoted only when it adds to it, and one window a
// document: Weights.Alternative), "stem" (a Korean word held only by
// its own terms, its particle or ending among them, not by its stem's:
// analyze.KoreanStem), "firstread" (research's offline writer seeks the
// value a question asks for among all the sources read only, not also
// among the first its own search ranked: research/offline),
// "firstpages" (research's offline writer seeks its answer window among
// the sources it cites, not first among the pages the question's own
// search ranked first: research/offline), "further" (research's
// opening quotes the best window alone, not also the further windows ask
// quotes beside it: research/offline), "key" (a question that asks
// which key to press is answered by its type's fit alone, not also by
// a sentence naming a key: keyRE), "kind" (a sentence holds a word of
// the question that names the kind of the next, "connection" of
// "connection pool", even where it writes the next only after another
// word, "memory pool": otherKind), "release" (a number written with
// dots in the question, a release's "3.11.0" or a value's "2.5", held
// by its numbers' terms wherever they stand, not only where it is
// written as one: releaseShare; and a date a sentence gives for
// another release, "Python 3.0 was released on …", given for the
// question's: otherRelease), "length" (ask's confidence is the share
// of the question the best answer holds, whatever the question's
// length: Confidence), "phrase" (a window that writes the question's
// pairs of words as the question does scores no more than one that
// holds them apart: Weights.Phrase).
var Ablate = map[string]bool{}

// Rules are the rules Ablate switches off: the answer finder's, and
// those of research's offline writer that read Ablate ("firstpages",
// "firstread", "further").
var Rules = []string{"alternative", "asking", "back", "codeword", "content", "context", "continued", "field", "firstpages", "firstread", "fit", "further", "heading", "joined", "key", "kind", "length", "neighbour", "phrase", "rank", "release", "stem", "term", "title", "unheld", "window"}

// SetAblated switches off the named rules and switches on the others.
func SetAblated(names []string) error {
	for _, n := range names {
		if !slices.Contains(Rules, n) {
			return fmt.Errorf("ablate: unknown rule %q (rules: %s)", n, strings.Join(Rules, ", "))
		}
	}
	clear(Ablate)
	for _, n := range names {
		Ablate[n] = true
	}
	return nil
}

// MaxSentence is the longest sentence quoted as an answer, in bytes.
const MaxSentence = 600

// maxQuestionWords bounds the words of a question weighed (a question's
// words times the sentences read is the finder's work).
const maxQuestionWords = 64

type unitRef struct {
	doc, unit int
	terms     map[string]bool
}

// MaxQuoted is how many windows an answer quotes at most: ask's answer,
// and the windows research looks in for the value a question asks for.
const MaxQuoted = 3

// Find returns the best answers, at most n, best first (a document's
// best window, or its runner-up as an alternative: windows), and the
// marked words of the question (Marked) that no document holds (a
// release's number in them written as one: missingMarked): when there
// are any, the documents do not speak of what the question names.
func Find(question string, docs []Doc, n int) ([]Answer, []string) {
	content := question
	if !Ablate["content"] {
		content = Content(question)
	}
	f := &finder{asked: askedOf(question)}
	f.read(docs)
	missing := f.missingMarked(question)
	f.weigh(question, content)
	if f.total == 0 || len(f.all) == 0 {
		return nil, missing
	}
	return f.byGain(f.windows(), n), missing
}

// finder holds what Find reads of the documents and the question.
type finder struct {
	asked

	docs   []Doc
	units  [][]Unit
	own    [][]map[string]bool // each unit's terms
	titles []map[string]bool
	all    []unitRef // the units that can answer, in document order
	df     map[string]int
	// fitting is each unit's fit (asked.fit), read once: a unit is
	// asked as itself and as a neighbour in its neighbours' windows (0
	// not read yet, 1 no, 2 yes).
	fitting [][]uint8
	// fields is, by document and heading, the first field of the entry
	// under that heading that holds the kind of answer asked for (-1:
	// none), read once: every sentence of a long section asks it.
	fields []map[int]int

	words  []qword
	weight map[string]float64 // per term, for the gain of an answer
	total  float64
	// pairs are the question's words written one after the other
	// ("connection pool": kinds); before is each unit's words with the
	// words written just before them, read once a pair asks.
	pairs  []pair
	pairW  []float64 // each pair's weight (pairWeights), read once a window asks
	before [][]map[string][]written
}

// read splits the documents into units with their terms, and counts each
// term's units (a unit counting the terms of its heading too).
func (f *finder) read(docs []Doc) {
	f.docs = docs
	f.units = make([][]Unit, len(docs))
	f.own = make([][]map[string]bool, len(docs))
	f.titles = make([]map[string]bool, len(docs))
	f.fitting = make([][]uint8, len(docs))
	f.df = map[string]int{}
	for d, doc := range docs {
		f.units[d] = Units(doc.Body)
		f.fitting[d] = make([]uint8, len(f.units[d]))
		f.fields = append(f.fields, map[int]int{})
		f.titles[d] = termSet(doc.Title)
		f.own[d] = make([]map[string]bool, len(f.units[d]))
		for i, u := range f.units[d] {
			f.own[d][i] = termSet(u.Text)
		}
		for i, u := range f.units[d] {
			if u.Kind == Heading {
				continue
			}
			seen := map[string]bool{}
			for t := range f.own[d][i] {
				seen[t] = true
			}
			if u.Heading >= 0 {
				for t := range f.own[d][u.Heading] {
					seen[t] = true
				}
			}
			for t := range seen {
				f.df[t]++
			}
			f.all = append(f.all, unitRef{doc: d, unit: i, terms: f.own[d][i]})
		}
	}
}

// fits reports whether unit i of document d holds the kind of answer
// the question asks for (asked.fit), reading it once.
func (f *finder) fits(d, i int) bool {
	if f.fitting[d][i] == 0 {
		f.fitting[d][i] = 1
		if f.fit(f.units[d][i]) {
			f.fitting[d][i] = 2
		}
	}
	return f.fitting[d][i] == 2
}

// held is each document's terms, its title's included.
func (f *finder) held() []map[string]bool {
	held := make([]map[string]bool, len(f.units))
	for d := range f.units {
		held[d] = maps.Clone(f.titles[d])
		for _, ts := range f.own[d] {
			maps.Copy(held[d], ts)
		}
	}
	return held
}

// cover is the share of the question's weight unit i of document d
// holds, with the terms of extra, and its heading, title and neighbours
// at their shares; a word is held at the share of its own terms, or of
// the term it makes written as one with its neighbour (qword.joined)
// when that is more.
func (f *finder) cover(d, i int, extra map[string]bool, win []int) float64 {
	var v float64
	other := f.otherKind(d, i, win)
	share := func(t string) float64 {
		if (f.own[d][i][t] || extra[t]) && !other[t] {
			return 1
		}
		return f.nearShare(d, i, func(j int) bool { return f.own[d][j][t] }, f.titles[d][t])
	}
	for _, qw := range f.words {
		if qw.release != nil {
			v += qw.w * f.releaseShare(d, i, win, qw.release)
			continue
		}
		var h float64
		for _, t := range qw.terms {
			h += share(t)
		}
		h = max(h/float64(len(qw.terms)), qw.stemShare(share))
		for _, j := range qw.joined {
			h = max(h, share(j))
		}
		v += qw.w * h
	}
	return v / f.total
}

// nearShare is the share of a word that unit i of document d does not
// hold itself that it holds by what stands near it, where in finds the
// word in a unit and inTitle says its page's title writes it: its
// heading's, its title's, or a neighbour's in its paragraph.
func (f *finder) nearShare(d, i int, in func(j int) bool, inTitle bool) float64 {
	us := f.units[d]
	switch {
	case !Ablate["heading"] && us[i].Heading >= 0 && in(us[i].Heading):
		return Weights.Heading
	case !Ablate["title"] && inTitle:
		return Weights.Title
	case !Ablate["neighbour"] && neighbourHolds(us, i, in):
		return Weights.Neighbour
	}
	return 0
}

// InlineCode quotes a line of code or a name as Markdown's inline code:
// between backticks, one more than the longest run of them it holds,
// with a space inside where it starts or ends with one.
func InlineCode(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// unquoted is a name without the backticks around it, when the page
// wrote it between one pair ("`--reset-author`").
func unquoted(s string) string {
	if t := strings.TrimPrefix(strings.TrimSuffix(s, "`"), "`"); len(t) == len(s)-2 && !strings.Contains(t, "`") {
		return t
	}
	return s
}

// windows scores every unit's window and keeps each document's best
// and, unless "alternative" is ablated, its runner-up: the best-scoring
// window that quotes none of the best's sentences.
func (f *finder) windows() []Answer {
	byDoc := make([][]scoredWindow, len(f.docs))
	for _, r := range f.all {
		if w, ok := f.score(r); ok {
			byDoc[r.doc] = append(byDoc[r.doc], w)
		}
	}
	var out []Answer
	for _, ws := range byDoc {
		if len(ws) == 0 {
			continue
		}
		// The first of the highest scores is the best, as in document
		// order; its runner-up the next that shares no sentence with it.
		slices.SortStableFunc(ws, func(a, b scoredWindow) int { return cmp.Compare(b.score, a.score) })
		best := f.answer(ws[0])
		out = append(out, best)
		if Ablate["alternative"] {
			continue
		}
		for _, w := range ws[1:] {
			if a := f.answer(w); !a.overlaps(best) {
				a.runnerUp = true
				out = append(out, a)
				break
			}
		}
	}
	return out
}

// scoredWindow is a unit's window scored, before it is built as an
// Answer (answer).
type scoredWindow struct {
	r          unitRef
	win        []int // the sentences whose terms it holds
	extra      map[string]bool
	cov, score float64
	anyFit     bool
	cont       int // the sentence it goes on into (continuation), or -1
	stepAt     int // a how-to's step quoted with it (step), or -1
}

// score scores unit r's window: false when the unit cannot answer.
func (f *finder) score(r unitRef) (scoredWindow, bool) {
	u := f.units[r.doc][r.unit]
	if len(u.Text) > MaxSentence || u.Kind == Code && f.kind != HowTo || u.Kind == Row {
		// A line of code answers how to do something, nothing else;
		// a table's row is shown to a model with its header (Select),
		// not quoted as an answer.
		return scoredWindow{}, false
	}
	if f.cover(r.doc, r.unit, nil, nil) == 0 {
		return scoredWindow{}, false
	}
	// The window: the sentence, and the sentence of its paragraph
	// that holds the kind of answer asked for when it does not; its
	// coverage is theirs together.
	fitAt := func(j int) bool { return f.fits(r.doc, j) }
	fits := !Ablate["fit"] && fitAt(r.unit)
	win := []int{r.unit}
	if !Ablate["window"] {
		win = window(f.units[r.doc], r.unit, fits, fitAt, func(i int) int { return f.entryField(r.doc, i) })
	}
	extra := map[string]bool{}
	anyFit := fits
	for _, j := range win {
		for t := range f.own[r.doc][j] {
			extra[t] = true
		}
		anyFit = anyFit || j != r.unit && !Ablate["fit"] && fitAt(j)
	}
	anyFit = anyFit || !Ablate["fit"] && f.signatureGives(r.doc, r.unit)
	cov := f.cover(r.doc, r.unit, extra, win)
	// A longer window must hold more to win: a sentence that says it
	// all is quoted alone.
	score := cov - Weights.WindowCost*float64(len(win)-1)
	// For a how-to, a sentence that holds no menu or command is
	// quoted with the step of its procedure that does (step): the
	// window holds the kind of answer asked for in it.
	cont, stepAt := continuation(f.units[r.doc], win), -1
	if cont < 0 && !anyFit && len(win) == 1 {
		stepAt = step(f.units[r.doc], r.unit, f.kind, fitAt)
	}
	if anyFit || stepAt >= 0 {
		score += Weights.Fit
	}
	if !Ablate["rank"] {
		score += Weights.Rank / float64(1+r.doc)
	}
	if !Ablate["phrase"] {
		score += Weights.Phrase * f.phrased(r.doc, win)
	}
	return scoredWindow{r: r, win: win, extra: extra, cov: cov, score: score, anyFit: anyFit, cont: cont, stepAt: stepAt}, true
}

// answer builds a scored window as an Answer: the question's terms it
// holds, and its sentences with what is quoted beside them (a
// continuation, a neighbour or a how-to's step for context, the
// sentence it points back at).
func (f *finder) answer(w scoredWindow) Answer {
	r, us := w.r, f.units[w.r.doc]
	win := slices.Clone(w.win)
	// The question's terms the window holds (its sentences' terms
	// are extra), a word's all when it holds the word written as one
	// with its neighbour, or its stem.
	a := Answer{Doc: r.doc, Coverage: w.cov, Fits: w.anyFit, Score: w.score, held: map[string]bool{}}
	for _, qw := range f.words {
		whole := slices.ContainsFunc(qw.joined, func(j string) bool { return w.extra[j] }) || qw.stemIn(w.extra)
		for _, t := range qw.terms {
			if whole || w.extra[t] {
				a.held[t] = true
			}
		}
	}
	context := -1
	opener := win[0]
	back := refersBack(us, f.own[r.doc], opener)
	if w.cont >= 0 {
		win = append(win, w.cont)
	} else if !w.anyFit && len(win) == 1 {
		// For a how-to, the step that names the menu or command
		// rather than the sentence beside this one.
		if context = w.stepAt; context < 0 {
			context = neighbour(us, r.unit, back)
		}
		if context >= 0 {
			win = append(win, context)
			slices.Sort(win)
		}
	}
	if context < 0 && w.cont < 0 && back && !Ablate["back"] && !Ablate["context"] {
		// A window that opens by pointing back ("This tool is …",
		// "이 도구는 …") is quoted after what it points at, whether or
		// not it holds the kind of answer asked for; one that goes on
		// into the sentence after it (continuation) is quoted with that
		// instead.
		context = win[0] - 1
		win = append([]int{context}, win...)
	}
	// A pronoun ("He …", "It …") stands for what its document's title
	// may name too: only a demonstrative's antecedent is Back.
	a.Back = back && context == opener-1 && (textseg.PointsBackAtSentence(us[opener].Text) || !textseg.PointsBack(us[opener].Text))
	for _, j := range win {
		a.Sentences = append(a.Sentences, us[j].Text)
		a.Code = append(a.Code, us[j].Kind == Code || us[j].Term)
		a.Context = append(a.Context, j == context)
	}
	if h := us[r.unit].Heading; h >= 0 {
		a.Heading = us[h].Text
		if us[h].Term {
			a.Term = unquoted(us[h].Text)
		}
	}
	if name := itemName(us, win); name != "" {
		a.Term = name
	}
	a.units = win
	return a
}

// itemName is the name of the parameter or option whose item of a list
// the window quotes without its opening sentence, which names it with
// its type ("maxBuffer <number> Largest amount of data in bytes …",
// "path {string|Buffer|URL}"): an answer quotes it as the window's term,
// as it quotes the name a heading gives ("maxBuffer": "If exceeded, the
// child process is terminated …" "Default: 1024 * 1024."). "" when the
// window quotes that sentence, or its paragraph opens with none (or
// ablated: "field").
func itemName(us []Unit, win []int) string {
	if Ablate["field"] || len(win) == 0 {
		return ""
	}
	first := win[0]
	for first > 0 && us[first-1].Block == us[win[0]].Block && us[first-1].Kind == Sentence {
		first--
	}
	if first == win[0] {
		return ""
	}
	if m := itemRE.FindStringSubmatch(us[first].Text); m != nil {
		return m[1]
	}
	return ""
}

// itemRE opens an item of a reference's list of parameters or options:
// a name, then its type in angle brackets or braces.
var itemRE = regexp.MustCompile(`^([\pL_$][\pL\pN_.$-]*)\s+[<{][\pL\pN_.|\[\] ]+[>}]\s`)

// overlaps reports two windows of a document that quote a sentence in
// common.
func (a Answer) overlaps(b Answer) bool {
	return slices.ContainsFunc(a.units, func(j int) bool { return slices.Contains(b.units, j) })
}

// byGain orders the documents' answers (windows), at most n: the best first,
// then each the one that adds most of the question's weight to those
// before it (its Gain): the other side of a comparison, the second hop
// of a question; one that scores nearly as well as the best counts as
// adding Weights.Gain at least (Weights.Alternative). The same words in
// two documents (a page and its source text) are one answer.
func (f *finder) byGain(out []Answer, n int) []Answer {
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		if out[i].Doc != out[j].Doc {
			return out[i].Doc < out[j].Doc
		}
		return !out[i].runnerUp // a document's best before its runner-up
	})
	// A sentence is known by its key (textseg.SentenceKey): the same
	// sentence in two chunks (a page and its source text, two chunks
	// overlapping) is one.
	seen := map[string]bool{}
	var rest []Answer
	for _, a := range out {
		key := textseg.SentenceKey(strings.Join(a.own(), " "))
		if !seen[key] {
			seen[key] = true
			rest = append(rest, a)
		}
	}
	covered := map[string]bool{}
	quoted := map[string]bool{} // the sentences of the answers kept
	var kept []Answer
	for len(rest) > 0 && len(kept) < n {
		at, gain, alt := -1, -1.0, false
		for i, a := range rest {
			if quotedAll(a.own(), quoted) {
				continue // another answer quotes it already, as its neighbour
			}
			var g float64
			for t := range a.held {
				if !covered[t] {
					g += f.weight[t]
				}
			}
			if g /= f.total; len(kept) == 0 {
				g = 0 // the best comes first, whatever it adds
			}
			// One nearly as good as the best is quoted next, though it
			// may add nothing: of the two, one may hold the answer the
			// other only restates (rest is in order of score; one that
			// is none right after the best never is). Further ones count
			// as adding Weights.Gain, after those that add more (a
			// comparison's other side, a question's second hop).
			// A document's runner-up is quoted as such an alternative
			// only, and not when its document's best is the best of all
			// and holds the kind of answer asked for: that answers, and
			// its page's other windows would lengthen the answer for
			// little.
			alternative := len(kept) > 0 && !Ablate["alternative"] && a.Score >= Weights.Alternative*kept[0].Score &&
				!(a.runnerUp && a.Doc == kept[0].Doc && kept[0].Fits)
			if a.runnerUp && !alternative {
				continue
			}
			if alternative {
				if len(kept) == 1 && !alt {
					at, gain, alt = i, max(g, Weights.Gain), true
				}
				g = max(g, Weights.Gain)
			}
			if !alt && g > gain+1e-9 {
				at, gain = i, g
			}
		}
		if at < 0 {
			break
		}
		a := rest[at]
		a.Gain = max(gain, 0)
		if len(kept) == 0 {
			a.Gain = a.Coverage
		}
		for t := range a.held {
			covered[t] = true
		}
		a = a.without(quoted)
		for _, t := range a.Sentences {
			quoted[textseg.SentenceKey(t)] = true
		}
		kept = append(kept, a)
		rest = append(rest[:at], rest[at+1:]...)
	}
	return kept
}

// own is the window's sentences but the neighbour quoted for context.
func (a Answer) own() []string {
	var out []string
	for i, t := range a.Sentences {
		if i >= len(a.Context) || !a.Context[i] {
			out = append(out, t)
		}
	}
	return out
}

// without is the answer less the sentences quoted already (by an answer
// before it, as its neighbour: chunks overlap), its Code and Context
// kept beside them.
func (a Answer) without(quoted map[string]bool) Answer {
	var ss []string
	var code, context []bool
	for i, t := range a.Sentences {
		if !quoted[textseg.SentenceKey(t)] {
			ss, code, context = append(ss, t), append(code, a.Code[i]), append(context, a.Context[i])
		}
	}
	a.Sentences, a.Code, a.Context = ss, code, context
	return a
}

// quotedAll reports whether every one of ss is quoted.
func quotedAll(ss []string, quoted map[string]bool) bool {
	for _, s := range ss {
		if !quoted[textseg.SentenceKey(s)] {
			return false
		}
	}
	return len(ss) > 0
}

// continuation is the unit after a window that goes on from its last:
// a sentence that continues it ("Instead, Boolean values are stored as
// integers 0 (false) and 1 (true)."), or what a last sentence ending in a
// colon introduces ("The built-in macro attribute "binary" is equivalent
// to:" and its line of code), quoted with it though it does not count in
// its share of the question; -1 when there is none.
func continuation(us []Unit, win []int) int {
	last := win[len(win)-1]
	if Ablate["continued"] {
		return -1
	}
	j := last + 1
	if quotable(us, last, j) && continues(us[j].Text) {
		return j
	}
	// (A window of one sentence holds what its colon introduces
	// already: window.)
	if len(win) > 1 && introduces(us, last) {
		return j
	}
	return -1
}

// introduces reports a unit ending in a colon followed by what it
// introduces: a sentence or a line of code ("…, run:" and the command,
// read as a term when prose follows it), not a section's heading, and
// short enough to quote.
func introduces(us []Unit, i int) bool {
	return us[i].Kind == Sentence && (strings.HasSuffix(us[i].Text, ":") || strings.HasSuffix(us[i].Text, "：")) &&
		i+1 < len(us) && (us[i+1].Kind != Heading || us[i+1].Term) && us[i+1].Kind != Row && len(us[i+1].Text) <= MaxSentence
}

// neighbour is the sentence quoted beside unit i, a sentence that holds
// no kind of answer the question asks for: its paragraph's next
// sentence, or its previous one when there is no next to quote (it
// closes its paragraph, or the next is too long to quote) or when its
// subject points back at what that one names (back: refersBack); -1
// when there is none. The sentence
// that holds most of a question often restates it, and the one beside
// it answers ("The edition key in Cargo.toml indicates which edition the
// compiler should use for your code." and "If the key doesn't exist,
// Rust uses 2015 …"; "RGB 모드는 … 세 가지의 요소로 구성됩니다." and "각
// 요소는 0-255의 농도값을 갖습니다."). It is quoted, not counted in the
// window's share of the question (its terms count there at
// Weights.Neighbour).
func neighbour(us []Unit, i int, back bool) int {
	if Ablate["context"] {
		return -1
	}
	switch {
	case back:
		// "This is not the fastest hashing algorithm available" is about
		// what the sentence before it names.
		return i - 1
	case quotable(us, i, i+1):
		if said(us[i+1].Text) {
			return i + 1
		}
	case quotable(us, i, i-1):
		if said(us[i-1].Text) {
			return i - 1
		}
	}
	return -1
}

// refersBack reports unit i a sentence whose subject points back at
// the sentence before it in its paragraph, which says something by
// itself (said): a pronoun (textseg.PointsBack: "It …", "This is …"),
// or, unless the rule is ablated ("back"), a demonstrative before a
// noun that sentence holds ("This tool is …" after "The Heal tool is
// new.", "이 도구는 …" after "복원 도구는 …") or a Korean demonstrative
// pronoun ("이것은", "이는").
func refersBack(us []Unit, own []map[string]bool, i int) bool {
	if !quotable(us, i, i-1) || !said(us[i-1].Text) {
		return false
	}
	if textseg.PointsBack(us[i].Text) {
		return true
	}
	if Ablate["back"] {
		return false
	}
	fs := strings.Fields(us[i].Text)
	if len(fs) < 2 {
		return false
	}
	if backKo[fs[0]] {
		return true
	}
	if !demonstratives[fs[0]] {
		return false
	}
	noun := strings.TrimRightFunc(fs[1], unicode.IsPunct)
	ts := analyze.Terms(noun)
	return len(ts) > 0 && !slices.ContainsFunc(ts, func(t string) bool { return !own[i-1][t] })
}

// demonstratives open a sentence about something the one before it
// named, when the noun after them is one that sentence holds; backKo are
// Korean pronouns that stand for what the sentence before says.
var (
	demonstratives = map[string]bool{"This": true, "These": true, "That": true, "Those": true, "Such": true, "이": true, "그": true, "이러한": true, "그러한": true, "해당": true}
	backKo         = map[string]bool{"이것은": true, "이것이": true, "이는": true, "그것은": true, "그것이": true}
)

// said reports a sentence that says something by itself: three words
// or more, not introducing what follows it ("For example:", "See
// git-gc(1).", "Default: false." are not).
func said(s string) bool {
	if strings.HasSuffix(s, ":") || strings.HasSuffix(s, "：") {
		return false
	}
	words, ideographs := 0, 0
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, unicode.IsLetter) >= 0 {
			words++
		}
	}
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			ideographs++
		}
	}
	// Chinese and Japanese write no spaces between words.
	return words >= 3 || ideographs >= minSaidIdeographs
}

// minSaidIdeographs is the fewest Han and kana characters of a sentence
// that says something by itself, in a script with no spaces.
const minSaidIdeographs = 8

// quotable reports whether unit j is a sentence of unit i's paragraph
// short enough to quote with it.
func quotable(us []Unit, i, j int) bool {
	return j >= 0 && j < len(us) && us[j].Block == us[i].Block && us[j].Kind == Sentence && len(us[j].Text) <= MaxSentence
}

// continuers open a sentence that completes the one before it.
var continuers = regexp.MustCompile(`^(?:Instead|However|Otherwise|Rather|Therefore|Thus|Hence|So|Consequently|In that case|In this case|That is|In other words|대신|하지만|그러나|따라서|그러므로|즉|그러면|이 경우)[,\s]`)

// continues reports a sentence that goes on from the one before it.
func continues(s string) bool { return continuers.MatchString(s) }

// window is the sentences quoted for unit i: it, what it introduces
// when it ends with a colon, and, when it does not hold the kind of
// answer asked for, the nearest sentence of its paragraph that does, or
// else the field of its entry that does (field: finder.entryField).
func window(us []Unit, i int, fits bool, fitAt func(j int) bool, field func(i int) int) []int {
	out := []int{i}
	if introduces(us, i) {
		return append(out, i+1)
	}
	if fits {
		return out
	}
	for _, j := range []int{i + 1, i + 2, i - 1, i + 3, i - 2} {
		if quotable(us, i, j) && fitAt(j) {
			if j < i {
				return []int{j, i}
			}
			return append(out, j)
		}
	}
	if j := field(i); j >= 0 {
		if j < i {
			return []int{j, i}
		}
		return append(out, j)
	}
	return out
}

// signatureGives reports a unit of an entry whose heading is a call's
// signature giving its parameters' defaults ("lru_cache(maxsize=128,
// typed=False)", "timeit.timeit(stmt='pass', …, number=1000000)"), for a
// question that asks for a default (or an amount: a number among them):
// those are the entry's fields, written in its name, and an answer
// quotes the name with its window (Answer.Term). False when ablated:
// "field".
func (f *finder) signatureGives(d, i int) bool {
	if Ablate["field"] || f.kind != Default && !f.amount {
		return false
	}
	us := f.units[d]
	h := us[i].Heading
	if h < 0 || !us[h].Term {
		return false
	}
	for _, m := range paramDefaultRE.FindAllStringSubmatch(us[h].Text, -1) {
		if f.kind == Default || numberRE.MatchString(m[1]) && !strings.Contains(f.q, m[1]) {
			return true
		}
	}
	return false
}

// paramDefaultRE is a parameter given a default in a signature: its
// value after "=" ("maxsize=128", "sep=' '").
var paramDefaultRE = regexp.MustCompile(`[(,]\s*\*{0,2}[\pL_][\pL\pN_]*\s*=\s*([^,()\s][^,()]*)`)

// entryField is the first field of the entry unit i of document d sits
// in (Unit.Field: its "Default: 259200 (3 days, in seconds)") that holds
// the kind of answer asked for, other than i, or -1 (or ablated:
// "field"): a field is a paragraph of its own, but what it gives is the
// entry's, as the prose under it is. Each heading's is read once.
func (f *finder) entryField(d, i int) int {
	us := f.units[d]
	h := us[i].Heading
	if h < 0 || Ablate["field"] {
		return -1
	}
	first := func(skip int) int {
		for j := h + 1; j < len(us) && us[j].Heading == h; j++ {
			if j != skip && us[j].Field && len(us[j].Text) <= MaxSentence && f.fits(d, j) {
				return j
			}
		}
		return -1
	}
	j, ok := f.fields[d][h]
	if !ok {
		j = first(-1)
		f.fields[d][h] = j
	}
	if j == i {
		return first(i) // a field asking for its entry's other fields
	}
	return j
}

func neighbourHolds(us []Unit, i int, in func(j int) bool) bool {
	for _, j := range []int{i - 1, i + 1} {
		if j >= 0 && j < len(us) && us[j].Block == us[i].Block && us[j].Kind != Heading && in(j) {
			return true
		}
	}
	return false
}

// Answers are the answers worth quoting: the best, then each that adds
// at least Weights.Gain of the question's weight to those before it, or
// scores nearly as well as the best (byGain: Weights.Alternative).
func Answers(found []Answer) []Answer {
	if len(found) == 0 {
		return nil
	}
	out := found[:1]
	for _, a := range found[1:] {
		if a.Gain < Weights.Gain {
			break
		}
		out = append(out, a)
	}
	return out
}

// Confidence is ask's confidence: the share of the question's weight
// the best answer holds (one window answers; the further ones add
// context), lowered in proportion to the names the question marks
// (Marked) that no document holds (those documents speak of something
// else), and raised by Weights.Long for each word the question has
// beyond Weights.LongWords, lowered as much for each it has fewer. It is
// 0 for a question that asks for a value (a date, a release, an amount)
// when no answer holds one (ValueMissing): the passages hold its words,
// but not the value. Under Weights.AskAnswered ask does not know
// (research judges its sources by Coverage, against Weights.Answered).
// (The share the answers hold together told answerable questions from
// the others less well on the dev sets: 0.39 of the unanswerable
// refused at 0.17 false refusals, against 0.50 at 0.16.)
func Confidence(question string, answers []Answer, missing []string) float64 {
	if ValueMissing(question, answers) != NoValue {
		return 0 // the passages do not give the value asked for
	}
	c := coverage(question, answers, missing)
	if c > 0 && !Ablate["length"] {
		n := min(float64(questionWords(question)), 2*Weights.LongWords)
		c = max(0, c+Weights.Long*(n-Weights.LongWords))
	}
	return round2(c)
}

// Coverage is the share of the question's weight the best answer
// holds, lowered for the names marked that no document holds: research's
// measure of whether its sources answer.
func Coverage(question string, answers []Answer, missing []string) float64 {
	return round2(coverage(question, answers, missing))
}

// coverage is Coverage unrounded.
func coverage(question string, answers []Answer, missing []string) float64 {
	if len(answers) == 0 {
		return 0
	}
	c := answers[0].Coverage
	if marked := len(Marked(question)); marked > 0 {
		c *= 1 - float64(len(missing))/float64(marked)
	}
	return c
}

// round2 rounds a share to two decimals, at most 1.
func round2(c float64) float64 { return math.Round(min(c, 1)*100) / 100 }

// Value is the kind of value a question asks for that no answer gives.
type Value int

// Values missing.
const (
	NoValue      Value = iota // none missing: the question asks for no value, or an answer gives it
	DateValue                 // on what day
	ReleaseValue              // which release or year
	AmountValue               // how many, how much, how long
)

// ValueMissing reports the value a question asks for (a date; a release
// or a year; an amount, in figures or in words: "once", "세 개") when
// none of the answers gives one the question does not hold already, in
// a sentence of its own (not the neighbour quoted for context); NoValue
// when one does or the question asks for none. A question that asks
// whether ("Is there a limit on how long …?") asks for no amount. For a
// question that names a release ("3.11.0") and asks for a date or a
// release, a sentence that gives it for another (otherRelease) gives
// none; an amount may be written with dots of its own ("0.1 + 0.2" is
// "0.30000000000000004").
func ValueMissing(question string, answers []Answer) Value {
	a := askedOf(question)
	if Ablate["fit"] || !a.date && !a.release && !a.amount || len(answers) == 0 {
		return NoValue
	}
	var release *regexp.Regexp
	if a.date || a.release {
		release = releaseIn(question)
	}
	if slices.ContainsFunc(answers, func(an Answer) bool {
		if an.Fits && release == nil {
			return true
		}
		for i, s := range an.Sentences {
			if release != nil && an.Fits && !an.Context[i] && a.fit(Unit{Text: s, Kind: Sentence}) && !otherRelease(s, release) {
				return true
			}
			if a.amount && !an.Context[i] && a.countWord(s) {
				return true
			}
		}
		return false
	}) {
		return NoValue
	}
	switch {
	case a.date:
		return DateValue
	case a.release:
		return ReleaseValue
	}
	return AmountValue
}

func termSet(s string) map[string]bool {
	m := map[string]bool{}
	analyze.TermsFunc(s, func(t string) { m[t] = true })
	return m
}

// UniqueTerms is text's analysed terms, each once, in order.
func UniqueTerms(text string) []string { return unique(analyze.Terms(text)) }

func unique(ts []string) []string {
	seen := map[string]bool{}
	out := ts[:0:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// step is, for a how-to, the step of a procedure that names the menu,
// command or option unit i's step leads to: procedures write each step
// as a paragraph of its own, so it may follow under the same heading
// rather than in the same paragraph; -1 when none does within stepReach
// units, for any other question, and with the fit or context ablated.
func step(us []Unit, i int, kind Type, fitAt func(j int) bool) int {
	if kind != HowTo || us[i].Heading < 0 || Ablate["fit"] || Ablate["context"] {
		return -1
	}
	for j := i + 1; j < len(us) && j <= i+stepReach && us[j].Heading == us[i].Heading; j++ {
		if us[j].Kind == Sentence && len(us[j].Text) <= MaxSentence && fitAt(j) {
			return j
		}
	}
	return -1
}

// stepReach is how many units past a step its procedure's fitting step
// may stand.
const stepReach = 4
