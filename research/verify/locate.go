package verify

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// index finds a model's quote in a source text, forgiving what models
// change when they copy: runs of white space, letter case, curly quotes
// and dashes, and punctuation or an ellipsis around the quote. It never
// forgives a different word.
type index struct {
	norm []rune
	// at[i] is the byte offset in the source of norm[i].
	at []int
	// end[i] is the byte offset just past the source rune norm[i] came from.
	end []int
}

func newIndex(text string) *index {
	x := &index{}
	space := false
	for i, r := range text {
		_, size := utf8.DecodeRuneInString(text[i:])
		if unicode.IsSpace(r) {
			if !space && len(x.norm) > 0 {
				x.norm = append(x.norm, ' ')
				x.at = append(x.at, i)
				x.end = append(x.end, i+size)
			}
			space = true
			continue
		}
		space = false
		x.norm = append(x.norm, fold(r))
		x.at = append(x.at, i)
		x.end = append(x.end, i+size)
	}
	return x
}

// fold is the comparison form of a rune.
func fold(r rune) rune {
	switch r {
	case '‘', '’', '‛', '′', '`':
		return '\''
	case '“', '”', '„', '″':
		return '"'
	case '‐', '‑', '‒', '–', '—', '−':
		return '-'
	}
	return unicode.ToLower(r)
}

// normQuote is a quote in the index's form, without the punctuation,
// quote marks and ellipses a model may put around it.
func normQuote(q string) []rune {
	// Trimmed in the folded form, so every mark that folds to a quote
	// (a backtick, a prime) is trimmed like the quote itself.
	n := newIndex(q).norm
	trim := func(r rune) bool { return r == ' ' || r == '"' || r == '\'' || r == '…' || r == '.' }
	for len(n) > 0 && trim(n[0]) {
		n = n[1:]
	}
	for len(n) > 0 && trim(n[len(n)-1]) {
		n = n[:len(n)-1]
	}
	return n
}

// locate returns the byte range of quote in the text, on word edges (a
// quote of "330 metres" is not found in "1330 metres"), extended over a
// sentence-ending mark right after it.
func (x *index) locate(quote string) (start, end int, ok bool) {
	q := normQuote(quote)
	if len(q) == 0 {
		return 0, 0, false
	}
	for from := 0; from < len(x.norm); {
		i := runeIndex(x.norm[from:], q)
		if i < 0 {
			return 0, 0, false
		}
		i += from
		last := i + len(q) - 1
		if edge(x.norm, i-1, -1, q[0]) && edge(x.norm, last+1, 1, q[len(q)-1]) {
			if n := last + 1; n < len(x.norm) && strings.ContainsRune(".!?", x.norm[n]) && (n+1 == len(x.norm) || x.norm[n+1] == ' ') {
				last = n
			}
			return x.at[i], x.end[last], true
		}
		from = i + 1
	}
	return 0, 0, false
}

// edge reports whether norm[j] may border a match whose rune next to it
// is r (dir is -1 before the match, +1 after): outside the text, or not
// continuing r's word or number ("330" does not end inside "330.5").
func edge(norm []rune, j, dir int, r rune) bool {
	if j < 0 || j >= len(norm) {
		return true
	}
	if wordRune(norm[j]) && wordRune(r) {
		return false
	}
	k := j + dir
	return !(unicode.IsDigit(r) && (norm[j] == '.' || norm[j] == ',') && k >= 0 && k < len(norm) && unicode.IsDigit(norm[k]))
}

func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

func runeIndex(s, sub []rune) int {
	if len(sub) > len(s) {
		return -1
	}
	first := sub[0]
outer:
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i] != first {
			continue
		}
		for j := 1; j < len(sub); j++ {
			if s[i+j] != sub[j] {
				continue outer
			}
		}
		return i
	}
	return -1
}
