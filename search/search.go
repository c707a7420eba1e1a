// Package search defines what a research source returns and how sources are
// named. Adapters live in sub-packages named after what they wrap:
// search/kbsource (a local knowledge base); web, arXiv and Wikipedia come
// next, each turning its provider's wire format into the same Result.
package search

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Result is one hit from a source: a page, a paper or a passage of a local
// document, with the text the source returned for it.
type Result struct {
	URL   string `json:"url"`
	Title string `json:"title"`
	// Content is the readable text (for a knowledge base, the matching
	// chunk; for the web, the fetched page).
	Content   string     `json:"content"`
	Published *time.Time `json:"published,omitempty"`
	// Authors are the document's authors where the source knows them
	// (arXiv).
	Authors []string `json:"authors,omitempty"`
	// Kind is the source type: kb, web, arxiv or wikipedia.
	Kind string `json:"kind"`
	// Credibility is 0–1 (see the source's documentation).
	Credibility float64 `json:"credibility"`
	Score       float64 `json:"score"`
}

// Source is something a research can search.
type Source interface {
	// Name is the spec the user wrote: "kb:notes", "web", "arxiv".
	Name() string
	Search(ctx context.Context, query string, k int) ([]Result, error)
}

// PageSearcher is a Source that can find pages rather than passages: the
// first pages its best results come from, each with every passage of it
// among them (a knowledge base's chunks of one document), in rank order.
type PageSearcher interface {
	SearchPages(ctx context.Context, query string, pages int) ([]Result, error)
}

// Spec is a parsed source name.
type Spec struct {
	Kind string // kb, web, arxiv, wikipedia
	Arg  string // the knowledge base name for kb
}

func (s Spec) String() string {
	if s.Arg != "" {
		return s.Kind + ":" + s.Arg
	}
	return s.Kind
}

// ParseSpecs parses a comma-separated source list: any non-empty subset of
// web (alias google), arxiv, wikipedia and kb:<name>. Duplicates collapse.
func ParseSpecs(list string) ([]Spec, error) {
	var out []Spec
	seen := map[string]bool{}
	for _, raw := range strings.Split(list, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			continue
		}
		var s Spec
		switch {
		case name == "web" || name == "google":
			s = Spec{Kind: "web"}
		case name == "arxiv" || name == "wikipedia":
			s = Spec{Kind: name}
		case strings.HasPrefix(name, "kb:") && len(name) > 3:
			s = Spec{Kind: "kb", Arg: name[3:]}
		default:
			return nil, fmt.Errorf("source: unknown source %q (use web, google, arxiv, wikipedia or kb:<name>)", name)
		}
		if !seen[s.String()] {
			seen[s.String()] = true
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("source: at least one source is required (web, arxiv, wikipedia or kb:<name>)")
	}
	return out, nil
}

// Domain returns the host of a URL, or the scheme's authority for kb:// and
// file:// URLs ("kb:notes", "file").
func Domain(u string) string {
	switch {
	case strings.HasPrefix(u, "kb://"):
		rest := u[len("kb://"):]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[:i]
		}
		return "kb:" + rest
	case strings.HasPrefix(u, "file://"):
		return "file"
	}
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if h, _, ok := strings.Cut(rest, ":"); ok && !strings.HasPrefix(rest, "[") {
		rest = h
	}
	return strings.ToLower(strings.TrimPrefix(rest, "www."))
}
