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

var _ search.Source = (*Source)(nil)

// New returns a source over the knowledge base name, searched with emb.
func New(svc *kb.Service, name string, emb embed.Embedder) *Source {
	return &Source{svc: svc, name: name, emb: emb}
}

// Name implements search.Source.
func (s *Source) Name() string { return "kb:" + s.name }

// Search implements search.Source with the knowledge base's default hybrid
// search. Queries longer than the knowledge base accepts are cut.
func (s *Source) Search(ctx context.Context, query string, k int) ([]search.Result, error) {
	if r := []rune(query); len(r) > kb.MaxQueryChars {
		query = string(r[:kb.MaxQueryChars])
	}
	hits, err := s.svc.Search(ctx, s.name, s.emb, kb.Query{Text: query, K: k, Mode: kb.ModeHybrid})
	if err != nil {
		return nil, fmt.Errorf("kb:%s: %w", s.name, err)
	}
	out := make([]search.Result, len(hits))
	for i, h := range hits {
		out[i] = search.Result{URL: h.SourceURL, Title: h.Title, Content: h.Text, Kind: "kb", Credibility: Credibility, Score: h.Score}
	}
	return out, nil
}
