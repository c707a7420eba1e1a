package extract

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// AsciiDoc reads an AsciiDoc document as the text it renders to, so its
// markup is not quoted as words: a line of "+" joining a list item's
// blocks (it had run into the next sentence: "… without making any other
// changes. + Neither …"), whose text then goes on in one paragraph;
// block delimiters and attribute lines, which end a paragraph; a
// description list's terms ("--autosquash::", "--no-autosquash::"), a
// paragraph of their own as an HTML page's terms are, with the item's
// text unindented; and inline macros as the text they show
// ("linkgit:git-rebase[1]" is "git-rebase(1)", "link:url[the text]" is
// "the text") and cross references ("<<URLS,GIT URLS>>" is "GIT URLS");
// block macros (an include, a condition) are not text. Code
// in listing and literal blocks keeps its lines, fenced (FenceOpen).
func AsciiDoc(data []byte, name string) (Doc, error) {
	if err := checkText(data); err != nil {
		return Doc{}, err
	}
	text := renderAsciiDoc(strings.ReplaceAll(strings.ToValidUTF8(string(data), ""), "\r\n", "\n"))
	return Doc{Title: firstLineTitle(text, name), Text: text, Format: "asciidoc"}, nil
}

var (
	// adocMacro is an inline macro: name:target[text].
	adocMacro = regexp.MustCompile(`\b([a-z][a-z0-9_-]*):([^\s\[\]]*)\[([^\]\n]*)\]`)
	// adocDelimiter is a line that opens or closes a block.
	adocDelimiter = regexp.MustCompile(`^(-{4,}|\.{4,}|={4,}|\*{4,}|_{4,}|\+{4,}|/{4,}|--)$`)
	// adocAttributes is a line of block attributes or an anchor alone:
	// "[verse]", "[source,shell]", "[[def_branch]]".
	adocAttributes = regexp.MustCompile(`^\[\[?[^\[\]]*\]\]?$`)
	// adocBlockMacro is a block macro's line: "include::config.txt[]",
	// "ifdef::git-asciidoc[]", "image::diagram.png[]".
	adocBlockMacro = regexp.MustCompile(`^[a-z]+::\S*\[[^\]]*\]$`)
	// adocEntry is a document attribute's entry: ":toc: left".
	adocEntry = regexp.MustCompile(`^:[A-Za-z0-9_-]+!?:(\s.*)?$`)
	// adocTerm is a description list's term: "--autosquash::", "ab;;".
	adocTerm = regexp.MustCompile(`^(\S.*?)(:{2,4}|;;)$`)
	// adocFence opens a Markdown-style fenced block: "```", "```ruby".
	adocFence = regexp.MustCompile("^`{3,}[\\w+.-]*$")
	// adocTitle is a section title in the one-line form: "== Options".
	adocTitle = regexp.MustCompile(`^={1,6}\s+(\S.*)$`)
	// adocXref is a cross reference: "<<URLS,GIT URLS>>", "<<URLS>>".
	adocXref = regexp.MustCompile(`<<([A-Za-z0-9_:.-]+)(?:,([^<>\n]*))?>>`)
	// rstDirectiveLine is a reStructuredText directive: ".. note::".
	rstDirectiveLine = regexp.MustCompile(`(?m)^\.\. [a-z][a-z:-]*::`)
)

// writtenInAsciiDoc reports a text file written in AsciiDoc, as Git's
// manuals are (git-push.txt): three or more lines in its first 64 KiB,
// of two kinds or more, that only AsciiDoc writes — a list item's
// continuation ("+" alone), block attributes or an anchor alone
// ("[verse]", "[[def]]"), an inline macro ("linkgit:git-add[1]"), a
// cross reference ("<<URLS,GIT URLS>>") — and no reStructuredText
// directive (Sphinx's .rst.txt copies). Lines of one kind are not enough:
// an INI file's sections and a changelog's "[Added]" are bracketed lines
// too.
func writtenInAsciiDoc(data []byte) bool {
	text := string(data[:min(len(data), 64<<10)])
	if rstDirectiveLine.MatchString(text) {
		return false
	}
	signs := 0
	var kinds [4]bool
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		for k, is := range [4]bool{t == "+", adocAttributes.MatchString(t), adocMacro.MatchString(t), adocXref.MatchString(t)} {
			if is {
				kinds[k] = true
				signs++
				break
			}
		}
	}
	n := 0
	for _, k := range kinds {
		if k {
			n++
		}
	}
	return signs >= 3 && n >= 2
}

// renderAsciiDoc is AsciiDoc's text.
func renderAsciiDoc(src string) string {
	lines := strings.Split(src, "\n")
	out := make([]string, 0, len(lines))
	inTerm := false   // in the text that follows a term, unindented
	listing := ""     // the delimiter of the listing block the lines are in
	var code []string // its lines so far
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if listing != "" {
			if trimmed == listing {
				listing = ""
				out = appendFenced(out, code)
				code = code[:0]
				continue
			}
			code = append(code, line)
			continue
		}
		switch {
		case trimmed == "":
			inTerm = false
			out = append(out, "")
		case adocFence.MatchString(trimmed):
			// A fenced block, as in Markdown: a listing, closed by the
			// same run of backticks.
			inTerm = false
			listing = strings.TrimRight(trimmed, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+.-")
			out = append(out, "")
		case trimmed == "+":
			// The next block belongs to the same list item: its text
			// goes on in the item's paragraph.
		case underline(lines, i):
			out = append(out, "")
		case adocDelimiter.MatchString(trimmed):
			inTerm = false
			out = append(out, "")
			if strings.HasPrefix(trimmed, "----") || strings.HasPrefix(trimmed, "....") {
				listing = trimmed
			}
		case adocAttributes.MatchString(trimmed), adocEntry.MatchString(trimmed), adocBlockMacro.MatchString(trimmed):
			out = append(out, "")
		case adocTerm.MatchString(trimmed) && !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t"):
			term := adocProse(adocTerm.FindStringSubmatch(trimmed)[1])
			if inTerm && len(out) > 1 && out[len(out)-1] == "" && out[len(out)-2] != "" {
				// Terms one under another name one item: "--autosquash,
				// --no-autosquash".
				out[len(out)-2] += ", " + term
				continue
			}
			inTerm = true
			out = append(out, "", term, "")
		case adocTitle.MatchString(trimmed) && !strings.HasPrefix(line, " "):
			out = append(out, "", adocProse(adocTitle.FindStringSubmatch(trimmed)[1]), "")
		case inTerm:
			out = append(out, adocProse(trimmed))
		default:
			out = append(out, adocProse(line))
		}
	}
	if listing != "" {
		out = appendFenced(out, code) // a listing never closed ends with the text
	}
	// Blank runs are one paragraph break.
	text := strings.Join(out, "\n")
	for strings.Contains(text, "\n\n\n") {
		text = strings.ReplaceAll(text, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(text)
}

// appendFenced appends a listing's lines to out between fences (Fence)
// and a blank line after them.
func appendFenced(out, code []string) []string {
	opening, closing := Fence(strings.Join(code, "\n"))
	out = append(out, opening)
	out = append(out, code...)
	return append(out, closing, "")
}

// underline reports line i a title's underline: a line of one of
// "=-~^+" as long as the line above it (within one), which has words.
func underline(lines []string, i int) bool {
	line := strings.TrimSpace(lines[i])
	if i == 0 || len(line) < 2 || strings.Trim(line, line[:1]) != "" || !strings.Contains("=-~^+", line[:1]) {
		return false
	}
	above := strings.TrimSpace(lines[i-1])
	n := utf8.RuneCountInString(above)
	return above != "" && !adocDelimiter.MatchString(above) && n >= len(line)-1 && n <= len(line)+1
}

// adocProse is a line of prose as it renders: its macros and cross
// references as their text, and not read as a code fence ("```!" is "!").
func adocProse(line string) string {
	return loneFence.ReplaceAllString(xrefs(macros(line)), "$1")
}

// xrefs writes a line's cross references as the text they show: the
// text after the comma ("<<URLS,GIT URLS>>" is "GIT URLS"), else the
// target's id.
func xrefs(line string) string {
	if !strings.Contains(line, "<<") {
		return line
	}
	return adocXref.ReplaceAllStringFunc(line, func(m string) string {
		p := adocXref.FindStringSubmatch(m)
		if text := strings.TrimSpace(p[2]); text != "" {
			return text
		}
		return p[1]
	})
}

// macros writes a line's inline macros as the text they show: the text
// in brackets, the target with a number in brackets as a manual page's
// section ("git-rebase(1)"), or the target (a URL) when the brackets are
// empty.
func macros(line string) string {
	if !strings.Contains(line, "[") {
		return line
	}
	return adocMacro.ReplaceAllStringFunc(line, func(m string) string {
		p := adocMacro.FindStringSubmatch(m)
		name, target, text := p[1], p[2], strings.TrimSpace(p[3])
		if i := strings.IndexByte(text, ','); i >= 0 && strings.Contains(text[i:], "=") {
			text = strings.TrimSpace(text[:i]) // link:url[the text,window=_blank]
		}
		text = strings.Trim(text, `"`)
		switch {
		case text == "" && target == "":
			return m
		case text == "":
			if strings.HasPrefix(target, "//") || name == "mailto" {
				return name + ":" + target // a URL
			}
			return target
		case strings.Trim(text, "0123456789") == "":
			return target + "(" + text + ")"
		}
		return text
	})
}
