package extract

import (
	"regexp"
	"strconv"
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
	src := strings.TrimPrefix(strings.ToValidUTF8(string(data), ""), "\uFEFF")
	lines := strings.Split(strings.ReplaceAll(src, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = detab(l)
	}
	text := strings.Join(inlineProse(renderRST(lines, 0)), "\n")
	for strings.Contains(text, "\n\n\n") {
		text = strings.ReplaceAll(text, "\n\n\n", "\n\n")
	}
	text = strings.TrimSpace(text)
	return Doc{Title: firstLineTitle(text, name), Text: text, Format: "rst"}, nil
}

var (
	// rstDirective is an explicit markup line: ".. name:: argument".
	rstDirective = regexp.MustCompile(`^\.\.\s+([A-Za-z][\w:.+-]*)::(?:\s+(.*))?$`)
	// rstRole is an interpreted text with a role: ":role:`text`".
	rstRole = regexp.MustCompile(":(?:[A-Za-z][\\w.+-]*:)+`([^`]+)`")
	// rstLiteral is inline literal text: two backticks, the text, two.
	rstLiteral = regexp.MustCompile("``([^`]+)``")
	// rstLink is a hyperlink reference: `text <url>`_ or `text`_.
	rstLink = regexp.MustCompile("`([^`<]+?)(?:\\s*<[^>`]*>)?`__?")
	// rstInterpreted is interpreted text in the default role: `text`.
	rstInterpreted = regexp.MustCompile("`([^`\\s](?:[^`]*[^`\\s])?)`")
	// rstStrong and rstEm are strong emphasis and emphasis: the marks
	// after a space or an opening bracket, before one or punctuation, the
	// text not starting or ending with a space ("f(*args, **kwargs)" is
	// neither).
	rstStrong = regexp.MustCompile(`(^|[\s(\[{"'])\*\*([^*\s](?:[^*]*?[^*\s])?)\*\*($|[\s)\]}.,;:!?"'-])`)
	rstEm     = regexp.MustCompile(`(^|[\s(\[{"'])\*([^*\s](?:[^*]*?[^*\s])?)\*($|[\s)\]}.,;:!?"'-])`)
	// rstBullet opens a list item: "- ", "* ", "+ ", "1. ", "#. ".
	rstBullet = regexp.MustCompile(`^(?:[-*+•]|\d+[.)]|#\.)\s+`)
	// rstHeld is a piece of text inlineRST set aside: a literal or a role.
	rstHeld = regexp.MustCompile("\uE000([0-9]+)\uE001")
)

// rstCode are the directives whose content is code; rstQuiet those that
// show no text of their own.
var (
	rstCode  = map[string]bool{"code-block": true, "code": true, "sourcecode": true, "doctest": true, "testcode": true, "testoutput": true, "productionlist": true}
	rstQuiet = map[string]bool{"toctree": true, "index": true, "include": true, "literalinclude": true, "image": true, "figure": true, "highlight": true,
		"only": true, "raw": true, "contents": true, "sectionauthor": true, "moduleauthor": true, "codeauthor": true, "testsetup": true,
		"testcleanup": true, "currentmodule": true, "module": true, "default-role": true, "meta": true, "tabularcolumns": true, "automodule": true,
		"autoclass": true, "autofunction": true, "csv-table": true, "graphviz": true, "math": true}
	rstVersion = map[string]string{"versionadded": "New in version", "versionchanged": "Changed in version", "deprecated": "Deprecated since version"}
)

// maxRSTDepth bounds how deep directives nest before a body is read as
// plain lines: each level renders its body again.
const maxRSTDepth = 8

// renderRST renders lines (tabs expanded) as text lines, inline markup
// left for inlineProse; depth is how deep in directive bodies they are.
func renderRST(lines []string, depth int) []string {
	var out []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimSpace(line)
		indent := indentOf(line)
		switch {
		case trimmed == "":
			out = append(out, "")
		case trimmed == "::":
			// A literal block introduced by nothing.
			body, next := rstLiteralBlock(lines, i+1, indent)
			out = appendLiteral(out, body)
			i = next - 1
		case rstAdornment(trimmed) && i+2 < len(lines) && !rstAdornment(strings.TrimSpace(lines[i+1])) && strings.TrimSpace(lines[i+2]) == trimmed:
			// An overlined title: adornment, title, adornment.
			out = append(out, "", rawRST(strings.TrimSpace(lines[i+1])), "")
			i += 2
		case i+1 < len(lines) && rstUnderline(trimmed, strings.TrimSpace(lines[i+1])):
			out = append(out, "", rawRST(trimmed), "")
			i++
		case rstAdornment(trimmed) && utf8.RuneCountInString(trimmed) >= 4:
			out = append(out, "") // a transition
		case trimmed == ".." || strings.HasPrefix(trimmed, ".. "):
			body, next := rstBlock(lines, i+1, indent)
			out = append(out, rstExplicit(trimmed, body, depth)...)
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
			// "…, e.g.:".
			p := rstBullet.ReplaceAllString(strings.TrimSpace(strings.TrimSuffix(trimmed, "::")), "")
			if !strings.HasSuffix(p, ":") {
				p += ":"
			}
			if rstBullet.MatchString(trimmed) {
				out = append(out, "")
			}
			out = append(out, rawRST(p))
			body, next := rstLiteralBlock(lines, i+1, indent)
			out = appendLiteral(out, body)
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
	return out
}

// appendLiteral appends a literal block, fenced, after a blank line.
func appendLiteral(out, body []string) []string {
	if len(body) == 0 {
		return out
	}
	return appendFenced(append(out, ""), body)
}

// inlineProse renders the inline markup of each paragraph of lines
// outside fenced blocks, whole, since a role or a literal may run over a
// line's end (a literal opened before "pip install -r" and closed after
// "requirements.txt" on the next line).
func inlineProse(lines []string) []string {
	out := make([]string, 0, len(lines))
	var para []string
	flush := func() {
		if len(para) > 0 {
			for _, l := range strings.Split(inlineRST(strings.Join(para, "\n")), "\n") {
				out = append(out, rawRST(l))
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
// arg") and its indented body, depth deep in directive bodies.
func rstExplicit(first string, body []string, depth int) []string {
	m := rstDirective.FindStringSubmatch(first)
	if m == nil {
		// A comment, a target (".. _label:") or a substitution: no text.
		// A footnote or a citation (".. [1] text") keeps its text.
		if rest, ok := strings.CutPrefix(first, ".. ["); ok {
			if _, text, ok := strings.Cut(rest, "]"); ok {
				return append([]string{"", rawRST(strings.TrimSpace(text))}, trimAll(body)...)
			}
		}
		return []string{""}
	}
	name, arg := strings.ToLower(m[1]), strings.TrimSpace(m[2])
	if i := strings.LastIndexByte(name, ':'); i >= 0 {
		name = name[i+1:] // a domain's directive: "py:function" is "function"
	}
	if strings.HasSuffix(arg, `\`) {
		// A signature continued over lines.
		parts := []string{strings.TrimSpace(strings.TrimSuffix(arg, `\`))}
		for len(body) > 0 {
			l := strings.TrimSpace(body[0])
			body = body[1:]
			more := strings.HasSuffix(l, `\`)
			parts = append(parts, strings.TrimSpace(strings.TrimSuffix(l, `\`)))
			if !more {
				break
			}
		}
		arg = strings.Join(parts, " ")
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
	case name == "deprecated-removed":
		// "3.9 3.11": deprecated in the first, removed in the second.
		v, rest, _ := strings.Cut(arg, " ")
		removed, note, _ := strings.Cut(strings.TrimSpace(rest), " ")
		s := "Deprecated since version " + v
		if removed != "" {
			s += ", will be removed in version " + removed
		}
		return []string{"", rstNote(s, note, body), ""}
	case rstVersion[name] != "":
		v, rest, _ := strings.Cut(arg, " ")
		return []string{"", rstNote(rstVersion[name]+" "+v, rest, body), ""}
	case name == "availability":
		return []string{"", rawRST("Availability: " + arg), ""}
	case name == "rubric" || name == "topic" || name == "sidebar" || arg != "" && rstDescribes(name):
		// A heading, or a described object: its signature is the term
		// its text defines.
		return append([]string{"", rawRST(arg), ""}, renderBody(body, depth)...)
	default:
		// An admonition (note, warning, seealso…) or a directive this
		// reader does not know: its text, as prose.
		out := []string{""}
		if arg != "" {
			out = append(out, rawRST(arg))
		}
		return append(out, renderBody(body, depth)...)
	}
}

// rstNote is a version note: its lead ("New in version 3.9") and its
// text, if any, after a colon, else a full stop.
func rstNote(lead, rest string, body []string) string {
	if text := strings.TrimSpace(rest + " " + strings.Join(trimAll(body), " ")); text != "" {
		return rawRST(lead + ": " + text)
	}
	return rawRST(lead + ".")
}

// rstDescribes reports a directive that describes an object (Sphinx's
// domains: a function, a class, a command-line option…).
func rstDescribes(name string) bool {
	switch name {
	case "function", "class", "method", "attribute", "data", "exception", "decorator", "decoratormethod",
		"classmethod", "staticmethod", "coroutinefunction", "coroutinemethod", "abstractmethod", "property", "type",
		"option", "envvar", "program", "describe", "object", "macro", "member", "var", "enum", "struct", "opcode", "cmdoption", "confval", "setting":
		return true
	}
	return false
}

// renderBody renders a directive's body, dedented, as a document of its
// own; past maxRSTDepth, as its lines.
func renderBody(body []string, depth int) []string {
	if len(body) == 0 {
		return nil
	}
	if depth >= maxRSTDepth {
		return append(trimAll(body), "")
	}
	return append(renderRST(dedent(body), depth+1), "")
}

// rstOptions drops a directive body's leading options (":linenos:",
// ":synopsis: …") and the blank lines after them.
func rstOptions(body []string) []string {
	i := 0
	for i < len(body) {
		t := strings.TrimSpace(body[i])
		if !strings.HasPrefix(t, ":") || strings.Count(t, ":") < 2 || strings.Contains(t, "`") {
			break
		}
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
		!strings.HasPrefix(title, "..")
}

// rstAdornment is a line of two or more of one punctuation character:
// a title's underline (as short as the title) or, four or more, a
// transition. ".." opens explicit markup and "::" a literal block.
func rstAdornment(l string) bool {
	if len(l) < 2 || !strings.ContainsRune("=-~^\"'`#*+<>:._", rune(l[0])) || l == ".." || l == "::" {
		return false
	}
	return strings.Trim(l, l[:1]) == ""
}

// rawRST is a line of text as renderRST writes it, its inline markup left
// for inlineProse; a line that would read as a code fence (three
// backticks or more, then no backtick) loses them.
func rawRST(s string) string { return loneFence.ReplaceAllString(s, "$1") }

// inlineRST writes a text's inline markup as the words it shows. Roles
// and literals are set aside first, so that the asterisks of a literal
// **kwargs are not read as emphasis.
func inlineRST(s string) string {
	var held []string
	hold := func(text string) string {
		held = append(held, text)
		return "\uE000" + strconv.Itoa(len(held)-1) + "\uE001"
	}
	s = strings.NewReplacer("\uE000", "", "\uE001", "").Replace(s)
	s = rstRole.ReplaceAllStringFunc(s, func(m string) string {
		text := rstRole.FindStringSubmatch(m)[1]
		switch {
		case strings.HasPrefix(m, ":pep:"):
			return hold("PEP " + text)
		case strings.HasPrefix(m, ":rfc:"):
			return hold("RFC " + text)
		}
		if i := strings.LastIndex(text, "<"); i > 0 && strings.HasSuffix(text, ">") {
			return hold(strings.TrimSpace(text[:i])) // "title <target>"
		}
		if rest, ok := strings.CutPrefix(text, "~"); ok {
			if i := strings.LastIndexByte(rest, '.'); i >= 0 {
				return hold(rest[i+1:]) // "~str.removeprefix" shows "removeprefix"
			}
			return hold(rest)
		}
		return hold(strings.TrimPrefix(text, "!"))
	})
	s = rstLiteral.ReplaceAllStringFunc(s, func(m string) string { return hold(m[2 : len(m)-2]) })
	s = rstLink.ReplaceAllString(s, "$1")
	s = rstInterpreted.ReplaceAllString(s, "$1")
	s = rstStrong.ReplaceAllString(s, "$1$2$3")
	s = rstEm.ReplaceAllString(s, "$1$2$3")
	return rstHeld.ReplaceAllStringFunc(s, func(m string) string {
		i, err := strconv.Atoi(m[len("\uE000") : len(m)-len("\uE001")])
		if err != nil || i >= len(held) {
			return ""
		}
		return held[i]
	})
}

// detab expands a line's leading tabs to spaces, to the next multiple of
// eight columns; the rest of the line stays as it is.
func detab(l string) string {
	i := 0
	for i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	if !strings.Contains(l[:i], "\t") {
		return l
	}
	return strings.Repeat(" ", indentOf(l)) + l[i:]
}

// indentOf is a line's leading white space, a tab counted to the next
// multiple of eight columns.
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

// dedent removes the indent the lines (tabs expanded) share, blank lines
// aside, and the blank lines at the end.
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
		out[i] = l[min(least, indentOf(l), len(l)):]
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// trimAll trims every line, leaving out blank ones.
func trimAll(ls []string) []string {
	out := make([]string, 0, len(ls))
	for _, l := range ls {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, rawRST(t))
		}
	}
	return out
}
