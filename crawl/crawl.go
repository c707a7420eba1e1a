// Package crawl crawls a website into a knowledge base: one site,
// its sitemap.xml and robots.txt, depth and page limits, concurrent fetches
// through the politeness and SSRF rules of package fetch. Re-crawls send
// conditional requests (ETag, Last-Modified) so an unchanged page is neither
// re-chunked nor re-embedded; a page that fails three runs in a row is
// marked stale and kept. Every run writes a crawl log and is retried before
// it is marked failed; logs older than 90 days are purged.
package crawl

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
)

// StaleAfter is how many runs in a row a page may fail before it is stale.
const StaleAfter = 3

// LogRetention is how long crawl logs are kept.
const LogRetention = 90 * 24 * time.Hour

// Options limit one crawl.
type Options struct {
	// MaxPages caps the pages fetched in one run (default 500).
	MaxPages int
	// MaxDepth is how many links from the start page are followed; 0 means
	// the start page (and the sitemap's pages) only.
	MaxDepth int
	// Concurrency is how many pages are fetched at once (default 4).
	Concurrency int
	// NoSitemap skips sitemap.xml.
	NoSitemap bool
	// Retries is how many times a failed run is retried (default 3;
	// negative means none).
	Retries int
	// Backoff is the wait before the first retry, doubling after (default
	// 5s).
	Backoff time.Duration
	// BatchSize is how many changed pages are chunked, embedded and
	// written together (default 32).
	BatchSize int
	// WholeHost widens a crawl started below the root
	// (https://docs.example.com/book/) from that path to the whole host.
	WholeHost bool
}

// withDefaults fills the fields left at zero.
func (o Options) withDefaults() Options {
	if o.MaxPages == 0 {
		o.MaxPages = 500
	}
	if o.Concurrency == 0 {
		o.Concurrency = 4
	}
	if o.Retries == 0 {
		o.Retries = 3
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = 5 * time.Second
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 32
	}
	return o
}

// Validate checks options a user typed, naming the field and the rule.
// Run validates after filling defaults, so there zero means the default.
func (o Options) Validate() error {
	switch {
	case o.MaxPages < 1 || o.MaxPages > 1_000_000:
		return &store.ValidationError{Field: "max-pages", Rule: fmt.Sprintf("must be 1-1000000, got %d", o.MaxPages)}
	case o.MaxDepth < 0 || o.MaxDepth > 100:
		return &store.ValidationError{Field: "max-depth", Rule: fmt.Sprintf("must be 0-100, got %d", o.MaxDepth)}
	case o.Concurrency < 1 || o.Concurrency > 64:
		return &store.ValidationError{Field: "concurrency", Rule: fmt.Sprintf("must be 1-64, got %d", o.Concurrency)}
	}
	return nil
}

// Fetcher is what the crawler needs from package fetch.
type Fetcher interface {
	Page(ctx context.Context, url string, cond fetch.Request) (*fetch.Page, error)
	Get(ctx context.Context, req fetch.Request) (*fetch.Response, error)
	RobotsSitemaps(ctx context.Context, u *url.URL) []string
}

// Crawler crawls sites into knowledge bases.
type Crawler struct {
	Fetcher  Fetcher
	KB       *kb.Service
	Store    store.Store
	Embedder embed.Embedder
	Logger   *slog.Logger
	// Now is the clock (time.Now when nil).
	Now func() time.Time

	mu sync.Mutex
	// sitemaps remembers each sitemap's validators and contents so a
	// scheduled re-crawl asks for it conditionally too.
	sitemaps map[string]cachedSitemap
}

type cachedSitemap struct {
	etag, lastModified string
	sm                 Sitemap
}

func (c *Crawler) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Crawler) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Run crawls start into the knowledge base and returns the run's crawl log.
// A run fails when the start page cannot be fetched and no other page
// could be either, or when writing to the store or embedding fails; it is
// retried opt.Retries times (with backoff) before it is logged as failed.
// Page failures are counted once per run, after the last attempt.
func (c *Crawler) Run(ctx context.Context, kbName, start string, opt Options) (*store.CrawlLog, error) {
	ctx, sp := otel.Tracer(TracerName).Start(ctx, "crawl", trace.WithAttributes(attribute.String("quarry.kb", kbName)))
	defer sp.End()
	log, err := c.run(ctx, kbName, start, opt)
	if log != nil {
		sp.SetAttributes(attribute.String("quarry.crawl.status", log.Status), attribute.Int("quarry.crawl.pages_crawled", log.PagesCrawled),
			attribute.Int("quarry.crawl.pages_updated", log.PagesUpdated), attribute.Int("quarry.crawl.pages_failed", log.PagesFailed))
	}
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "crawl failed")
	}
	return log, err
}

// TracerName names the tracer of crawls.
const TracerName = "github.com/quarryhq/quarry/crawl"

func (c *Crawler) run(ctx context.Context, kbName, start string, opt Options) (*store.CrawlLog, error) {
	opt = opt.withDefaults()
	if err := opt.Validate(); err != nil {
		return nil, err
	}
	seed, err := fetch.ParseURL(start)
	if err != nil {
		return nil, err
	}
	k, err := c.KB.Get(ctx, kbName)
	if err != nil {
		return nil, err
	}
	began := c.now()
	if n, err := c.Store.CrawlLogPurge(ctx, began.Add(-LogRetention)); err != nil {
		return nil, fmt.Errorf("crawl: purge old logs: %w", err)
	} else if n > 0 {
		c.logger().Info("purged old crawl logs", "count", n)
	}
	// The log shows the start page as a reader may see it: a token in
	// its query is not stored, nor written to the process's log.
	log, err := c.Store.CrawlLogCreate(ctx, k.ID, shown(seed), began)
	if err != nil {
		return nil, fmt.Errorf("crawl: %w", err)
	}

	var st *stats
	updated := 0
	backoff := opt.Backoff
	for attempt := 0; ; attempt++ {
		err = safe.Call(func() (err error) {
			st, err = c.attempt(ctx, k, seed, opt)
			return err
		})
		if stack := safe.Stack(err); stack != nil {
			// A panic fails this crawl (its log says so), never the
			// process; it is not retried, it would panic again.
			c.logger().Error("crawl panicked", "url", log.URL, "err", err, "stack", string(stack))
			if st == nil {
				st = &stats{}
			}
			break
		}
		updated += st.updated
		if err == nil || attempt >= opt.Retries || ctx.Err() != nil || fetch.Permanent(err) {
			break
		}
		c.logger().Warn("crawl attempt failed; retrying", "url", log.URL, "attempt", attempt+1, "in", backoff, "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
		}
		backoff *= 2
	}
	if ferr := c.countFailures(context.WithoutCancel(ctx), k.ID, st); ferr != nil {
		err = errors.Join(err, ferr)
	}
	fin := c.now()
	log.Status = store.CrawlSuccess
	if err != nil {
		log.Status = store.CrawlFailed
		log.ErrorMessage = err.Error()
	}
	log.PagesCrawled, log.PagesUpdated, log.PagesFailed = st.crawled, updated, st.failed
	c.logger().Info("crawl finished", "url", log.URL, "crawled", st.crawled, "updated", updated, "unchanged", st.unchanged,
		"failed", st.failed, "disallowed", st.skipped, "err", err)
	log.DurationSeconds = fin.Sub(began).Seconds()
	log.FinishedAt = &fin
	if uerr := c.Store.CrawlLogUpdate(context.WithoutCancel(ctx), store.CrawlLogUpdateParams{
		ID: log.ID, Status: log.Status, PagesCrawled: log.PagesCrawled, PagesUpdated: log.PagesUpdated,
		PagesFailed: log.PagesFailed, ErrorMessage: log.ErrorMessage, DurationSeconds: log.DurationSeconds, FinishedAt: &fin,
	}); uerr != nil {
		return log, errors.Join(err, fmt.Errorf("crawl: write log: %w", uerr))
	}
	return log, err
}

// countFailures counts a run's failures once, on the pages the store
// knows (three in a row make a page stale) and on the pending frontier
// (a page never fetched is dropped after as many runs); the pages of
// the frontier fetched or refused for good leave it. It runs when the
// crawl's context has ended too.
func (c *Crawler) countFailures(ctx context.Context, kbID int64, st *stats) error {
	var err error
	for _, it := range st.failedNew {
		dropped, perr := c.Store.CrawlPendingFail(ctx, kbID, it.key, it.depth, StaleAfter)
		if perr != nil {
			err = errors.Join(err, perr)
			continue
		}
		if dropped {
			c.logger().Warn("page never fetched after repeated failures; no longer tried", "url", st.shown(it.key), "runs", StaleAfter)
		}
	}
	for _, u := range st.leftPending {
		if perr := c.Store.CrawlPendingDone(ctx, kbID, u); perr != nil {
			err = errors.Join(err, perr)
		}
	}
	for _, u := range st.failedKnown {
		stale, merr := c.Store.SourceMarkFailure(ctx, kbID, u, StaleAfter)
		if merr != nil && !errors.Is(merr, store.ErrNotFound) {
			err = errors.Join(err, merr)
			continue
		}
		if stale {
			c.logger().Warn("page marked stale", "url", st.shown(u))
		}
	}
	return err
}

// Every runs Run now and then every interval until ctx ends; onRun sees
// each run's log and error. A failed run does not stop the schedule.
func (c *Crawler) Every(ctx context.Context, kbName, start string, opt Options, interval time.Duration, onRun func(*store.CrawlLog, error)) error {
	if interval < time.Second {
		return &store.ValidationError{Field: "every", Rule: fmt.Sprintf("must be at least 1s, got %s", interval)}
	}
	for {
		log, err := c.Run(ctx, kbName, start, opt)
		if onRun != nil {
			onRun(log, err)
		}
		if log == nil && err != nil && ctx.Err() == nil {
			return err // bad input: no run happened
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

func (c *Crawler) sitemapURLs(ctx context.Context, seed *url.URL) []string {
	maps := c.Fetcher.RobotsSitemaps(ctx, seed)
	if len(maps) == 0 {
		maps = []string{seed.Scheme + "://" + seed.Host + "/sitemap.xml"}
	}
	var pages []string
	for depth := 0; depth < 2 && len(maps) > 0; depth++ {
		var next []string
		for i, m := range maps {
			if i >= 10 {
				break
			}
			sm, err := c.sitemap(ctx, m)
			if err != nil {
				c.logger().Debug("no sitemap", "url", redacted(m), "err", err)
				continue
			}
			pages = append(pages, sm.Pages...)
			next = append(next, sm.Sitemaps...)
		}
		maps = next
	}
	return pages
}

// sitemap fetches and parses one sitemap, conditionally when it was read
// before.
func (c *Crawler) sitemap(ctx context.Context, u string) (Sitemap, error) {
	c.mu.Lock()
	prev, seen := c.sitemaps[u]
	c.mu.Unlock()
	req := fetch.Request{URL: u, Accept: []string{"application/xml", "text/xml", "text/plain"}}
	if seen {
		req.ETag, req.LastModified = prev.etag, prev.lastModified
	}
	resp, err := c.Fetcher.Get(ctx, req)
	if err != nil {
		return Sitemap{}, err
	}
	if resp.NotModified {
		return prev.sm, nil
	}
	sm, err := ParseSitemap(resp.Body)
	if err != nil {
		return Sitemap{}, fmt.Errorf("sitemap %s: %w", u, err)
	}
	if resp.ETag != "" || resp.LastModified != "" {
		c.mu.Lock()
		if c.sitemaps == nil {
			c.sitemaps = map[string]cachedSitemap{}
		}
		c.sitemaps[u] = cachedSitemap{resp.ETag, resp.LastModified, sm}
		c.mu.Unlock()
	}
	return sm, nil
}

// writer batches page outcomes into the store.
type writer struct {
	c       *Crawler
	kb      *store.KB
	opt     Options
	st      *stats
	docs    []kb.Document
	touches []store.SourceTouch
}

func (w *writer) add(ctx context.Context, u string, p *fetch.Page) error {
	lm := parseHTTPTime(p.LastModified)
	switch {
	case p.NotModified:
		w.st.unchanged++
		w.touches = append(w.touches, store.SourceTouch{URL: u, ETag: p.ETag, LastModified: lm, CrawledAt: w.c.now().UTC()})
	case !p.Doc.NoIndex:
		// A 200 with the same content is recognised and touched by
		// AddDocuments (AddOptions.Touch), not re-embedded.
		d := kb.DocumentFrom(p.Doc, u, u)
		d.LastModified, d.ETag = lm, p.ETag
		w.docs = append(w.docs, d)
	}
	if len(w.docs) >= w.opt.BatchSize || len(w.touches) >= 256 {
		return w.flush(ctx)
	}
	return nil
}

func (w *writer) flush(ctx context.Context) error {
	if len(w.touches) > 0 {
		if err := w.c.Store.SourceTouch(ctx, w.kb.ID, w.touches); err != nil {
			return fmt.Errorf("crawl: %w", err)
		}
		w.touches = w.touches[:0]
	}
	if len(w.docs) == 0 {
		return nil
	}
	rep, err := w.c.KB.AddDocuments(ctx, w.kb, w.docs, kb.AddOptions{Embedder: w.c.Embedder, BatchSize: len(w.docs), Touch: true})
	w.docs = w.docs[:0]
	if rep != nil {
		w.st.updated += rep.Added + rep.Updated
		w.st.unchanged += rep.Unchanged
		for _, p := range rep.Failed {
			w.st.failed++
			w.st.crawled--
			w.c.logger().Info("page not indexed", "url", redacted(p.Origin), "reason", p.Reason)
		}
	}
	if err != nil {
		return fmt.Errorf("crawl: %w", err)
	}
	return nil
}

func parseHTTPTime(s string) *time.Time {
	if s == "" {
		return nil
	}
	t, err := http.ParseTime(s)
	if err != nil {
		return nil
	}
	t = t.UTC()
	return &t
}

// site is the scope of a crawl: one host, www. or not, http or https.
type site string

func siteOf(u *url.URL) site { return site(strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")) }

func sameSite(u *url.URL, s site) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && siteOf(u) == s
}

// scopePath is the path a crawl stays under: the start page's directory
// ("/book/" for /book/ or /book/intro.html), as common crawlers do, or
// "/" for the whole host.
func scopePath(seed *url.URL, wholeHost bool) string {
	p := seed.Path
	if wholeHost || p == "" {
		return "/"
	}
	return p[:strings.LastIndex(p, "/")+1]
}

// shown is a page's URL as the log shows it: st.show's, or redacted's.
func (st *stats) shown(u string) string {
	if st.show != nil {
		return st.show(u)
	}
	return redacted(u)
}

// shown is u normalised, with its user and secret query values redacted
// (fetch.Redact): for the crawl's log, errors and the process's log.
func shown(u *url.URL) string { return redacted(normalize(u)) }

// redacted is a page's URL as the process's log shows it (fetch.Redact).
func redacted(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(a URL that does not parse)"
	}
	return fetch.Redact(u)
}

// normalize gives a page one spelling: lower-case scheme and host, no
// default port, no fragment, "/" for an empty path.
func normalize(u *url.URL) string {
	c := *u
	c.Scheme = strings.ToLower(c.Scheme)
	c.Host = strings.ToLower(c.Host)
	if p := c.Port(); (c.Scheme == "http" && p == "80") || (c.Scheme == "https" && p == "443") {
		c.Host = c.Hostname()
	}
	if c.Path == "" {
		c.Path = "/"
	}
	c.Fragment, c.RawFragment, c.User = "", "", nil
	return c.String()
}

var skipped = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true, ".svg": true, ".ico": true, ".bmp": true,
	".css": true, ".js": true, ".mjs": true, ".json": true, ".xml": true, ".rss": true, ".atom": true,
	".zip": true, ".gz": true, ".tgz": true, ".tar": true, ".rar": true, ".7z": true, ".exe": true, ".dmg": true, ".iso": true,
	".mp3": true, ".mp4": true, ".avi": true, ".mov": true, ".webm": true, ".wav": true, ".ogg": true,
	".woff": true, ".woff2": true, ".ttf": true, ".eot": true,
	".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true,
}

// skipExt reports links to files the crawler does not read.
func skipExt(p string) bool { return skipped[strings.ToLower(path.Ext(p))] }
