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
	Format      string // html, pdf, markdown, text
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
	name := filepath.Base(path)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".html", ".htm", ".xhtml":
		return HTML(data, "")
	case ".pdf":
		return PDF(data)
	case ".md", ".markdown", ".mdx":
		return Markdown(data, name)
	case ".adoc", ".asciidoc", ".asc":
		return AsciiDoc(data, name)
	case ".txt", ".text", ".rst", ".log", "":
		return Text(data, name)
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
		return Text(data, name)
	default:
		return Doc{}, fmt.Errorf("%w: %s (%s)", ErrUnsupported, filepath.Ext(path), ct)
	}
}

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
// a title is an ornament), else the file name. A .txt written in
// AsciiDoc (Git's manuals) is read as text: reading it as AsciiDoc was
// measured and not kept (docs/answer-quality.md).
func Text(data []byte, name string) (Doc, error) {
	if err := checkText(data); err != nil {
		return Doc{}, err
	}
	text := strings.TrimSpace(strings.ToValidUTF8(string(data), ""))
	return Doc{Title: firstLineTitle(text, name), Text: text, Format: "text"}, nil
}

func firstLineTitle(text, fallback string) string {
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.IndexFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
			continue // blank, or a rule of "=", "*" or "-"
		}
		if utf8.RuneCountInString(line) <= 120 {
			return line
		}
		break
	}
	return fallback
}

var (
	mdImage   = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	mdLink    = regexp.MustCompile(`\[([^\]]+)\]\([^)]*\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}\s+`)
	mdEmph    = regexp.MustCompile(`(\*\*|__|\*|_|~~|` + "`" + `)([^*_~` + "`" + `\n]+)(\*\*|__|\*|_|~~|` + "`" + `)`)
	mdFence   = regexp.MustCompile("(?m)^(```|~~~).*$")
	mdFront   = regexp.MustCompile(`(?s)\A---\n.*?\n---\n`)
	mdHTML    = regexp.MustCompile(`<[^>\n]+>`)
	mdTitle   = regexp.MustCompile(`(?m)^#\s+(.+)$`)
)

// Markdown strips markup, keeping text, link text and code.
func Markdown(data []byte, name string) (Doc, error) {
	if err := checkText(data); err != nil {
		return Doc{}, err
	}
	src := strings.ToValidUTF8(string(data), "")
	src = strings.ReplaceAll(src, "\r\n", "\n")
	title := name
	if m := mdTitle.FindStringSubmatch(src); m != nil {
		title = strings.TrimSpace(m[1])
	}
	s := mdFront.ReplaceAllString(src, "")
	s = mdFence.ReplaceAllString(s, "")
	s = mdImage.ReplaceAllString(s, "$1")
	s = mdLink.ReplaceAllString(s, "$1")
	s = mdHeading.ReplaceAllString(s, "")
	s = mdEmph.ReplaceAllString(s, "$2")
	s = mdHTML.ReplaceAllString(s, "")
	return Doc{Title: title, Text: strings.TrimSpace(s), Format: "markdown"}, nil
}
