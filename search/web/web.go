// Package web searches the web through a search API — Google Programmable
// Search, SearxNG or Brave Search, each a small adapter from the provider's
// JSON to a Hit — and fetches the result pages through package fetch, so a
// research reads the page itself, not only the engine's snippet.
package web

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/credibility"
)

// Hit is one search engine result before its page is fetched.
type Hit struct {
	URL, Title, Snippet string
	Published           *time.Time
}

// Engine is a web search API.
type Engine interface {
	Name() string
	Search(ctx context.Context, query string, k int) ([]Hit, error)
}

// Getter is what adapters need from the fetcher.
type Getter interface {
	Get(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// Pager fetches and extracts a result page.
type Pager interface {
	Page(ctx context.Context, url string, cond fetch.Request) (*fetch.Page, error)
}

// MaxContent caps the text kept per page.
const MaxContent = 10000

// Source is a search.Source over an Engine that fetches each hit's page.
type Source struct {
	Engine      Engine
	Pages       Pager
	Credibility *credibility.Table
	Logger      *slog.Logger

	// pages remembers fetched pages by URL so one research never fetches
	// a visited URL twice, even when concurrent searches return it.
	pages sync.Map // string → *page
}

type page struct {
	once sync.Once
	r    search.Result
	err  error // a read that panicked: every search that wants the page fails with it
}

var _ search.Source = (*Source)(nil)

// Name implements search.Source.
func (s *Source) Name() string { return "web" }

// Search implements search.Source. Pages are fetched concurrently; a page
// that cannot be fetched keeps the engine's snippet as its content, marked
// "[snippet only …]" so neither the reader nor the report mistakes it for
// the page.
func (s *Source) Search(ctx context.Context, query string, k int) ([]search.Result, error) {
	hits, err := s.Engine.Search(ctx, query, k)
	if err != nil {
		return nil, fmt.Errorf("web (%s): %w", s.Engine.Name(), err)
	}
	out := make([]search.Result, len(hits))
	errs := make([]error, len(hits))
	var wg sync.WaitGroup
	for i, h := range hits {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = s.result(ctx, h, i)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("web (%s): %w", s.Engine.Name(), err)
	}
	return out, nil
}

func (s *Source) result(ctx context.Context, h Hit, rank int) (search.Result, error) {
	v, _ := s.pages.LoadOrStore(h.URL, &page{})
	p := v.(*page)
	p.once.Do(func() { p.err = safe.Do(func() { p.r = s.read(ctx, h) }) })
	if p.err != nil {
		return search.Result{}, p.err
	}
	r := p.r
	r.Score = 1 / float64(rank+1)
	return r, nil
}

// read fetches a hit's page; its credibility is that of the host the page
// was finally read from.
func (s *Source) read(ctx context.Context, h Hit) search.Result {
	r := search.Result{URL: h.URL, Title: h.Title, Content: h.Snippet, Published: h.Published, Kind: "web"}
	p, err := s.Pages.Page(ctx, h.URL, fetch.Request{})
	if err != nil {
		if s.Logger != nil {
			s.Logger.Warn("web result page not fetched; using the engine's snippet", "url", h.URL, "err", err)
		}
		r.Content = "[snippet only: the page could not be fetched] " + h.Snippet
	} else {
		r.URL = p.URL
		if p.Doc.Title != "" {
			r.Title = p.Doc.Title
		}
		r.Content = truncate(p.Doc.Text, MaxContent)
		if r.Published == nil && p.Doc.Published != "" {
			if t, err := time.Parse(time.RFC3339, p.Doc.Published); err == nil {
				r.Published = &t
			}
		}
	}
	if u, err := url.Parse(r.URL); err == nil {
		r.Credibility, _ = s.Credibility.Score(u.Hostname())
	}
	return r
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// parseTime reads the date formats search APIs use.
func parseTime(s string) *time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02", time.RFC1123, time.RFC1123Z} {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			return &t
		}
	}
	return nil
}

// clampK keeps k within what an API accepts.
func clampK(k, max int) int {
	if k <= 0 {
		return 5
	}
	return min(k, max)
}

var tags = regexp.MustCompile(`<[^>]*>`)

// stripTags removes the highlighting markup some APIs put in snippets.
func stripTags(s string) string {
	return strings.TrimSpace(html.UnescapeString(tags.ReplaceAllString(s, "")))
}
