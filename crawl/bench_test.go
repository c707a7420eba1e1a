package crawl

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store/sqlite"
)

// benchSite serves n pages, each linking to ten children and the next
// page, with ETags.
func benchSite(b *testing.B, n int) (*httptest.Server, *atomic.Int64, *atomic.Int64) {
	var requests, conditional atomic.Int64
	words := strings.Fields("crawler politeness sitemap robots conditional request etag chunk embed index search knowledge base page link depth limit site")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" || r.URL.Path == "/sitemap.xml" {
			http.NotFound(w, r)
			return
		}
		requests.Add(1)
		i, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
		if r.URL.Path == "/" {
			i, err = 0, nil
		}
		if err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"p%d"`, i)
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") != "" {
			conditional.Add(1)
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		var sb strings.Builder
		// Every page says something of its own: pages of the same text
		// would be stored once (a site's duplicates are one source).
		fmt.Fprintf(&sb, "<html><head><title>Page %d</title></head><body><article><h1>Page %d</h1><p>This is page number %d of the benchmark site.</p>", i, i, i)
		for p := range 6 {
			sb.WriteString("<p>")
			for j := range 60 {
				sb.WriteString(words[(i*7+p*13+j)%len(words)])
				sb.WriteByte(' ')
			}
			sb.WriteString("</p>")
		}
		// A tree of ten children per page, plus the next page.
		for j := 1; j <= 10; j++ {
			fmt.Fprintf(&sb, `<a href="/p%d">child %d</a> `, (i*10+j)%n, j)
		}
		fmt.Fprintf(&sb, `<a href="/p%d">next</a>`, (i+1)%n)
		sb.WriteString("</article></body></html>")
		fmt.Fprint(w, sb.String())
	}))
	b.Cleanup(srv.Close)
	return srv, &requests, &conditional
}

// BenchmarkCrawl1000 crawls a 1,000-page local site with politeness off,
// then re-crawls it unchanged. Reported: seconds for each, and for the
// re-crawl the requests that were not conditional and the texts embedded
// (both must be 0).
func BenchmarkCrawl1000(b *testing.B) {
	const n = 1000
	ctx := context.Background()
	for range b.N {
		srv, requests, conditional := benchSite(b, n)
		st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"))
		if err != nil {
			b.Fatal(err)
		}
		emb := &countingEmbedder{Hash: embed.Hash{}}
		svc := kb.New(st, nil)
		if _, err := svc.Create(ctx, "site", "", emb); err != nil {
			b.Fatal(err)
		}
		c := &Crawler{Fetcher: fetch.New(fetch.Options{AllowPrivate: true, PerHost: -1}), KB: svc, Store: st, Embedder: emb}
		opt := Options{MaxPages: n, MaxDepth: 10, Concurrency: 8}
		first, err := c.Run(ctx, "site", srv.URL, opt)
		// "/" serves page 0 as /p0 does: one document, stored once.
		if err != nil || first.PagesCrawled != n || first.PagesUpdated != n-1 {
			b.Fatalf("first crawl: %+v %v", first, err)
		}
		embedded := emb.texts.Load()
		req0, cond0 := requests.Load(), conditional.Load()
		second, err := c.Run(ctx, "site", srv.URL, opt)
		if err != nil || second.PagesCrawled != n-1 || second.PagesUpdated != 0 {
			b.Fatalf("recrawl: %+v %v", second, err)
		}
		b.ReportMetric(first.DurationSeconds, "crawl-s")
		b.ReportMetric(second.DurationSeconds, "recrawl-s")
		b.ReportMetric(float64((requests.Load()-req0)-(conditional.Load()-cond0)), "recrawl-unconditional")
		b.ReportMetric(float64(emb.texts.Load()-embedded), "recrawl-embedded")
		b.ReportMetric(float64(embedded), "chunks-embedded")
		st.Close()
	}
}
