package app

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/quarryhq/quarry/errcode"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/arxiv"
	"github.com/quarryhq/quarry/search/credibility"
	"github.com/quarryhq/quarry/search/web"
	"github.com/quarryhq/quarry/search/wikipedia"
)

// Fetcher returns a new fetcher with the configuration's SSRF guard.
func (a *App) Fetcher(opt fetch.Options) *fetch.Fetcher {
	opt.AllowPrivate = a.Config.AllowPrivate
	opt.Logger = a.Logger
	return fetch.New(opt)
}

// searchHosts are the hosts of the configured web search backends.
func (a *App) searchHosts() []string {
	var out []string
	for _, raw := range []string{a.Config.SearxNGURL, a.Config.GoogleBaseURL, a.Config.BraveBaseURL} {
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	return out
}

// remoteSource builds the web, arxiv or wikipedia source from the
// configuration, or says what to configure.
func (a *App) remoteSource(kind string, cred *credibility.Table) (search.Source, error) {
	c := a.Config
	a.mu.Lock()
	if a.researchFetcher == nil {
		// No delay of its own and 8 pages per host at once, but a site's
		// robots.txt Crawl-delay holds; the configured search backends
		// (a SearxNG instance serving the user's own pages, say) are
		// not held back at all.
		a.researchFetcher = a.Fetcher(fetch.Options{Delay: 0, PerHost: 8, CrawlDelay: true, Unlimited: a.searchHosts()})
	}
	f := a.researchFetcher
	a.mu.Unlock()
	switch kind {
	case "web":
		eng, err := a.webEngine(f)
		if err != nil {
			return nil, errcode.Wrap(errcode.Invalid, err)
		}
		return &web.Source{Engine: eng, Pages: f, Credibility: cred, Logger: a.Logger}, nil
	case "arxiv":
		if c.ArxivSnapshot != "" {
			s, err := arxiv.OpenSnapshot(c.ArxivSnapshot)
			if err != nil {
				return nil, errcode.Wrap(errcode.Invalid, fmt.Errorf("source arxiv: QUARRY_ARXIV_SNAPSHOT: %w", err))
			}
			return s, nil
		}
		return arxiv.NewAPI(f, c.ArxivBaseURL, 0), nil
	case "wikipedia":
		return &wikipedia.Source{Getter: f, BaseURL: c.WikipediaBaseURL}, nil
	}
	return nil, errcode.Wrap(errcode.Invalid, fmt.Errorf("source %s: unknown", kind))
}

var errWebUnconfigured = errors.New("source web: no web search API is configured; set QUARRY_GOOGLE_API_KEY and QUARRY_GOOGLE_CX (Google Programmable Search), QUARRY_SEARXNG_URL (a SearxNG instance with the JSON format on) or QUARRY_BRAVE_API_KEY (Brave Search)")

func (a *App) webEngine(f *fetch.Fetcher) (web.Engine, error) {
	c := a.Config
	google := func() (web.Engine, error) {
		if c.GoogleKey == "" || c.GoogleCX == "" {
			return nil, errors.New("source web: google needs QUARRY_GOOGLE_API_KEY and QUARRY_GOOGLE_CX")
		}
		return &web.Google{Getter: f, BaseURL: c.GoogleBaseURL, APIKey: c.GoogleKey, CX: c.GoogleCX}, nil
	}
	searxng := func() (web.Engine, error) {
		if c.SearxNGURL == "" {
			return nil, errors.New("source web: searxng needs QUARRY_SEARXNG_URL")
		}
		if _, err := fetch.ParseURL(c.SearxNGURL); err != nil {
			return nil, fmt.Errorf("searxng-url: %w", err)
		}
		return &web.SearxNG{Getter: f, BaseURL: c.SearxNGURL}, nil
	}
	brave := func() (web.Engine, error) {
		if c.BraveKey == "" {
			return nil, errors.New("source web: brave needs QUARRY_BRAVE_API_KEY")
		}
		return &web.Brave{Getter: f, BaseURL: c.BraveBaseURL, APIKey: c.BraveKey}, nil
	}
	switch c.WebSearch {
	case "google":
		return google()
	case "searxng":
		return searxng()
	case "brave":
		return brave()
	}
	switch {
	case c.GoogleKey != "" && c.GoogleCX != "":
		return google()
	case c.SearxNGURL != "":
		return searxng()
	case c.BraveKey != "":
		return brave()
	}
	return nil, errWebUnconfigured
}
