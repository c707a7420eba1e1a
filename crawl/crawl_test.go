package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/logbuf"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
)

// page is one page of a test site.
type page struct {
	body     string
	ctype    string
	etag     bool // answer conditional requests by ETag (else Last-Modified)
	modified time.Time
	failures int // the next n requests answer 500
	gone     bool
}

// testSite is a local website whose pages change between crawls.
type testSite struct {
	mu      sync.Mutex
	pages   map[string]*page
	epoch   time.Time
	version int
	robots  string
	// token, when set, is the access_token every page asks for.
	token string
	srv   *httptest.Server

	requests, conditional, notModified atomic.Int64
	// placeholders counts requests whose query holds fetch.Redacted: a
	// placeholder the crawler stored, sent back.
	placeholders atomic.Int64
}

func newSite(t testing.TB) *testSite {
	s := &testSite{pages: map[string]*page{}, epoch: time.Now().Add(-time.Hour).Truncate(time.Second)}
	s.srv = httptest.NewServer(s)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *testSite) set(path, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pages[path]
	if p == nil {
		p = &page{etag: len(s.pages)%2 == 0, ctype: "text/html; charset=utf-8"}
		s.pages[path] = p
	}
	// Every change moves the page's Last-Modified forward one second.
	s.version++
	p.body = body
	p.modified = s.epoch.Add(time.Duration(s.version) * time.Second)
}

func (s *testSite) fail(path string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pages[path].failures = n
}

func (s *testSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		if s.robots == "" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, s.robots)
		return
	}
	s.requests.Add(1)
	if strings.Contains(r.URL.RawQuery, fetch.Redacted) {
		s.placeholders.Add(1)
	}
	if s.token != "" && !strings.Contains(r.URL.RawQuery, s.token) {
		http.Error(w, "no token", http.StatusUnauthorized)
		return
	}
	s.mu.Lock()
	path := r.URL.Path
	if a := r.URL.Query().Get("author"); a != "" {
		path += "#" + a // a page of its own for each author
	}
	p, ok := s.pages[path]
	var cp page
	if ok {
		cp = *p
		if p.failures > 0 {
			p.failures--
		}
	}
	s.mu.Unlock()
	if !ok || cp.gone {
		http.NotFound(w, r)
		return
	}
	if cp.failures > 0 {
		http.Error(w, "flaky", http.StatusInternalServerError)
		return
	}
	etag := fmt.Sprintf(`"v%d"`, cp.modified.Unix())
	inm, ims := r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")
	if inm != "" || ims != "" {
		s.conditional.Add(1)
	}
	if cp.etag {
		w.Header().Set("ETag", etag)
		if inm == etag {
			s.notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else {
		w.Header().Set("Last-Modified", cp.modified.UTC().Format(http.TimeFormat))
		if t, err := http.ParseTime(ims); err == nil && !cp.modified.After(t) {
			s.notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Type", cp.ctype)
	fmt.Fprint(w, cp.body)
}

func html(title string, links ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s</title></head><body><h1>%s</h1><p>This page is about %s and has enough words to be indexed by the crawler.</p>", title, title, title)
	for _, l := range links {
		fmt.Fprintf(&b, `<a href="%s">%s</a> `, l, l)
	}
	return b.String() + "</body></html>"
}

// testWriter sends log lines to t.Log, shown for failing tests.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	embed.Hash
	texts atomic.Int64
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.texts.Add(int64(len(texts)))
	return c.Hash.Embed(ctx, texts)
}

type bundle struct {
	crawler *Crawler
	store   store.Store
	emb     *countingEmbedder
	kb      *store.KB
}

func setup(t testing.TB, st store.Store) *bundle {
	t.Helper()
	ctx := context.Background()
	if st == nil {
		var err error
		st, err = sqlite.Open(ctx, filepath.Join(t.TempDir(), "q.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	}
	emb := &countingEmbedder{Hash: embed.Hash{Dim: 64}}
	svc := kb.New(st, nil)
	k, err := svc.Create(ctx, "site", "", emb)
	if err != nil {
		t.Fatal(err)
	}
	c := &Crawler{
		Fetcher:  fetch.New(fetch.Options{AllowPrivate: true, PerHost: -1}),
		KB:       svc,
		Store:    st,
		Embedder: emb,
		Logger:   slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	return &bundle{crawler: c, store: st, emb: emb, kb: k}
}

func (b *bundle) run(t *testing.T, seed string, opt Options) *store.CrawlLog {
	t.Helper()
	log, err := b.crawler.Run(context.Background(), "site", seed, opt)
	if err != nil {
		t.Fatalf("crawl: %v", err)
	}
	return log
}

func (b *bundle) source(t *testing.T, url string) *store.Source {
	t.Helper()
	s, err := b.store.SourceGet(context.Background(), b.kb.ID, url)
	if err != nil {
		t.Fatalf("source %s: %v", url, err)
	}
	return s
}

func TestCrawlAndRecrawl(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var st store.Store
			if backend == "postgres" {
				url := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
				pg, err := postgres.Open(context.Background(), url, postgres.Options{})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { pg.Close() })
				st = pg
			}
			testCrawlAndRecrawl(t, setup(t, st))
		})
	}
}

func testCrawlAndRecrawl(t *testing.T, b *bundle) {
	ctx := context.Background()
	s := newSite(t)
	s.robots = "User-agent: *\nDisallow: /private/\n"
	s.set("/", html("Home", "/a", "/b", "/private/secret", "https://elsewhere.example/x", "/logo.png", "/c#section"))
	s.set("/a", html("Alpha", "/", "/b", "/deep1"))
	s.set("/b", html("Beta", "/f1", "/f2", "/f3"))
	s.set("/c", html("Gamma"))
	s.set("/deep1", html("Deep one", "/deep2"))
	s.set("/deep2", html("Deep two"))
	s.set("/private/secret", html("Secret"))
	s.set("/f1", html("Flaky one"))
	s.set("/f2", html("Flaky two"))
	s.set("/f3", html("Flaky three"))
	s.set("/orphan", html("Only in the sitemap"))
	s.set("/sitemap.xml", `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>`+s.srv.URL+`/orphan</loc></url><url><loc>https://elsewhere.example/y</loc></url></urlset>`)
	s.pages["/sitemap.xml"].ctype = "application/xml"
	opt := Options{MaxDepth: 2, Concurrency: 3, Backoff: time.Millisecond}

	// First crawl: everything on the site within depth 2, nothing disallowed
	// or off-site; /deep2 is three links away.
	log := b.run(t, s.srv.URL, opt)
	// /, /a, /b, /c, /deep1, /f1, /f2, /f3, /orphan
	if log.Status != store.CrawlSuccess || log.PagesCrawled != 9 || log.PagesUpdated != 9 || log.PagesFailed != 0 {
		t.Fatalf("first crawl log: %+v", log)
	}
	if _, err := b.store.SourceGet(ctx, b.kb.ID, s.srv.URL+"/private/secret"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("robots.txt-disallowed page was crawled: %v", err)
	}
	if _, err := b.store.SourceGet(ctx, b.kb.ID, s.srv.URL+"/deep2"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("page beyond max depth was crawled: %v", err)
	}
	embedded := b.emb.texts.Load()
	st, _ := b.store.KBStats(ctx, b.kb.ID)
	if st.Sources != 9 || int64(st.Chunks) != embedded {
		t.Fatalf("stats %+v, embedded %d", st, embedded)
	}

	// Second crawl, nothing changed: only conditional requests, all 304,
	// nothing re-embedded.
	before := s.requests.Load()
	cond, nm := s.conditional.Load(), s.notModified.Load()
	log = b.run(t, s.srv.URL, opt)
	sent := s.requests.Load() - before
	if log.Status != store.CrawlSuccess || log.PagesCrawled != 9 || log.PagesUpdated != 0 || log.PagesFailed != 0 {
		t.Fatalf("unchanged recrawl log: %+v", log)
	}
	// 9 pages and the sitemap.
	if got := s.conditional.Load() - cond; sent != 10 || got != sent || s.notModified.Load()-nm != sent {
		t.Fatalf("unchanged recrawl: %d requests, %d conditional, %d answered 304; want 10, all conditional and 304", sent, got, s.notModified.Load()-nm)
	}
	if n := b.emb.texts.Load(); n != embedded {
		t.Fatalf("unchanged recrawl embedded %d texts", n-embedded)
	}

	// Third crawl: /c changes and gains a link to a new page; /f1, /f2 and
	// /f3 start failing.
	s.set("/c", html("Gamma, revised", "/new"))
	s.set("/new", html("Brand new page"))
	s.fail("/f1", 1)
	s.fail("/f2", 2)
	s.fail("/f3", 3)
	log = b.run(t, s.srv.URL, opt)
	if log.Status != store.CrawlSuccess || log.PagesUpdated != 2 || log.PagesFailed != 3 {
		t.Fatalf("third crawl log: %+v", log)
	}
	if got := b.emb.texts.Load() - embedded; got != 2 {
		t.Fatalf("third crawl embedded %d texts, want 2 (the changed and the new page)", got)
	}
	if src := b.source(t, s.srv.URL+"/c"); !strings.Contains(src.Title, "revised") {
		t.Fatalf("changed page not updated: %q", src.Title)
	}
	b.source(t, s.srv.URL+"/new")
	for _, p := range []string{"/f1", "/f2", "/f3"} {
		if src := b.source(t, s.srv.URL+p); src.FailCount != 1 || src.IsStale {
			t.Fatalf("%s after one failure: fail_count %d stale %v", p, src.FailCount, src.IsStale)
		}
	}

	// Fourth and fifth: /f1 recovered; /f2 recovers after two; /f3 fails a
	// third time and goes stale — kept, not deleted.
	b.run(t, s.srv.URL, opt)
	log = b.run(t, s.srv.URL, opt)
	if log.PagesFailed != 1 {
		t.Fatalf("fifth crawl: %+v", log)
	}
	for p, want := range map[string]bool{"/f1": false, "/f2": false, "/f3": true} {
		src := b.source(t, s.srv.URL+p)
		if src.IsStale != want {
			t.Errorf("%s: stale %v, want %v (fail_count %d)", p, src.IsStale, want, src.FailCount)
		}
	}
	st, _ = b.store.KBStats(ctx, b.kb.ID)
	if st.Stale != 1 || st.Sources != 10 {
		t.Fatalf("stats after stale: %+v", st)
	}
	// It recovers when it answers again.
	b.run(t, s.srv.URL, opt)
	if src := b.source(t, s.srv.URL+"/f3"); src.IsStale || src.FailCount != 0 {
		t.Fatalf("/f3 recovered: stale %v fail_count %d", src.IsStale, src.FailCount)
	}

	logs, err := b.store.CrawlLogList(ctx, b.kb.ID, 100)
	if err != nil || len(logs) != 6 || logs[0].StartedAt.Before(logs[5].StartedAt) {
		t.Fatalf("crawl logs: %d %v", len(logs), err)
	}
}

func TestRunRetriesThenFails(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	s := newSite(t)
	s.set("/", html("Home"))
	s.fail("/", 2)
	log := b.run(t, s.srv.URL, Options{Backoff: time.Millisecond})
	if log.Status != store.CrawlSuccess || log.PagesCrawled != 1 {
		t.Fatalf("two failures then success within 3 retries: %+v", log)
	}

	s.fail("/", 10)
	log, err := b.crawler.Run(context.Background(), "site", s.srv.URL, Options{Backoff: time.Millisecond})
	if err == nil || log == nil || log.Status != store.CrawlFailed || !strings.Contains(log.ErrorMessage, "500") || log.FinishedAt == nil {
		t.Fatalf("down site: log %+v err %v", log, err)
	}
	if got := 10 - s.pages["/"].failures; got != 4 {
		t.Fatalf("down site: %d attempts, want 4 (1 + 3 retries)", got)
	}
	// One failed run counts one failure for the page, not four.
	if src := b.source(t, s.srv.URL+"/"); src.FailCount != 1 {
		t.Fatalf("fail_count after one failed run = %d", src.FailCount)
	}
	logs, _ := b.store.CrawlLogList(context.Background(), b.kb.ID, 10)
	if len(logs) != 2 || logs[0].Status != store.CrawlFailed || logs[1].Status != store.CrawlSuccess {
		t.Fatalf("logs: %+v", logs)
	}
}

func TestRunRefusesWithoutRetry(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.crawler.Fetcher = fetch.New(fetch.Options{}) // the SSRF guard on
	s := newSite(t)
	s.set("/", html("Home"))
	start := time.Now()
	log, err := b.crawler.Run(context.Background(), "site", s.srv.URL, Options{Backoff: time.Hour})
	var be *fetch.BlockedError
	if !errors.As(err, &be) || log.Status != store.CrawlFailed || time.Since(start) > time.Minute {
		t.Fatalf("loopback site without --allow-private: log %+v err %v", log, err)
	}
	if s.requests.Load() != 0 {
		t.Fatal("the guard let a request through")
	}
	for _, tc := range []struct {
		opt  Options
		want string
	}{
		{Options{MaxPages: -1}, "max-pages"},
		{Options{MaxDepth: 101}, "max-depth"},
		{Options{Concurrency: 65}, "concurrency"},
	} {
		if _, err := b.crawler.Run(context.Background(), "site", s.srv.URL, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want one naming %s", tc.opt, err, tc.want)
		}
	}
	if _, err := b.crawler.Run(context.Background(), "site", "ftp://example.com/", Options{}); err == nil || !strings.Contains(err.Error(), "http") {
		t.Errorf("ftp URL: %v", err)
	}
}

func TestHostileSite(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.crawler.Fetcher = fetch.New(fetch.Options{AllowPrivate: true, PerHost: -1, MaxBytes: 64 << 10})
	s := newSite(t)
	s.set("/", html("Home", "/huge", "/binary", "/latin1", "/loop", "/empty"))
	s.set("/huge", "<html><body><p>"+strings.Repeat("big ", 40000)+"</p></body></html>")
	s.set("/binary", "\x00\x01\x02ELF\x00\x00 not html at all")
	s.set("/latin1", "<html><title>Caf\xe9</title><body><p>Cr\xe8me br\xfbl\xe9e and caf\xe9 au lait are French.</p></body></html>")
	s.pages["/latin1"].ctype = "text/html; charset=iso-8859-1"
	s.set("/loop", "")
	s.set("/empty", "<html><body></body></html>")
	mux := http.NewServeMux()
	mux.Handle("/", s)
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	s.srv.Config.Handler = mux

	log := b.run(t, s.srv.URL, Options{MaxDepth: 1})
	if log.Status != store.CrawlSuccess || log.PagesUpdated != 2 || log.PagesFailed != 4 {
		t.Fatalf("hostile site log: %+v", log)
	}
	if src := b.source(t, s.srv.URL+"/latin1"); src.Title != "Café" || !strings.Contains(src.Content, "Crème brûlée") {
		t.Fatalf("latin1 page: %q %q", src.Title, src.Content)
	}
}

func TestEveryRunsOnSchedule(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	s := newSite(t)
	s.set("/", html("Home"))
	ctx, cancel := context.WithCancel(context.Background())
	var runs []*store.CrawlLog
	err := b.crawler.Every(ctx, "site", s.srv.URL, Options{}, time.Second, func(l *store.CrawlLog, err error) {
		if err != nil {
			t.Error(err)
		}
		runs = append(runs, l)
		if len(runs) == 2 {
			cancel()
		}
	})
	if err != nil || len(runs) != 2 || runs[1].PagesUpdated != 0 {
		t.Fatalf("Every: err %v, runs %+v", err, runs)
	}
	if err := b.crawler.Every(context.Background(), "site", s.srv.URL, Options{}, time.Millisecond, nil); err == nil || !strings.Contains(err.Error(), "every") {
		t.Fatalf("sub-second interval: %v", err)
	}
}

func TestParseSitemap(t *testing.T) {
	t.Parallel()
	sm, err := ParseSitemap([]byte(`<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc> https://x.test/s1.xml </loc></sitemap><sitemap><loc></loc></sitemap>
</sitemapindex>`))
	if err != nil || len(sm.Sitemaps) != 1 || sm.Sitemaps[0] != "https://x.test/s1.xml" || len(sm.Pages) != 0 {
		t.Fatalf("index: %+v %v", sm, err)
	}
	if _, err := ParseSitemap([]byte(`<html><body>not found</body></html>`)); err == nil {
		t.Fatal("an HTML page parsed as a sitemap")
	}
}

func FuzzParseSitemap(f *testing.F) {
	f.Add([]byte(`<urlset><url><loc>https://a/</loc></url></urlset>`))
	f.Add([]byte(`<sitemapindex><sitemap><loc>x</loc></sitemap></sitemapindex>`))
	f.Add([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>&amp;</loc>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sm, err := ParseSitemap(data)
		if err == nil && (len(sm.Pages) > maxSitemapEntries || len(sm.Sitemaps) > maxSitemapEntries) {
			t.Fatal("over the entry cap")
		}
	})
}

// TestFailedNewPageIsRetried: a page that failed on its first crawl and is
// linked only from a page that answers 304 on the next run stays on the
// frontier until it is fetched; one that keeps failing is given up after
// StaleAfter runs.
func TestFailedNewPageIsRetried(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	s := newSite(t)
	s.set("/", html("Home", "/late", "/broken"))
	s.set("/late", html("Late"))
	s.set("/broken", html("Broken"))
	s.fail("/late", 1) // the first run (which succeeds: its start page answered)
	s.fail("/broken", 1000)
	opt := Options{Backoff: time.Millisecond, NoSitemap: true, MaxDepth: 3}
	b.run(t, s.srv.URL, opt)
	if _, err := b.store.SourceGet(context.Background(), b.kb.ID, s.srv.URL+"/late"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("/late stored after failing: %v", err)
	}
	// Second run: "/" answers 304 and gives no links; /late now answers.
	before := s.notModified.Load()
	b.run(t, s.srv.URL, opt)
	if s.notModified.Load() == before {
		t.Fatal("the home page was not answered 304")
	}
	if src := b.source(t, s.srv.URL+"/late"); !strings.Contains(src.Content, "Late") {
		t.Fatalf("/late after retry: %+v", src)
	}
	ps, err := b.store.CrawlPendingList(context.Background(), b.kb.ID)
	if err != nil || len(ps) != 1 || ps[0].URL != s.srv.URL+"/broken" || ps[0].FailCount != 2 {
		t.Fatalf("pending after two runs: %+v %v", ps, err)
	}
	b.run(t, s.srv.URL, opt)
	if ps, _ := b.store.CrawlPendingList(context.Background(), b.kb.ID); len(ps) != 0 {
		t.Fatalf("a page failing %d runs is still pending: %+v", StaleAfter, ps)
	}
}

// TestCrawlStaysUnderItsPath: a crawl started at /book/ reads the pages
// under /book/ only (links, the sitemap, redirects), as common crawlers
// do; --whole-host widens it to the host.
func TestCrawlStaysUnderItsPath(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	s := newSite(t)
	s.set("/book/", html("Book", "/book/ch1.html", "/api/index.html", "/src/main.rs.html", "/"))
	s.set("/book/ch1.html", html("Chapter one", "/book/ch2.html", "/std/"))
	s.set("/book/ch2.html", html("Chapter two"))
	s.set("/api/index.html", html("API"))
	s.set("/src/main.rs.html", html("Source view"))
	s.set("/std/", html("Std"))
	s.set("/", html("Home", "/book/"))
	log := b.run(t, s.srv.URL+"/book/", Options{MaxDepth: 5, NoSitemap: true})
	if log.PagesCrawled != 3 {
		t.Fatalf("crawled %d pages under /book/, want 3 (%+v)", log.PagesCrawled, log)
	}
	for _, p := range []string{"/api/index.html", "/src/main.rs.html", "/std/", "/"} {
		if _, err := b.store.SourceGet(context.Background(), b.kb.ID, s.srv.URL+p); err == nil {
			t.Errorf("%s is outside /book/ but was stored", p)
		}
	}
	log = setup(t, nil).run(t, s.srv.URL+"/book/", Options{MaxDepth: 5, NoSitemap: true, WholeHost: true})
	if log.PagesCrawled != 7 {
		t.Fatalf("the whole host: crawled %d pages, want 7", log.PagesCrawled)
	}
}

// TestCrawlStoresAPageOnce: / and /index.html serving one document, and
// pages naming a rel=canonical URL, are stored once.
func TestCrawlStoresAPageOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	s := newSite(t)
	home := html("Home", "/index.html", "/guide?ref=nav", "/guide")
	s.set("/", home)
	s.set("/index.html", home)
	s.set("/guide", `<html><head><title>Guide</title><link rel="canonical" href="/guide"></head><body><p>The guide explains how fees are paid every month by bank transfer.</p></body></html>`)
	s.set("/guide?ref=nav", `<html><head><title>Guide</title><link rel="canonical" href="/guide"></head><body><p>The guide explains how fees are paid every month by bank transfer. Navigation variant.</p></body></html>`)
	b.run(t, s.srv.URL+"/", Options{MaxDepth: 3, NoSitemap: true})
	srcs, err := b.store.SourceList(context.Background(), b.kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, src := range srcs {
		urls = append(urls, strings.TrimPrefix(src.URL, s.srv.URL))
	}
	sort.Strings(urls)
	if strings.Join(urls, " ") != "/ /guide" {
		t.Fatalf("stored %v, want / and /guide once each", urls)
	}
}

// TestCrawlTrace: a crawl is a span with a fetch span per page request and
// an ingest span per stored batch under it; no attribute holds a page's
// path, query or text.
func TestCrawlTrace(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prev := otel.GetTracerProvider()
	otel.SetTracerProvider(tp)
	defer func() {
		otel.SetTracerProvider(prev)
		_ = tp.Shutdown(context.Background())
	}()
	b := setup(t, nil)
	s := newSite(t)
	s.set("/", html("Home", "/secret-path?key=s3cr3t"))
	s.set("/secret-path", `<html><head><title>Fees</title></head><body><p>Fees are paid every month by bank transfer to the treasurer.</p></body></html>`)
	b.run(t, s.srv.URL+"/", Options{MaxDepth: 2, NoSitemap: true})

	spans := exp.GetSpans()
	var root tracetest.SpanStub
	for _, sp := range spans {
		if sp.Name == "crawl" {
			root = sp
		}
	}
	if !root.SpanContext.IsValid() {
		t.Fatalf("no crawl span among %d", len(spans))
	}
	count := map[string]int{}
	for _, sp := range spans {
		if sp.SpanContext.TraceID() != root.SpanContext.TraceID() {
			continue
		}
		count[sp.Name]++
		if sp.Name != "crawl" && sp.Parent.SpanID() != root.SpanContext.SpanID() {
			t.Errorf("%s span is not under the crawl span", sp.Name)
		}
		for _, a := range sp.Attributes {
			v := a.Value.String()
			if strings.Contains(v, "secret") || strings.Contains(v, "s3cr3t") || strings.Contains(v, "treasurer") {
				t.Errorf("span %s attribute %s holds %q", sp.Name, a.Key, v)
			}
		}
	}
	if count["fetch"] < 2 || count["ingest"] < 1 {
		t.Fatalf("want fetch spans for both pages and an ingest span: %v", count)
	}
	attrs := map[string]string{}
	for _, a := range root.Attributes {
		attrs[string(a.Key)] = a.Value.String()
	}
	if attrs["quarry.crawl.status"] == "" || attrs["quarry.crawl.pages_crawled"] == "" {
		t.Fatalf("crawl span attributes %v", attrs)
	}
}

// TestSecretInSeedNotLogged: a start page whose query carries a token is
// fetched with it, but the crawl's log, its error and the process's log
// show it redacted.
func TestSecretInSeedNotLogged(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var logs logbuf.Buffer
	b.crawler.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newSite(t)
	s.set("/", html("Home"))
	s.fail("/", 10)
	seed := s.srv.URL + "/?access_token=S3CRET&lang=en"
	log, err := b.crawler.Run(context.Background(), "site", seed, Options{Backoff: time.Millisecond, Retries: 1})
	if err == nil || log == nil || log.Status != store.CrawlFailed {
		t.Fatalf("down site: log %+v err %v", log, err)
	}
	stored, lerr := b.store.CrawlLogList(context.Background(), b.kb.ID, 10)
	if lerr != nil || len(stored) != 1 {
		t.Fatalf("crawl logs: %v %v", stored, lerr)
	}
	for what, text := range map[string]string{"error": err.Error(), "crawl log url": stored[0].URL, "crawl log error": stored[0].ErrorMessage, "process log": logs.String()} {
		if strings.Contains(text, "S3CRET") {
			t.Errorf("%s shows the token: %s", what, text)
		}
	}
	if !strings.Contains(stored[0].URL, "access_token=REDACTED") || !strings.Contains(stored[0].URL, "lang=en") {
		t.Errorf("crawl log url = %s, want the seed with its token redacted", stored[0].URL)
	}
}

// TestSecretInPageURLsNotStored: a site whose pages ask for the start
// URL's token, passed on in every link, is crawled and crawled again with
// it; the pages, and one not yet fetched, are stored under URLs whose
// token is redacted, and the second crawl revisits them with the token
// again: nothing fails, nothing is stored twice, no request carries a
// placeholder. Query values that only look secret (author=, page_token=,
// a page's own sig=) are part of a page's address: two pages differing
// there are two pages. A source and a pending page an earlier version
// recorded with the token in their URLs are recorded without it.
func TestSecretInPageURLsNotStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, nil)
	var logs logbuf.Buffer
	b.crawler.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newSite(t)
	s.token = "S3CRET0TOKEN1"
	q := "?access_token=S3CRET0TOKEN1&lang=en"
	s.set("/", html("Home", "/a"+q, "/b"+q, "/posts"+q+"&author=alice", "/posts"+q+"&author=bob", "/doc"+q+"&sig=abc",
		"/e?access_token=S3CRET0TOKEN1;x=1", "/login?next=%2Fa%3Faccess_token%3DS3CRET0TOKEN1&access_token=S3CRET0TOKEN1", "/f?ACCESS_TOKEN=S3CRET0TOKEN1",
		"/a?lang=en&access_token=S3CRET0TOKEN1"))
	s.set("/e", html("Semicolons"))
	s.set("/login", html("Log in"))
	s.set("/f", html("Shouting"))
	s.set("/a", html("Alpha", "/"+q))
	s.set("/b", html("Beta", "/c"+q))
	s.set("/c", html("Gamma"))
	s.set("/posts#alice", html("Alice's posts"))
	s.set("/posts#bob", html("Bob's posts"))
	s.set("/doc", html("Signed"))
	s.set("/old", html("Old"))
	s.set("/oldpending", html("Old pending"))
	s.fail("/c", 1)
	s.fail("/e", 1)
	// What an earlier version stored with the token.
	legacy := s.srv.URL + "/old?access_token=S3CRET0TOKEN1&lang=en"
	if _, err := b.crawler.KB.AddDocuments(ctx, b.kb, []kb.Document{{URL: legacy, Title: "Old", Text: "An old page stored with its token.", Origin: legacy}}, kb.AddOptions{Embedder: b.emb}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.CrawlPendingFail(ctx, b.kb.ID, s.srv.URL+"/oldpending?access_token=S3CRET0TOKEN1", 1, StaleAfter); err != nil {
		t.Fatal(err)
	}
	seed := s.srv.URL + "/" + q
	ph := placeholderOf(t, seed, "S3CRET0TOKEN1")
	opt := Options{MaxDepth: 3, Backoff: time.Millisecond}
	// /a is linked twice: with the token, and with the token after lang=
	// (another address, whose same text is kept once).
	if log := b.run(t, seed, opt); log.PagesCrawled != 11 || log.PagesUpdated != 10 || log.PagesFailed != 2 {
		t.Fatalf("first crawl: %+v\n%s", log, logs.String())
	}
	pending, err := b.store.CrawlPendingList(ctx, b.kb.ID)
	if err != nil || len(pending) != 2 || !strings.Contains(pending[0].URL, "/c?access_token="+ph+"&") || !strings.Contains(pending[1].URL, "/e?access_token="+ph+";") {
		t.Fatalf("pending frontier %+v %v: want /c and /e, their token redacted", pending, err)
	}
	log := b.run(t, seed, opt)
	if log.PagesFailed != 0 || log.PagesCrawled != 12 {
		t.Fatalf("second crawl: %+v, want the 10 pages known and /c and /e fetched with the token again", log)
	}
	if s.notModified.Load() < 10 {
		t.Errorf("%d pages answered 304, want the 10 known revisited conditionally", s.notModified.Load())
	}
	if n := s.placeholders.Load(); n != 0 {
		t.Errorf("%d requests carried %s", n, fetch.Redacted)
	}
	srcs, err := b.store.SourceList(ctx, b.kb.ID)
	if err != nil {
		t.Fatal(err)
	}
	var urls []string
	for _, src := range srcs {
		u := strings.TrimPrefix(src.URL, s.srv.URL)
		if u == "/a?lang=en&access_token="+ph {
			// /a's two addresses hold the same text, kept once under
			// the one whose fetch finished first.
			u = "/a?access_token=" + ph + "&lang=en"
		}
		urls = append(urls, u)
		if strings.Contains(src.URL, "S3CRET0TOKEN1") || !strings.Contains(strings.ToLower(src.URL), "access_token="+strings.ToLower(ph)) {
			t.Errorf("stored under %s, want its token redacted", src.URL)
		}
	}
	slices.Sort(urls)
	want := []string{
		"/?access_token=REDACTED01&lang=en", "/a?access_token=REDACTED01&lang=en", "/b?access_token=REDACTED01&lang=en", "/c?access_token=REDACTED01&lang=en",
		"/doc?access_token=REDACTED01&lang=en&sig=abc", "/e?access_token=REDACTED01;x=1", "/f?ACCESS_TOKEN=REDACTED01",
		"/login?next=%2Fa%3Faccess_token%3DREDACTED01&access_token=REDACTED01", "/old?access_token=REDACTED01&lang=en", "/oldpending?access_token=REDACTED01",
		"/posts?access_token=REDACTED01&lang=en&author=alice", "/posts?access_token=REDACTED01&lang=en&author=bob",
	}
	for i := range want {
		want[i] = strings.ReplaceAll(want[i], "REDACTED01", ph)
	}
	if !slices.Equal(urls, want) {
		t.Errorf("sources:\n%s\nwant:\n%s", strings.Join(urls, "\n"), strings.Join(want, "\n"))
	}
	// Started without the token, the crawl fetches the pages as they are
	// stored, placeholders and all: the site refuses them, and they fail.
	log, err = b.crawler.Run(ctx, "site", s.srv.URL+"/?lang=en", Options{MaxDepth: 3, Backoff: time.Millisecond, Retries: -1})
	if err == nil || log.PagesFailed != 13 {
		t.Errorf("crawl without the token: %+v %v, want its start page and the 12 known pages failed", log, err)
	}
	if strings.Contains(logs.String(), "S3CRET0TOKEN1") || strings.Contains(err.Error(), "S3CRET0TOKEN1") {
		t.Errorf("the token reached the log or an error:\n%s\n%v", logs.String(), err)
	}
}

// TestSecretLegacyKeptUntilStored: a source an earlier version stored
// with the start URL's token is kept while its page fails, and replaced
// by the page stored without the token once it answers.
func TestSecretLegacyKeptUntilStored(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, nil)
	s := newSite(t)
	s.token = "S3CRET0TOKEN1"
	q := "?access_token=S3CRET0TOKEN1"
	s.set("/", html("Home"))
	s.set("/old", html("Old"))
	s.fail("/old", 1)
	legacy := s.srv.URL + "/old" + q
	if _, err := b.crawler.KB.AddDocuments(ctx, b.kb, []kb.Document{{URL: legacy, Title: "Old", Text: "An old page stored with its token.", Origin: legacy}}, kb.AddOptions{Embedder: b.emb}); err != nil {
		t.Fatal(err)
	}
	urls := func() []string {
		srcs, err := b.store.SourceList(ctx, b.kb.ID)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, src := range srcs {
			out = append(out, strings.TrimPrefix(src.URL, s.srv.URL))
		}
		slices.Sort(out)
		return out
	}
	opt := Options{Backoff: time.Millisecond}
	ph := placeholderOf(t, s.srv.URL+"/"+q, "S3CRET0TOKEN1")
	if log := b.run(t, s.srv.URL+"/"+q, opt); log.PagesFailed != 1 {
		t.Fatalf("first crawl: %+v, want /old failed", log)
	}
	if got, want := urls(), []string{"/?access_token=" + ph, "/old?access_token=S3CRET0TOKEN1"}; !slices.Equal(got, want) {
		t.Fatalf("after /old failed: %v, want %v (the old source kept)", got, want)
	}
	if log := b.run(t, s.srv.URL+"/"+q, opt); log.PagesFailed != 0 {
		t.Fatalf("second crawl: %+v", log)
	}
	if got, want := urls(), []string{"/?access_token=" + ph, "/old?access_token=" + ph}; !slices.Equal(got, want) {
		t.Fatalf("after /old answered: %v, want %v", got, want)
	}
}

// placeholderOf is the placeholder a crawl from seed stores secret under.
func placeholderOf(t *testing.T, seed, secret string) string {
	t.Helper()
	u, err := url.Parse(seed)
	if err != nil {
		t.Fatal(err)
	}
	ph := strings.TrimPrefix(secretsOf(u).stored("http://h/?x="+secret), "http://h/?x=")
	if !strings.HasPrefix(ph, fetch.Redacted) {
		t.Fatalf("%s is not hidden for %s: %s", secret, seed, ph)
	}
	return ph
}
