// Package kbsource makes a local knowledge base a research source: a hybrid
// search whose results cite the source URLs stored in the knowledge base.
package kbsource

import (
	"context"
	"fmt"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/search"
)

// Credibility of a local knowledge base: the user chose what went in, so it
// ranks with curated references, below peer-reviewed work.
const Credibility = 0.8

// Source searches one knowledge base.
type Source struct {
	svc  *kb.Service
	name string
	emb  embed.Embedder
}

var (
	_ search.Source       = (*Source)(nil)
	_ search.PageSearcher = (*Source)(nil)
)

// New returns a source over the knowledge base name, searched with emb.
func New(svc *kb.Service, name string, emb embed.Embedder) *Source {
	return &Source{svc: svc, name: name, emb: emb}
}

// Name implements search.Source.
func (s *Source) Name() string { return "kb:" + s.name }

// Search implements search.Source with the knowledge base's default hybrid
// search. Queries longer than the knowledge base accepts are cut.
func (s *Source) Search(ctx context.Context, query string, k int) ([]search.Result, error) {
	hits, err := s.search(ctx, query, k)
	if err != nil {
		return nil, err
	}
	out := make([]search.Result, len(hits))
	for i, h := range hits {
		out[i] = result(h)
	}
	return out, nil
}

// PageDepth is how many chunks deeper than the pages asked for
// SearchPages reads, for the passages of those pages.
const PageDepth = 3

// SearchPages implements search.PageSearcher: the chunks of the first
// pages documents among the best pages×PageDepth chunks (at most 100),
// every one of them that is among those, in rank order.
func (s *Source) SearchPages(ctx context.Context, query string, pages int) ([]search.Result, error) {
	hits, err := s.search(ctx, query, min(pages*PageDepth, 100))
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []search.Result
	for _, h := range hits {
		if !seen[h.SourceURL] {
			if len(seen) == pages {
				continue
			}
			seen[h.SourceURL] = true
		}
		out = append(out, result(h))
	}
	return out, nil
}

func (s *Source) search(ctx context.Context, query string, k int) ([]kb.Result, error) {
	if r := []rune(query); len(r) > kb.MaxQueryChars {
		query = string(r[:kb.MaxQueryChars])
	}
	hits, err := s.svc.Search(ctx, s.name, s.emb, kb.Query{Text: query, K: k, Mode: kb.ModeHybrid})
	if err != nil {
		return nil, fmt.Errorf("kb:%s: %w", s.name, err)
	}
	return hits, nil
}

func result(h kb.Result) search.Result {
	return search.Result{URL: h.SourceURL, Title: h.Title, Content: h.Text, Kind: "kb", Credibility: Credibility, Score: h.Score}
}
