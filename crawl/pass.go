package crawl

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

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
	// seedKey is the seed as it is stored (stored).
	seedKey string
	// hide and unhide replace the seed's secret query values in a page's
	// URL by placeholders and back (secretsOf).
	hide, unhide *strings.Replacer
	// mask replaces the forms by REDACTED alone, in errors.
	mask *strings.Replacer
	// forms are the written forms of the seed's secret values hide
	// replaces; used the numbers of their placeholders.
	forms []string
	used  map[int]bool
	// legacy maps a page's key to the URL an earlier version stored it
	// under, the seed's secret in it; migrated pairs such a URL with the
	// key its page was stored under this pass, or whose text it repeats.
	legacy   map[string]string
	migrated [][2]string
	// known, queued, pending and done are keyed by the URLs pages are
	// stored under (stored).
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
	p.secretsOf(seed)
	p.st.show = func(u string) string { return redacted(p.mask.Replace(u)) }
	p.seedKey = p.stored(p.seed)
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
		return st, fmt.Errorf("start page %s: %w", p.shown, p.hideErr(seedErr))
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
			if p.holdsSecret(s.URL) {
				// Stored with the seed's secret by an earlier version:
				// fetched anew (its validators are that source's) and
				// stored without it; the old source goes once it is.
				key := p.stored(s.URL)
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
		if p.holdsSecret(pe.URL) {
			key := p.stored(pe.URL)
			// Recorded with the start URL's secret by an earlier version:
			// recorded again without it (its failures counted anew).
			if _, err := p.c.Store.CrawlPendingFail(ctx, k.ID, key, pe.Depth, StaleAfter); err != nil {
				return err
			}
			if err := p.c.Store.CrawlPendingDone(ctx, k.ID, pe.URL); err != nil {
				return p.hideErr(err)
			}
			pe.URL = key
		}
		if pu, err := url.Parse(pe.URL); err != nil || !p.inScope(pu) {
			continue
		}
		u, ok := p.restore(pe.URL)
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
	key := p.stored(normalize(u))
	// Fetched at the stored URL with the secrets back: one URL per key,
	// whatever order or encoding the first link found wrote it in.
	fetchURL, ok := p.restore(key)
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

// minSecret is the shortest secret value taken out of a page's URL.
const minSecret = 12

// looksSecret reports whether a value under a secret-looking name is a
// secret to take out of a page's URL: 12 characters or more, letters and
// digits, as tokens and keys are. The names are broad (author= and
// passage= look like auth and pass), and a short or plain value
// ("jsmith", "en", "1") would be replaced wherever its characters appear.
func looksSecret(v string) bool {
	return len(v) >= minSecret && strings.ContainsAny(v, "0123456789") && strings.IndexFunc(v, unicode.IsLetter) >= 0
}

// placeholderRE is a placeholder as stored: REDACTED and two digits.
var placeholderRE = regexp.MustCompile(fetch.Redacted + `([0-9]{2})`)

// secretsOf sets the replacers of u's secret query values (those
// fetch.SecretParam names: a token, a key, a signature, …) in a page's
// URL: each value in every form a URL may write it — as the start URL
// writes it, as it is, query- or path-escaped (upper- or lower-case hex),
// escaped twice as in a return address "?next=%2Fa%3Ftoken%3D…" — by a
// placeholder REDACTEDnn, and back. A form's number comes from its
// parameter's name, its place among that name's values and its kind of
// form, not from the value or the other parameters: a stored URL is
// restored with the same parameter's value after the start URL gains a
// parameter or its token changes. A page's URL that already says
// REDACTED has it written REDACTED00, so that hiding is undone exactly,
// and a placeholder no value stands for is told apart.
func (p *pass) secretsOf(u *url.URL) {
	type form struct {
		text string
		n    int
	}
	var forms []form
	used := map[int]bool{}
	seen := map[string]bool{}
	occ := map[string]int{}
	for _, pair := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
		rawName, raw, _ := strings.Cut(pair, "=")
		name := rawName
		if n, err := url.QueryUnescape(rawName); err == nil {
			name = n
		}
		if !fetch.SecretParam(name) {
			continue
		}
		v := raw
		if d, err := url.QueryUnescape(raw); err == nil {
			v = d
		}
		if !looksSecret(v) {
			continue
		}
		occ[name]++
		kinds := []string{raw, v, url.QueryEscape(v), url.PathEscape(v), url.QueryEscape(url.QueryEscape(v))}
		for kind := range 2 * len(kinds) {
			f := kinds[kind%len(kinds)]
			if kind >= len(kinds) {
				f = lowerHex(f)
			}
			if strings.Contains(f, fetch.Redacted[:4]) || seen[f] {
				continue
			}
			h := fnv.New32a()
			fmt.Fprintf(h, "%s\x00%d\x00%d", name, occ[name], kind)
			n := 1 + int(h.Sum32()%99)
			for i := 0; used[n] && i < 99; i++ {
				n = n%99 + 1
			}
			if used[n] {
				break // 99 forms: the rest are not hidden
			}
			used[n], seen[f] = true, true
			forms = append(forms, form{f, n})
		}
	}
	// Longest first: a form holding another is replaced whole.
	slices.SortFunc(forms, func(a, b form) int {
		if len(a.text) != len(b.text) {
			return len(b.text) - len(a.text)
		}
		return strings.Compare(a.text, b.text)
	})
	var hide, unhide, mask []string
	for _, f := range forms {
		ph := fmt.Sprintf("%s%02d", fetch.Redacted, f.n)
		hide = append(hide, f.text, ph)
		unhide = append(unhide, ph, f.text)
		mask = append(mask, f.text, fetch.Redacted)
		p.forms = append(p.forms, f.text)
	}
	// After the forms, a REDACTED already there (a form may end in RED).
	hide = append(hide, fetch.Redacted, fetch.Redacted+"00")
	unhide = append(unhide, fetch.Redacted+"00", fetch.Redacted)
	p.used = used
	p.hide, p.unhide, p.mask = strings.NewReplacer(hide...), strings.NewReplacer(unhide...), strings.NewReplacer(mask...)
}

// lowerHex is s with its %XX escapes in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerByte(b[i+1]), lowerByte(b[i+2])
		}
	}
	return string(b)
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'F' {
		return c + 'a' - 'A'
	}
	return c
}

// holdsSecret reports whether a URL from the store holds one of the
// seed's secret values: an earlier version stored it so.
func (p *pass) holdsSecret(u string) bool {
	for _, f := range p.forms {
		if strings.Contains(u, f) {
			return true
		}
	}
	return false
}

// stored is the URL a page is stored under — in the store, and in what
// searches and reports cite: u (normalised) with the start URL's secret
// values replaced wherever its path or query writes them
// (/a?access_token=REDACTED01&lang=en). The secrets a user gives a crawl
// never reach stored data. A value that only looks secret (author=,
// page_token=) or is a page's own (a signature only its link carries) is
// part of the page's address, and is stored with it.
func (p *pass) stored(u string) string {
	if len(p.forms) == 0 {
		return u // a crawl without secrets stores URLs as they are
	}
	i := strings.Index(u, "://")
	if i < 0 {
		return p.hide.Replace(u)
	}
	j := strings.IndexByte(u[i+3:], '/')
	if j < 0 {
		return p.hide.Replace(u)
	}
	j += i + 3
	return u[:j] + p.hide.Replace(u[j:])
}

// hideErr is err with the start URL's secret values replaced in its
// message (a fetch error names the URL it fetched), its chain kept.
func (p *pass) hideErr(err error) error {
	if err == nil || len(p.forms) == 0 {
		return err
	}
	if msg := p.mask.Replace(err.Error()); msg != err.Error() {
		return &hiddenError{msg: msg, err: err}
	}
	return err
}

type hiddenError struct {
	msg string
	err error
}

func (e *hiddenError) Error() string { return e.msg }
func (e *hiddenError) Unwrap() error { return e.err }

// restore is a stored URL to fetch: its placeholders the start URL's
// secret values again; false when it holds a placeholder the start URL
// gives no value for (never sent to the site). A crawl whose start URL
// has no secret fetches every URL as it is stored.
func (p *pass) restore(key string) (string, bool) {
	if len(p.forms) == 0 || !strings.Contains(key, fetch.Redacted) {
		return key, true
	}
	for _, m := range placeholderRE.FindAllStringSubmatch(key, -1) {
		if n, _ := strconv.Atoi(m[1]); n != 0 && !p.used[n] {
			return "", false
		}
	}
	return p.unhide.Replace(key), true
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
	p.c.logger().Info("page failed", "url", redacted(r.key), "err", p.hideErr(r.err))
}

// place is the URL a fetched page is stored under (stored) — where it
// redirected, or the canonical URL it names, in the crawl's scope — and
// false when it is not stored: it redirects out of scope, or this pass
// stored that page, or its text under another URL, already. where is the
// URL its text is stored under this pass, whichever ("" out of scope).
func (p *pass) place(r outcome) (final, where string, ok bool) {
	final = r.url
	if u, err := url.Parse(r.page.URL); err == nil && r.page.URL != r.url {
		if !sameSite(u, p.site) || !strings.HasPrefix(u.Path, p.under) {
			p.c.logger().Info("page redirects out of the crawl's scope; skipped", "url", redacted(r.key), "to", redacted(p.stored(normalize(u))))
			return "", "", false
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

// sitemapURLs lists the pages of the site's sitemaps: those robots.txt
// names, else /sitemap.xml, following sitemap indexes one level down.
