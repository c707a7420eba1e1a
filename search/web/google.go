package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/quarryhq/quarry/fetch"
)

// GoogleBaseURL is the Custom Search JSON API endpoint.
const GoogleBaseURL = "https://www.googleapis.com/customsearch/v1"

// Google is Google Programmable Search (the Custom Search JSON API).
type Google struct {
	Getter  Getter
	BaseURL string // GoogleBaseURL when empty
	APIKey  string
	CX      string // the search engine id
}

// Name implements Engine.
func (g *Google) Name() string { return "google" }

// Search implements Engine.
func (g *Google) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	base := g.BaseURL
	if base == "" {
		base = GoogleBaseURL
	}
	q := url.Values{"key": {g.APIKey}, "cx": {g.CX}, "q": {query}, "num": {strconv.Itoa(clampK(k, 10))}}
	resp, err := g.Getter.Get(ctx, getJSON(base+"?"+q.Encode(), nil))
	if err != nil {
		return nil, err
	}
	return ParseGoogle(resp.Body)
}

// ParseGoogle reads a Custom Search JSON API response.
func ParseGoogle(data []byte) ([]Hit, error) {
	var r struct {
		Items []struct {
			Title   string `json:"title"`
			Link    string `json:"link"`
			Snippet string `json:"snippet"`
			Pagemap struct {
				Metatags []map[string]any `json:"metatags"`
			} `json:"pagemap"`
		} `json:"items"`
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("google: response does not parse: %w", err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("google: error %d: %s", r.Error.Code, r.Error.Message)
	}
	var hits []Hit
	for _, it := range r.Items {
		if !httpURL(it.Link) {
			continue
		}
		h := Hit{URL: it.Link, Title: it.Title, Snippet: it.Snippet}
		for _, m := range it.Pagemap.Metatags {
			if s, ok := m["article:published_time"].(string); ok {
				h.Published = parseTime(s)
				break
			}
		}
		hits = append(hits, h)
	}
	return hits, nil
}

func getJSON(u string, header http.Header) fetch.Request {
	return fetch.Request{URL: u, Accept: []string{"application/json"}, Header: header, IgnoreRobots: true}
}

func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
