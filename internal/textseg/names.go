package textseg

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Words splits text into words: runs of letters, digits and combining
// marks, with inner hyphens, apostrophes and periods kept ("F.C.",
// "Jolie-Pitt", "O'Neil", "3.5").
func Words(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		if w := strings.Trim(string(cur), "-'.’"); w != "" {
			out = append(out, w)
		}
		cur = cur[:0]
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			cur = append(cur, r)
		case (r == '-' || r == '\'' || r == '’' || r == '.') && len(cur) > 0:
			cur = append(cur, r)
		default:
			flush()
		}
	}
	flush()
	return out
}

// connectors are the lower-case words that stand inside names: "Bank of
// England", "Leonardo da Vinci", "Ludwig van Beethoven", "Chien Français
// Blanc et Noir", "Leader of the Pack".
var connectors = wordSet("of the de da di du del des la le von van der et")

// Connector reports a lower-case word that may stand inside a name.
func Connector(w string) bool { return connectors[w] }

// openers are words capitalised for where they stand, opening a sentence
// or a question, not for naming anything: articles, pronouns,
// prepositions, conjunctions, adverbs that open clauses, question words,
// auxiliaries, and the verbs a request opens with.
var openers = wordSet(`a an the this that these those it its he she they we i you me us my your his her their our him them hers theirs mine yours ours
	in on at of for to from by with as after before during since while until about into over under through between among despite according following
	and or but if although however also both either some many most one two other another each all there then later
	who whom whose what which when where why how
	is are was were be do does did can could will has have had should would shall must
	describe tell explain list give show compare summarize summarise define name find`)

// Opener reports a word capitalised for opening a sentence or a question
// rather than for being a name ("The", "Which", "Although", "Describe"),
// or such a word with a verb or "not" run into it ("I'm", "We'll",
// "Don't", "Isn't").
func Opener(w string) bool {
	w = strings.ToLower(w)
	if openers[w] {
		return true
	}
	i := strings.IndexAny(w, "'’")
	if i <= 0 {
		return false
	}
	head := w[:i]
	return openers[head] || strings.HasSuffix(head, "n") && openers[head[:len(head)-1]]
}

// Names returns the names text gives, in order, each once: runs of
// capitalised words that are not openers ("Giuseppe Verdi"), connectors
// inside a run before its next capitalised word ("University of Kansas"),
// numbers after a run's first word ("Series 16", "Apollo 11").
func Names(text string) []string { return names(text, false) }

// NamesAndNumbers is Names with each number that stands outside a name as
// a name of its own, in order: what a question asks about ("When did
// Giuseppe Verdi meet the Bank of England in 1850?": "Giuseppe Verdi",
// "Bank of England", "1850").
func NamesAndNumbers(text string) []string { return names(text, true) }

func names(text string, numbers bool) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	// An option ("-S", "--reset-author") is not a name: it stands as a
	// break between words.
	var ws []string
	for _, f := range strings.Fields(text) {
		if len(f) > 1 && f[0] == '-' && f != "--" {
			ws = append(ws, "-")
			continue
		}
		ws = append(ws, Words(f)...)
	}
	starts := func(w string) bool { return Capitalised(w) && !Opener(w) }
	for i := 0; i < len(ws); {
		if !starts(ws[i]) {
			if numbers && numeric(ws[i]) {
				add(ws[i])
			}
			i++
			continue
		}
		j := i + 1
	run:
		for j < len(ws) {
			switch {
			case starts(ws[j]) || Number(ws[j]):
				j++
			default:
				k := j
				for k < len(ws) && connectors[ws[k]] {
					k++
				}
				if k == j || k == len(ws) || !starts(ws[k]) {
					break run
				}
				j = k + 1
			}
		}
		add(strings.Join(ws[i:j], " "))
		i = j
	}
	return out
}

// Capitalised reports a word that starts with a capital letter.
func Capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

// Number reports a word of digits, with inner separators ("1850", "3.5",
// "1,083").
func Number(w string) bool {
	if w == "" || !unicode.IsDigit(rune(w[0])) {
		return false
	}
	return strings.IndexFunc(w, func(r rune) bool { return !unicode.IsDigit(r) && r != '.' && r != ',' }) < 0
}

// numeric is a word that starts with a digit: a number, perhaps with a
// unit or a Korean particle run into it ("512MB", "2.2에서").
func numeric(w string) bool { return w != "" && unicode.IsDigit(rune(w[0])) }

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}
