package extract

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// RST reads a reStructuredText document (Sphinx's and docutils' source
// format) as the text it renders to, so its markup is not quoted as
// words: a section title without its underline; a role as the words it
// shows (":class:`EnvBuilder`" is "EnvBuilder", ":meth:`~str.removeprefix`"
// is "removeprefix", ":ref:`the tutorial <tut>`" is "the tutorial");
// literal blocks (after "::"), code-block directives and doctest blocks
// fenced as code (Fence); a version note as Sphinx writes it ("..
// versionadded:: 3.9" is "New in version 3.9."); a description directive
// (".. function:: removeprefix(prefix, /)") as its signature, a paragraph
// of its own, then its text; an admonition's text as prose; comments,
// targets and directives that show no text (toctree, index, image)
// left out.
func RST(data []byte, name string) (Doc, error) {
	if err := checkText(data); err != nil {
		return Doc{}, err
	}
	text := renderRST(strings.ReplaceAll(strings.ToValidUTF8(string(data), ""), "\r\n", "\n"))
	return Doc{Title: firstLineTitle(text, name), Text: text, Format: "rst"}, nil
}

var (
	// rstDirective is an explicit markup line: ".. name:: argument".
	rstDirective = regexp.MustCompile(`^\.\.\s+([A-Za-z][\w:.+-]*)::(?:\s+(.*))?$`)
	// rstRole is an interpreted text with a role: ":role:`text`".
	rstRole = regexp.MustCompile(":(?:[A-Za-z][\\w.+-]*:)+`([^`]+)`")
	// rstLiteral is inline literal text: ``text``.
	rstLiteral = regexp.MustCompile("``([^`]+)``")
	// rstLink is a hyperlink reference: `text <url>`_ or `text`_.
	rstLink = regexp.MustCompile("`([^`<]+?)(?:\\s*<[^>`]*>)?`__?")
	// rstBullet opens a list item: "- ", "* ", "+ ", "1. ", "#. ".
	rstBullet = regexp.MustCompile(`^(?:[-*+•]|\d+[.)]|#\.)\s+`)
	// rstEmph is emphasis or strong emphasis: *text*, **text**.
	rstEmph = regexp.MustCompile(`(^|[\s(])\*{1,2}([^*\s][^*]*?)\*{1,2}`)
)

// rstCode are the directives whose content is code; rstQuiet those that
// show no text of their own.
var (
	rstCode  = map[string]bool{"code-block": true, "code": true, "sourcecode": true, "doctest": true, "testcode": true, "testoutput": true, "productionlist": true}
	rstQuiet = map[string]bool{"toctree": true, "index": true, "include": true, "literalinclude": true, "image": true, "figure": true, "highlight": true,
		"only": true, "raw": true, "contents": true, "sectionauthor": true, "moduleauthor": true, "codeauthor": true, "testsetup": true,
		"testcleanup": true, "currentmodule": true, "module": true, "default-role": true, "meta": true, "tabularcolumns": true, "automodule": true,
		"autoclass": true, "autofunction": true, "include-raw": true, "csv-table": true, "graphviz": true, "math": true}
	rstVersion = map[string]string{"versionadded": "New in version", "versionchanged": "Changed in version", "deprecated": "Deprecated since version", "deprecated-removed": "Deprecated since version"}
)

// renderRST is reStructuredText's text.
func renderRST(src string) string {
	lines := strings.Split(src, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			// Not reStructuredText's markup, and it would read as a fence.
			trimmed = strings.TrimLeft(trimmed, "`")
		}
		indent := indentOf(line)
		switch {
		case trimmed == "":
			out = append(out, "")
		case rstAdornment(trimmed) && i+2 < len(lines) && !rstAdornment(strings.TrimSpace(lines[i+1])) && strings.TrimSpace(lines[i+2]) == trimmed:
			// An overlined title: adornment, title, adornment.
			out = append(out, "", rawRST(strings.TrimSpace(lines[i+1])), "")
			i += 2
		case i+1 < len(lines) && rstUnderline(trimmed, strings.TrimSpace(lines[i+1])):
			out = append(out, "", rawRST(trimmed), "")
			i++
		case rstAdornment(trimmed):
			out = append(out, "") // a transition, or an adornment left over
		case strings.HasPrefix(trimmed, ".. "):
			body, next := rstBlock(lines, i+1, indent)
			out = append(out, rstExplicit(trimmed, body)...)
			i = next - 1
		case strings.HasPrefix(trimmed, ">>> "):
			// A doctest block: to the next blank line.
			j := i
			for j < len(lines) && strings.TrimSpace(lines[j]) != "" {
				j++
			}
			out = appendFenced(out, dedent(lines[i:j]))
			i = j - 1
		case strings.HasSuffix(trimmed, "::"):
			// A paragraph that introduces a literal block: "…, e.g.::" is
			// "…, e.g.:", a lone "::" is nothing.
			if p := strings.TrimSpace(strings.TrimSuffix(trimmed, "::")); p != "" {
				if !strings.HasSuffix(p, ":") {
					p += ":"
				}
				out = append(out, rawRST(p))
			}
			body, next := rstLiteralBlock(lines, i+1, indent)
			if len(body) > 0 {
				out = append(out, "")
				out = appendFenced(out, body)
			}
			i = next - 1
		case rstBullet.MatchString(trimmed):
			// A list item is a paragraph of its own, as a page's <li>.
			out = append(out, "", rawRST(rstBullet.ReplaceAllString(trimmed, "")))
		case (len(out) == 0 || out[len(out)-1] == "") && i+1 < len(lines) && strings.TrimSpace(lines[i+1]) != "" && indentOf(lines[i+1]) > indent:
			// A definition list's term: a paragraph of its own before the
			// text indented under it, as a page's <dt>.
			out = append(out, rawRST(trimmed), "")
		default:
			out = append(out, rawRST(trimmed))
		}
	}
	text := strings.Join(inlineProse(out), "\n")
	for strings.Contains(text, "\n\n\n") {
		text = strings.ReplaceAll(text, "\n\n\n", "\n\n")
	}
	return strings.TrimSpace(text)
}

// inlineProse renders the inline markup of each paragraph of lines
// outside fenced blocks, whole, since a role or a literal may run over a
// line's end (an inline literal opened before "pip install -r" and
// closed after "requirements.txt" on the next line).
func inlineProse(lines []string) []string {
	out := make([]string, 0, len(lines))
	var para []string
	flush := func() {
		if len(para) > 0 {
			for _, l := range strings.Split(inlineRST(strings.Join(para, "\n")), "\n") {
				// Prose that would read as a fence is not one.
				if k := len(l) - len(strings.TrimLeft(l, "`")); k >= 3 && !strings.Contains(l[k:], "`") {
					l = l[k:]
				}
				out = append(out, l)
			}
			para = para[:0]
		}
	}
	fence := 0 // the backticks of the open fence
	for _, l := range lines {
		k := len(l) - len(strings.TrimLeft(l, "`"))
		switch {
		case fence > 0:
			out = append(out, l)
			if k >= fence && strings.TrimLeft(l, "`") == "" {
				fence = 0
			}
		case k >= 3 && strings.TrimLeft(l, "`") == "text":
			flush()
			out = append(out, l)
			fence = k
		case l == "":
			flush()
			out = append(out, l)
		default:
			para = append(para, l)
		}
	}
	flush()
	return out
}

// rstExplicit renders an explicit markup block: its first line (".. x::
// arg") and its indented body.
func rstExplicit(first string, body []string) []string {
	m := rstDirective.FindStringSubmatch(first)
	if m == nil {
		// A comment, a target (".. _label:") or a substitution: no text.
		// A footnote or a citation (".. [1] text") keeps its text.
		if rest, ok := strings.CutPrefix(first, ".. ["); ok {
			if _, text, ok := strings.Cut(rest, "]"); ok {
				return append([]string{"", rawRST(strings.TrimSpace(text))}, inlineLines(body)...)
			}
		}
		return []string{""}
	}
	name, arg := strings.ToLower(m[1]), strings.TrimSpace(m[2])
	for strings.HasSuffix(arg, `\`) && len(body) > 0 {
		// A signature continued over lines.
		arg = strings.TrimSpace(strings.TrimSuffix(arg, `\`)) + " " + strings.TrimSpace(body[0])
		body = body[1:]
	}
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:] // a domain's directive: "py:function" is "function"
	}
	body = rstOptions(body)
	switch {
	case rstQuiet[name]:
		return []string{""}
	case rstCode[name]:
		if body = dedent(body); len(body) == 0 {
			return []string{""}
		}
		return appendFenced([]string{""}, body)
	case rstVersion[name] != "":
		v, rest, _ := strings.Cut(arg, " ")
		s := rstVersion[name] + " " + v
		if text := strings.TrimSpace(rest + " " + strings.Join(trimAll(body), " ")); text != "" {
			s += ": " + rawRST(text)
		} else {
			s += "."
		}
		return []string{"", s, ""}
	case name == "availability":
		return []string{"", "Availability: " + arg, ""}
	case name == "rubric" || name == "topic" || name == "sidebar":
		return append([]string{"", rawRST(arg), ""}, renderBody(body)...)
	case arg != "" && rstDescribes(name):
		// A described object: its signature is the term its text defines.
		return append([]string{"", rawRST(arg), ""}, renderBody(body)...)
	default:
		// An admonition (note, warning, seealso…) or a directive this
		// reader does not know: its text, as prose.
		out := []string{""}
		if arg != "" {
			out = append(out, rawRST(arg))
		}
		return append(out, renderBody(body)...)
	}
}

// rstDescribes reports a directive that describes an object (Sphinx's
// domains: a function, a class, a command-line option…).
func rstDescribes(name string) bool {
	switch name {
	case "function", "class", "method", "attribute", "data", "exception", "module", "decorator", "decoratormethod",
		"classmethod", "staticmethod", "coroutinefunction", "coroutinemethod", "abstractmethod", "property", "type",
		"option", "envvar", "program", "describe", "object", "macro", "member", "var", "enum", "struct", "opcode", "cmdoption", "confval", "setting":
		return true
	}
	return false
}

// renderBody renders a directive's body, dedented, as a document of its
// own.
func renderBody(body []string) []string {
	if len(body) == 0 {
		return nil
	}
	return append(strings.Split(renderRST(strings.Join(dedent(body), "\n")), "\n"), "")
}

// rstOptions drops a directive body's leading options (":linenos:",
// ":synopsis: …") and the blank line after them.
func rstOptions(body []string) []string {
	i := 0
	for i < len(body) && strings.HasPrefix(strings.TrimSpace(body[i]), ":") && strings.Count(strings.TrimSpace(body[i]), ":") >= 2 && !strings.Contains(strings.TrimSpace(body[i]), "`") {
		i++
	}
	for i < len(body) && strings.TrimSpace(body[i]) == "" {
		i++
	}
	return body[i:]
}

// rstBlock returns the lines after line from that are indented more than
// indent (blank lines among them), and the index of the line after them.
func rstBlock(lines []string, from, indent int) ([]string, int) {
	j, last := from, from
	for j < len(lines) {
		if strings.TrimSpace(lines[j]) == "" {
			j++
			continue
		}
		if indentOf(lines[j]) <= indent {
			break
		}
		j++
		last = j
	}
	return lines[from:last], last
}

// rstLiteralBlock returns a literal block's lines after a "::" paragraph
// at indent: the blank line, then lines indented more (or, quoted, lines
// opening with the same quote character), and the index after them.
func rstLiteralBlock(lines []string, from, indent int) ([]string, int) {
	j := from
	for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
		j++
	}
	if j == len(lines) {
		return nil, j
	}
	if indentOf(lines[j]) > indent {
		body, next := rstBlock(lines, j, indent)
		return dedent(body), next
	}
	// A quoted literal block: unindented lines that open with one
	// punctuation character, to the next blank line.
	q, _ := utf8.DecodeRuneInString(strings.TrimSpace(lines[j]))
	if !strings.ContainsRune(">|%#$!\"'", q) {
		return nil, from
	}
	k := j
	for k < len(lines) && strings.TrimSpace(lines[k]) != "" && strings.HasPrefix(strings.TrimSpace(lines[k]), string(q)) {
		k++
	}
	return lines[j:k], k
}

// rstUnderline reports title underlined by line: one punctuation
// character repeated, at least as long as the title, which has words.
func rstUnderline(title, line string) bool {
	return rstAdornment(line) && !rstAdornment(title) && title != "" && utf8.RuneCountInString(line) >= utf8.RuneCountInString(title) &&
		!strings.HasPrefix(title, ".. ")
}

// rstAdornment is a line of four or more of one punctuation character
// (or as few as two, under a short title).
func rstAdornment(l string) bool {
	if len(l) < 2 || !strings.ContainsRune("=-~^\"'`#*+<>:._", rune(l[0])) {
		return false
	}
	return strings.Trim(l, l[:1]) == "" && !strings.HasPrefix(l, "..") || l == strings.Repeat(".", len(l)) && len(l) >= 4
}

// rawRST is a line whose inline markup inlineProse renders later.
func rawRST(s string) string { return s }

// inlineRST writes a text's inline markup as the words it shows.
func inlineRST(s string) string {
	s = rstRole.ReplaceAllStringFunc(s, func(m string) string {
		text := rstRole.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(m, ":pep:"):
			return "PEP " + text
		case strings.HasPrefix(m, ":rfc:"):
			return "RFC " + text
		}
		if i := strings.LastIndex(text, "<"); i > 0 && strings.HasSuffix(text, ">") {
			return strings.TrimSpace(text[:i]) // "title <target>"
		}
		if rest, ok := strings.CutPrefix(text, "~"); ok {
			if i := strings.LastIndexByte(rest, '.'); i >= 0 {
				return rest[i+1:] // "~str.removeprefix" shows "removeprefix"
			}
			return rest
		}
		return strings.TrimPrefix(text, "!")
	})
	s = rstLiteral.ReplaceAllString(s, "$1")
	s = rstLink.ReplaceAllString(s, "$1")
	return rstEmph.ReplaceAllString(s, "$1$2")
}

// inlineLines renders lines' inline markup, trimmed.
func inlineLines(ls []string) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		out = append(out, rawRST(strings.TrimSpace(l)))
	}
	return out
}

// indentOf is a line's leading white space, a tab counted as eight.
func indentOf(l string) int {
	n := 0
	for _, r := range l {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 8 - n%8
		default:
			return n
		}
	}
	return n
}

// dedent removes the indent the lines share, blank lines aside.
func dedent(ls []string) []string {
	least := -1
	for _, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if n := indentOf(l); least < 0 || n < least {
			least = n
		}
	}
	out := make([]string, len(ls))
	for i, l := range ls {
		if strings.TrimSpace(l) == "" {
			continue
		}
		out[i] = strings.ReplaceAll(l, "\t", "        ")[min(least, indentOf(l)):]
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// trimAll trims every line.
func trimAll(ls []string) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}
