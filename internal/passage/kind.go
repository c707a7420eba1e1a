package passage

import (
	"math"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// pair is two words of a question written one after the other, the
// first naming the kind of the second ("connection pool", "file size"):
// their terms, and the second as written (form).
type pair struct{ first, second, form string }

// written is an occurrence of a word in a unit: the term written just
// before it ("" after a stop word, a mark, a number or the start), and
// the word as written (form).
type written struct{ before, form string }

// pair records two neighbouring words of the question (weigh) as a
// pair: words of one term each, written in lower case, with no mark
// between them ("thread, pool"). A word with a capital is a name or
// part of one ("Giuseppe Verdi", "the -O flag", "CROSS JOIN"), and a
// name is no kind (Marked finds names); a Korean word's terms are its
// syllable pairs. A number, in digits or in words, counts the word after
// it and is no kind either.
func (f *finder) pair(a, b []string, aField, bField string) {
	if len(a) != 1 || len(b) != 1 || hangulTerm(a[0]) || hangulTerm(b[0]) ||
		strings.TrimRightFunc(aField, unicode.IsPunct) != aField {
		return
	}
	if strings.IndexFunc(aField, unicode.IsUpper) >= 0 || strings.IndexFunc(bField, unicode.IsUpper) >= 0 {
		return
	}
	if textseg.Number(a[0]) || countWordRE.MatchString(aField) || strings.EqualFold(aField, "one") {
		// A number counts the next ("five elements", "one test"); it
		// names no kind of it.
		return
	}
	f.pairs = append(f.pairs, pair{first: a[0], second: b[0], form: form(bField)})
}

// otherKind is the first words of the question's pairs that unit i of
// document d, with the units of its window, holds but not as the pair
// says: they never write the pair's first word just before its second,
// and each time they write the second as the question does, a word the
// question does not have stands just before it ("the lookaside memory
// pool" for "connection pool", "the largest block size" for "largest
// file size").
// The second word held there names another kind of thing, and the
// first, held elsewhere in it ("configured on a connection-by-connection
// basis"), is not what the question asks about; a unit that writes the
// second word alone ("the pool"), after a word of the question, or in
// another form ("differently" for "differ") says nothing against it.
func (f *finder) otherKind(d, i int, win []int) map[string]bool {
	if len(f.pairs) == 0 || Ablate["kind"] {
		return nil
	}
	units := win
	if !slices.Contains(win, i) {
		units = append([]int{i}, win...)
	}
	var out map[string]bool
	for _, p := range f.pairs {
		var seen []written
		for _, j := range units {
			if f.own[d][j][p.second] {
				seen = append(seen, f.preceding(d, j)[p.second]...)
			}
		}
		if slices.ContainsFunc(seen, func(w written) bool { return w.before == p.first }) {
			continue
		}
		seen = slices.DeleteFunc(seen, func(w written) bool { return w.form != p.form })
		if len(seen) == 0 || slices.ContainsFunc(seen, func(w written) bool { return w.before == "" || f.weight[w.before] > 0 }) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[p.first] = true
	}
	return out
}

// phrased is the share of the weight of the question's pairs that the
// units of window win of document d (a window holds its own unit) write
// as the question does: the pair's first word just before its second. A
// pair weighs by its rarity written so among the units read
// (pairWeights), as a word by its own: "stash entry", written together
// across Git's stash page, tells a window about the asked-for entry from
// one about another less than "reset author" does.
func (f *finder) phrased(d int, win []int) float64 {
	if len(f.pairs) == 0 {
		return 0
	}
	if f.pairW == nil {
		f.pairW = f.pairWeights()
	}
	var held, total float64
	for k, p := range f.pairs {
		total += f.pairW[k]
		if slices.ContainsFunc(win, func(j int) bool { return f.together(d, j, p) }) {
			held += f.pairW[k]
		}
	}
	if total == 0 {
		return 0
	}
	return held / total
}

// together reports whether unit i of document d writes pair p's first
// word just before its second.
func (f *finder) together(d, i int, p pair) bool {
	return f.own[d][i][p.first] && f.own[d][i][p.second] &&
		slices.ContainsFunc(f.preceding(d, i)[p.second], func(w written) bool { return w.before == p.first })
}

// pairWeights weighs each of the question's pairs by the units read
// that write it together, as weigh does a word by the units holding it.
func (f *finder) pairWeights() []float64 {
	n := float64(len(f.all))
	out := make([]float64, len(f.pairs))
	for k, p := range f.pairs {
		var df int
		for _, r := range f.all {
			if f.together(r.doc, r.unit, p) {
				df++
			}
		}
		out[k] = math.Log(1 + n/float64(1+df))
	}
	return out
}

// preceding is unit i of document d's occurrences of each term
// (precedes), read once.
func (f *finder) preceding(d, i int) map[string][]written {
	if f.before == nil {
		f.before = make([][]map[string][]written, len(f.units))
	}
	if f.before[d] == nil {
		f.before[d] = make([]map[string][]written, len(f.units[d]))
	}
	if f.before[d][i] == nil {
		f.before[d][i] = precedes(f.units[d][i].Text)
	}
	return f.before[d][i]
}

// precedes maps each term of text to its occurrences: the term written
// just before each, and the word as written. A stop word, a number, a
// word that opens with a mark (a quote, an option's dash) or one that
// closes with one (a comma) stands between two words.
func precedes(text string) map[string][]written {
	out := map[string][]written{}
	before := ""
	for _, field := range strings.Fields(text) {
		ts := analyze.Terms(field)
		if len(ts) == 0 {
			before = ""
			continue
		}
		if r, _ := utf8.DecodeRuneInString(field); unicode.IsPunct(r) {
			before = ""
		}
		fm := form(field)
		for _, t := range ts {
			out[t] = append(out[t], written{before: before, form: fm})
			before = t
			if textseg.Number(t) {
				// A number counts or names a version; it is no kind.
				before = ""
			}
		}
		if strings.TrimRightFunc(field, unicode.IsPunct) != field {
			before = ""
		}
	}
	return out
}

// form is a word as written, in lower case, without the marks around it
// or a plural's "s": "Pools," and "pool" are one form, "differently"
// and "differ" two.
func form(field string) string {
	w := strings.ToLower(strings.TrimFunc(field, unicode.IsPunct))
	if len(w) > 3 {
		w = strings.TrimSuffix(w, "s")
	}
	return w
}
