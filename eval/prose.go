package eval

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/textseg"
)

// NonProse lists the sentences of a summary that are not prose: a
// heading or navigation line (no sentence end and no verb-bearing length:
// "Next topic", "Table of Contents"), a fragment of under three words, or
// code (a line whose characters are mostly symbols, or a prompt or
// listing: ">>> x", "$ git …", "a = b;"), or a reStructuredText directive
// (".. note:: …"). A reader of an executive summary
// expects sentences; these are what extraction let through. Citations
// and the quotes around a quoted sentence are not counted, nor a fenced
// code block or a quote in backticks: that is code presented as code.
func NonProse(summary string) []string {
	summary = fenceRE.ReplaceAllString(summary, "")
	summary = codeQuoteRE.ReplaceAllString(summary, "$1$2")
	var out []string
	// A citation closes what it cites, whether or not that ends like a
	// sentence.
	for _, part := range citeSplitRE.Split(summary, -1) {
		for _, sp := range textseg.Spans(part) {
			s := strings.TrimSpace(part[sp.Start:sp.End])
			if s != "" && !isProse(s) {
				out = append(out, s)
			}
		}
	}
	return out
}

var (
	fenceRE = regexp.MustCompile("(?s)```.*?```")
	// codeQuoteRE is a quote of code in backticks before its citation:
	// code presented as code, whatever sentences it holds.
	codeQuoteRE = regexp.MustCompile("(^|\\s)`+[^`]+`+(\\s+\\[\\d)")
	// citeSplitRE is a citation after a space: "linkgit:git-log[1]" is
	// a manual page's name, not a citation.
	citeSplitRE = regexp.MustCompile(`(?:^|\s+)\[\d{1,4}(?:\s*,\s*\d{1,4})*\]`)
)

// codeStarts open lines of a terminal session or an interpreter.
var codeStarts = []string{">>> ", "$ ", "# ", "% ", "C:\\>", "... "}

// directiveRE opens reStructuredText's explicit markup (".. note::", ".. module::
// name", a comment ".. XXX"): markup of a documentation source, not a
// sentence of it; "..." is an ellipsis.
var directiveRE = regexp.MustCompile(`^\.\. [^.\s]`)

func isProse(s string) bool {
	s = strings.Trim(s, " \"'“”‘’")
	if directiveRE.MatchString(s) {
		return false
	}
	for _, p := range codeStarts {
		if strings.HasPrefix(s, p) {
			return false
		}
	}
	var letters, other, words int
	for _, f := range strings.Fields(s) {
		if strings.IndexFunc(f, unicode.IsLetter) >= 0 {
			words++
		}
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsSpace(r):
			letters++
		case strings.ContainsRune(".,;:!?()'\"“”‘’-–—/%", r):
		default:
			other++
		}
	}
	if letters == 0 || other*5 > letters {
		return false // mostly symbols: code
	}
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s, ")]\"'”’ "))
	ends := strings.ContainsRune(".!?。:;…", last) || textseg.IsHangul(last)
	hangul := strings.IndexFunc(s, textseg.IsHangul) >= 0
	switch {
	case words < 3 && !hangul:
		return false // a fragment or a label
	case !ends && words < 8:
		return false // a heading or a navigation line
	}
	return true
}
