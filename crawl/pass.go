package crawl

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/store"
)

// stats counts what one pass did.
type stats struct {
	crawled, updated, unchanged, failed, skipped int
	failedKnown                                  []string
	// failedNew are pages not in the store that failed; leftPending are
	// pages of the pending frontier that were fetched or refused for good.
	// Both, and failedKnown, by the URLs the store knows them by.
	failedNew   []item
	leftPending []string
}

// item is a page to fetch: its URL, the URL the store knows it by
// (pass.stored: the start URL's secret query values redacted) and its
// link depth.
type item struct {
	url, key string
	depth    int
}

type outcome struct {
	item
	page *fetch.Page
	err  error
}

// pass is the state of one pass over a site: its frontier, what the store
// knew before it, and the pages it has placed.
type pass struct {
	c     *Crawler
	opt   Options
	st    *stats
	site  site
	under string
	seed  string
	// shown is the seed as errors show it (no secret query values).
	shown string
	// secrets are the seed's secret query values by name (fetch.Redact
	// hides them): a page's URL holding one is stored without it
	// (stored), and fetched with it again (restore).
	secrets url.Values
	// known, queued, pending and done are keyed by the URLs pages are
	// stored under (stored).
	known map[string]store.Source
	// legacy maps a page's stored URL to the URL an earlier version
	// stored it under, the start URL's secret in it: once the page is
	// stored again, that source goes.
	legacy map[string]string
	// queued holds each URL's smallest known link depth; fetches finish
	// out of order, so a page can be found by a longer path first.
	queued  map[string]int
	queue   []item
	pending map[string]bool
	// done are the URLs pages were stored under; sameText the first URL
	// of each page text.
	done     map[string]bool
	sameText map[[sha256.Size]byte]string
}

// attempt is one pass over the site: fetches up to opt.Concurrency pages
// at a time from the frontier, stores each under the URL it is known by
// and follows its links.
func (c *Crawler) attempt(ctx context.Context, k *store.KB, seed *url.URL, opt Options) (*stats, error) {
	p := &pass{c: c, opt: opt, st: &stats{}, site: siteOf(seed), under: scopePath(seed, opt.WholeHost), seed: normalize(seed), shown: shown(seed), secrets: secretsOf(seed),
		known: map[string]store.Source{}, legacy: map[string]string{}, queued: map[string]int{}, pending: map[string]bool{},
		done: map[string]bool{}, sameText: map[[sha256.Size]byte]string{}}
	st := p.st
	if err := p.frontier(ctx, k, seed); err != nil {
		return st, fmt.Errorf("crawl: %w", err)
	}
	w := &writer{c: c, kb: k, opt: opt, st: st}
	// Buffered for every fetch in flight, so an early return (a store
	// error) leaves no goroutine blocked on send.
	results := make(chan outcome, opt.Concurrency)
	inflight, fetched := 0, 0
	var seedErr error
	succeeded := 0
	for {
		for len(p.queue) > 0 && inflight < opt.Concurrency && fetched < opt.MaxPages && ctx.Err() == nil {
			it := p.queue[0]
			p.queue = p.queue[1:]
			it.depth = p.queued[it.key]
			inflight++
			fetched++
			go p.fetch(ctx, it, results)
		}
		if inflight == 0 {
			break
		}
		r := <-results
		inflight--
		if r.err != nil {
			if r.url == p.seed {
				seedErr = r.err
			}
			if ctx.Err() == nil {
				p.failed(r)
			}
			continue
		}
		succeeded++
		st.crawled++
		if p.pending[r.key] {
			st.leftPending = append(st.leftPending, r.key)
		}
		final, ok := p.place(r)
		if !ok {
			continue
		}
		if err := w.add(ctx, final, r.page); err != nil {
			return st, err
		}
		if !r.page.NotModified && !r.page.Doc.NoFollow && r.depth < opt.MaxDepth {
			for _, l := range r.page.Doc.Links {
				p.push(l, r.depth+1)
			}
		}
	}
	if err := w.flush(ctx); err != nil {
		return st, err
	}
	// A page stored again under its URL without the start URL's secret
	// leaves the source an earlier version stored with it.
	for key, old := range p.legacy {
		if p.done[key] {
			if err := c.Store.SourceDelete(ctx, k.ID, old); err != nil && !errors.Is(err, store.ErrNotFound) {
				return st, fmt.Errorf("crawl: %w", err)
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("crawl cancelled: %w", err)
	}
	if seedErr != nil && succeeded == 0 {
		return st, fmt.Errorf("start page %s: %w", p.shown, seedErr)
	}
	return st, nil
}

// frontier fills the pass's queue: the start page, the sitemaps' pages,
// the pages the store holds from this site and the pending ones.
func (p *pass) frontier(ctx context.Context, k *store.KB, seed *url.URL) error {
	srcs, err := p.c.Store.SourceList(ctx, k.ID)
	if err != nil {
		return err
	}
	for _, s := range srcs {
		if u, err := url.Parse(s.URL); err == nil && sameSite(u, p.site) {
			if key := p.stored(s.URL); key != s.URL {
				// Stored whole by an earlier version: fetched anew (its
				// validators are the old source's) and stored under key.
				p.legacy[key] = s.URL
				p.push(s.URL, min(1, p.opt.MaxDepth))
				continue
			}
			p.known[s.URL] = s
		}
	}
	p.push(p.seed, 0)
	if !p.opt.NoSitemap {
		for _, u := range p.c.sitemapURLs(ctx, seed) {
			p.push(u, 1)
		}
	}
	// Known pages are revisited so changes and failures are seen even when
	// no changed page links to them; a changed one has its links followed
	// as if the start page linked to it.
	for key, s := range p.known {
		u, ok := p.restore(s.URL)
		if !ok {
			// Its secret is not the start URL's any more: it is not sent
			// a placeholder, and fails as a page gone does.
			p.st.failed++
			p.st.failedKnown = append(p.st.failedKnown, key)
			p.c.logger().Info("page failed: its URL needs a secret the start URL no longer gives", "url", key)
			continue
		}
		p.push(u, min(1, p.opt.MaxDepth))
	}
	// Pages found on an earlier run that could not be fetched stay on the
	// frontier: the pages linking to them may answer 304 now, and a 304
	// gives no links.
	pendingList, err := p.c.Store.CrawlPendingList(ctx, k.ID)
	if err != nil {
		return err
	}
	for _, pe := range pendingList {
		if pe.Depth > p.opt.MaxDepth {
			continue
		}
		if key := p.stored(pe.URL); key != pe.URL {
			// Recorded whole by an earlier version: recorded again, under
			// key, if it fails again.
			if err := p.c.Store.CrawlPendingDone(ctx, k.ID, pe.URL); err != nil {
				return err
			}
			p.push(pe.URL, pe.Depth)
			continue
		}
		u, ok := p.restore(pe.URL)
		if !ok {
			// As a known page whose secret the start URL no longer gives.
			p.st.failed++
			p.st.failedNew = append(p.st.failedNew, item{key: pe.URL, depth: pe.Depth})
			continue
		}
		p.pending[pe.URL] = true
		p.push(u, pe.Depth)
	}
	return nil
}

// push queues a link in the crawl's scope, or lowers its depth when it is
// queued already.
func (p *pass) push(raw string, depth int) {
	u, err := url.Parse(raw)
	if err != nil || !sameSite(u, p.site) || !strings.HasPrefix(u.Path, p.under) || skipExt(u.Path) {
		return
	}
	n := normalize(u)
	key := p.stored(n)
	if d, ok := p.queued[key]; !ok {
		p.queued[key] = depth
		p.queue = append(p.queue, item{n, key, depth})
	} else if depth < d {
		p.queued[key] = depth
	}
}

// secretsOf is u's secret query values by name: those fetch.Redact
// hides (a token, a key, a signature, …).
func secretsOf(u *url.URL) url.Values {
	r, err := url.Parse(fetch.Redact(u))
	if err != nil {
		return nil
	}
	q, hidden := u.Query(), url.Values{}
	for k, vs := range r.Query() {
		if len(vs) > 0 && vs[0] == fetch.Redacted && q.Get(k) != fetch.Redacted {
			hidden[k] = q[k]
		}
	}
	return hidden
}

// stored is the URL a page is stored under — in the store, and in what
// searches and reports cite: u (normalised) with each of the start URL's
// secret query values it holds redacted (a token the start URL passes on
// in its links: /a?access_token=REDACTED&lang=en). The secrets a user
// gives a crawl never reach stored data; a page's own (a signature only
// its link carries) is part of its address, and is stored with it: two
// pages differing only there are two pages.
func (p *pass) stored(u string) string {
	if len(p.secrets) == 0 || !strings.Contains(u, "?") {
		return u
	}
	pu, err := url.Parse(u)
	if err != nil {
		return u
	}
	q := pu.Query()
	changed := false
	for k, vs := range q {
		for i, v := range vs {
			if slices.Contains(p.secrets[k], v) {
				vs[i] = fetch.Redacted
				changed = true
			}
		}
	}
	if !changed {
		return u
	}
	pu.RawQuery = q.Encode()
	return pu.String()
}

// restore is a stored URL to fetch again: each redacted value is the
// start URL's again; false when the start URL no longer gives one.
func (p *pass) restore(stored string) (string, bool) {
	if !strings.Contains(stored, fetch.Redacted) {
		return stored, true
	}
	u, err := url.Parse(stored)
	if err != nil {
		return stored, true
	}
	q := u.Query()
	changed := false
	for k, vs := range q {
		for i, v := range vs {
			if v != fetch.Redacted {
				continue
			}
			if len(p.secrets[k]) == 0 {
				return "", false
			}
			vs[i] = p.secrets[k][0]
			changed = true
		}
	}
	if !changed {
		return stored, true
	}
	u.RawQuery = q.Encode()
	return u.String(), true
}

// fetch fetches one page, conditionally when the store knows it, and
// sends the outcome; a panic in the fetcher is the page's failure.
func (p *pass) fetch(ctx context.Context, it item, results chan<- outcome) {
	cond := fetch.Request{}
	if s, ok := p.known[it.key]; ok {
		cond.ETag = s.ETag
		if s.LastModified != nil {
			cond.LastModified = s.LastModified.UTC().Format(http.TimeFormat)
		}
	}
	var page *fetch.Page
	err := safe.Call(func() (err error) {
		page, err = p.c.Fetcher.Page(ctx, it.url, cond)
		return err
	})
	results <- outcome{it, page, err}
}

// failed counts a page that could not be fetched: skipped when robots.txt
// disallows it, else failed, and kept for the next run's frontier when it
// may succeed then.
func (p *pass) failed(r outcome) {
	st := p.st
	if p.pending[r.key] && fetch.Permanent(r.err) {
		// Refused for good (robots.txt, the guard, no such host):
		// it leaves the frontier.
		st.leftPending = append(st.leftPending, r.key)
	}
	if errors.Is(r.err, fetch.ErrDisallowed) {
		st.skipped++
		p.c.logger().Debug("page disallowed by robots.txt", "url", redacted(r.url))
		return
	}
	st.failed++
	if _, ok := p.known[r.key]; ok {
		st.failedKnown = append(st.failedKnown, r.key)
	} else if !fetch.Permanent(r.err) {
		st.failedNew = append(st.failedNew, r.item)
	}
	p.c.logger().Info("page failed", "url", redacted(r.url), "err", r.err)
}

// place is the URL a fetched page is stored under (stored) — where it redirected,
// or the canonical URL it names, in the crawl's scope — and false when it
// is not stored: it redirects out of scope, or this pass stored that
// page, or its text under another URL, already.
func (p *pass) place(r outcome) (string, bool) {
	final := r.url
	if u, err := url.Parse(r.page.URL); err == nil && r.page.URL != r.url {
		if !sameSite(u, p.site) || !strings.HasPrefix(u.Path, p.under) {
			p.c.logger().Info("page redirects out of the crawl's scope; skipped", "url", redacted(r.url), "to", fetch.Redact(u))
			return "", false
		}
		final = normalize(u)
		if _, ok := p.queued[p.stored(final)]; !ok {
			p.queued[p.stored(final)] = r.depth
		}
	}
	// A page that names its canonical URL (in the crawl's scope) is
	// stored under it, so /, /index.html and ?ref= variants are one.
	if cu, err := url.Parse(r.page.Doc.Canonical); err == nil && r.page.Doc.Canonical != "" && sameSite(cu, p.site) && strings.HasPrefix(cu.Path, p.under) {
		final = normalize(cu)
		if _, ok := p.queued[p.stored(final)]; !ok {
			p.queued[p.stored(final)] = r.depth
		}
	}
	final = p.stored(final)
	if p.done[final] {
		return "", false // two URLs redirected to, or naming, the same page
	}
	// The same text under another URL this run (/ and /index.html
	// without a canonical link) is one source, the first URL's.
	if !r.page.NotModified && r.page.Doc.Text != "" {
		h := sha256.Sum256([]byte(r.page.Doc.Text))
		if first, ok := p.sameText[h]; ok {
			p.c.logger().Info("page repeats another one's text; kept once", "url", redacted(final), "as", redacted(first))
			p.done[final] = true
			return "", false
		}
		p.sameText[h] = final
	}
	p.done[final] = true
	return final, true
}

// sitemapURLs lists the pages of the site's sitemaps: those robots.txt
// names, else /sitemap.xml, following sitemap indexes one level down.
