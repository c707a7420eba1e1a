package credibility

import (
	"context"
	"testing"

	"github.com/quarryhq/quarry/search"
)

func TestScore(t *testing.T) {
	t.Parallel()
	tab, err := New(map[string]float64{"www.Example.com": 0.95, "wikipedia.org": 0.6})
	if err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]Category{
		"arxiv.org":               Preprint,
		"export.arxiv.org":        Preprint,
		"www.nature.com":          PeerReviewed,
		"pubmed.ncbi.nlm.nih.gov": PeerReviewed,
		"nasa.gov":                Government,
		"www.gov.uk":              Government,
		"mit.edu":                 University,
		"www.ox.ac.uk":            University,
		"kaist.ac.kr":             University,
		"reuters.com":             News,
		"reddit.com":              Forum,
		"old.reddit.com":          Forum,
		"medium.com":              Blog,
		"someone.medium.com":      Blog,
		"docs.example.net":        Reference,
		"mozilla.org":             Organization,
		"unknown-site.io":         Unknown,
		"sub.example.com":         Custom,
		"en.wikipedia.org":        Custom,
		"fakeedu.com":             Unknown,
	} {
		if _, got := tab.Score(host); got != want {
			t.Errorf("%s: category %s, want %s", host, got, want)
		}
	}
	if s, _ := tab.Score("example.com"); s != 0.95 {
		t.Errorf("custom score = %g", s)
	}
	if s, _ := (*Table)(nil).Score("en.wikipedia.org"); s != 0.75 {
		t.Errorf("nil table wikipedia = %g", s)
	}
	for _, bad := range []map[string]float64{{"x.com": 1.5}, {"x.com": -0.1}, {"http://x.com/": 0.5}, {"": 0.5}} {
		if _, err := New(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

type fixed []search.Result

func (f fixed) Name() string { return "fixed" }
func (f fixed) Search(context.Context, string, int) ([]search.Result, error) {
	return append([]search.Result(nil), f...), nil
}

func TestApply(t *testing.T) {
	t.Parallel()
	src := fixed{{URL: "https://arxiv.org/abs/1", Credibility: 0.8}, {URL: "https://en.wikipedia.org/wiki/X", Credibility: 0.75}}
	if Apply(src, nil) == nil {
		t.Fatal("nil table must leave the source as it is")
	}
	tab, _ := New(map[string]float64{"arxiv.org": 0.6})
	res, err := Apply(src, tab).Search(context.Background(), "q", 2)
	if err != nil || res[0].Credibility != 0.6 || res[1].Credibility != 0.75 {
		t.Fatalf("configured domain must win, others keep their score: %+v %v", res, err)
	}
	// A source that finds pages still does, its results scored too; one
	// that does not is not made to.
	if _, ok := Apply(src, tab).(search.PageSearcher); ok {
		t.Error("a source of passages became one of pages")
	}
	pages, ok := Apply(pageSource{src}, tab).(search.PageSearcher)
	if !ok {
		t.Fatal("a source of pages lost SearchPages")
	}
	if res, err := pages.SearchPages(context.Background(), "q", 1); err != nil || res[0].Credibility != 0.6 {
		t.Fatalf("pages: %+v %v", res, err)
	}
}

// pageSource finds pages: the same results.
type pageSource struct{ fixed }

func (p pageSource) SearchPages(ctx context.Context, q string, pages int) ([]search.Result, error) {
	return p.Search(ctx, q, pages)
}
