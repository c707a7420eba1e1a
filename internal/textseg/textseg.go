// Package textseg reads the pieces of text Quarry's extractive parts (the
// offline research engine, fact extraction, Q&A answers, follow-up
// questions) work with: sentences, keeping byte offsets so a quoted
// passage can be pointed at in its source; words; and names, with the one
// list of connectors that stand inside names and the one list of words
// capitalised only for opening a sentence.
package textseg

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Span is a sentence's byte range in the text, without surrounding space.
type Span struct{ Start, End int }

// Spans splits text into sentences: at . ! ? followed by a space and a
// capital, digit or quote (not after an initial, a common abbreviation or
// the number that opens a numbered item or section: "7. Simple
// statements" is one sentence, not "7." and another),
// at CJK full stops, at Korean sentence endings and at blank lines.
func Spans(text string) []Span {
	var out []Span
	add := func(a, b int) {
		for a < b {
			r, n := utf8.DecodeRuneInString(text[a:])
			if !unicode.IsSpace(r) {
				break
			}
			a += n
		}
		for b > a {
			r, n := utf8.DecodeLastRuneInString(text[a:b])
			if !unicode.IsSpace(r) {
				break
			}
			b -= n
		}
		if b > a {
			out = append(out, Span{a, b})
		}
	}
	start := 0
	// Byte offsets from ranging over the string itself: an invalid byte is
	// one rune (U+FFFD) of width 1, not utf8.RuneLen's 3.
	rs := make([]rune, 0, len(text))
	pos := make([]int, 0, len(text)+1)
	for i, r := range text {
		rs = append(rs, r)
		pos = append(pos, i)
	}
	pos = append(pos, len(text))
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		cut := -1
		switch {
		case r == '\n' && i+1 < len(rs) && rs[i+1] == '\n':
			cut = i
		case r == '。' || r == '！' || r == '？':
			cut = i + 1
		case r == '.' || r == '!' || r == '?':
			j := i + 1
			for j < len(rs) && strings.ContainsRune(`"')]”’`, rs[j]) {
				j++
			}
			if j >= len(rs) || !unicode.IsSpace(rs[j]) {
				continue
			}
			k := j
			for k < len(rs) && unicode.IsSpace(rs[k]) {
				k++
			}
			if k < len(rs) && !(unicode.IsUpper(rs[k]) || unicode.IsDigit(rs[k]) || strings.ContainsRune(`"'“‘(`, rs[k]) || IsHangul(rs[k])) {
				continue
			}
			if r == '.' && (abbreviation(rs[:i]) || enumerator(rs[start:i])) {
				continue
			}
			cut = j
		}
		if cut >= 0 {
			add(pos[start], pos[cut])
			start = cut
		}
	}
	add(pos[start], len(text))
	return out
}

// IsHangul reports a Hangul rune.
func IsHangul(r rune) bool { return unicode.Is(unicode.Hangul, r) }

var abbrevs = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "st": true, "jr": true, "sr": true, "vs": true, "no": true, "inc": true, "ltd": true, "co": true, "corp": true, "prof": true, "gen": true, "col": true, "lt": true, "mt": true, "ft": true, "fig": true, "al": true, "e.g": true, "i.e": true, "u.s": true, "u.k": true, "op": true, "opp": true, "nos": true, "vol": true, "vols": true, "pp": true, "ch": true, "sec": true, "art": true, "ed": true, "eds": true, "rev": true, "approx": true, "ca": true, "cf": true, "dept": true, "univ": true, "est": true, "jan": true, "feb": true, "aug": true, "sept": true, "oct": true, "nov": true, "dec": true}

// abbreviation reports whether the word before a period is an initial or a
// known abbreviation.
func abbreviation(before []rune) bool {
	i := len(before)
	for i > 0 && !unicode.IsSpace(before[i-1]) && before[i-1] != '(' {
		i--
	}
	w := strings.ToLower(string(before[i:]))
	if utf8.RuneCountInString(w) == 1 && unicode.IsLetter(before[len(before)-1]) {
		return true // an initial: "John F. Kennedy"
	}
	return abbrevs[w]
}

// enumerator reports a sentence so far that is only a number in ASCII
// digits, the period after it to come: an item's or a section's ("7",
// "3.1"). A reply that is only a number ("42. The …") reads so too.
func enumerator(sentence []rune) bool {
	w := strings.TrimSpace(string(sentence))
	return w != "" && w[0] != '.' && strings.Trim(w, "0123456789.") == ""
}

// OneLine collapses every run of white space in s to one space and trims
// the ends.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// SentenceKey is what makes two copies of a sentence one: its words
// lower-cased, one space apart, after NFC. What two renderings of a page
// write otherwise — spaces, quotation marks and backticks, dashes, and
// punctuation ("like this::" in a page's source, "like this:" in its
// HTML) — is a gap between words. Symbols are kept ("x > 0" is not
// "x < 0", "C++" not "C#"), and so is a minus sign before a number. A
// text with no word or symbol is its own key.
func SentenceKey(s string) string {
	s = norm.NFC.String(s)
	var b strings.Builder
	gap := false
	prev := ' '
	for i, r := range s {
		keep := true
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			r = unicode.ToLower(r)
		case r == '-':
			next, _ := utf8.DecodeRuneInString(s[i+1:])
			keep = unicode.IsSpace(prev) && unicode.IsDigit(next)
		case r == '`' || r == '´':
			keep = false // a quotation mark, as markup writes code
		case unicode.IsSymbol(r) || strings.ContainsRune(`#%&*/\@`, r):
		default:
			keep = false
		}
		prev = r
		if !keep {
			gap = true
			continue
		}
		if gap && b.Len() > 0 {
			b.WriteByte(' ')
		}
		gap = false
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return s
	}
	return b.String()
}

// EndsSentence reports a sentence that ends as one does: with . ! ? or
// their CJK forms, perhaps inside closing quotes or brackets; not a
// title, a heading or a line of a listing.
func EndsSentence(s string) bool {
	s = strings.TrimRight(s, " \"'’”»)]")
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?。！？…", r)
}
