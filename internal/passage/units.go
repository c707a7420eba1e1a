// Package passage reads a text's structure and chooses the parts of it that
// bear on a question. Units splits a text into sentences, lines of code,
// tables' rows and headings, each sentence knowing the heading it sits
// under (a section's title, or the term a definition list or settings
// reference defines), so "The default value is 6700." is about gc.auto,
// and each row its table's header. Select ranks sentence
// windows against a question and returns the best within a byte budget, in
// document order: what a model is shown of a source, in place of its first
// N bytes.
package passage

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/internal/textseg"
)

// Kind is what a unit of text is.
type Kind int

// Kinds of unit.
const (
	Sentence Kind = iota // a sentence of prose, or a fragment of it
	Code                 // a line of code or of a terminal session
	Heading              // a line that titles what follows it
	Row                  // a row of a table, under its header (a Heading)
)

// Unit is one sentence, code line, table row or heading, whitespace
// collapsed.
type Unit struct {
	Text string
	Kind Kind
	// Heading is the index of the heading the unit sits under, or -1.
	Heading int
	// Block numbers the blank-line separated blocks of the text: units
	// of one block are one paragraph.
	Block int
	// Term: a heading that is the name of an option or a setting the
	// prose under it defines (a line of code alone above it, or a one
	// word heading written as code: termName), not a section's title.
	Term bool
	// Field: a line of an entry's head that gives one of its fields as
	// "Label: value" ("Default: 259200 (3 days, in seconds)", "Added
	// in: v0.7.7", "기본값: 100"), read as a sentence of the entry, not
	// as the heading of the prose after it (fieldLine).
	Field bool
}

// maxHeadingRunes is the longest line read as a heading, but for a
// call's signature (signatureRE), up to maxSignatureRunes: an API's entry
// is titled by its call with every parameter and its default
// ("timeit.timeit(stmt='pass', setup='pass', timer=<default timer>,
// number=1000000, globals=None)").
const (
	maxHeadingRunes   = 80
	maxSignatureRunes = 240
)

// titleLen reports a line short enough to title what follows.
func titleLen(l string) bool {
	n := utf8.RuneCountInString(l)
	return n <= maxHeadingRunes || n <= maxSignatureRunes && !Ablate["field"] && signatureRE.MatchString(l)
}

// minRunes drops fragments too short to say anything (Hangul and Han say
// more per rune).
const (
	minRunes    = 12
	minCJKRunes = 6
)

// Units splits text into units. A line of code is a unit of its own, so
// a listing never runs into the sentence after it; other lines of a block
// join (a PDF wraps its sentences over lines) and split into sentences. A
// short line without a sentence's end that closes its block and is
// followed by prose (or, for a call's signature, by anything) is a
// heading: an HTML page's <dt> or <h2> as its readable text renders
// them; so is a line of code alone between blank lines above prose: an
// option's or a setting's name, a definition's term (Unit.Term), or a
// command a sentence's colon introduces (Find quotes it with that
// sentence).
func Units(text string) []Unit {
	var out []Unit
	heading := -1
	// head: the blocks since the last heading are its entry's head:
	// fields, and notes of the release that added or changed it ("New in
	// Django 3.1."), where a "Label: value" line is a field of the entry
	// (fieldLine).
	head := false
	bs := blocks(text)
	for bi, b := range bs {
		if head && (b.code || b.table || len(b.lines) > 1 || !headLine(b.lines[0])) {
			head = false
		}
		if b.code {
			l := textseg.OneLine(b.lines[0])
			if !Ablate["term"] && b.term && bi+1 < len(bs) && !bs[bi+1].code && termLine(l) {
				// An option's or a setting's name alone above prose
				// ("--reset-author", "pop [--index] [<stash>]"): the
				// term the prose defines, as a definition list writes
				// it.
				heading, head = len(out), true
				out = append(out, Unit{Text: l, Kind: Heading, Heading: -1, Block: bi, Term: true})
				continue
			}
			// A line of code with no letter or digit (a rule of dashes,
			// a brace) says nothing.
			if long(l) && strings.IndexFunc(l, wordRune) >= 0 {
				out = append(out, Unit{Text: l, Kind: Code, Heading: heading, Block: bi})
			}
			continue
		}
		if b.table {
			out = appendRows(out, b.lines, heading, bi)
			continue
		}
		// A caption is no unit, wherever its line stands.
		lines := b.lines
		if slices.ContainsFunc(lines, captionLine) {
			if lines = slices.DeleteFunc(slices.Clone(lines), captionLine); len(lines) == 0 {
				continue
			}
		}
		if l := textseg.OneLine(lines[0]); head && heading >= 0 && len(lines) == 1 && !Ablate["field"] && fieldLine(l) {
			out = append(out, Unit{Text: l, Kind: Sentence, Heading: heading, Block: bi, Field: true})
			continue
		}
		var title string
		if last := lines[len(lines)-1]; bi+1 < len(bs) && headingLine(last) && (!bs[bi+1].code || signatureRE.MatchString(last)) && (len(lines) == 1 || closes(lines[len(lines)-2])) {
			title, lines = last, lines[:len(lines)-1]
		}
		if len(lines) > 0 {
			joined := strings.Join(lines, "\n")
			for _, sp := range textseg.Spans(joined) {
				s := textseg.OneLine(joined[sp.Start:sp.End])
				if long(s) {
					out = append(out, Unit{Text: s, Kind: Sentence, Heading: heading, Block: bi})
				}
			}
		}
		if title != "" {
			heading, head = len(out), true
			title = textseg.OneLine(title)
			out = append(out, Unit{Text: title, Kind: Heading, Heading: -1, Block: bi, Term: !Ablate["term"] && termName(title)})
		}
	}
	return out
}

// tableLine is a line of a table: its cells between pipes.
func tableLine(l string) bool {
	return len(l) >= 2 && l[0] == '|' && l[len(l)-1] == '|'
}

// tableRule is the line of dashes under a table's header.
var tableRule = regexp.MustCompile(`^\|(?:\s*:?-{3,}:?\s*\|)+$`)

// appendRows adds a table's units (its lines trimmed, as blocks keeps
// them): its header, the line above the rule, a heading, and each row
// under it; rows cut from their header (a chunk
// that opens inside a table) sit under the section's heading.
func appendRows(out []Unit, lines []string, heading, block int) []Unit {
	under := heading
	headed := false // the first rule only is the header's
	for i, l := range lines {
		switch {
		case !headed && tableRule.MatchString(l):
			headed = true
		case !headed && i+1 < len(lines) && tableRule.MatchString(lines[i+1]):
			under = len(out)
			out = append(out, Unit{Text: l, Kind: Heading, Heading: -1, Block: block})
		case strings.IndexFunc(l, wordRune) >= 0:
			out = append(out, Unit{Text: l, Kind: Row, Heading: under, Block: block})
		}
	}
	return out
}

// long is a fragment worth keeping.
func long(s string) bool {
	n := utf8.RuneCountInString(s)
	return n >= minRunes || n >= minCJKRunes && strings.IndexFunc(s, func(r rune) bool { return textseg.IsHangul(r) || unicode.Is(unicode.Han, r) }) >= 0
}

// closes reports a line that ends a sentence: the line after it starts
// something new rather than wrapping it.
func closes(l string) bool {
	l = strings.TrimRight(l, " \"'’”»)]")
	r, _ := utf8.DecodeLastRuneInString(l)
	return strings.ContainsRune(".!?。！？…:", r)
}

// headLine reports a line that may stand in an entry's head: a field
// ("Added in: v0.7.7"), or a note no longer than a heading that names a
// release ("New in Django 3.1.", "Changed in version 3.8."); the first
// line of prose about the entry ends its head.
func headLine(l string) bool {
	l = textseg.OneLine(l)
	return fieldLine(l) || utf8.RuneCountInString(l) <= maxHeadingRunes && releaseNoteRE.MatchString(l)
}

// releaseNoteRE is a number written with a dot, as a release's is.
var releaseNoteRE = regexp.MustCompile(`\d\.\d`)

// fieldRE is a field's line: a label of one to three words, a colon and
// a value after it on the same line.
var fieldRE = regexp.MustCompile(`^\pL[\pL\pN]*(?:[ -][\pL\pN]+){0,2}\s?[:：]\s+\S`)

// fieldLine reports a line that gives a field of the entry whose head
// it is in ("Default: 259200 (3 days, in seconds)", "Added in: v0.7.7",
// "Type: int"): a reference writes an entry's name as its heading and
// its fields under it, before the prose that describes it. Read as a
// heading, a field would take the prose after it from the entry ("The
// number of seconds a password reset link is valid for." under "Default:
// 259200 …", not under PASSWORD_RESET_TIMEOUT); as a sentence of the
// entry it is the value a question for the entry's default asks for.
// A section's title with a colon ("Event: 'close'") comes after the
// prose of the entry before it, not in an entry's head.
func fieldLine(l string) bool {
	return fieldRE.MatchString(l) && headingLine(l)
}

// headingLine is a line that can title what follows: short, with a letter,
// not ending as a sentence or a clause does.
func headingLine(l string) bool {
	l = strings.TrimSpace(l)
	if l == "" || !titleLen(l) || strings.IndexFunc(l, unicode.IsLetter) < 0 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(l)
	return !strings.ContainsRune(".!?。！？…,;:", r)
}

type block struct {
	lines []string
	code  bool
	// term: a line of code alone between blank lines, outside a fenced
	// block.
	term bool
	// table: a table's lines, as extract writes a data table (Markdown's
	// pipe table); prose beside it is a block of its own.
	table bool
}

// termName reports a heading written as a name in code, the term a
// settings reference or an API's page defines: one word that is an
// option ("--follow"), a call or an identifier ("os.cpu_count()",
// "SQLITE_MAX_LENGTH"), or a dotted name in lower case ("gc.auto",
// "server.requestTimeout"). A title in capitals ("OPTIONS") or a
// product's name ("Node.js", "UTF-8", "I/O") is none.
func termName(l string) bool {
	if strings.ContainsAny(l, " \t") {
		return false
	}
	r, _ := utf8.DecodeRuneInString(l)
	return strings.HasPrefix(l, "-") && len(l) > 1 || strings.ContainsAny(l, "()_=") || unicode.IsLower(r) && strings.Contains(strings.Trim(l, "."), ".")
}

// termLine is a line of code that can name what the prose after it
// defines: short, with a letter, not a shell prompt, a comment, a
// tool's message ("error[E0382]: …"), a markup tag or a statement.
func termLine(l string) bool {
	if !titleLen(l) || strings.IndexFunc(l, unicode.IsLetter) < 0 {
		return false
	}
	if strings.HasPrefix(l, "$ ") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "//") || strings.HasPrefix(l, "> ") || directiveRE.MatchString(l) || ToolLabel.MatchString(l) || strings.HasPrefix(l, "<") && strings.HasSuffix(l, ">") {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(l)
	return !strings.ContainsRune(";{}(:,.", r)
}

// blocks splits text at blank lines and around lines of code. The lines
// of a fenced block (extract writes a page's preformatted blocks and a
// document's listings so: "```text", the lines, "```") are code, however
// they read; a block closes at a bare fence of as many backticks or more.
// A text cut from inside a block (a chunk) opens with a bare fence that
// closes it, and what comes before that is code too: a bare first fence
// closes when the fence after it has an info string (extract's openers
// do) or the bare fences are odd in number; otherwise bare fences pair
// in order, as in Markdown written by hand.
func blocks(text string) []block {
	fs := startFences(text)
	var out []block
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, block{lines: cur, table: tableLine(cur[0])})
			cur = nil
		}
	}
	// alone is the index of the last block when it is a line of code
	// outside a fenced block after a blank line (or the text's start),
	// -1 otherwise; a blank line after it makes it a term.
	alone, blank := -1, true
	// wrapped: the paragraph's last line is one that read as code and
	// wraps kept as prose; no line wraps onto it (a run of commands after
	// a line of prose is not all prose).
	wrapped := false
	indent := 0 // where the text of the paragraph's last line starts (textColumn)
	for line := range strings.SplitSeq(text, "\n") {
		t := strings.TrimSpace(line)
		if fs.step(t) {
			flush()
			alone, blank = -1, false
			continue
		}
		if t == "" {
			flush()
			if alone >= 0 {
				out[alone].term = true
			}
			alone, blank = -1, true
			continue
		}
		code := fs.open == 0 && CodeLine(t) && !tableLine(t)
		if fs.open > 0 || code && (wrapped || indentOf(line) != indent || !wraps(cur, t)) {
			flush()
			alone = -1
			if blank && fs.open == 0 {
				alone = len(out)
			}
			out = append(out, block{lines: []string{t}, code: true})
			wrapped = false
		} else {
			if len(cur) > 0 && tableLine(cur[len(cur)-1]) != tableLine(t) {
				flush() // a table is a block of its own, prose beside it or not
			}
			cur = append(cur, t)
			alone = -1
			wrapped = code // a line of code wraps kept as prose
			indent = textColumn(line)
		}
		blank = false
	}
	flush()
	return out
}

// wraps reports a line that a paragraph's prose wraps onto, though
// CodeLine reads it as code: the line before it is a line of prose of
// four words or more (not a heading: "EXAMPLES", "Usage") that does not
// end its sentence, and the line reads as code for nothing but how it
// opens: an option it holds ("… visiting web browsers.  python -m pydoc
// -p 1234" before "will start a HTTP server …": command) or opens with
// ("--onto on the command line, …"), or a lower-case word and a colon
// that is not a tool's message (proseLabel: "… is equivalent" before
// "to:"; "… need to worry about" before "recursion: CPython uses …";
// "… can be found at" before "https://…"), not for code's marks or
// endings (codeLine without the rules for how a line opens). blocks asks
// it only of a line indented to where the text of the line before it
// starts, as a wrapped paragraph's or list item's lines are (a manual's
// example sits indented under its prose), and not of the line after one
// it kept.
func wraps(cur []string, t string) bool {
	if len(cur) == 0 {
		return false
	}
	if prev := cur[len(cur)-1]; closes(prev) || tableLine(prev) || len(strings.Fields(prev)) < 4 {
		return false
	}
	return !codeLine(t, false) && (command(t) || optionFirst(t) || proseLabel(t))
}

// proseLabel reports a line that opens with a lower-case word and a
// colon (ToolLabel) as prose may, not as a tool's message does: a label
// with a code in brackets ("error[E0382]:") or one of the labels
// compilers and interpreters print.
func proseLabel(l string) bool {
	label := ToolLabel.FindString(l)
	return label != "" && !strings.Contains(label, "[") && !slices.Contains(messageLabels, strings.TrimSuffix(label, ":"))
}

// messageLabels are the labels a tool's messages open with.
var messageLabels = []string{"error", "warning", "note", "help", "fatal", "info", "debug", "hint", "caused"}

// listMarkRE opens a list's item: a bullet or a number, and a space.
var listMarkRE = regexp.MustCompile(`^(?:[*+•-]|\d{1,3}[.)])[ \t]+`)

// textColumn is where a line's text starts: after its indent and, for a
// list's item, its marker ("* You really removed …" is continued by a
// line indented two spaces).
func textColumn(line string) int {
	n := indentOf(line)
	return n + len(listMarkRE.FindString(line[n:]))
}

// indentOf is the width of a line's leading spaces and tabs.
func indentOf(line string) int { return len(line) - len(strings.TrimLeft(line, " \t")) }

// optionFirst reports a line that opens with a long option ("--onto"),
// not a rule of dashes ("---") or an SQL comment ("-- all users").
func optionFirst(l string) bool {
	r, _ := utf8.DecodeRuneInString(strings.TrimPrefix(l, "--"))
	return strings.HasPrefix(l, "--") && unicode.IsLetter(r)
}

// Balance makes a piece of text cut from a longer one (a chunk) hold its
// fenced blocks whole: an opening fence before it when it starts inside a
// block (as blocks reads it), a closing one after it when it ends inside
// one. Pieces joined (a research's passages of one source) then read as
// each did alone.
func Balance(text string) string {
	if !strings.Contains(text, "```") {
		return text
	}
	fs := startFences(text)
	startsInside := fs.open > 0
	for line := range strings.SplitSeq(text, "\n") {
		fs.step(strings.TrimSpace(line))
	}
	if startsInside {
		text = "```text\n" + text
	}
	if fs.open > 0 {
		text += "\n" + strings.Repeat("`", fs.open)
	}
	return text
}

// fences follows a text's fenced blocks line by line: open is the
// backticks of the fence the block it is in opened with, 0 outside one.
type fences struct{ open int }

// startFences is the state a text starts in: inside a block when it was
// cut from one (startsInFence), its first bare fence closing it.
func startFences(text string) fences {
	if startsInFence(text) {
		return fences{open: 3}
	}
	return fences{}
}

// step reads a trimmed line and reports whether it is a fence that opens
// or closes a block: any fence outside one, a bare fence of as many
// backticks or more inside one.
func (fs *fences) step(t string) bool {
	k, info, ok := fence(t)
	if !ok || fs.open > 0 && (info != "" || k < fs.open) {
		return false
	}
	if fs.open > 0 {
		fs.open = 0
	} else {
		fs.open = k
	}
	return true
}

// startsInFence reports a text that starts inside a fenced block: its
// first fence is bare, and the fence after it has an info string or the
// bare ones are odd in number.
func startsInFence(text string) bool {
	var fences []string // the info strings of the text's fences
	for line := range strings.SplitSeq(text, "\n") {
		if _, info, ok := fence(strings.TrimSpace(line)); ok {
			fences = append(fences, info)
		}
	}
	bare := 0
	for _, info := range fences {
		if info == "" {
			bare++
		}
	}
	return len(fences) > 0 && fences[0] == "" && (len(fences) > 1 && fences[1] != "" || bare%2 == 1)
}

// fence reports a code fence line — three backticks or more (k), then an
// info string or nothing: "```go" opens a block of Go; a bare "```"
// closes one, or opens one in Markdown written by hand.
func fence(t string) (k int, info string, ok bool) {
	rest := strings.TrimLeft(t, "`")
	k = len(t) - len(rest)
	if k < 3 || strings.Contains(rest, "`") {
		return 0, "", false // inline code after backticks
	}
	return k, strings.TrimSpace(rest), true
}

// CodeLine reports a trimmed, non-empty line that reads as code, markup
// or a terminal session: it opens or closes a block, ends a statement or
// opens a call, starts with a shell prompt, a reStructuredText directive
// or an option, is a command line, or is dense with code symbols.
func CodeLine(l string) bool { return codeLine(l, true) }

// codeLine is CodeLine; without opening, the rules that read a line as
// code by how it opens are left out: opening with an option or a
// lower-case label (ToolLabel), or being a command line (command).
func codeLine(l string, opening bool) bool {
	if directiveRE.MatchString(l) {
		return true // ".. note::": a reStructuredText source's markup
	}
	if strings.HasPrefix(l, "--") && (opening || !optionFirst(l)) {
		return true
	}
	if opening && ToolLabel.MatchString(l) {
		return true
	}
	if strings.HasPrefix(l, "$ ") || strings.HasPrefix(l, "//") || strings.HasPrefix(l, "#") || strings.HasPrefix(l, "> ") && strings.ContainsAny(l, "$=(") {
		return true
	}
	body := l[:len(l)-1]
	switch l[len(l)-1] {
	case '{', '}', '[':
		return true
	case ';':
		// A statement ends so, and so does a clause a PDF wraps after;
		// the statement has code's marks or is a word or three ("break;").
		if strings.ContainsAny(body, "(){}=<>[]*") || strings.Contains(body, "::") || len(strings.Fields(body)) <= 3 {
			return true
		}
	case '(':
		// A call opens so ("println!("); prose opens a parenthesis after a
		// space.
		if !strings.HasSuffix(body, " ") {
			return true
		}
	case ',':
		if strings.ContainsAny(l, "(){}=") {
			return true
		}
	}
	if opening && command(l) {
		return true
	}
	letters, symbols := Density(proseAround(l))
	return symbols*10 > letters
}

// inlineCodeRE is a span of inline code, as Markdown and AsciiDoc write
// one: "`--fixup=reword:<commit>`".
var inlineCodeRE = regexp.MustCompile("`[^`]+`")

// proseAround is a line's text outside its spans of inline code, when it
// has three words or more there: prose that quotes code ("`--squash`
// replaces the log message of <commit>") is not code however dense the
// code it quotes. Any other line is itself.
func proseAround(l string) string {
	if strings.Count(l, "`")%2 != 0 || !strings.Contains(l, "`") {
		return l
	}
	outside := inlineCodeRE.ReplaceAllString(l, " ")
	words := 0
	for _, f := range strings.Fields(outside) {
		if strings.IndexFunc(f, unicode.IsLetter) >= 0 {
			words++
		}
	}
	if words < 3 {
		return l
	}
	return outside
}

// command reports a command line as a manual shows one: a lower-case
// program name, an option ("-x", "--long") and no sentence's end.
func command(l string) bool {
	fs := strings.Fields(l)
	if len(fs) < 2 || fs[0] != strings.ToLower(fs[0]) || !unicode.IsLetter([]rune(fs[0])[0]) || closes(l) {
		return false
	}
	for _, f := range fs[1:] {
		if r := strings.TrimLeft(f, "-"); len(r) < len(f) && len(f)-len(r) <= 2 && r != "" && unicode.IsLetter([]rune(r)[0]) {
			return true
		}
	}
	return false
}

// CodeSymbols are characters prose seldom uses and code, shell sessions,
// compiler output and markup use all the time.
const CodeSymbols = "{}[]<>=;|&*_~\\$#@^`"

// Density counts a text's letters and its code symbols, braces twice.
// The angle brackets of a placeholder or type standing as a word of its
// own ("<number> Default: 0", "git add <file>"), which a reference puts
// in its prose, are not counted; those of a generic type ("List<String>")
// and of a line that is one tag ("<div>") are.
func Density(s string) (letters, symbols int) {
	if t := strings.TrimSpace(s); strings.Contains(t, "<") && !(strings.Count(t, "<") == 1 && strings.HasPrefix(t, "<") && strings.HasSuffix(t, ">")) {
		s = placeholderRE.ReplaceAllString(s, "$1$2$3")
	}
	for _, r := range s {
		switch {
		case unicode.IsLetter(r):
			letters++
		case strings.ContainsRune(CodeSymbols, r):
			symbols++
			if r == '{' || r == '}' {
				symbols++
			}
		}
	}
	return letters, symbols
}

// directiveRE opens reStructuredText's explicit markup: a directive
// (".. note::", ".. module:: logging.config"), a comment (".. XXX"), a
// target or a footnote — never "...", an ellipsis.
var directiveRE = regexp.MustCompile(`^\.\. [^.\s]`)

// placeholderRE is one word in angle brackets standing as a word: at the
// start or after a space, and before a space, the end or punctuation.
var placeholderRE = regexp.MustCompile(`(^|\s)<(\pL[\pL\pN_-]*)>(\s|$|[.,;:)\]])`)

// ToolLabel matches a line of tool output ("error[E0596]:", "note:",
// "warning:"): prose does not open with a lower-case label.
var ToolLabel = regexp.MustCompile(`^[a-z]+(?:\[\w+\])?:`)

// Caption matches the label of a figure, listing or table ("Listing 1-2:
// Contents of Cargo.toml …", "Figure 3.29. Crop tool options", "그림
// 3.12. 탭 메뉴의 …"): it names an illustration and claims nothing, and
// the prose after it is not about it, so a line that is one is no
// heading and no sentence (Units drops it). "Filename: src/main.rs"
// alone on its line names the file a listing is of. "Example 2: Using
// workspaces" titles a section as often as it labels a listing, so it is
// no caption.
var Caption = regexp.MustCompile(`^(?:(?:Figure|Fig\.|Listing|Table|그림|표)\s*\d+(?:[.-]\d+)*(?::|\.\s|\.?$)|(?:File ?name|파일 이름):\s*\S+$)`)

// captionLine reports a line that is a caption.
func captionLine(l string) bool { return Caption.MatchString(textseg.OneLine(l)) }

// signatureRE is a call's signature standing as a line of its own, the
// title of an API reference's entry ("fs.stat(path[, options],
// callback)"): a name, then its parameters in one pair of parentheses
// that closes the line. Units reads it as a heading whether prose or a
// parameter list written as code ("path {string|Buffer|URL}") follows it
// (when, as any heading, it is short and closes its block); a line of
// prose that ends in a parenthesis ("len(s) returns the number of items
// in s (its length)") is none.
var signatureRE = regexp.MustCompile(`^[\pL_$][\pL\pN_.$]*\([^()]*\)$`)
