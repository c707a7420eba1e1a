package offline

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"

	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb/analyze"
)

// sentences are text's sentences and lines of code (passage.Units),
// whitespace collapsed, without its headings and tables' rows.
func sentences(text string) []string {
	var out []string
	for _, u := range passage.Units(text) {
		if u.Kind != passage.Heading && u.Kind != passage.Row {
			out = append(out, u.Text)
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
	for _, w := range textseg.Words(text) {
		lw := strings.TrimSuffix(strings.TrimSuffix(strings.ToLower(w), "'s"), "’s")
		if english.IsStopWord(lw) || contraction(lw) || lw == "whose" || seen[lw] || utf8.RuneCountInString(lw) < 2 && !isCJKWord(lw) {
			continue
		}
		seen[lw] = true
		out = append(out, lw)
	}
	return out
}

// contraction reports a function word run into another: a negated
// auxiliary ("don't", "doesn’t", "can't") or a stop word with a verb
// ("I'm", "we're", "they've", "you'll").
func contraction(w string) bool {
	i := strings.LastIndexAny(w, "'’")
	if i <= 0 {
		return false
	}
	_, size := utf8.DecodeRuneInString(w[i:])
	head, tail := w[:i], w[i+size:]
	switch tail {
	case "t":
		return strings.HasSuffix(head, "n")
	case "m", "re", "ve", "ll", "d":
		return english.IsStopWord(head)
	}
	return false
}

func isCJKWord(w string) bool {
	r, _ := utf8.DecodeRuneInString(w)
	return unicode.Is(unicode.Hangul, r) || unicode.Is(unicode.Han, r)
}

// names returns the names in text (textseg.Names: "Giuseppe Verdi",
// "University of Kansas") of three runes or more, and quoted titles first.
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
	for _, n := range textseg.Names(text) {
		add(n)
	}
	return out
}

// prose reports whether a sentence is prose a report may quote as a
// claim, not a code listing, a line-numbered source or compiler view, a
// navigation bar, a table of contents or a bare title: it has at least
// five words, holds no code marks, is not dense with code symbols, is not
// mostly bare numbers (a line-numbered listing; a sentence of figures,
// "In 2019 it had 1,234,567 people, up from 1,100,000 in 2010.", is
// prose), holds no outline numbers (a table of contents), is not a
// question or a caption, and ends as a sentence does (a heading, a menu, a
// list item or a line ending in a URL does not). A backtick is code: a
// page's prose renders its code spans without them, so they survive in
// listings and terminal output (proseWithCode reads a source written in a
// markup that marks code inline).
func prose(s string) bool {
	fields := strings.Fields(s)
	var cased, numeric, outline int
	for i, f := range fields {
		if r, _ := utf8.DecodeRuneInString(f); unicode.IsUpper(r) || unicode.IsLower(r) {
			cased++
		}
		if strings.Trim(f, "0123456789.,:;()-–") == "" && strings.ContainsAny(f, "0123456789") {
			numeric++
			if i < len(fields)-1 && outlineNumber.MatchString(f) {
				outline++
			}
		}
	}
	// A generic type's name ("Rc<T>", "RefCell<Weak<Node>>") is a word
	// of the sentence, not code's symbols.
	letters, symbols := passage.Density(genericType.ReplaceAllString(s, "$1"))
	if cased == 0 && strings.IndexFunc(s, caseless) >= 0 {
		// Hangul, Han and other scripts without case: only the symbols
		// and the end. (Latin letters behind markup, ":class:`x`.",
		// are read as Latin.)
		return letters > 0 && symbols*10 <= letters && !question(s) && textseg.EndsSentence(s)
	}
	if len(fields) < 5 || symbols*10 > letters || numeric*2 > len(fields) || outline >= 2 || codeMarks.MatchString(s) || textseg.Continues(s) {
		return false
	}
	return !passage.Caption.MatchString(s) && !passage.ToolLabel.MatchString(s) && !strings.Contains(s, "`") && !question(s) && textseg.EndsSentence(s)
}

// question reports a sentence that asks ("… 있습니까?", "What is …？"): it
// claims nothing, however a page goes on to answer it.
func question(s string) bool {
	s = strings.TrimRight(s, " \"'’”»)")
	return strings.HasSuffix(s, "?") || strings.HasSuffix(s, "？")
}

// genericType is a generic type's name as prose writes it, its
// parameters in angle brackets ("Rc<T>", "Box<dyn Error>",
// "RefCell<Weak<Node>>").
var genericType = regexp.MustCompile(`(\pL[\pL\pN_]*)<(?:[\pL\pN_, ]+|[\pL\pN_]+<[\pL\pN_, ]+>)>`)

// proseWithCode reports prose that may write code inline, as AsciiDoc and
// Markdown write it ("If the `--autosquash` option is enabled …"): each
// span a word of the sentence. A backtick left after that is markup
// (":class:`x`") or a listing's.
func proseWithCode(s string) bool {
	// A span takes the mark after it, which the span after it needs
	// before it ("`--fixup` `--squash`"): replaced until none is left.
	for range maxSpans {
		t := inlineCode.ReplaceAllString(s, "${1}code${2}")
		if t == s {
			break
		}
		s = t
	}
	return prose(s)
}

// endsInCall reports a sentence of prose that ends in a call instead of
// a full stop, as a page writes one whose last words are code: "The
// number of usable CPUs can be obtained with len(os.sched_getaffinity(0))".
// What comes before the call must be prose of seven words or more.
func endsInCall(s string) bool {
	s = strings.TrimSpace(s)
	if !strings.HasSuffix(s, ")") {
		return false
	}
	// The call's opening parenthesis, its arguments' brackets balanced
	// ("os.path.join(dirpath, name)").
	depth, open := 0, -1
	for i := len(s) - 1; i >= 0 && open < 0; i-- {
		switch s[i] {
		case ')':
			depth++
		case '(':
			if depth--; depth == 0 {
				open = i
			}
		}
	}
	if open <= 0 {
		return false
	}
	// The name called, after a space.
	before := strings.LastIndexFunc(s[:open], func(r rune) bool { return !callName(r) })
	if before < 0 {
		return false
	}
	space, size := utf8.DecodeRuneInString(s[before:])
	start := before + size
	if first, _ := utf8.DecodeRuneInString(s[start:]); !unicode.IsSpace(space) || start >= open || !unicode.IsLetter(first) && first != '_' {
		return false
	}
	head := strings.TrimSpace(s[:start])
	return len(strings.Fields(head)) >= 7 && proseWithCode(head+".")
}

// callName reports a character of a called name: a letter, a digit, an
// underscore or a dot.
func callName(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' }

// maxSpans bounds the passes that replace a sentence's code spans.
const maxSpans = 8

// inlineCode is a span of code in a sentence: as many backticks, one or
// two, on either side of at most 80 characters that hold none and neither
// open nor close with a space, opening the sentence or after a space or an
// opening bracket or quote (after a letter or a colon it is a role's
// markup: ":meth:`str.split`"), and not followed by a letter or digit (a
// quotation in TeX's manner, two backticks before it and two apostrophes
// after, is not code).
var inlineCode = regexp.MustCompile("(^|[\\s(\\[\"'“‘])(?:``[^`\\s](?:[^`]{0,78}[^`\\s])?``|`[^`\\s](?:[^`]{0,78}[^`\\s])?`)($|[^\\pL\\pN])")

// caseless is a letter of a script without case (Hangul, Han, Kana).
func caseless(r rune) bool { return unicode.IsLetter(r) && !unicode.IsUpper(r) && !unicode.IsLower(r) }

// outlineNumber is a table of contents' "1.2." or "2.".
var outlineNumber = regexp.MustCompile(`^\d+(?:\.\d+)*\.$`)

// codeMarks are tokens of code that prose does not use: arrows,
// comment openers, boolean operators, turbofish and snip markers.
var codeMarks = regexp.MustCompile(`=>|->|(?:^|\s)//|&&|\|\||::<|--snip--`)
