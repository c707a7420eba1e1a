// Package extract turns documents (HTML, PDF, Markdown, plain text) into
// clean text with a title and metadata. It is the one place that parses
// outside document formats; every parser here has a fuzz target.
package extract

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Doc is an extracted document.
type Doc struct {
	Title       string
	Text        string
	Description string
	Keywords    string
	Language    string // from the document's own markup, if any
	Published   string
	Format      string // html, pdf, markdown, asciidoc, rst, text, code
	// Links are the page's outgoing http(s) links (HTML with a page URL).
	Links []string
	// NoIndex and NoFollow come from <meta name="robots">.
	NoIndex, NoFollow bool
	// Canonical is the page's <link rel="canonical"> (absolute, http(s)),
	// when it names one.
	Canonical string
}

// ErrUnsupported is returned for formats Quarry does not read.
var ErrUnsupported = errors.New("unsupported format")

// MaxFileSize caps what File reads (64 MiB).
const MaxFileSize = 64 << 20

// File reads and extracts a file, choosing the parser by extension and,
// failing that, by content sniffing.
func File(path string) (Doc, error) {
	info, err := os.Stat(path)
	if err != nil {
		return Doc{}, err
	}
	if info.Size() > MaxFileSize {
		return Doc{}, fmt.Errorf("file is %d bytes, over the %d byte limit", info.Size(), MaxFileSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Doc{}, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return Doc{}, errors.New("file is empty")
	}
	// A file name is bytes, not always UTF-8 (an old archive's Latin-1):
	// a title taken from it must be text a store takes.
	name := strings.ToValidUTF8(filepath.Base(path), "\uFFFD")
	ext := strings.ToLower(filepath.Ext(path))
	if sourceCode[ext] || ext == "" && bytes.HasPrefix(data, []byte("#!")) {
		// A program's source, or a script that names its interpreter.
		return Code(data, name)
	}
	if _, ok := markup[ext]; ok || plain[ext] {
		return PlainText(data, name)
	}
	switch ext {
	case ".html", ".htm", ".xhtml":
		return HTML(data, "")
	case ".pdf":
		return PDF(data)
	case ".js", ".mjs", ".cjs", ".css", ".map", ".json", ".svg":
		// A page's script, style or data: text to a sniffer, not prose.
		// A documentation folder is full of them (a search index in
		// JavaScript can hold the whole book again).
		return Doc{}, fmt.Errorf("%w: %s (a page's script, style or data, not a document)", ErrUnsupported, filepath.Ext(path))
	}
	switch ct := http.DetectContentType(data); {
	case strings.HasPrefix(ct, "text/html"):
		return HTML(data, "")
	case strings.HasPrefix(ct, "application/pdf"):
		return PDF(data)
	case strings.HasPrefix(ct, "text/plain"):
		return PlainText(data, name)
	default:
		return Doc{}, fmt.Errorf("%w: %s (%s)", ErrUnsupported, filepath.Ext(path), ct)
	}
}

// PlainText reads a text file in the markup its name says (Markdown,
// AsciiDoc, reStructuredText, also before a last ".txt": Sphinx publishes
// each page's source as "_sources/page.rst.txt") or, for any other name,
// its content shows (a .txt written in AsciiDoc, as Git's manuals are;
// never a .log); else as plain text.
// A crawl reads a text/plain page by it too.
func PlainText(data []byte, name string) (Doc, error) {
	ext := strings.ToLower(filepath.Ext(name))
	if read, ok := markup[ext]; ok {
		return read(data, name)
	}
	if ext == ".txt" {
		inner := strings.ToLower(filepath.Ext(name[:len(name)-len(ext)])) // ".rst" of "page.rst.txt"
		if read, ok := markup[inner]; ok {
			return read(data, name)
		}
	}
	if ext != ".log" && writtenInAsciiDoc(data) {
		return AsciiDoc(data, name)
	}
	return Text(data, name)
}

// markup are the readers of text whose markup its name says; plain are
// the names of plain text (File reads both by PlainText).
var (
	markup = map[string]func([]byte, string) (Doc, error){
		".md": Markdown, ".markdown": Markdown, ".mdx": Markdown,
		".adoc": AsciiDoc, ".asciidoc": AsciiDoc, ".asc": AsciiDoc,
		".rst": RST, ".rest": RST,
	}
	plain = map[string]bool{".txt": true, ".text": true, ".log": true, "": true}
)

// sourceCode are the names of program source and scripts: the example
// programs a documentation folder ships beside its pages (Python's
// tzinfo_examples.py). JavaScript (.js, .mjs, .cjs) is not among them: in
// a documentation folder it is the pages' own scripts, skipped (File).
// Configuration examples (.yaml, .toml, .ini) are read as text.
var sourceCode = map[string]bool{
	".py": true, ".pyi": true, ".go": true, ".c": true, ".h": true, ".cc": true, ".cpp": true, ".cxx": true, ".hpp": true,
	".rs": true, ".java": true, ".kt": true, ".cs": true, ".swift": true, ".scala": true, ".rb": true, ".php": true,
	".pl": true, ".lua": true, ".hs": true, ".r": true, ".ts": true, ".tsx": true, ".jsx": true, ".sh": true,
	".bash": true, ".zsh": true, ".ps1": true, ".bat": true, ".sql": true,
}

// Code reads a program's source as one block of code, fenced as a page's
// preformatted block is: every line of it is code, however it reads
// ("class LocalTimezone(tzinfo):", a comment's sentence), so an answer
// quotes none of it as a sentence; its title is the file's name.
func Code(data []byte, name string) (Doc, error) {
	if err := checkText(data); err != nil {
		return Doc{}, err
	}
	code := strings.Trim(lineEnds.Replace(strings.ToValidUTF8(string(data), "")), "\n")
	opening, closing := Fence(code)
	return Doc{Title: name, Text: opening + "\n" + code + "\n" + closing, Format: "code"}, nil
}

// lineEnds writes a Windows' or an old Mac's line ends as Unix's.
var lineEnds = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// checkText rejects binary and mis-encoded input.
func checkText(data []byte) error {
	head := data[:min(len(data), 8192)]
	if bytes.IndexByte(head, 0) >= 0 {
		return errors.New("content is binary (NUL bytes), not text")
	}
	if !utf8.Valid(data) {
		// Allow a truncated final rune; reject anything else.
		i := len(data)
		for i > 0 && len(data)-i < utf8.UTFMax && !utf8.RuneStart(data[i-1]) {
			i--
		}
		if i > 0 {
			i--
		}
		if !utf8.Valid(data[:i]) {
			return errors.New("content is not valid UTF-8")
		}
	}
	return nil
}

// Text extracts a plain-text file; the title is its first line with a
// letter or a digit when short (a line of only "=" or "*" over or under
// a title is an ornament), else the file name. File reads a .txt
// written in AsciiDoc (Git's manuals) as AsciiDoc.
func Text(data []byte, name string) (Doc, error) {
	if err := checkText(data); err != nil {
		return Doc{}, err
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(data), ""))
	return Doc{Title: firstLineTitle(text, name), Text: text, Format: "text"}, nil
}

// firstLineTitle is a text's title: its first line with a letter or a
// digit, when short and written as a title is; else fallback. A line of
// metadata above it (reStructuredText's ":orphan:" or ":tocdepth: 2",
// an AsciiDoc attribute entry) is passed over, and an AsciiDoc title's
// marks ("= My First Object Walk", "== Git Repository Format Versions")
// are no words of it. A text that opens with an option ("-b", "--all"),
// a comment ("// Please don't remove …"), a placeholder ("<repository>"),
// an anchor ("[[def_alternate_object_database]]"), a list's item ("* `0`
// or `false` - …") or a definition list's term ("linkgit:git-add[1]::",
// "`araxis`;; Use Araxis Merge") is a part of a manual that other pages
// include, and has no title line.
func firstLineTitle(text, fallback string) string {
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "```") {
			break // a text that opens with code has no title line
		}
		if strings.IndexFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue // blank, or a rule of "=", "*" or "-"
		}
		if adocEntry.MatchString(line) {
			continue // metadata: ":orphan:", ":tocdepth: 2", ":toc: left"
		}
		if m := adocTitle.FindStringSubmatch(line); m != nil {
			line = m[1]
		}
		if utf8.RuneCountInString(line) <= 120 && !notTitle.MatchString(line) {
			return line
		}
		break
	}
	return fallback
}

// notTitle is a first line that is no title (firstLineTitle).
var notTitle = regexp.MustCompile(`^(?:-|//|<|\[\[|[*+•]\s)|;;|:$`)

var (
	mdImage   = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink    = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}\s+`)
	mdEmph    = regexp.MustCompile(`(\*\*|__|\*|_|~~|` + "`" + `)([^*_~` + "`" + `\n]+)(\*\*|__|\*|_|~~|` + "`" + `)`)
	mdFence   = regexp.MustCompile("^(`{3,}|~{3,})\\s*([^`]*)$")
	mdFront   = regexp.MustCompile(`(?s)\A---\n.*?\n---\n`)
	mdHTML    = regexp.MustCompile(`<[^>\n]+>`)
	mdTitle   = regexp.MustCompile(`(?m)^#\s+(.+)$`)
	mdBlank   = regexp.MustCompile(`\n{3,}`)
)

// Markdown strips markup, keeping text, link text and code; a fenced code
// block keeps its lines as they are, between fences of its own (Fence).
func Markdown(data []byte, name string) (Doc, error) {
	if err := checkText(data); err != nil {
		return Doc{}, err
	}
	src := strings.ToValidUTF8(string(data), "")
	src = strings.ReplaceAll(src, "\r\n", "\n")
	title := name
	parts := mdParts(mdFront.ReplaceAllString(src, ""))
	for i := 0; i < len(parts); i += 2 { // the prose: "# install it" in code is no title
		if m := mdTitle.FindStringSubmatch(parts[i]); m != nil {
			title = strings.TrimSpace(m[1])
			break
		}
	}
	var b strings.Builder
	for i, part := range parts {
		if i%2 == 1 { // a fenced block: its lines as they are
			opening, closing := Fence(part)
			b.WriteString("\n" + opening + "\n" + part + "\n" + closing + "\n")
			continue
		}
		part = mdImage.ReplaceAllString(part, "$1")
		part = mdLink.ReplaceAllString(part, "$1")
		part = mdHeading.ReplaceAllString(part, "")
		part = mdEmph.ReplaceAllString(part, "$2")
		part = mdHTML.ReplaceAllString(part, "")
		// A line left reading as a fence ("# ```x", its heading mark
		// gone) is not one.
		b.WriteString(loneFence.ReplaceAllString(part, "$1"))
	}
	text := mdBlank.ReplaceAllString(b.String(), "\n\n")
	return Doc{Title: title, Text: strings.TrimSpace(text), Format: "markdown"}, nil
}

// mdParts splits Markdown at its fenced code blocks: prose, code, prose,
// …, the fences left out. A block opens with three or more backticks or
// tildes and closes with as many of the same or more, alone on a line;
// one never closed runs to the end.
func mdParts(src string) []string {
	var parts []string
	var cur strings.Builder
	open := ""
	for line := range strings.SplitSeq(src, "\n") {
		m := mdFence.FindStringSubmatch(strings.TrimSpace(line))
		switch {
		case open == "" && m != nil:
			parts = append(parts, cur.String())
			cur.Reset()
			open = m[1]
			continue
		case open != "" && m != nil && m[2] == "" && strings.HasPrefix(m[1], open):
			parts = append(parts, strings.TrimRight(cur.String(), "\n"))
			cur.Reset()
			open = ""
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	if open != "" {
		return append(parts, strings.TrimRight(cur.String(), "\n"))
	}
	return append(parts, cur.String())
}
