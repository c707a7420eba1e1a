// Package arxiv searches arXiv: the export API's Atom feed (title, authors,
// published date, abstract; one request per 3 seconds as arXiv asks), or,
// offline, a local file in the arXiv metadata snapshot's JSON Lines format
// searched with BM25. Results link to https://arxiv.org/abs/<id>.
package arxiv

import (
	"context"
	"encoding/xml"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kljensen/snowball/english"
	"golang.org/x/time/rate"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/credibility"
)

// BaseURL is the arXiv export API.
const BaseURL = "https://export.arxiv.org/api/query"

// Interval is the pause arXiv asks for between API calls.
const Interval = 3 * time.Second

// Credibility of an arXiv preprint.
var Credibility = credibility.Scores[credibility.Preprint]

// Getter is what the API client needs from the fetcher.
type Getter interface {
	Get(ctx context.Context, req fetch.Request) (*fetch.Response, error)
}

// API is the arXiv export API as a search.Source.
type API struct {
	getter  Getter
	baseURL string
	limiter *rate.Limiter
}

var _ search.Source = (*API)(nil)

// NewAPI returns an API client; baseURL "" means BaseURL and interval 0
// means Interval.
func NewAPI(g Getter, baseURL string, interval time.Duration) *API {
	if baseURL == "" {
		baseURL = BaseURL
	}
	if interval <= 0 {
		interval = Interval
	}
	return &API{getter: g, baseURL: baseURL, limiter: rate.NewLimiter(rate.Every(interval), 1)}
}

// Name implements search.Source.
func (a *API) Name() string { return "arxiv" }

// Search implements search.Source: the query's significant words must all
// appear; when that finds nothing, any of them may.
func (a *API) Search(ctx context.Context, query string, k int) ([]search.Result, error) {
	terms := queryTerms(query)
	if len(terms) == 0 {
		return nil, nil
	}
	var out []search.Result
	for _, op := range []string{" AND ", " OR "} {
		parts := make([]string, len(terms))
		for i, t := range terms {
			parts[i] = "all:" + t
		}
		res, err := a.call(ctx, strings.Join(parts, op), k)
		if err != nil {
			return nil, err
		}
		out = res
		if len(out) > 0 || len(terms) == 1 {
			break
		}
	}
	return out, nil
}

func (a *API) call(ctx context.Context, searchQuery string, k int) ([]search.Result, error) {
	if err := a.limiter.Wait(ctx); err != nil {
		return nil, fmt.Errorf("arxiv: %w", err)
	}
	if k <= 0 {
		k = 5
	}
	q := url.Values{"search_query": {searchQuery}, "start": {"0"}, "max_results": {strconv.Itoa(min(k, 100))}, "sortBy": {"relevance"}}
	resp, err := a.getter.Get(ctx, fetch.Request{URL: a.baseURL + "?" + q.Encode(), Accept: []string{"application/atom+xml", "application/xml", "text/xml"}, IgnoreRobots: true})
	if err != nil {
		return nil, fmt.Errorf("arxiv: %w", err)
	}
	entries, err := ParseFeed(resp.Body)
	if err != nil {
		return nil, err
	}
	out := make([]search.Result, len(entries))
	for i, e := range entries {
		out[i] = e.result(1 / float64(i+1))
	}
	return out, nil
}

// Entry is one paper.
type Entry struct {
	ID        string // without version, e.g. 2101.00001 or hep-ph/0307015
	Title     string
	Authors   []string
	Abstract  string
	Published *time.Time
}

// URL is the paper's abstract page.
func (e Entry) URL() string { return "https://arxiv.org/abs/" + e.ID }

func (e Entry) result(score float64) search.Result {
	return search.Result{URL: e.URL(), Title: e.Title, Content: e.Abstract, Authors: e.Authors, Published: e.Published, Kind: "arxiv", Credibility: Credibility, Score: score}
}

var (
	absID   = regexp.MustCompile(`arxiv\.org/abs/([^?#]+?)(v\d+)?$`)
	spacing = regexp.MustCompile(`\s+`)
)

// ParseFeed reads the API's Atom feed. An API error (which arXiv sends as a
// feed whose entry is titled "Error") becomes an error.
func ParseFeed(data []byte) ([]Entry, error) {
	var feed struct {
		XMLName xml.Name `xml:"feed"`
		Entries []struct {
			ID        string `xml:"id"`
			Title     string `xml:"title"`
			Summary   string `xml:"summary"`
			Published string `xml:"published"`
			Authors   []struct {
				Name string `xml:"name"`
			} `xml:"author"`
		} `xml:"entry"`
	}
	if err := xml.Unmarshal(data, &feed); err != nil {
		return nil, fmt.Errorf("arxiv: feed does not parse: %w", err)
	}
	var out []Entry
	for _, e := range feed.Entries {
		if strings.Contains(e.ID, "/api/errors") || strings.TrimSpace(e.Title) == "Error" {
			return nil, fmt.Errorf("arxiv: API error: %s", clean(e.Summary))
		}
		m := absID.FindStringSubmatch(strings.TrimSpace(e.ID))
		if m == nil {
			continue
		}
		en := Entry{ID: m[1], Title: clean(e.Title), Abstract: clean(e.Summary)}
		for _, a := range e.Authors {
			if n := clean(a.Name); n != "" {
				en.Authors = append(en.Authors, n)
			}
		}
		if t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Published)); err == nil {
			t = t.UTC()
			en.Published = &t
		}
		out = append(out, en)
	}
	return out, nil
}

func clean(s string) string { return strings.TrimSpace(spacing.ReplaceAllString(s, " ")) }

// queryTerms keeps up to 6 significant words of a query, in order, for the
// API's field syntax (no quotes, parentheses or operators pass through).
func queryTerms(q string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !(r == '-' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127)
	}) {
		w = strings.Trim(w, "-.")
		if len(w) < 2 || english.IsStopWord(w) || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
		if len(out) == 6 {
			break
		}
	}
	return out
}
