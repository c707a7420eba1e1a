// Package wikipedia searches Wikipedia through the MediaWiki Action API:
// one request runs the search and returns each page's lead section as plain
// text (the TextExtracts "exintro" extract) with its canonical URL.
package wikipedia

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/credibility"
)

// BaseURL is English Wikipedia's API; other languages use
// https://<lang>.wikipedia.org/w/api.php.
const BaseURL = "https://en.wikipedia.org/w/api.php"

// Credibility of an encyclopedia article.
var Credibility = credibility.Scores[credibility.Encyclopedia]

// Getter is what the client needs from the fetcher.
type Getter interface {
	Get(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// Source is Wikipedia as a search.Source.
type Source struct {
	Getter  Getter
	BaseURL string // BaseURL when empty
}

var _ search.Source = (*Source)(nil)

// Name implements search.Source.
func (s *Source) Name() string { return "wikipedia" }

// Search implements search.Source.
func (s *Source) Search(ctx context.Context, query string, k int) ([]search.Result, error) {
	base := s.BaseURL
	if base == "" {
		base = BaseURL
	}
	if k <= 0 {
		k = 5
	}
	q := url.Values{
		"action": {"query"}, "format": {"json"}, "formatversion": {"2"},
		"generator": {"search"}, "gsrsearch": {query}, "gsrlimit": {strconv.Itoa(min(k, 20))}, "gsrnamespace": {"0"},
		"prop": {"extracts|info"}, "inprop": {"url"}, "exintro": {"1"}, "explaintext": {"1"}, "exlimit": {"max"},
		"redirects": {"1"},
	}
	resp, err := s.Getter.Get(ctx, fetch.Request{URL: base + "?" + q.Encode(), Accept: []string{"application/json"}, IgnoreRobots: true})
	if err != nil {
		return nil, fmt.Errorf("wikipedia: %w", err)
	}
	return Parse(resp.Body)
}

// Parse reads an Action API query response (formatversion 2) into results
// in search rank order. Pages without an extract are skipped.
func Parse(data []byte) ([]search.Result, error) {
	var r struct {
		Error *struct {
			Code string `json:"code"`
			Info string `json:"info"`
		} `json:"error"`
		Query struct {
			Pages []struct {
				PageID  int64  `json:"pageid"`
				Title   string `json:"title"`
				Index   int    `json:"index"`
				Extract string `json:"extract"`
				FullURL string `json:"fullurl"`
				Missing bool   `json:"missing"`
			} `json:"pages"`
		} `json:"query"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("wikipedia: response does not parse: %w", err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("wikipedia: API error %s: %s", r.Error.Code, r.Error.Info)
	}
	pages := r.Query.Pages
	sort.SliceStable(pages, func(i, j int) bool { return pages[i].Index < pages[j].Index })
	var out []search.Result
	for i, p := range pages {
		if p.Missing || p.Extract == "" || p.Title == "" {
			continue
		}
		u := p.FullURL
		if pu, err := url.Parse(u); err != nil || (pu.Scheme != "https" && pu.Scheme != "http") || pu.Host == "" {
			continue
		}
		res := search.Result{URL: u, Title: p.Title, Content: p.Extract, Kind: "wikipedia", Credibility: Credibility, Score: 1 / float64(i+1)}
		out = append(out, res)
	}
	return out, nil
}
