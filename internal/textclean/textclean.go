// Package textclean makes untrusted text safe to store and to print on a
// terminal: valid UTF-8, no control characters (ESC sequences, NUL,
// C1 controls) and no bidirectional overrides that reorder what a reader
// sees.
package textclean

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Line cleans s for one line of output (a title, a question, a URL shown
// in a list): invalid bytes become U+FFFD, controls and line breaks become
// spaces, runs of white space collapse, and the ends are trimmed.
func Line(s string) string {
	return strings.Join(strings.Fields(clean(s, false)), " ")
}

// Text cleans s and keeps its lines and tabs.
func Text(s string) string { return clean(s, true) }

func clean(s string, keepLines bool) string {
	if isClean(s, keepLines) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case keepLines && (r == '\n' || r == '\t'):
			b.WriteRune(r)
		case r == '\r' && keepLines:
			// CRLF becomes LF; a lone CR (which can overwrite a line on a
			// terminal) too.
			if i < len(s) && s[i] == '\n' {
				continue
			}
			b.WriteByte('\n')
		case unsafe(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isClean(s string, keepLines bool) bool {
	for _, r := range s {
		if r == utf8.RuneError || (unsafe(r) && !(keepLines && (r == '\n' || r == '\t'))) || r == '\r' {
			return false
		}
	}
	return true
}

// unsafe reports the runes never printed as they are: C0 and C1
// controls, DEL, and the bidirectional embedding, override and isolate
// controls.
func unsafe(r rune) bool {
	switch {
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return unicode.Is(unicode.Cc, r)
}

// Clip cuts s to at most n characters, marking a cut with "…" (nothing
// is left of s when n is under 1).
func Clip(s string, n int) string {
	if n < 1 {
		return ""
	}
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	// Walk to the cut rather than convert the whole of s to runes: it may
	// be a server's error body of megabytes.
	cut := 0
	for range n - 1 {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut] + "…"
}

// debris is an opening bracket that starts a word, followed by separators
// and then by what the brackets hold (what is left of a stripped
// pronunciation or a removed link: "Dvořák ( ; ] ; 8 September 1841");
// emptyParens is an empty pair of brackets that starts a word ("Paris ( )
// is"). Brackets attached to what precedes them are code, not debris:
// a call or a signature ("main()", "print()", "Result<(), E>"), and
// separators the brackets close on are code too ("for (;;)").
var (
	debris      = regexp.MustCompile(`(^|\s)\(\s*(?:[;,:/|\]\[]\s*)+([^\s;,:/|\]\[)])`)
	emptyParens = regexp.MustCompile(`(?m)(?:^|[ \t]+)\(\s*\)`)
)

// strayTail is a short fragment after a sentence's end that closes a
// bracket and ends its line: what a stripped Markdown link leaves
// ("Paris is the capital of France. data)").
var strayTail = regexp.MustCompile(`(?m)([.!?])[ \t]+[^\s()\[\]]{1,40}[)\]][ \t]*$`)

// Debris removes bracket debris from a document's text: "Dvořák ( ; ] ;
// 8 September 1841 – 1 May 1904)" reads "Dvořák (8 September 1841 – 1
// May 1904)", and a line's stray tail that closes a bracket it never
// opened goes ("… of France. data)" reads "… of France."), so a sentence
// quoted from it carries no stray marks.
func Debris(s string) string {
	if !strings.ContainsAny(s, "()]") {
		return s
	}
	// The checks before each pattern are what it needs to match, looked
	// for without it: most documents with brackets need neither, and the
	// patterns took an eighth to a sixth of Quarry's ingest CPU.
	if mayHaveStrayTail(s) {
		s = removeStrayTails(s)
	}
	if !mayHaveDebris(s) {
		return s
	}
	return removeBracketDebris(s)
}

// removeBracketDebris removes each debris and emptyParens, again while
// removing one leaves another: "(( ) ]".
func removeBracketDebris(s string) string {
	for range 4 {
		t := removeEmptyParens(debris.ReplaceAllString(s, "$1($2"))
		if t == s {
			break
		}
		s = t
	}
	return s
}

// mayHaveDebris reports whether an opening bracket in s that starts a
// word (at the text's start or after white space, as both patterns
// need) is followed, past ASCII white space (the patterns' \s), by what
// debris or emptyParens needs next; without one, neither matches. A
// call's brackets ("main()") are neither: a manual of code has
// thousands.
func mayHaveDebris(s string) bool {
	for i := strings.IndexByte(s, '('); i >= 0; {
		j := i + 1
		for j < len(s) && isSpace(s[j]) {
			j++
		}
		if (i == 0 || isSpace(s[i-1])) && j < len(s) && strings.IndexByte(";,:/|][)", s[j]) >= 0 {
			return true
		}
		k := strings.IndexByte(s[i+1:], '(')
		if k < 0 {
			return false
		}
		i += 1 + k
	}
	return false
}

// isSpace is the \s of Go's regular expressions.
func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// mayHaveStrayTail reports whether a closing bracket in s has nothing but
// spaces and tabs after it on its line and, before it, what strayTail
// needs: a sentence's end, spaces or tabs, and 1 to 40 characters
// without white space or brackets.
func mayHaveStrayTail(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != ')' && s[i] != ']' {
			continue
		}
		j := i + 1
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if (j == len(s) || s[j] == '\n') && sentenceTailBefore(s, i) {
			return true
		}
	}
	return false
}

// sentenceTailBefore reports whether s[:i] ends as strayTail needs before
// its closing bracket: [.!?][ \t]+ and 1 to 40 characters that are not
// white space or brackets.
func sentenceTailBefore(s string, i int) bool {
	k, runes := i, 0
	for k > 0 && !isSpace(s[k-1]) && strings.IndexByte("()[]", s[k-1]) < 0 {
		_, n := utf8.DecodeLastRuneInString(s[:k]) // an invalid byte is a character too, as to the pattern
		k -= n
		runes++
	}
	if runes < 1 || runes > 40 || k == 0 || s[k-1] != ' ' && s[k-1] != '\t' {
		return false
	}
	for k > 0 && (s[k-1] == ' ' || s[k-1] == '\t') {
		k--
	}
	return k > 0 && strings.IndexByte(".!?", s[k-1]) >= 0
}

// removeEmptyParens drops each emptyParens but "()" after a word that
// opens in lower case or after punctuation: a name's stripped gloss
// follows the name ("Dafeng () is", "Paris ( ) is"), while the unit
// value of a programming manual follows the words about it ("the return
// type of (), not Result", "returns ()").
func removeEmptyParens(s string) string {
	var drop [][2]int
	for _, loc := range emptyParens.FindAllStringIndex(s, -1) {
		if strings.HasSuffix(s[loc[0]:loc[1]], "()") && loc[0] > 0 {
			before := strings.TrimRight(s[:loc[0]], " \t")
			r, _ := utf8.DecodeLastRuneInString(before)
			w, _ := utf8.DecodeRuneInString(before[strings.LastIndexAny(before, " \t\n")+1:])
			if before != "" && (!unicode.IsLetter(r) && !unicode.IsDigit(r) || unicode.IsLower(w)) {
				continue // a value in code: keep it
			}
		}
		drop = append(drop, [2]int{loc[0], loc[1]})
	}
	return without(s, drop)
}

// without is s without the spans, which are in order and do not overlap.
func without(s string, spans [][2]int) string {
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp[0]])
		last = sp[1]
	}
	b.WriteString(s[last:])
	return b.String()
}

// removeStrayTails drops each strayTail whose closing bracket no opening
// one before it on its line matches ("(see note 3. foo)" keeps its tail).
func removeStrayTails(s string) string {
	var drop [][2]int
	for _, loc := range strayTail.FindAllStringSubmatchIndex(s, -1) {
		lineStart := strings.LastIndexByte(s[:loc[0]], '\n') + 1
		before := s[lineStart:loc[0]]
		if strings.Count(before, "(")+strings.Count(before, "[") > strings.Count(before, ")")+strings.Count(before, "]") {
			continue // the bracket closes one opened before
		}
		drop = append(drop, [2]int{loc[3], loc[1]}) // the sentence's end mark stays
	}
	return without(s, drop)
}
