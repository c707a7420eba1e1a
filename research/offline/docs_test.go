package offline_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/jsonx"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/kbsource"
	"github.com/quarryhq/quarry/store/sqlite"
)

// notProse flags what a report must never quote as a claim, by rules of
// its own (not the engine's): code (braces, statements, arrows), shell
// and compiler output, line-numbered listings, captions, key help, and
// bare titles or menu items (under five words or no sentence end).
var notProse = regexp.MustCompile(`[{}]|;\s*$|=>|^\s*\d+\s*[|~]|\$ \w|\berror\[|^(?:Listing|Figure|Table) \d+-\d+:|^Press |^\s*(?:fn|let|use|pub|impl|struct) `)

func proseLine(s string) bool {
	s = strings.TrimSpace(s)
	if notProse.MatchString(s) || len(strings.Fields(s)) < 5 {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!\"”’)", r)
}

// docsSite is the folder of a real documentation site to serve: the Rust
// documentation rustup ships, unless QUARRY_DOCS_SITE names another.
func docsSite(b *testing.B) string {
	if d := os.Getenv("QUARRY_DOCS_SITE"); d != "" {
		return d
	}
	out, err := exec.Command("rustc", "--print", "sysroot").Output()
	if err != nil {
		b.Fatalf("the benchmark needs a documentation site: set QUARRY_DOCS_SITE or install Rust's docs (rustc --print sysroot: %v)", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "share", "doc", "rust", "html")
	if _, err := os.Stat(filepath.Join(dir, "book", "index.html")); err != nil {
		b.Fatalf("the benchmark needs the Rust book's HTML (rustup component add rust-docs): %v", err)
	}
	return dir
}

// BenchmarkDocsSite crawls a real documentation site — the Rust book as
// rustup ships it, served on loopback beside the rest of Rust's docs (API
// pages, source views) — from /book/, then researches 20 questions whose
// answering chapter is known, offline. It reports the answering chapter
// among the references (≤ 12) and among the first 3, references per
// report, pages crawled outside /book/ (0: the crawl stays where it was
// pointed), and summary sentences that are not prose by an independent
// rule (code, tool output, captions, navigation, bare titles):
//
//	go test ./research/offline -run '^$' -bench DocsSite -benchtime 1x
//
// Another site: QUARRY_DOCS_SITE (the folder to serve), QUARRY_DOCS_START
// (the path to crawl from) and QUARRY_DOCS_QUESTIONS (a JSON Lines file of
// questions and their answering pages), as for Node.js's API docs:
//
//	QUARRY_DOCS_SITE=/usr/share/doc/nodejs QUARRY_DOCS_START=/api/ QUARRY_DOCS_QUESTIONS=testdata/docs_node_questions.jsonl go test ./research/offline -run '^$' -bench DocsSite -benchtime 1x
func BenchmarkDocsSite(b *testing.B) {
	dir := docsSite(b)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc := kb.New(st, nil)
	emb := embed.Hash{}
	if _, err := svc.Create(ctx, "docs", "", emb); err != nil {
		b.Fatal(err)
	}
	c := &crawl.Crawler{Fetcher: fetch.New(fetch.Options{AllowPrivate: true, PerHost: 8}), KB: svc, Store: st, Embedder: emb}
	start := "/book/"
	if v := os.Getenv("QUARRY_DOCS_START"); v != "" {
		start = v
	}
	log, err := c.Run(ctx, "docs", srv.URL+start, crawl.Options{MaxPages: 1000, MaxDepth: 5, Concurrency: 8})
	if err != nil {
		b.Fatal(err)
	}
	k, err := svc.Get(ctx, "docs")
	if err != nil {
		b.Fatal(err)
	}
	srcs, err := st.SourceList(ctx, k.ID)
	if err != nil {
		b.Fatal(err)
	}
	outside := 0
	for _, s := range srcs {
		if !strings.HasPrefix(s.URL, srv.URL+start) {
			outside++
		}
	}
	qs := loadDocsQuestions(b)
	rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{kbsource.New(svc, "docs", emb)}, Store: st}
	verbose := os.Getenv("HOTPOT_VERBOSE") != ""
	b.ResetTimer()
	for range b.N {
		var inRefs, inTop3, refs, lines, bad int
		for _, q := range qs {
			r, err := rn.Start(ctx, q.Question, research.Options{Level: research.LevelStandard, Sources: []string{"kb:docs"}})
			if err != nil {
				b.Fatal(err)
			}
			var pages []string
			for _, ref := range r.Report.References {
				pages = append(pages, ref.URL[strings.LastIndexByte(ref.URL, '/')+1:])
			}
			refs += len(pages)
			if slices.ContainsFunc(pages[:min(12, len(pages))], func(p string) bool { return slices.Contains(q.Chapters, p) }) {
				inRefs++
			}
			if slices.ContainsFunc(pages[:min(3, len(pages))], func(p string) bool { return slices.Contains(q.Chapters, p) }) {
				inTop3++
			}
			for _, s := range citeRE.Split(r.Report.Summary, -1) {
				if strings.TrimSpace(s) == "" {
					continue
				}
				lines++
				if !proseLine(s) {
					bad++
					if verbose {
						fmt.Printf("NOT PROSE %q: %q\n", q.Question, s)
					}
				}
			}
			if verbose {
				fmt.Printf("%q chapters=%v refs=%v\n", q.Question, q.Chapters, pages)
			}
		}
		nq := float64(len(qs))
		b.ReportMetric(float64(log.PagesCrawled), "pages_crawled")
		b.ReportMetric(float64(outside), "pages_outside_start")
		b.ReportMetric(float64(inRefs)/nq, "chapter_in_refs")
		b.ReportMetric(float64(inTop3)/nq, "chapter_in_top3")
		b.ReportMetric(float64(refs)/nq, "refs/research")
		b.ReportMetric(float64(bad), "summary_non_prose")
		b.ReportMetric(float64(lines)/nq, "summary_sentences/research")
	}
}

type docsQuestion struct {
	Question string   `json:"question"`
	Chapters []string `json:"chapters"`
}

func loadDocsQuestions(b *testing.B) []docsQuestion {
	path := filepath.Join("testdata", "docs_questions.jsonl")
	if v := os.Getenv("QUARRY_DOCS_QUESTIONS"); v != "" {
		path = v
	}
	qs, err := jsonx.ReadLinesFile[docsQuestion](path)
	if err != nil {
		b.Fatal(err)
	}
	return qs
}
