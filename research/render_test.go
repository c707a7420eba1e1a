package research_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/quarryhq/quarry/research"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// goldenReport is a report with every part a renderer shows, including
// hostile text from a model and a source.
func goldenReport() (*research.Report, []research.Source) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	sources := []research.Source{
		{ID: "S1", URL: "https://www.britannica.com/verdi", Title: "Giuseppe Verdi", Kind: "web", Domain: "britannica.com", Credibility: 0.75, AccessedAt: at,
			Content: "Giuseppe Verdi was born in 1813 in Le Roncole. He wrote 28 operas."},
		{ID: "S2", URL: "https://someblog.example/verdi", Title: `My <script>alert("x")</script> notes`, Kind: "web", Domain: "someblog.example", Credibility: 0.45, AccessedAt: at,
			Content: `Giuseppe Verdi was born in 1814 in Le Roncole. <img src=x onerror=alert(1)>`},
		{ID: "S3", URL: "kb://notes/d1", Title: "Dvořák notes", Kind: "kb", Domain: "kb:notes", Credibility: 0.8, AccessedAt: at, Authors: []string{"A. Author", "B. Author"},
			Content: "Antonín Dvořák was born on 8 September 1841."},
	}
	rep := &research.Report{
		Title:   "Verdi was born first",
		Summary: "Giuseppe Verdi was born in 1813 [1]. Antonín Dvořák was born on 8 September 1841 [3].",
		Sections: []research.Section{
			{Heading: "Birth years <b>bold</b>", Body: "Verdi: 1813 [1].\n\nA javascript:alert(1) link and <a href=\"javascript:alert(2)\">x</a> stay text [2]."},
		},
		Conflicts: []research.Conflict{{DiscrepancyID: "D1", Topic: "Giuseppe Verdi (year): born, Roncole", Strategy: "credibility",
			Text:       "“Giuseppe Verdi was born in 1813 in Le Roncole.” [1]; “Giuseppe Verdi was born in 1814 in Le Roncole.” [2]. Resolution: 1813: the more credible source (0.75 vs 0.45) wins.",
			Confidence: 0.85}},
		References: []research.Reference{
			{Number: 1, SourceID: "S1", URL: sources[0].URL, Title: sources[0].Title, AccessedAt: at},
			{Number: 2, SourceID: "S2", URL: sources[1].URL, Title: sources[1].Title, AccessedAt: at},
			{Number: 3, SourceID: "S3", URL: sources[2].URL, Title: sources[2].Title, Authors: sources[2].Authors, AccessedAt: at},
		},
		Metadata: research.Metadata{SourcesByKind: map[string]int{"web": 2, "kb": 1}, Sources: 3, References: 3, WordCount: 31, Facts: 4, VerifiedFacts: 1, VerificationRate: 0.25, Discrepancies: 1},
		Engine:   "offline",
		Notes:    []string{"Written by Quarry's offline extractive engine."},
	}
	rep.Quality = research.QualityScore(rep.Metadata)
	rep.Markdown = research.Markdown(rep)
	return rep, sources
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./research -run Golden -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file (go test ./research -run Golden -update to accept):\n%s", name, got)
	}
}

func TestGoldenRenderers(t *testing.T) {
	rep, sources := goldenReport()
	golden(t, "report.md", rep.Markdown)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "report.json", string(js)+"\n")
	h := research.HTML(rep, sources)
	golden(t, "report.html", h)
	if err := inert(h); err != nil {
		t.Error(err)
	}
	for _, want := range []string{`href="#ref-1"`, `id="ref-1"`, `title="Giuseppe Verdi was born in 1813 in Le Roncole."`, `rel="nofollow noopener"`, "Conflicting evidence", "A. Author and B. Author: Dvořák notes"} {
		if !strings.Contains(h, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}

// TestMarkdownKeepsNumbers: a line that would open a list keeps its number
// and escapes the mark after it, as CommonMark reads a backslash only
// before a mark ("\\3." would show the backslash to the reader).
func TestMarkdownKeepsNumbers(t *testing.T) {
	rep, _ := goldenReport()
	rep.Sections[0].Heading = "3. Legacy Layer Modes"
	rep.Sections[0].Body = "12) A step [1]\n- a dash [1]"
	md := research.Markdown(rep)
	for _, want := range []string{"## 3\\. Legacy Layer Modes\n", "\n12\\) A step [1]", "\n\\- a dash [1]"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "\\3") || strings.Contains(md, "\\12") {
		t.Errorf("a backslash before a number:\n%s", md)
	}
}

// inert parses rendered HTML and checks that only the renderer's elements
// and attributes survive, and that links go only to http(s) or in-page
// anchors: whatever hostile text went in stays text.
func inert(h string) error {
	allowed := map[string]bool{"article": true, "header": true, "h1": true, "h2": true, "section": true, "p": true, "ol": true, "ul": true, "li": true,
		"blockquote": true, "aside": true, "footer": true, "strong": true, "em": true, "sup": true, "cite": true, "span": true, "a": true}
	attrs := map[string]bool{"id": true, "class": true, "title": true, "href": true, "rel": true, "target": true}
	z := html.NewTokenizer(strings.NewReader(h))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return nil
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			if !allowed[tok.Data] {
				return fmt.Errorf("element <%s> got through", tok.Data)
			}
			for _, a := range tok.Attr {
				if !attrs[a.Key] {
					return fmt.Errorf("attribute %s on <%s> got through", a.Key, tok.Data)
				}
				v := strings.ToLower(strings.TrimSpace(a.Val))
				if a.Key == "href" && !strings.HasPrefix(v, "#") && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
					return fmt.Errorf("href %q got through", a.Val)
				}
			}
		}
	}
}

func FuzzHTML(f *testing.F) {
	f.Add("Verdi [1] <script>alert(1)</script>", "https://x/\"onmouseover=alert(1)", "<img src=x onerror=alert(1)> [2]")
	f.Add("[1][1][99]", "javascript:alert(1)", "<svg/onload=alert(1)>")
	f.Add("<a href='javascript:x'>[1]</a>", "data:text/html,<script>", "&lt;script&gt;")
	f.Fuzz(func(t *testing.T, text, url, content string) {
		rep, sources := goldenReport()
		rep.Summary = text
		rep.Sections[0].Body = content + " [1]"
		rep.Title = text
		rep.References[0].URL = url
		rep.References[1].Title = content
		sources[0].Content = content
		if err := inert(research.HTML(rep, sources)); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzMarkdown: whatever a source or a model says, the Markdown report has
// no raw HTML, no link or image, no control character and no heading,
// list or quote that the report did not write itself.
func FuzzMarkdown(f *testing.F) {
	f.Add("Verdi [1] <script>alert(1)</script>", "https://x/\"><img src=x>", "[x](javascript:alert(1)) ![i](data:x) [2]")
	f.Add("# Fake heading\n## References\n> quote", "javascript:alert(1)", "\x1b[2J\u202e\r\n- item")
	f.Add("\\[x\\](y) `code` <http://a>", "kb://notes/1", "[1][1] [99] [a]")
	f.Fuzz(func(t *testing.T, text, url, content string) {
		rep, _ := goldenReport()
		rep.Summary = text
		rep.Sections[0].Body = content + " [1]"
		rep.Sections[0].Heading = content
		rep.Title = text
		rep.Notes = []string{content}
		rep.References[0].URL = url
		rep.References[1].Title = content
		md := research.Markdown(rep)
		if strings.ContainsAny(md, "<\x1b\r\u202e") {
			t.Fatalf("raw markup or control in:\n%q", md)
		}
		for i := 0; i < len(md); i++ {
			if md[i] == ']' && i+1 < len(md) && md[i+1] == '(' && (i == 0 || md[i-1] != '\\') {
				t.Fatalf("a link survived in:\n%q", md)
			}
		}
		var own int
		for _, line := range strings.Split(md, "\n") {
			if strings.HasPrefix(line, "#") {
				own++
			}
		}
		want := 1 + len(rep.Sections) + 1 // title, sections, references
		if rep.Summary != "" {
			want++
		}
		if len(rep.Conflicts) > 0 {
			want++
		}
		if own != want {
			t.Fatalf("%d heading lines, want %d:\n%s", own, want, md)
		}
	})
}
