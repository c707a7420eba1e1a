package extract

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// minimalPDF builds a one-page PDF; with text it has a text layer.
func minimalPDF(text string) []byte {
	content := ""
	if text != "" {
		content = fmt.Sprintf("BT /F1 12 Tf 72 720 Td (%s) Tj ET", text)
	}
	return pdfOf(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content))
}

// pdfOf is a one-page PDF whose page content is the stream object
// contents (its dictionary and stream), with a Helvetica font.
func pdfOf(contents string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		contents,
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b strings.Builder
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return []byte(b.String())
}

func TestPDF(t *testing.T) {
	t.Parallel()
	doc, err := PDF(minimalPDF("Solid state batteries store energy."))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Text, "Solid state batteries") {
		t.Fatalf("text = %q", doc.Text)
	}
	if _, err := PDF(minimalPDF("")); !errors.Is(err, ErrNoTextLayer) {
		t.Fatalf("no text layer: %v", err)
	}
	if _, err := PDF([]byte("%PDF-1.4\n1 0 obj garbage")); err == nil {
		t.Fatal("truncated pdf accepted")
	}
	if _, err := PDF([]byte("hello")); err == nil || !strings.Contains(err.Error(), "%PDF-") {
		t.Fatalf("non-pdf: %v", err)
	}
}

// A program's source is one block of code: no line of it reads as a
// sentence, its fence holds whatever backticks it holds, and its lines
// end as a Unix file's do.
func TestFileReadsSourceAsCode(t *testing.T) {
	t.Parallel()
	src := "from datetime import tzinfo\n\nclass LocalTimezone(tzinfo):\n\n    def dst(self, dt):\n        # Returns the offset.\n        return ZERO\n\nDOC = \"\"\"\n```\n\"\"\"\n"
	doc, err := File(writeTemp(t, "tzinfo_examples.py", src))
	if err != nil {
		t.Fatal(err)
	}
	want := "````text\n" + strings.TrimRight(src, "\n") + "\n````"
	if doc.Text != want || doc.Title != "tzinfo_examples.py" || doc.Format != "code" {
		t.Fatalf("doc = %+v, want the source fenced:\n%s", doc, want)
	}
	for name, content := range map[string]string{"crlf.sh": "echo a\r\necho b\r\n", "cr.sh": "echo a\recho b\r", "deploy": "#!/bin/sh\necho a\necho b\n"} {
		doc, err := File(writeTemp(t, name, content))
		if err != nil || doc.Format != "code" || !strings.Contains(doc.Text, "echo a\necho b\n```") {
			t.Errorf("%s: doc = %+v, %v; want its lines fenced as code", name, doc, err)
		}
	}
	if _, err := File(writeTemp(t, "bad.go", "package main\x00\x01")); err == nil {
		t.Error("a binary .go file accepted")
	}
}

func TestHTML(t *testing.T) {
	t.Parallel()
	page := `<!doctype html><html lang="en"><head><title>Crawler guide</title>
<meta name="description" content="How the crawler works"><meta name="keywords" content="crawl, stale">
<style>body{color:red}</style><script>alert(1)</script></head>
<body><nav>Home | About</nav><h1>Crawler</h1><p>The crawler re-crawls every five minutes.</p>
<p>Pages that fail three times are marked stale and kept.</p></body></html>`
	doc, err := HTML([]byte(page), "https://docs.example.com/crawler")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Crawler guide" || doc.Description != "How the crawler works" || doc.Keywords != "crawl, stale" || doc.Language != "en" {
		t.Fatalf("meta: %+v", doc)
	}
	if !strings.Contains(doc.Text, "marked stale and kept") || strings.Contains(doc.Text, "alert") || strings.Contains(doc.Text, "color:red") {
		t.Fatalf("text: %q", doc.Text)
	}
	// Latin-1 declared charset is decoded, not garbled.
	latin := []byte("<html><head><meta charset=\"iso-8859-1\"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>")
	doc, err = HTML(latin, "")
	if err != nil || doc.Title != "Café" || !strings.Contains(doc.Text, "Crème brûlée") {
		t.Fatalf("latin-1: %+v %v", doc, err)
	}
	if _, err := HTML([]byte("\x00\x01\x02binary"), ""); err == nil {
		t.Fatal("binary accepted")
	}
}

func TestFileBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, want string
		data       []byte
	}{
		{"empty.md", "empty", nil},
		{"bin.txt", "binary", []byte("abc\x00\x01\x02")},
		{"latin1.txt", "UTF-8", []byte("caf\xe9 cr\xe8me and more text")},
		{"scan.pdf", "text layer", minimalPDF("")},
		{"blob.xyz", "unsupported", []byte{0x89, 'P', 'N', 'G', 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0}},
		{"searchindex.js", "script, style or data", []byte(`Object.assign(window.search, {"doc_urls":["title-page.html"],"index":{"documentStore":{"docs":{"0":{"body":"The Rust Programming Language by Steve Klabnik and Carol Nichols"}}}}});`)},
		{"style.css", "script, style or data", []byte("body { font-family: sans-serif; } /* the page's look */")},
		{"api.json", "script, style or data", []byte(`{"modules": [{"name": "fs", "desc": "The fs module enables interacting with the file system."}]}`)},
	}
	for _, tt := range tests {
		_, err := File(write(tt.name, tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
	}
	// A truncated final rune is tolerated.
	if _, err := File(write("trunc.txt", []byte("한글 text\xed\x95"))); err != nil {
		t.Errorf("truncated rune: %v", err)
	}
	doc, err := File(write("guide.md", []byte("---\nx: 1\n---\n# Guide\n\nSee [the docs](http://x) and **bold** text.\n")))
	if err != nil || doc.Title != "Guide" || !strings.Contains(doc.Text, "See the docs and bold text.") {
		t.Fatalf("markdown: %+v %v", doc, err)
	}
}

// TestCodeIsFenced: a page's preformatted block and a Markdown document's
// fenced block reach the text between FenceOpen and FenceClose, their
// lines as they are (a Markdown block's underscores and asterisks are
// code, not emphasis), so a reader of the text tells code from prose.
func TestCodeIsFenced(t *testing.T) {
	t.Parallel()
	page := `<html><head><title>venv</title></head><body><article>
<p>The following script shows how to extend EnvBuilder by implementing a subclass which installs setuptools and pip into a created virtual environment:</p>
<div class="highlight"><pre><span class="kn">import</span> os
from subprocess import Popen, PIPE
    """This builder installs setuptools and pip so that you can pip or"""</pre></div>
<p>The script then creates the environment and installs the packages into it, printing what it did as it goes along.</p></article></body></html>`
	doc, err := HTML([]byte(page), "https://docs.example.com/venv")
	if err != nil {
		t.Fatal(err)
	}
	want := FenceOpen + "\nimport os\nfrom subprocess import Popen, PIPE\n\"\"\"This builder installs setuptools and pip so that you can pip or\"\"\"\n" + FenceClose
	if !strings.Contains(doc.Text, want) || !strings.Contains(doc.Text, "virtual environment:\n\n"+FenceOpen) || !strings.Contains(doc.Text, FenceClose+"\n\nThe script then") {
		t.Errorf("preformatted block not fenced apart:\n%s", doc.Text)
	}
	// Prose that reads as a fence is not one; a block's own fences, on
	// lines a <br> breaks, are fenced with one backtick more.
	odd := `<html><body><article><p>` + "```text" + `</p><p>Hello world prose, long enough for a reader to keep it as the body of the article it is in.</p>
<pre>line one<br>` + "```text" + `<br>prose<br>` + "```" + `</pre><p>More prose follows the listing, so that readability keeps the whole article together as it is.</p></article></body></html>`
	doc, err = HTML([]byte(odd), "https://docs.example.com/odd")
	if err != nil {
		t.Fatal(err)
	}
	checkFences(t, doc.Text)
	if !strings.Contains(doc.Text, "````text\nline one\n```text\nprose\n```\n````") {
		t.Errorf("a block holding fences:\n%s", doc.Text)
	}
	if doc, err := Markdown([]byte("```sh\n# install it\nmake install\n```\n\n# Building\n\nText.\n"), "b.md"); err != nil || doc.Title != "Building" {
		t.Errorf("title %q from a comment in code: %v", doc.Title, err)
	}
	md := "# Build\n\nSet **both** options:\n\n```toml\n[profile.release]\nmy_flag = *on*\n```\n\nThen run _cargo build_.\n\n~~~\nunclosed_block\n"
	doc, err = Markdown([]byte(md), "build.md")
	if err != nil {
		t.Fatal(err)
	}
	want = "Set both options:\n\n" + FenceOpen + "\n[profile.release]\nmy_flag = *on*\n" + FenceClose + "\n\nThen run cargo build.\n\n" + FenceOpen + "\nunclosed_block\n" + FenceClose
	if !strings.HasSuffix(doc.Text, want) {
		t.Errorf("markdown:\n%s\nwant it to end with\n%s", doc.Text, want)
	}
}

// A data table keeps its header: its rows are written as a Markdown
// table, each with the header's cells (a cell spanning rows or columns in
// each it spans, a short row filled), its caption a paragraph before it;
// a table that lays out prose, or has no header, reads as before, and the
// data tables inside one are written so.
func TestTableKeepsItsHeader(t *testing.T) {
	t.Parallel()
	prose := `<p>Every program that runs on a machine with finite memory and disk space has limits of some kind, and these are the limits of this one, listed below.</p>`
	for _, tc := range []struct {
		name, table string
		want        []string
		noPipes     bool
	}{
		{name: "header", table: `<table><caption>Table 1. Limits</caption><thead><tr><th>Name</th><th>Default</th><th>Maximum</th></tr></thead>
<tbody><tr><td>SQLITE_MAX_ATTACHED</td><td>10<script>track("x")</script></td><td><p>125</p><p>MB</p></td></tr><tr><td><code>a|b</code></td><td>---</td><td>32767</td></tr></tbody></table>`,
			want: []string{"Table 1. Limits\n\n| Name | Default | Maximum |\n| --- | --- | --- |\n| SQLITE_MAX_ATTACHED | 10 | 125 MB |\n| a\\|b | \\--- | 32767 |"}},
		{name: "spans", table: `<table><tr><th>Class</th><th>Operator</th><th>Note</th></tr>
<tr><td rowspan="2">bit_minmax_ops</td><td>=</td><td>equal</td></tr><tr><td>&lt;</td><td>less</td></tr>
<tr><td colspan="2">none</td><td>x</td></tr><tr><td>a</td><td>b</td><td rowspan="2">c</td></tr><tr><td>short</td></tr><tr><td>p</td><td>q</td><td>r</td><td>extra</td></tr></table>`,
			want: []string{"| bit_minmax_ops | = | equal |\n| bit_minmax_ops | < | less |\n| none | none | x |\n| a | b | c |\n| short | | c |\n| p | q | r |"}},
		{name: "spans multiplied", table: `<table><tr><th colspan="64">a</th><th>b</th></tr><tr><td rowspan="64" colspan="64">x</td></tr>` + strings.Repeat("<tr></tr>", 63) + `</table>`,
			noPipes: true},
		{name: "no header", table: `<table><tr><td>Icon</td><td>Opens the dialog where the styles are chosen.</td></tr><tr><td>Icon</td><td>Closes it.</td></tr></table>`,
			want: []string{"Icon Opens the dialog where the styles are chosen."}, noPipes: true},
		{name: "prose cells", table: `<table><tr><th>Term</th><th>Meaning</th></tr><tr><td>a</td><td><ul><li>one</li><li>two</li></ul></td></tr></table>`,
			want: []string{"Term Meaning"}, noPipes: true},
		{name: "inside a layout table", table: `<table><tr><td><p>A layout cell holding a table of its own, as old sites lay out their pages with tables.</p><table><tr><th>Key</th><th>Effect</th></tr><tr><td>F9</td><td>Update</td></tr></table></td></tr></table>`,
			want: []string{"| Key | Effect |\n| --- | --- |\n| F9 | Update |"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := `<html><head><title>Limits</title></head><body><article><h1>Limits</h1>` + prose + tc.table + prose + `</article></body></html>`
			doc, err := HTML([]byte(page), "https://docs.example.com/limits")
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(doc.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, doc.Text)
				}
			}
			if tc.noPipes && strings.Contains(doc.Text, "| ") {
				t.Errorf("a table that is no data table written with pipes:\n%.500s", doc.Text)
			}
		})
	}
	// A page too short for readability: the body's text keeps the table
	// one block.
	doc, err := HTML([]byte(`<html><body><table><tr><th>Key</th><th>Effect</th></tr><tr><td>F9</td><td>Update</td></tr></table></body></html>`), "https://docs.example.com/keys")
	if err != nil || !strings.Contains(doc.Text, "| Key | Effect |\n| --- | --- |\n| F9 | Update |") {
		t.Errorf("short page: %q %v", doc.Text, err)
	}
}

func FuzzHTML(f *testing.F) {
	f.Add([]byte(`<html><head><title>t</title></head><body><p>hello</p></body></html>`))
	f.Add([]byte(`<meta charset="shift_jis"><p>\x82\xa0</p>`))
	f.Add([]byte(`<<<>>><p <div>`))
	f.Add([]byte(`<base href="//other.example/x/"><a href="../y#f">y</a><a href="javascript:alert(1)">j</a><a rel="nofollow" href="/n">n</a>`))
	f.Add([]byte(`<table><caption>c</caption><tr><th colspan=2>a|b</th><th>---</th></tr><tr><td rowspan=3>x</td></tr><tr><td>y</td><td>z</td><td>w</td><td>v</td></tr><tr></tr></table>`))
	f.Add([]byte(`<table><tr><th colspan="64">a</th><th>b</th></tr><tr><td rowspan="64" colspan="64">x</td></tr><tr></tr><tr></tr></table>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := HTMLWithType(data, "https://example.com/", "text/html; charset=utf-8")
		if err != nil {
			return
		}
		// A table's spans may not multiply a page into more text than
		// its own bounds allow (maxTableGrowth).
		if len(doc.Text) > maxTableGrowth*len(data)+1<<16 {
			t.Fatalf("%d bytes of text from a page of %d", len(doc.Text), len(data))
		}
		if !utf8.ValidString(doc.Text) || !utf8.ValidString(doc.Title) {
			t.Fatal("invalid UTF-8 out")
		}
		checkFences(t, doc.Text)
		for _, l := range doc.Links {
			u, err := url.Parse(l)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Fragment != "" {
				t.Fatalf("bad link %q", l)
			}
		}
		if strings.Contains(doc.Text, "<script") && !strings.Contains(string(data), "&lt;script") && strings.Contains(string(data), "<script") {
			// script bodies must never leak as text markup
			t.Fatalf("script leaked: %q", doc.Text)
		}
	})
}

func FuzzPDF(f *testing.F) {
	f.Add(minimalPDF("hello"))
	f.Add([]byte("%PDF-1.7\n"))
	PDFTimeout = 2 * time.Second
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = PDF(data) // must not panic, and must return within PDFTimeout
	})
}

func TestHTMLLinksAndRobotsMeta(t *testing.T) {
	t.Parallel()
	doc, err := HTMLWithType([]byte(`<html><head><title>L</title><base href="https://cdn.example.org/docs/"><meta name="robots" content="NOINDEX, follow"></head>
<body><p>text</p><a href="a.html#top">a</a> <a href="/b">b</a> <a href="a.html">again</a> <a href="mailto:x@y">m</a> <a rel="nofollow ugc" href="c">c</a> <area href="https://maps.example/">
</body></html>`), "https://example.com/start", "text/html")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"https://cdn.example.org/docs/a.html", "https://cdn.example.org/b", "https://maps.example/"}
	if strings.Join(doc.Links, " ") != strings.Join(want, " ") {
		t.Errorf("links = %q, want %q", doc.Links, want)
	}
	if !doc.NoIndex || doc.NoFollow {
		t.Errorf("robots meta: noindex %v nofollow %v", doc.NoIndex, doc.NoFollow)
	}
}

// FuzzNormalize: the one-pass normaliser gives what the regular
// expressions it replaced gave (runs of spaces to one, lines trimmed,
// blank lines collapsed), on any text.
func FuzzNormalize(f *testing.F) {
	spaces := regexp.MustCompile(`[ \t\f\v\x{a0}]+`)
	blankLines := regexp.MustCompile(`\n\s*\n\s*(\n\s*)*`)
	oracle := func(s string) string {
		s = strings.ToValidUTF8(s, "")
		s = spaces.ReplaceAllString(s, " ")
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		s = strings.Join(lines, "\n")
		s = blankLines.ReplaceAllString(s, "\n\n")
		return strings.TrimSpace(s)
	}
	for _, s := range []string{"a  b\t\tc\n\n\n d \n\u00a0e\u00a0\u00a0f\n \n \ng", "\n\n x \n", "\xff bad \r\n\r\n utf8", "one\n two\nthree"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := normalize(s), oracle(s); got != want {
			t.Fatalf("normalize(%q) = %q, want %q", s, got, want)
		}
	})
}

func TestTextTitle(t *testing.T) {
	for text, want := range map[string]string{
		"Logging HOWTO\n\nBody text.":                           "Logging HOWTO",
		"*************\n  Logging HOWTO\n*************\n\nBody": "Logging HOWTO",
		"=====\n\n-----\nRules only, then a title\n":            "Rules only, then a title",
		"=====\n" + strings.Repeat("long ", 40):                 "name.txt",
		"*****\n=====":                                          "name.txt",
		":tocdepth: 2\n\n=====\nGeneral FAQ\n=====\n":           "General FAQ",
		":orphan:\n\nUploading\n":                               "Uploading",
		"= My First Object Walk\n\n== Intro\n":                  "My First Object Walk",
		"-b::\n\tShow blank SHA-1.\n":                           "name.txt",
		"--all\n\tFetch all remotes.\n":                         "name.txt",
		"// Please don't remove this comment\n-a\n":             "name.txt",
		"linkgit:git-annotate[1]::\n\tAnnotate.\n":              "name.txt",
		"<repository>\n\tThe remote.\n":                         "name.txt",
		"[[def_alternate]]alternate object database::\n":        "name.txt",
		"`araxis`;; Use Araxis Merge\n":                         "name.txt",
		"* `0` or `false` - Disables the target.\n":             "name.txt",
		"== Git Repository Format Versions\n\nText.":            "Git Repository Format Versions",
	} {
		doc, err := Text([]byte(text), "name.txt")
		if err != nil {
			t.Fatal(err)
		}
		if doc.Title != want {
			t.Errorf("Text(%q).Title = %q, want %q", text, doc.Title, want)
		}
	}
}
