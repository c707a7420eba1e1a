package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

func testSite(t *testing.T) *httptest.Server {
	t.Helper()
	pages := map[string]string{
		"/":        `<html><title>Docs home</title><body><p>Welcome to the documentation of the frobnicator, a tool for frobnicating widgets.</p><a href="/install">Install</a> <a href="/usage">Usage</a></body></html>`,
		"/install": `<html><title>Installing</title><body><p>Install the frobnicator with the package manager; it needs version 3 of the widget library.</p></body></html>`,
		"/usage":   `<html><title>Usage</title><body><p>Run frobnicate with a widget file; the output lists every frobnicated widget.</p><a href="/gone">old page</a></body></html>`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("ETag", fmt.Sprintf(`"%d"`, len(body)))
		if r.Header.Get("If-None-Match") == fmt.Sprintf(`"%d"`, len(body)) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestKBCrawlCLI(t *testing.T) {
	srv := testSite(t)
	data := t.TempDir()
	// The SSRF guard refuses the loopback test site until it is allowed.
	out, _, err := run(t, data, "kb", "crawl", "docs", srv.URL, "--create")
	if err == nil || !strings.Contains(err.Error(), "loopback") || !strings.Contains(err.Error(), "--allow-private") || !strings.Contains(out, "failed") {
		t.Fatalf("guarded crawl: err %v, out %q", err, out)
	}
	// The refused crawl left no knowledge base: --create again.
	out, errOut, err := run(t, data, "--allow-private", "kb", "crawl", "docs", srv.URL, "--delay", "0", "--json", "--create")
	if err != nil {
		t.Fatalf("crawl: %v\n%s", err, errOut)
	}
	var l map[string]any
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("%v: %q", err, out)
	}
	if l["status"] != "success" || l["pages_crawled"] != 3.0 || l["pages_updated"] != 3.0 || l["pages_failed"] != 1.0 {
		t.Fatalf("crawl log: %v", l)
	}
	setenv(t, "QUARRY_ALLOW_PRIVATE", "1")
	out, _, err = run(t, data, "kb", "crawl", "docs", srv.URL, "--delay", "0")
	if err != nil || !strings.Contains(out, "success, 3 pages crawled, 0 updated") {
		t.Fatalf("recrawl: %v %q", err, out)
	}

	// Two runs: the refused one went with the knowledge base it created.
	out, _, err = run(t, data, "kb", "logs", "docs", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var logs []map[string]any
	if err := json.Unmarshal([]byte(out), &logs); err != nil || len(logs) != 2 {
		t.Fatalf("logs: %v %q", err, out)
	}
	for _, f := range []string{"status", "pages_crawled", "pages_updated", "pages_failed", "duration_seconds", "started_at", "finished_at"} {
		if _, ok := logs[0][f]; !ok {
			t.Errorf("crawl log JSON lacks %q: %v", f, logs[0])
		}
	}
	if logs[0]["pages_updated"] != 0.0 || logs[1]["pages_updated"] != 3.0 {
		t.Errorf("logs newest first: %v", logs)
	}
	out, _, _ = run(t, data, "kb", "logs", "docs")
	if !strings.HasPrefix(out, "STARTED") || strings.Count(out, "\n") != 3 {
		t.Errorf("logs table: %q", out)
	}
	out, _, err = run(t, data, "kb", "stats", "docs", "--json")
	var st map[string]any
	if err != nil || json.Unmarshal([]byte(out), &st) != nil || st["sources"] != 3.0 || st["stale"] != 0.0 || st["chunks"] == 0.0 {
		t.Fatalf("stats: %v %q", err, out)
	}
	out, _, err = run(t, data, "kb", "search", "docs", "widget library version", "--json")
	if err != nil || !strings.Contains(out, srv.URL+"/install") {
		t.Fatalf("search over crawled pages: %v %q", err, out)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kb", "crawl", "docs", srv.URL, "--max-pages", "0"}, "max-pages"},
		{[]string{"kb", "crawl", "docs", srv.URL, "--max-depth", "-1"}, "max-depth"},
		{[]string{"kb", "crawl", "docs", srv.URL, "--concurrency", "0"}, "concurrency"},
		{[]string{"kb", "crawl", "docs", srv.URL, "--every", "10ms"}, "every"},
		{[]string{"kb", "crawl", "docs", "ftp://example.com/"}, "http"},
		{[]string{"kb", "crawl", "nope", srv.URL}, "not found"},
		{[]string{"kb", "logs", "nope"}, "not found"},
		{[]string{"kb", "logs", "docs", "--limit", "0"}, "limit"},
	} {
		_, _, err := run(t, data, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.args, err, tc.want)
		}
	}
}

// remote serves a SearxNG instance, the Wikipedia API and the pages the
// search results point at.
func remote(t *testing.T) *httptest.Server {
	t.Helper()
	wiki, err := os.ReadFile("../../search/wikipedia/testdata/query.json")
	if err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/searx/search":
			if r.URL.Query().Get("format") != "json" || r.URL.Query().Get("q") == "" {
				http.Error(w, "bad", 400)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"query":%q,"results":[{"url":"%s/verdi","title":"Verdi biography","content":"Verdi was born in 1813.","publishedDate":null,"engine":"duckduckgo"}]}`, r.URL.Query().Get("q"), srv.URL)
		case "/verdi":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<html><title>Giuseppe Verdi biography</title><body><article><p>Giuseppe Verdi was born on 10 October 1813 in Le Roncole, near Busseto, in the Duchy of Parma. He became the leading Italian opera composer of the nineteenth century.</p></article></body></html>`)
		case "/w/api.php":
			w.Header().Set("Content-Type", "application/json")
			w.Write(wiki)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestResearchRemoteSources(t *testing.T) {
	srv := remote(t)
	data := t.TempDir()
	setenv(t, "QUARRY_LLM", "offline")
	_, _, err := run(t, data, "research", composerQ, "--source", "web")
	if err == nil || !strings.Contains(err.Error(), "QUARRY_SEARXNG_URL") {
		t.Fatalf("unconfigured web: %v", err)
	}
	setenv(t, "QUARRY_SEARXNG_URL", srv.URL+"/searx")
	setenv(t, "QUARRY_WIKIPEDIA_BASE_URL", srv.URL+"/w/api.php")
	setenv(t, "QUARRY_ARXIV_SNAPSHOT", "../../../shared/data/arxiv/sample.jsonl")
	if _, err := os.Stat("../../../shared/data/arxiv/sample.jsonl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI runs with ../shared/data beside the checkout: %v", err)
		}
		t.Skip("../shared/data not present")
	}
	// Guarded: the fake APIs are on loopback, so every search fails, and
	// the research fails saying why instead of reporting "no evidence".
	_, _, err = run(t, data, "research", composerQ, "--source", "web,wikipedia", "--level", "quick")
	if err == nil || !strings.Contains(err.Error(), "every search failed") || !strings.Contains(err.Error(), "loopback") {
		t.Fatalf("guarded research: %v", err)
	}
	var out string
	setenv(t, "QUARRY_ALLOW_PRIVATE", "1")
	var errOut string
	out, errOut, err = run(t, data, "research", composerQ, "--source", "web,wikipedia,arxiv", "--level", "quick", "--format", "json")
	if err != nil {
		t.Fatalf("research: %v\n%s", err, errOut)
	}
	var r struct {
		Sources []struct {
			URL         string
			Kind        string
			Credibility float64
			Content     string
		}
		Report struct{ Markdown string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, s := range r.Sources {
		kinds[s.Kind]++
		if s.Kind == "wikipedia" && s.Credibility != 0.75 {
			t.Errorf("wikipedia credibility %g", s.Credibility)
		}
	}
	if kinds["web"] != 1 || kinds["wikipedia"] != 2 || kinds["arxiv"] == 0 {
		t.Fatalf("sources by kind: %v", kinds)
	}
	if !strings.Contains(r.Report.Markdown, "1813") || !strings.Contains(r.Report.Markdown, srv.URL+"/verdi") {
		t.Errorf("report does not cite the fetched page:\n%s", r.Report.Markdown)
	}
}
