package crawl

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	// show is a page's URL as the log shows it (the start URL's secret
	// values masked, however written).
	show func(string) string
}

// item is a page to fetch: its URL, the URL the store knows it by
// (secrets.stored: the start URL's secret values hidden) and its link
// depth.
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
	// seedKey is the seed as it is stored.
	seedKey string
	// sec hides the seed's secret values in the URLs pages are stored
	// under (secrets.stored) and puts them back to fetch them.
	sec *secrets
	// legacy maps a page's key to the URL an earlier version stored it
	// under, the seed's secret in it; migrated pairs such a URL with the
	// key its page was stored under this pass, or whose text it repeats.
	legacy   map[string]string
	migrated [][2]string
	// known, queued, pending and done are keyed by the URLs pages are
	// stored under (secrets.stored).
	known map[string]store.Source
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
	p := &pass{c: c, opt: opt, st: &stats{}, site: siteOf(seed), under: scopePath(seed, opt.WholeHost), seed: normalize(seed), shown: shown(seed),
		known: map[string]store.Source{}, legacy: map[string]string{}, queued: map[string]int{}, pending: map[string]bool{},
		done: map[string]bool{}, sameText: map[[sha256.Size]byte]string{}}
	p.sec = secretsOf(seed)
	p.st.show = p.sec.show
	p.seedKey = p.sec.stored(p.seed)
	st := p.st
	if err := p.frontier(ctx, k, seed); err != nil {
		return st, fmt.Errorf("crawl: %w", err)
	}
	w := &writer{c: c, kb: k, opt: opt, st: st}
	// Buffered for every fetch in flight, so an early return (a store
	// error) leaves no goroutine blocked on send.
	results := make(chan outcome, opt.Concurrency)
	inflight, fetched := 0, 0
	// An early return cancels the fetches still in flight and waits for
	// them, so none still uses the fetcher when the crawl is tried again.
	fctx, stop := context.WithCancel(ctx)
	defer func() {
		stop()
		for ; inflight > 0; inflight-- {
			<-results
		}
	}()
	var seedErr error
	succeeded := 0
	for {
		for len(p.queue) > 0 && inflight < opt.Concurrency && fetched < opt.MaxPages && ctx.Err() == nil {
			it := p.queue[0]
			p.queue = p.queue[1:]
			it.depth = p.queued[it.key]
			inflight++
			fetched++
			go p.fetch(fctx, it, results)
		}
		if inflight == 0 {
			break
		}
		r := <-results
		inflight--
		if r.err != nil {
			if r.key == p.seedKey {
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
		final, where, ok := p.place(r)
		if old, legacy := p.legacy[r.key]; legacy {
			p.migrated = append(p.migrated, [2]string{old, where})
		}
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
	// A source an earlier version stored with the seed's secret goes once
	// its page is stored without it (or its text is, under another URL).
	for _, m := range p.migrated {
		if m[1] == "" {
			continue
		}
		if _, err := c.Store.SourceGet(ctx, k.ID, m[1]); err != nil {
			continue // not stored (not indexed, or its batch failed): kept
		}
		if err := c.Store.SourceDelete(context.WithoutCancel(ctx), k.ID, m[0]); err != nil && !errors.Is(err, store.ErrNotFound) {
			return st, fmt.Errorf("crawl: %w", err)
		}
	}
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("crawl cancelled: %w", err)
	}
	if seedErr != nil && succeeded == 0 {
		return st, fmt.Errorf("start page %s: %w", p.shown, p.sec.hideErr(seedErr))
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
			if p.sec.holds(s.URL) {
				// Stored with the seed's secret by an earlier version:
				// fetched anew (its validators are that source's) and
				// stored without it; the old source goes once it is.
				key := p.sec.stored(s.URL)
				p.legacy[key] = s.URL
				s.ETag, s.LastModified = "", nil
				p.known[key] = s
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
		if su, err := url.Parse(s.URL); err != nil || !p.inScope(su) {
			continue // another crawl's page
		}
		u, ok := p.sec.restore(s.URL)
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
		if p.sec.holds(pe.URL) {
			key := p.sec.stored(pe.URL)
			// Recorded with the start URL's secret by an earlier version:
			// recorded again without it (its failures counted anew).
			if _, err := p.c.Store.CrawlPendingFail(ctx, k.ID, key, pe.Depth, StaleAfter); err != nil {
				return err
			}
			if err := p.c.Store.CrawlPendingDone(ctx, k.ID, pe.URL); err != nil {
				return p.sec.hideErr(err)
			}
			pe.URL = key
		}
		if pu, err := url.Parse(pe.URL); err != nil || !p.inScope(pu) {
			continue
		}
		u, ok := p.sec.restore(pe.URL)
		if !ok {
			// As a known page whose secret the start URL no longer gives.
			p.st.failed++
			p.st.failedNew = append(p.st.failedNew, item{url: pe.URL, key: pe.URL, depth: pe.Depth})
			continue
		}
		p.pending[pe.URL] = true
		p.push(u, pe.Depth)
	}
	return nil
}

// inScope reports whether a page is this crawl's: on its site, under its
// path, not a file it skips.
func (p *pass) inScope(u *url.URL) bool {
	return sameSite(u, p.site) && strings.HasPrefix(u.Path, p.under) && !skipExt(u.Path)
}

// push queues a link in the crawl's scope, or lowers its depth when it is
// queued already.
func (p *pass) push(raw string, depth int) {
	u, err := url.Parse(raw)
	if err != nil || !p.inScope(u) {
		return
	}
	key := p.sec.stored(normalize(u))
	// Fetched at the stored URL with the secrets back: one URL per key,
	// whatever order or encoding the first link found wrote it in.
	fetchURL, ok := p.sec.restore(key)
	if !ok {
		return
	}
	if d, ok := p.queued[key]; !ok {
		p.queued[key] = depth
		p.queue = append(p.queue, item{fetchURL, key, depth})
	} else if depth < d {
		p.queued[key] = depth
	}
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
		p.c.logger().Debug("page disallowed by robots.txt", "url", redacted(r.key))
		return
	}
	st.failed++
	if old, ok := p.legacy[r.key]; ok {
		st.failedKnown = append(st.failedKnown, old)
	} else if _, ok := p.known[r.key]; ok {
		st.failedKnown = append(st.failedKnown, r.key)
	} else if !fetch.Permanent(r.err) {
		st.failedNew = append(st.failedNew, r.item)
	}
	p.c.logger().Info("page failed", "url", redacted(r.key), "err", p.sec.hideErr(r.err))
}

// place is the URL a fetched page is stored under (secrets.stored) — where it
// redirected, or the canonical URL it names, in the crawl's scope — and
// false when it is not stored: it redirects out of scope, or this pass
// stored that page, or its text under another URL, already. where is the
// URL its text is stored under this pass, whichever ("" out of scope).
func (p *pass) place(r outcome) (final, where string, ok bool) {
	final = p.sec.stored(r.url)
	if u, err := url.Parse(r.page.URL); err == nil && r.page.URL != r.url {
		if !sameSite(u, p.site) || !strings.HasPrefix(u.Path, p.under) {
			p.c.logger().Info("page redirects out of the crawl's scope; skipped", "url", redacted(r.key), "to", redacted(p.sec.stored(normalize(u))))
			return "", "", false
		}
		final = p.sec.stored(normalize(u))
		p.seen(final, r.depth)
	}
	// A page that names its canonical URL (in the crawl's scope) is
	// stored under it, so /, /index.html and ?ref= variants are one.
	if cu, err := url.Parse(r.page.Doc.Canonical); err == nil && r.page.Doc.Canonical != "" && sameSite(cu, p.site) && strings.HasPrefix(cu.Path, p.under) {
		final = p.sec.stored(normalize(cu))
		p.seen(final, r.depth)
	}
	if p.done[final] {
		return "", final, false // two URLs redirected to, or naming, the same page
	}
	// The same text under another URL this run (/ and /index.html
	// without a canonical link) is one source, the first URL's.
	if !r.page.NotModified && r.page.Doc.Text != "" {
		h := sha256.Sum256([]byte(r.page.Doc.Text))
		if first, ok := p.sameText[h]; ok {
			p.c.logger().Info("page repeats another one's text; kept once", "url", redacted(final), "as", redacted(first))
			p.done[final] = true
			return "", first, false
		}
		p.sameText[h] = final
	}
	p.done[final] = true
	return final, final, true
}

// seen records a page's key as queued, at the depth it was found at,
// unless it is queued already: a redirect's or a canonical URL's target
// is not fetched again.
func (p *pass) seen(key string, depth int) {
	if _, ok := p.queued[key]; !ok {
		p.queued[key] = depth
	}
}

// sitemapURLs lists the pages of the site's sitemaps: those robots.txt
// names, else /sitemap.xml, following sitemap indexes one level down.
