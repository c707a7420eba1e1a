package pdf

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/research"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// chromium is the browser, or a skip (a failure under CI, which installs
// it).
func chromium(t *testing.T) string {
	t.Helper()
	p, err := Chromium(os.Getenv("QUARRY_CHROMIUM"))
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return p
}

// longReport is a report of many pages, in English and Korean, with 60
// references, each cited.
func longReport() (*research.Report, []research.Source) {
	rep := &research.Report{Title: "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?",
		Summary: "Derived from the quotes below: Giuseppe Verdi (1813) was born before Antonín Dvořák (1841). [1] [2]"}
	var srcs []research.Source
	var body strings.Builder
	for i := 1; i <= 60; i++ {
		id := fmt.Sprintf("S%d", i)
		srcs = append(srcs, research.Source{ID: id, URL: fmt.Sprintf("https://example.org/page-%d", i), Title: fmt.Sprintf("Reference page %d", i), Content: "Text."})
		rep.References = append(rep.References, research.Reference{Number: i, SourceID: id, URL: fmt.Sprintf("https://example.org/page-%d", i), Title: fmt.Sprintf("Reference page %d", i), AccessedAt: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)})
		fmt.Fprintf(&body, "Paragraph %d says what page %d holds, at a length that makes the report run over several pages of print. 전기 요금은 매월 25일까지 납부해야 합니다. [%d]\n\n", i, i, i)
	}
	rep.Sections = []research.Section{{Heading: "What the sources say", Body: body.String()}}
	return rep, srcs
}

// TestRender prints a long report with real Chromium and reads the PDF
// back: every page's text holds the summary and each reference, Korean
// included, and the citations are links.
func TestRender(t *testing.T) {
	path := chromium(t)
	rep, srcs := longReport()
	t0 := time.Now()
	data, err := Render(context.Background(), path, rep, srcs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d bytes in %v", len(data), time.Since(t0))
	if out := os.Getenv("QUARRY_PDF_OUT"); out != "" {
		_ = os.WriteFile(out, data, 0o644)
	}
	if !strings.HasPrefix(string(data), "%PDF-") {
		t.Fatalf("not a PDF: %q", data[:min(20, len(data))])
	}
	if !strings.Contains(string(data), "/URI") {
		t.Error("the PDF has no link: citations and references must stay clickable")
	}
	text := pdfText(t, data)
	for _, want := range []string{"Giuseppe Verdi (1813) was born before", "Reference page 1", "Reference page 60", "납부해야"} {
		if !strings.Contains(text, want) {
			t.Errorf("the PDF's text lacks %q", want)
		}
	}
}

// pdfText is the PDF's text by poppler's pdftotext, pages in order,
// spacing collapsed; it fails when pdftotext says the PDF has fewer than
// two pages (the report must paginate).
func pdfText(t *testing.T, data []byte) string {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("pdftotext is not installed: CI requires it (apt-get install poppler-utils)")
		}
		t.Skip("pdftotext is not installed")
	}
	f := filepath.Join(t.TempDir(), "r.pdf")
	if err := os.WriteFile(f, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-enc", "UTF-8", f, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	if pages := strings.Count(string(out), "\f"); pages < 2 {
		t.Errorf("%d pages: a long report must paginate", pages)
	}
	return strings.Join(strings.Fields(string(out)), " ")
}

func TestNoChromium(t *testing.T) {
	if _, err := Chromium("/nonexistent/chromium"); err == nil || !strings.Contains(err.Error(), "apt-get install chromium") {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkRenderLong prints a report the size of the UI's long-report
// test (11,807 words, 201 citations): time per PDF, its bytes and pages.
func BenchmarkRenderLong(b *testing.B) {
	path, err := Chromium(os.Getenv("QUARRY_CHROMIUM"))
	if err != nil {
		b.Skip(err)
	}
	rep := &research.Report{Title: "A long report", Summary: "The summary opens with the answer. [1] [2]"}
	var srcs []research.Source
	for i := 1; i <= 201; i++ {
		id := fmt.Sprintf("S%d", i)
		srcs = append(srcs, research.Source{ID: id, URL: fmt.Sprintf("https://example.org/%d", i), Title: fmt.Sprintf("Source %d", i)})
		rep.References = append(rep.References, research.Reference{Number: i, SourceID: id, URL: fmt.Sprintf("https://example.org/%d", i), Title: fmt.Sprintf("Source %d", i)})
	}
	words := 0
	for s := 0; words < 11807; s++ {
		var body strings.Builder
		for p := 0; p < 8 && words < 11807; p++ {
			fmt.Fprintf(&body, "This paragraph of section %d states what its sources say, at the length of a real report's paragraph, with the figures and names a reader checks against them. It cites one source. [%d]\n\n", s, (s*8+p)%201+1)
			words += 33
		}
		rep.Sections = append(rep.Sections, research.Section{Heading: fmt.Sprintf("Section %d", s+1), Body: body.String()})
	}
	var data []byte
	for b.Loop() {
		if data, err = Render(context.Background(), path, rep, srcs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(data))/1024, "KiB")
	if bin, err := exec.LookPath("pdfinfo"); err == nil {
		f := filepath.Join(b.TempDir(), "r.pdf")
		_ = os.WriteFile(f, data, 0o644)
		if out, err := exec.Command(bin, f).Output(); err == nil {
			for _, l := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(l, "Pages:"); ok {
					var n float64
					fmt.Sscan(strings.TrimSpace(v), &n)
					b.ReportMetric(n, "pages")
				}
			}
		}
	}
}
