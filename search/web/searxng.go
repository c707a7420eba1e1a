package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// SearxNG is a SearxNG instance's JSON API (the instance must enable the
// json format in its settings).
type SearxNG struct {
	Getter  Getter
	BaseURL string // the instance, e.g. http://localhost:8888
}

// Name implements Engine.
func (s *SearxNG) Name() string { return "searxng" }

// Search implements Engine.
func (s *SearxNG) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	q := url.Values{"q": {query}, "format": {"json"}}
	resp, err := s.Getter.Get(ctx, getJSON(strings.TrimRight(s.BaseURL, "/")+"/search?"+q.Encode(), nil))
	if err != nil {
		return nil, err
	}
	hits, err := ParseSearxNG(resp.Body)
	if err != nil {
		return nil, err
	}
	return hits[:min(len(hits), clampK(k, 50))], nil
}

// ParseSearxNG reads a SearxNG /search?format=json response.
func ParseSearxNG(data []byte) ([]Hit, error) {
	var r struct {
		Results []struct {
			URL           string  `json:"url"`
			Title         string  `json:"title"`
			Content       string  `json:"content"`
			PublishedDate *string `json:"publishedDate"`
		} `json:"results"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("searxng: response does not parse: %w", err)
	}
	var hits []Hit
	seen := map[string]bool{}
	for _, it := range r.Results {
		if !httpURL(it.URL) || seen[it.URL] {
			continue
		}
		seen[it.URL] = true
		h := Hit{URL: it.URL, Title: it.Title, Snippet: it.Content}
		if it.PublishedDate != nil {
			h.Published = parseTime(*it.PublishedDate)
		}
		hits = append(hits, h)
	}
	return hits, nil
}
