package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
)

// BraveBaseURL is the Brave Search web endpoint.
const BraveBaseURL = "https://api.search.brave.com/res/v1/web/search"

// Brave is the Brave Search API.
type Brave struct {
	Getter  Getter
	BaseURL string // BraveBaseURL when empty
	APIKey  string
}

// Name implements Engine.
func (b *Brave) Name() string { return "brave" }

// Search implements Engine.
func (b *Brave) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	base := b.BaseURL
	if base == "" {
		base = BraveBaseURL
	}
	q := url.Values{"q": {query}, "count": {strconv.Itoa(clampK(k, 20))}}
	resp, err := b.Getter.Get(ctx, getJSON(base+"?"+q.Encode(), http.Header{"X-Subscription-Token": {b.APIKey}}))
	if err != nil {
		return nil, err
	}
	return ParseBrave(resp.Body)
}

// ParseBrave reads a Brave Search web search response.
func ParseBrave(data []byte) ([]Hit, error) {
	var r struct {
		Web struct {
			Results []struct {
				Title       string `json:"title"`
				URL         string `json:"url"`
				Description string `json:"description"`
				PageAge     string `json:"page_age"`
			} `json:"results"`
		} `json:"web"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("brave: response does not parse: %w", err)
	}
	var hits []Hit
	for _, it := range r.Web.Results {
		if !httpURL(it.URL) {
			continue
		}
		hits = append(hits, Hit{URL: it.URL, Title: stripTags(it.Title), Snippet: stripTags(it.Description), Published: parseTime(it.PageAge)})
	}
	return hits, nil
}
