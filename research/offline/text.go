package offline

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// sentences splits text into sentences (textseg.Spans) with whitespace
// collapsed, dropping fragments too short to say anything.
func sentences(text string) []string {
	var out []string
	for _, sp := range textseg.Spans(text) {
		s := textseg.OneLine(text[sp.Start:sp.End])
		n := utf8.RuneCountInString(s)
		if n >= 12 || n >= 6 && strings.IndexFunc(s, func(r rune) bool { return textseg.IsHangul(r) || unicode.Is(unicode.Han, r) }) >= 0 {
			out = append(out, s)
		}
	}
	return out
}

// termSet is the set of analysed terms of text.
func termSet(text string) map[string]bool {
	m := map[string]bool{}
	analyze.TermsFunc(text, func(t string) { m[t] = true })
	return m
}

// keywords returns the content words of text in order, lower-cased,
// without stop words (Snowball's list has every question word but
// "whose"), each once.
func keywords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range words(text) {
		lw := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(w), "'s"), "’s")
		if english.IsStopWord(lw) || lw == "whose" || seen[lw] || utf8.RuneCountInString(lw) < 2 && !isCJKWord(lw) {
			continue
		}
		seen[lw] = true
		out = append(out, lw)
	}
	return out
}

func isCJKWord(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Han, r)
}

// words splits text into words: letters and digits, with inner hyphens,
// apostrophes and periods kept ("F.C.", "Jolie-Pitt", "O'Neil").
func words(text string) []string {
	var out []string
	var cur []rune
	flush := func() {
		w := strings.Trim(string(cur), "-'.’")
		if w != "" {
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

// connectors may sit inside a name: "University of Kansas", "Ludwig van
// Beethoven".
var connectors = map[string]bool{"of": true, "the": true, "de": true, "van": true, "von": true, "der": true, "la": true, "le": true, "du": true, "del": true, "da": true, "and": true, "&": true}

// leading capitalised words that start sentences rather than names.
var notNames = map[string]bool{"The": true, "A": true, "An": true, "In": true, "On": true, "At": true, "It": true, "He": true, "She": true, "They": true, "This": true, "That": true, "These": true, "Those": true, "His": true, "Her": true, "Its": true, "Their": true, "After": true, "Before": true, "During": true, "As": true, "By": true, "For": true, "From": true, "With": true, "Which": true, "What": true, "Who": true, "When": true, "Where": true, "Why": true, "How": true, "Is": true, "Are": true, "Was": true, "Were": true, "Did": true, "Does": true, "Do": true, "Both": true, "Although": true, "However": true, "Since": true, "While": true, "If": true, "There": true, "Also": true, "Some": true, "Many": true, "Most": true, "One": true, "Two": true, "Other": true, "Following": true, "According": true, "Despite": true, "Between": true, "Among": true, "Under": true, "Over": true, "Through": true, "Later": true, "Then": true}

// names returns the capitalised multi- or single-word names in text
// ("Giuseppe Verdi", "University of Kansas"), and quoted titles.
func names(text string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(n string) {
		n = strings.Trim(n, " ,;:-'’.")
		if utf8.RuneCountInString(n) < 3 || seen[n] {
			return
		}
		seen[n] = true
		out = append(out, n)
	}
	// Quoted titles first: "Bimmer", “Leviathan”.
	for _, q := range []struct{ open, close string }{{`"`, `"`}, {"“", "”"}} {
		rest := text
		for {
			i := strings.Index(rest, q.open)
			if i < 0 {
				break
			}
			rest = rest[i+len(q.open):]
			j := strings.Index(rest, q.close)
			if j < 0 {
				break
			}
			if inner := rest[:j]; utf8.RuneCountInString(inner) <= 80 && strings.TrimSpace(inner) != "" {
				add(inner)
			}
			rest = rest[j+len(q.close):]
		}
	}
	ws := words(text)
	for i := 0; i < len(ws); {
		if !capitalised(ws[i]) || notNames[ws[i]] {
			i++
			continue
		}
		j := i + 1
		for j < len(ws) {
			if capitalised(ws[j]) && !notNames[ws[j]] || isNumber(ws[j]) && j > i {
				j++
				continue
			}
			if connectors[ws[j]] && j+1 < len(ws) && capitalised(ws[j+1]) {
				j += 2
				continue
			}
			break
		}
		add(strings.Join(ws[i:j], " "))
		i = j
	}
	return out
}

func capitalised(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.IsUpper(r)
}

func isNumber(w string) bool {
	for _, r := range w {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return w != ""
}
