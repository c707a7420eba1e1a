package passage

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// qword is a word of the question: its terms and its weight, and the
// terms it makes written together with the word before or after it
// ("thread pool" is "threadpool", "request timeout" "requestTimeout"): a
// sentence holding one holds the word. A Korean word is held by its
// stem's terms too (analyze.KoreanStem: "이미지를" by "이미지의", "공유하려면"
// by "공유"), when they are fewer than its own: its particle or ending is
// grammar, not a word a sentence lacks.
type qword struct {
	terms  []string
	w      float64
	joined []string
	stem   []string
	// release matches the number written with dots the word writes (a
	// release's, "3.11.0", "2.10에서"; a value, "2.5") written as one
	// (releaseIn).
	release *regexp.Regexp
}

// stemTerms are the terms of a Korean word's stem, when it has one
// with fewer terms than the word (nil otherwise, or ablated: "stem").
func stemTerms(field string, terms []string) []string {
	if Ablate["stem"] {
		return nil
	}
	stem := analyze.KoreanStem(field)
	if stem == "" {
		return nil
	}
	if ts := unique(analyze.Terms(stem)); len(ts) > 0 && len(ts) < len(terms) {
		return ts
	}
	return nil
}

// stemShare is the share of its stem's terms a sentence holds, share
// giving each term's; 0 for a word with no stem.
func (qw qword) stemShare(share func(t string) float64) float64 {
	if len(qw.stem) == 0 {
		return 0
	}
	var h float64
	for _, t := range qw.stem {
		h += share(t)
	}
	return h / float64(len(qw.stem))
}

// stemIn reports a word with a stem whose terms are all in terms.
func (qw qword) stemIn(terms map[string]bool) bool {
	return len(qw.stem) > 0 && !slices.ContainsFunc(qw.stem, func(t string) bool { return !terms[t] })
}

// join adds a term the word makes with its neighbour, once.
func (qw *qword) join(t string) {
	if !slices.Contains(qw.joined, t) {
		qw.joined = append(qw.joined, t)
	}
}

// weigh reads the question's words, each weighed by the rarity of its
// terms among the sentences read (a Korean word's terms are its syllable
// pairs): a word is held in the share of its terms a sentence holds, so
// a Korean word counts once, however many pairs it has, or whole by the
// term it makes written as one with the word beside it (qword.joined,
// when a sentence read holds that term). The sentence that asks weighs
// more than the scene set before it ("I keep making 'fixup!' commits.
// Which setting …?"), and in a long question a word no sentence read
// holds, in its own terms or joined, weighs less (Weights.Unheld).
func (f *finder) weigh(question, content string) {
	nUnits := float64(len(f.all))
	f.weight = map[string]float64{}
	// The sentence that asks, read as content is (Find: Content, unless
	// ablated).
	last := lastSentence(question)
	if !Ablate["content"] {
		last = Content(last)
	}
	asking := termSet(last)
	// The scripts the sentences read are written in (Hangul or not),
	// read once a word none holds asks: a word of another script is not
	// one they could have put otherwise.
	var scripts map[bool]bool
	written := func(hangul bool) bool {
		if scripts == nil {
			scripts = map[bool]bool{}
			for t := range f.df {
				scripts[hangulTerm(t)] = true
			}
		}
		return scripts[hangul]
	}
	marked := map[string]bool{} // the terms of the names it marks
	for _, m := range Marked(question) {
		analyze.TermsFunc(m, func(t string) { marked[t] = true })
	}
	seenWord := map[string]int{} // each word's index, by its terms
	var unheldWords []int        // the words no sentence read holds
	// The word before this one, for the term the two make written as
	// one: none after a stop word (the two are not written together).
	prev, prevField := -1, ""
	for _, field := range strings.Fields(content) {
		ts := unique(analyze.Terms(field))
		if len(ts) == 0 {
			prev = -1
			continue
		}
		key := strings.Join(ts, " ")
		at, seen := seenWord[key]
		if !seen {
			if len(f.words) == maxQuestionWords {
				prev = -1
				continue
			}
			var w float64
			scene, unheld := true, true
			for _, t := range ts {
				w += math.Log(1 + nUnits/float64(1+f.df[t]))
				scene = scene && !asking[t]
				unheld = unheld && f.df[t] == 0
			}
			w /= float64(len(ts))
			if scene && !Ablate["asking"] {
				w *= Weights.Scene
			}
			at = len(f.words)
			seenWord[key] = at
			f.words = append(f.words, qword{terms: ts, w: w, stem: stemTerms(field, ts), release: releaseIn(field)})
			if unheld && !slices.ContainsFunc(ts, func(t string) bool { return marked[t] }) && written(hangulTerm(ts[0])) {
				unheldWords = append(unheldWords, at)
			}
		}
		if prev >= 0 && prev != at {
			f.pair(f.words[prev].terms, ts, prevField, field)
		}
		if prev >= 0 && prev != at && !Ablate["joined"] {
			// The word after may close a clause ("thread pool?"); the one
			// before may not ("thread, pool").
			if j := joinedTerm(prevField, strings.TrimRightFunc(field, unicode.IsPunct)); j != "" && f.df[j] > 0 {
				f.words[prev].join(j)
				f.words[at].join(j)
			}
		}
		prev, prevField = at, field
	}
	// A word held written as one with its neighbour is held.
	unheldWords = slices.DeleteFunc(unheldWords, func(i int) bool { return len(f.words[i].joined) > 0 })
	if len(f.words) >= Weights.UnheldWords && !Ablate["unheld"] {
		for _, i := range unheldWords {
			f.words[i].w *= Weights.Unheld
		}
	}
	for _, qw := range f.words {
		for _, t := range qw.terms {
			f.weight[t] = max(f.weight[t], qw.w/float64(len(qw.terms)))
		}
		f.total += qw.w
	}
}

// questionWords is how many words the question weighs (weigh): its
// content's words that have terms, each once.
func questionWords(question string) int {
	content := question
	if !Ablate["content"] {
		content = Content(question)
	}
	seen := map[string]bool{}
	for _, field := range strings.Fields(content) {
		if ts := unique(analyze.Terms(field)); len(ts) > 0 {
			seen[strings.Join(ts, " ")] = true
		}
	}
	return min(len(seen), maxQuestionWords)
}

// joinedTerm is the term two words of one term each make written as one
// ("thread" "pool": "threadpool"), or "" when they make none of their own
// ("connect" "ion" is "connect"): words of Latin letters only, as a
// compound or an identifier joins them. The term is stemmed, so two
// words may join into another word's stem ("man" "age": "manag", as
// "management" has it); only words beside each other in a question are
// joined, and only into a term a sentence read holds.
func joinedTerm(a, b string) string {
	latin := func(w string) bool {
		return w != "" && strings.IndexFunc(w, func(r rune) bool { return r > unicode.MaxASCII || !unicode.IsLetter(r) }) < 0
	}
	if !latin(a) || !latin(b) {
		return ""
	}
	ta, tb, tj := analyze.Terms(a), analyze.Terms(b), analyze.Terms(a+b)
	if len(ta) != 1 || len(tb) != 1 || len(tj) != 1 || tj[0] == ta[0] || tj[0] == tb[0] {
		return ""
	}
	return tj[0]
}

// hangulTerm reports a term written in Hangul.
func hangulTerm(t string) bool {
	return strings.IndexFunc(t, textseg.IsHangul) >= 0
}
