// Package credibility scores how far a source can be trusted, 0–1, from a
// configurable domain table plus heuristics by kind of site. The defaults:
//
//	peer-reviewed publishers and databases      0.90
//	government (.gov, .mil) and intergovernmental 0.85
//	preprint servers (arxiv.org, biorxiv.org …)  0.80
//	universities (.edu, .ac.*)                   0.80
//	encyclopedias (wikipedia.org, britannica.com) 0.75
//	news agencies and newspapers of record       0.70
//	reference and documentation sites            0.65
//	other .org sites                             0.55
//	unknown                                      0.50
//	blogs and Q&A sites                          0.45
//	forums and social media                      0.35
//
// A table entry matches its domain and every subdomain of it; the longest
// match wins, and user entries override the defaults.
package credibility

import (
	"context"
	"fmt"
	"strings"

	"github.com/quarryhq/quarry/search"
)

// Category names why a score was given.
type Category string

// Categories of sources.
const (
	PeerReviewed Category = "peer-reviewed"
	Government   Category = "government"
	Preprint     Category = "preprint"
	University   Category = "university"
	Encyclopedia Category = "encyclopedia"
	News         Category = "news"
	Reference    Category = "reference"
	Organization Category = "organization"
	Unknown      Category = "unknown"
	Blog         Category = "blog"
	Forum        Category = "forum"
	Custom       Category = "configured"
)

// Scores per category.
var Scores = map[Category]float64{
	PeerReviewed: 0.90, Government: 0.85, Preprint: 0.80, University: 0.80,
	Encyclopedia: 0.75, News: 0.70, Reference: 0.65, Organization: 0.55,
	Unknown: 0.50, Blog: 0.45, Forum: 0.35,
}

var defaults = map[string]Category{
	// peer-reviewed publishers and indexes
	"nature.com": PeerReviewed, "science.org": PeerReviewed, "sciencemag.org": PeerReviewed, "cell.com": PeerReviewed,
	"thelancet.com": PeerReviewed, "nejm.org": PeerReviewed, "bmj.com": PeerReviewed, "jamanetwork.com": PeerReviewed,
	"pnas.org": PeerReviewed, "plos.org": PeerReviewed, "springer.com": PeerReviewed, "link.springer.com": PeerReviewed,
	"sciencedirect.com": PeerReviewed, "wiley.com": PeerReviewed, "tandfonline.com": PeerReviewed, "acm.org": PeerReviewed,
	"ieee.org": PeerReviewed, "aps.org": PeerReviewed, "iop.org": PeerReviewed, "acs.org": PeerReviewed,
	"ncbi.nlm.nih.gov": PeerReviewed, "pubmed.ncbi.nlm.nih.gov": PeerReviewed, "doi.org": PeerReviewed,
	"aclanthology.org": PeerReviewed, "jmlr.org": PeerReviewed, "neurips.cc": PeerReviewed, "openreview.net": PeerReviewed,
	"frontiersin.org": PeerReviewed, "mdpi.com": PeerReviewed, "oup.com": PeerReviewed, "cambridge.org": PeerReviewed,
	// intergovernmental
	"who.int": Government, "europa.eu": Government, "un.org": Government, "oecd.org": Government, "worldbank.org": Government, "imf.org": Government,
	// preprints
	"arxiv.org": Preprint, "biorxiv.org": Preprint, "medrxiv.org": Preprint, "ssrn.com": Preprint, "osf.io": Preprint, "chemrxiv.org": Preprint,
	"semanticscholar.org": Preprint,
	// encyclopedias
	"wikipedia.org": Encyclopedia, "britannica.com": Encyclopedia, "plato.stanford.edu": Encyclopedia, "scholarpedia.org": Encyclopedia,
	// news
	"reuters.com": News, "apnews.com": News, "bbc.com": News, "bbc.co.uk": News, "nytimes.com": News, "theguardian.com": News,
	"washingtonpost.com": News, "wsj.com": News, "ft.com": News, "economist.com": News, "npr.org": News, "bloomberg.com": News,
	"nhk.or.jp": News, "yna.co.kr": News, "lemonde.fr": News, "spiegel.de": News, "aljazeera.com": News,
	// reference and documentation
	"developer.mozilla.org": Reference, "docs.python.org": Reference, "go.dev": Reference, "pkg.go.dev": Reference,
	"w3.org": Reference, "ietf.org": Reference, "rfc-editor.org": Reference, "learn.microsoft.com": Reference,
	"github.com": Reference, "readthedocs.io": Reference, "docs.rs": Reference,
	// blogs and Q&A
	"medium.com": Blog, "substack.com": Blog, "wordpress.com": Blog, "blogspot.com": Blog, "dev.to": Blog,
	"stackoverflow.com": Blog, "stackexchange.com": Blog, "quora.com": Forum,
	// forums and social
	"reddit.com": Forum, "twitter.com": Forum, "x.com": Forum, "facebook.com": Forum, "tiktok.com": Forum,
	"instagram.com": Forum, "youtube.com": Forum, "news.ycombinator.com": Forum, "4chan.org": Forum,
}

// Table scores domains. The zero value uses the defaults only.
type Table struct {
	custom map[string]float64
}

// New returns a table with user entries (domain → score 0–1) over the
// defaults. Domains are matched without "www." and case-insensitively.
func New(custom map[string]float64) (*Table, error) {
	t := &Table{custom: map[string]float64{}}
	for d, s := range custom {
		if s < 0 || s > 1 {
			return nil, fmt.Errorf("credibility.%s: score must be 0-1, got %g", d, s)
		}
		d = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(d)), "www.")
		if d == "" || strings.ContainsAny(d, "/: ") {
			return nil, fmt.Errorf("credibility: %q is not a domain (write example.com)", d)
		}
		t.custom[d] = s
	}
	return t, nil
}

// Custom returns the user's score for a host (or its nearest parent
// domain), if the table has one.
func (t *Table) Custom(host string) (float64, bool) {
	if t == nil {
		return 0, false
	}
	return lookup(strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(host), "www."), "."), t.custom)
}

// Apply makes the table's user entries override the credibility src gives
// its results (arXiv, Wikipedia and knowledge bases score their own kind;
// a configured domain still wins).
func Apply(src search.Source, t *Table) search.Source {
	if t == nil || len(t.custom) == 0 {
		return src
	}
	a := applied{src, t}
	if _, ok := src.(search.PageSearcher); ok {
		return appliedPages{a} // a knowledge base still finds pages
	}
	return a
}

type applied struct {
	search.Source
	t *Table
}

func (a applied) Search(ctx context.Context, query string, k int) ([]search.Result, error) {
	res, err := a.Source.Search(ctx, query, k)
	a.score(res)
	return res, err
}

// score gives results from a host the table scores that score.
func (a applied) score(res []search.Result) {
	for i := range res {
		if s, ok := a.t.Custom(search.Domain(res[i].URL)); ok {
			res[i].Credibility = s
		}
	}
}

// appliedPages is applied over a source that finds pages.
type appliedPages struct{ applied }

var _ search.PageSearcher = appliedPages{}

func (a appliedPages) SearchPages(ctx context.Context, query string, pages int) ([]search.Result, error) {
	res, err := a.Source.(search.PageSearcher).SearchPages(ctx, query, pages)
	a.score(res)
	return res, err
}

// Score returns the credibility of a host (a domain such as
// "en.wikipedia.org") and the category that gave it.
func (t *Table) Score(host string) (float64, Category) {
	host = strings.TrimSuffix(strings.TrimPrefix(strings.ToLower(host), "www."), ".")
	if s, ok := t.Custom(host); ok {
		return s, Custom
	}
	if c, ok := lookup(host, defaults); ok {
		return Scores[c], c
	}
	labels := strings.Split(host, ".")
	tld := labels[len(labels)-1]
	switch {
	case tld == "gov" || tld == "mil" || hasSecondLevel(labels, "gov", "go", "gouv"):
		return Scores[Government], Government
	case tld == "edu" || hasSecondLevel(labels, "ac", "edu"):
		return Scores[University], University
	case strings.HasPrefix(host, "blog.") || strings.Contains(host, "blog"):
		return Scores[Blog], Blog
	case strings.HasPrefix(host, "forum.") || strings.HasPrefix(host, "forums.") || strings.HasPrefix(host, "community."):
		return Scores[Forum], Forum
	case strings.HasPrefix(host, "docs.") || strings.HasPrefix(host, "developer."):
		return Scores[Reference], Reference
	case tld == "org":
		return Scores[Organization], Organization
	}
	return Scores[Unknown], Unknown
}

// lookup finds host or its nearest parent domain in m.
func lookup[V any](host string, m map[string]V) (V, bool) {
	for h := host; h != ""; {
		if v, ok := m[h]; ok {
			return v, true
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			break
		}
		h = h[i+1:]
	}
	var zero V
	return zero, false
}

// hasSecondLevel reports a country domain such as gov.uk or ac.kr.
func hasSecondLevel(labels []string, names ...string) bool {
	if len(labels) < 2 || len(labels[len(labels)-1]) != 2 {
		return false
	}
	for _, n := range names {
		if labels[len(labels)-2] == n {
			return true
		}
	}
	return false
}
