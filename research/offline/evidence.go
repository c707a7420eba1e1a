package offline

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/research"
)

// Evidence selection: which of the sources read a report cites, and in
// what order. A multi-hop question is answered by a chain of documents —
// the one the question names and the one it leads to — so the offline
// engine ranks pairs of sources, not sources one by one. A pair scores by
//
//   - how much of the question the two cover together, each question term
//     weighted by its rarity among the sources read (a name counts more
//     than "film");
//   - the distinct entities of the question the two are about (their
//     titles named in the question: both sides of a comparison);
//   - a link between them: one names the other's subject (the bridge of
//     a two-hop question).
//
// The report cites the sources of the best pairs, best first, while they
// stay relevant, up to maxEvidence: the answer's chain comes first, then
// the alternatives worth reading.

// maxEvidence caps the sources a report cites.
const maxEvidence = 10

// weighted is a question term and its weight.
type weighted struct {
	term   string
	weight float64
}

// Evidence implements research.Ranker: the sources of the best pairs,
// best first, at most maxEvidence.
func (Engine) Evidence(question string, ids []string, sources map[string]*research.Source) []string {
	return newEvidence(question, ids, sources).order
}

var _ research.Ranker = Engine{}

// evDoc is a source as evidence selection reads it.
type evDoc struct {
	src   *research.Source
	terms map[string]bool
	// base is the title without its disambiguation ("Leviathan (2014
	// film)" → "leviathan"), as lower-case words; phrase is the text the
	// same way, for phrase tests.
	base, phrase string
	// words are the text's words as written; caps holds its capitalised
	// words, lower-cased.
	words []string
	caps  map[string]bool
	// named: the question names this document's subject (its title);
	// side is the phrase naming it when the question compares two ("A or
	// B"), which may be less than its title ("the Sentra").
	named bool
	side  string
	// alone is the share of the question this document covers by itself.
	alone float64
}

// evidence is the ranking of a research's sources for its question.
type evidence struct {
	docs []*evDoc
	byID map[string]*evDoc
	// qterms are the question's terms, sorted (sums in a fixed order keep
	// reports reproducible), each weighed by its rarity among the sources.
	qterms []weighted
	total  float64
	// asked is the terms of the relation the question asks about; focus
	// is what it is about (focus).
	asked, focus map[string]bool
	// order is the sources to cite, best first; pair is the best pair.
	order []string
	pair  [2]*evDoc
	// answered: the best pair covers the question's named entities.
	answered bool
	// comparison: the question compares (comparative) and the best pair is
	// two different subjects both named (or the two sides of "A or B") in
	// the question.
	comparison bool
	// missing lists the question's words no source contains, when that
	// leaves the question unanswered (order is then empty).
	missing []string
}

// namedIn reports whether words (a text's, as written) hold a title's
// base as a name: the phrase with one of its words capitalised or a
// number there. "typical of the region" does not name the single
// "Typical", nor "is a military transport aircraft" the article
// "Military transport aircraft"; a text with no capitals at all (a
// question typed in lower case) names whatever it holds.
func namedIn(ws []string, base string) bool {
	bw := strings.Fields(base)
	if len(bw) == 0 {
		return false
	}
	anyCaps := false
	for i := 0; i+len(bw) <= len(ws); i++ {
		match, named := true, false
		for j, b := range bw {
			w := ws[i+j]
			if !strings.EqualFold(w, b) {
				match = false
				break
			}
			if !textseg.Connector(b) && nameWord(w) {
				named = true
			}
		}
		if match && named {
			return true
		}
	}
	for _, w := range ws {
		if textseg.Capitalised(w) {
			anyCaps = true
			break
		}
	}
	return !anyCaps && strings.Contains(phraseOfWords(ws), " "+base+" ")
}

// nameWord reports a word that makes a phrase a name: capitalised or a
// number.
func nameWord(w string) bool { return textseg.Capitalised(w) || textseg.Number(w) }

// phraseOf lower-cases text into its words joined by single spaces, padded
// with a space on each side for whole-phrase tests.
func phraseOf(text string) string { return phraseOfWords(textseg.Words(text)) }

// phraseOfWords is phraseOf of text already split into words.
func phraseOfWords(ws []string) string {
	return " " + strings.ToLower(strings.Join(ws, " ")) + " "
}

// baseTitle drops a title's trailing parenthesis.
func baseTitle(t string) string {
	if i := strings.LastIndex(t, " ("); i > 0 && strings.HasSuffix(t, ")") {
		return t[:i]
	}
	return t
}

func newEvidence(question string, ids []string, sources map[string]*research.Source) *evidence {
	qp := phraseOf(question)
	qTerms := termSet(question)
	qwords := textseg.Words(question)
	qsides := sides(question)
	ev := &evidence{byID: map[string]*evDoc{}, asked: asked(question), focus: focus(question)}
	for _, id := range ids {
		s := sources[id]
		if s == nil {
			continue
		}
		d := &evDoc{src: s, terms: termSet(s.Title + " " + s.Content), words: textseg.Words(s.Content), caps: map[string]bool{}}
		d.phrase = phraseOfWords(d.words)
		if b := strings.TrimSpace(phraseOf(baseTitle(s.Title))); len(b) > 3 {
			d.base = " " + b + " "
			d.named = strings.Contains(qp, d.base) && namedIn(qwords, strings.TrimSpace(d.base))
		}
		if qsides != nil {
			// A side of "A or B" is this document's subject when its title
			// holds it ("the Sentra" for "Nissan Sentra") or its opening
			// sentence names it as its subject ("The 1977 San Juan
			// earthquake, also known as Caucete earthquake, took place …"),
			// not as anything else ("a film directed by Frank Borzage").
			title, subj := phraseOf(s.Title), subject(s.Content)
			for _, side := range qsides {
				if strings.Contains(title, " "+side+" ") || namedIn(subj, side) {
					d.side = side
					break
				}
			}
		}
		for _, w := range d.words {
			if textseg.Capitalised(w) {
				d.caps[strings.ToLower(w)] = true
			}
		}
		ev.docs = append(ev.docs, d)
		ev.byID[id] = d
	}
	n := float64(len(ev.docs))
	for _, t := range slices.Sorted(maps.Keys(qTerms)) {
		df := 0
		for _, d := range ev.docs {
			if d.terms[t] {
				df++
			}
		}
		w := math.Log(1 + n/float64(1+df))
		ev.qterms = append(ev.qterms, weighted{t, w})
		ev.total += w
	}
	for _, d := range ev.docs {
		d.alone = ev.cover(d)
	}
	ev.rank(question)
	return ev
}

// cover is the idf-weighted share of the question's terms the documents
// hold between them.
func (ev *evidence) cover(ds ...*evDoc) float64 {
	if ev.total == 0 {
		return 0
	}
	var v float64
	for _, q := range ev.qterms {
		for _, d := range ds {
			if d.terms[q.term] {
				v += q.weight
				break
			}
		}
	}
	return v / ev.total
}

// link is how clearly a names b's subject: its whole title, written as a
// name (1: "typical of the region" does not name the single "Typical"),
// or the title's first distinctive word as a capitalised word ("Bantu"
// for "Bantu peoples", 0.5).
func link(a, b *evDoc) float64 {
	if b.base == "" {
		return 0
	}
	if strings.Contains(a.phrase, b.base) && namedIn(a.words, strings.TrimSpace(b.base)) {
		return 1
	}
	for _, w := range strings.Fields(b.base) {
		if len(w) > 3 && !textseg.Connector(w) {
			if a.caps[w] {
				return passage.Weights.PartialLink
			}
			break
		}
	}
	return 0
}

type scoredPair struct {
	a, b  *evDoc
	score float64
}

func (ev *evidence) pairScore(a, b *evDoc) float64 {
	named := 0.0
	switch {
	case a.named && b.named && a.base == b.base:
		named = 1 // one subject twice ("Verdi" and "Verdi (film)")
	case a.named && b.named:
		named = 2
	case a.named || b.named:
		named = 1
	}
	return ev.cover(a, b) + passage.Weights.PairTitle*named + passage.Weights.PairLink*max(link(a, b), link(b, a))
}

// rank orders the sources: the sources of the best pairs, best first.
func (ev *evidence) rank(question string) {
	eligible := 0
	for _, d := range ev.docs {
		if d.alone > 0 || d.named {
			eligible++
		}
	}
	if eligible >= 2 {
		if missing, share := ev.unread(question); share >= passage.Weights.Unanswered {
			// What the question is about is in none of the sources (a
			// good share of its weight, not a typo among many words):
			// nothing here answers it, and nothing is cited as if it did.
			ev.missing = missing
			return
		}
	}
	var pairs []scoredPair
	for i, a := range ev.docs {
		if a.alone == 0 && !a.named {
			continue
		}
		for _, b := range ev.docs[i+1:] {
			if b.alone == 0 && !b.named {
				continue
			}
			pairs = append(pairs, scoredPair{a, b, ev.pairScore(a, b)})
		}
	}
	if len(pairs) == 0 {
		// One source, or none that bears on the question.
		for _, d := range ev.docs {
			if d.alone > 0 || d.named {
				ev.order = append(ev.order, d.src.ID)
				ev.pair[0] = d
				break
			}
		}
		ev.answered = ev.pair[0] != nil && ev.namesCovered(ev.pair[0])
		return
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].score > pairs[j].score })
	best := pairs[0]
	// The pair's first is the one that covers more of the question alone:
	// the one the question is about.
	if best.b.alone+passage.Weights.PairTitle*b2f(best.b.named) > best.a.alone+passage.Weights.PairTitle*b2f(best.a.named) {
		best.a, best.b = best.b, best.a
	}
	ev.pair = [2]*evDoc{best.a, best.b}
	ev.comparison = (best.a.named && best.b.named && best.a.base != best.b.base || best.a.side != "" && best.b.side != "" && best.a.side != best.b.side) && comparative(question)
	ev.answered = ev.namesCovered(best.a, best.b)
	ev.choose(best, pairs[1:])
}

// choose orders the sources after the best pair: those that bear on the
// question and add most of what the chosen ones do not say, then the
// sources of the next best pairs while they come close.
func (ev *evidence) choose(best scoredPair, next []scoredPair) {
	// A source bears on the question when it is about something the
	// question names, mentions it, is linked to a source already cited (a
	// second hop) or covers a good share of the question: sharing one
	// generic word ("born") is not enough.
	var chosen []*evDoc
	bears := func(d *evDoc) bool {
		if d.named || d.alone >= passage.Weights.Bear {
			return true
		}
		for _, c := range append([]*evDoc{best.a, best.b}, chosen...) {
			if c != d && (link(d, c) > 0 || link(c, d) > 0) {
				return true
			}
		}
		for t := range ev.focus {
			if d.terms[t] {
				return true
			}
		}
		return false
	}
	seen := map[string]bool{}
	add := func(d *evDoc) {
		seen[d.src.ID] = true
		chosen = append(chosen, d)
		ev.order = append(ev.order, d.src.ID)
	}
	for _, d := range []*evDoc{best.a, best.b} {
		if bears(d) {
			add(d)
		}
	}
	// Then, greedily, the sources that add most of what the question asks
	// and the chosen ones do not say (a third link of a chain: "Bimmer"
	// names the actor the film's page only lists), a link to them
	// counting too.
	for len(ev.order) < maxEvidence {
		var pick *evDoc
		var top float64
		base := ev.cover(chosen...)
		for _, d := range ev.docs {
			if seen[d.src.ID] || !bears(d) {
				continue
			}
			gain := ev.cover(append([]*evDoc{d}, chosen...)...) - base
			if gain < passage.Weights.MinGain {
				continue
			}
			var l float64
			for _, c := range chosen {
				l = max(l, link(d, c), link(c, d))
			}
			if g := gain + passage.Weights.PairLink*l; g > top {
				pick, top = d, g
			}
		}
		if pick == nil {
			break
		}
		add(pick)
	}
	// Last, the sources of the next best pairs while they come close.
	for _, p := range append([]scoredPair{best}, next...) {
		if p.score < passage.Weights.Keep*best.score || len(ev.order) >= maxEvidence {
			break
		}
		for _, d := range []*evDoc{p.a, p.b} {
			if !seen[d.src.ID] && len(ev.order) < maxEvidence && bears(d) {
				add(d)
			}
		}
	}
}

// unread lists the words naming what the question is about (its focus:
// the names it mentions, or all its words when it names nothing) that no
// source read contains, and their share of the question's weight.
func (ev *evidence) unread(question string) ([]string, float64) {
	weight := map[string]float64{}
	for _, q := range ev.qterms {
		weight[q.term] = q.weight
	}
	var out []string
	var missing float64
	total := ev.total
	// Korean interrogatives and question endings are not what is asked
	// about ("어느", "좋나요").
	words := keywords(passage.Content(question))
	// A long question that names nothing puts in its own words what the
	// sources say in theirs: a word of it none holds weighs
	// passage.Weights.Unheld ("clobbering commits a colleague may have
	// pushed meanwhile"), as in the answer finder. Only when it names
	// nothing: the words this rule reads are the names a question gives
	// when it gives any (focus), which weigh whole in the finder too.
	unheld := 1.0
	if len(words) >= passage.Weights.UnheldWords && len(names(question)) == 0 {
		unheld = passage.Weights.Unheld
	}
	for _, w := range words {
		ts := termSet(w)
		if len(ts) == 0 {
			continue
		}
		absent := true
		var wt float64
		for t := range ts {
			wt += weight[t]
			if !ev.focus[t] {
				absent = false // not what the question is about
			}
			for _, d := range ev.docs {
				if d.terms[t] {
					absent = false
				}
			}
		}
		if absent {
			out = append(out, w)
			missing += wt * unheld
			total -= wt * (1 - unheld)
		}
	}
	if total <= 0 {
		return out, 0
	}
	return out, missing / total
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// namesCovered reports whether the documents between them mention every
// name the question asks about (its focus terms).
func (ev *evidence) namesCovered(ds ...*evDoc) bool {
	for t := range ev.focus {
		found := false
		for _, d := range ds {
			if d != nil && d.terms[t] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// minScopeDocs is the fewest sources read for a term most of them hold
// to be their subject (unscoped).
const minScopeDocs = 4

// unscoped is terms without those more than half the sources read hold,
// when four or more were read: the subject of the whole collection
// ("Rust" across the Rust book, "Calc" across its help), which any
// sentence may name, so naming it does not tell a sentence on the
// question's topic from one off it ("Rust is for students and those who
// are interested in learning about systems concepts." in a section on
// Cargo.toml's edition key). A word of the title of a source the
// question names is what it is about, however many sources write it
// ("Verdi" in a question about Verdi's operas, over pages of his
// operas). All of terms when every one is so.
func (ev *evidence) unscoped(terms map[string]bool) map[string]bool {
	if len(ev.docs) < minScopeDocs {
		return terms
	}
	subject := map[string]bool{}
	for _, d := range ev.docs {
		if d.named {
			maps.Copy(subject, termSet(d.base))
		}
	}
	out := map[string]bool{}
	for t := range terms {
		if subject[t] {
			out[t] = true
			continue
		}
		n := 0
		for _, d := range ev.docs {
			if d.terms[t] {
				n++
			}
		}
		if 2*n <= len(ev.docs) {
			out[t] = true
		}
	}
	if len(out) == 0 {
		return terms
	}
	return out
}
