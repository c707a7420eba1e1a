package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/search/credibility"
)

const article = `<html><head><title>Quantum error correction below the surface code threshold</title>
<meta property="article:published_time" content="2024-12-09T00:00:00Z"></head>
<body><article><p>Quantum error correction provides a path to reach practical quantum computing by combining multiple physical qubits into a logical qubit, where the logical error rate is suppressed exponentially as more qubits are added.</p>
<p>The distance-7 surface code memory reached a logical error rate of 0.143% per cycle, below threshold, a factor of 2.14 improvement per step in code distance.</p></article></body></html>`

// server replays an engine's response from testdata and serves the result
// pages; check asserts the API request.
func server(t *testing.T, fixture, apiPath string, check func(*http.Request) error) *httptest.Server {
	t.Helper()
	data, err := os.ReadFile("testdata/" + fixture)
	if err != nil {
		t.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case apiPath:
			if err := check(r); err != nil {
				t.Errorf("%s request: %v", fixture, err)
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			w.Header().Set("Content-Type", "application/json; charset=UTF-8")
			w.Write([]byte(strings.ReplaceAll(string(data), "PAGE_BASE", srv.URL)))
		case "/qec":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, article)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func want(r *http.Request, param, value string) error {
	if got := r.URL.Query().Get(param); got != value {
		return fmt.Errorf("%s = %q, want %q", param, got, value)
	}
	return nil
}

func TestEngines(t *testing.T) {
	t.Parallel()
	f := fetch.New(fetch.Options{AllowPrivate: true})
	for _, tc := range []struct {
		name, fixture, path string
		check               func(*http.Request) error
		engine              func(base string) Engine
	}{
		{"google", "google.json", "/customsearch/v1", func(r *http.Request) error {
			for p, v := range map[string]string{"key": "g-key", "cx": "cx-1", "q": "quantum error correction", "num": "3"} {
				if err := want(r, p, v); err != nil {
					return err
				}
			}
			return nil
		}, func(base string) Engine {
			return &Google{Getter: f, BaseURL: base + "/customsearch/v1", APIKey: "g-key", CX: "cx-1"}
		}},
		{"searxng", "searxng.json", "/search", func(r *http.Request) error {
			if err := want(r, "format", "json"); err != nil {
				return err
			}
			return want(r, "q", "quantum error correction")
		}, func(base string) Engine { return &SearxNG{Getter: f, BaseURL: base + "/"} }},
		{"brave", "brave.json", "/res/v1/web/search", func(r *http.Request) error {
			if got := r.Header.Get("X-Subscription-Token"); got != "b-key" {
				return fmt.Errorf("X-Subscription-Token = %q", got)
			}
			if !strings.Contains(r.Header.Get("Accept"), "application/json") {
				return fmt.Errorf("Accept = %q", r.Header.Get("Accept"))
			}
			if err := want(r, "count", "3"); err != nil {
				return err
			}
			return want(r, "q", "quantum error correction")
		}, func(base string) Engine {
			return &Brave{Getter: f, BaseURL: base + "/res/v1/web/search", APIKey: "b-key"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := server(t, tc.fixture, tc.path, tc.check)
			src := &Source{Engine: tc.engine(srv.URL), Pages: f}
			res, err := src.Search(context.Background(), "quantum error correction", 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 2 {
				t.Fatalf("%d results, want 2 (bad URLs and duplicates dropped): %+v", len(res), res)
			}
			r := res[0]
			if r.URL != srv.URL+"/qec" || r.Kind != "web" || r.Title != "Quantum error correction below the surface code threshold" {
				t.Errorf("first result: %+v", r)
			}
			if !strings.Contains(r.Content, "0.143% per cycle") {
				t.Errorf("first result content is not the fetched page: %q", r.Content)
			}
			if r.Published == nil || r.Published.Year() != 2024 {
				t.Errorf("published = %v", r.Published)
			}
			if r.Credibility != credibility.Scores[credibility.Unknown] {
				t.Errorf("credibility of 127.0.0.1 = %g", r.Credibility)
			}
			// The second page is a 404: the snippet is kept, and says so.
			if !strings.HasPrefix(res[1].Content, "[snippet only") || !strings.Contains(res[1].Content, "surface code is a family") {
				t.Errorf("unfetchable result content: %q", res[1].Content)
			}
		})
	}
}

func TestEngineErrors(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprint(w, `{"error":{"code":403,"message":"Requests from this client are blocked.","errors":[{"reason":"forbidden"}],"status":"PERMISSION_DENIED"}}`)
	}))
	defer srv.Close()
	g := &Google{Getter: fetch.New(fetch.Options{AllowPrivate: true}), BaseURL: srv.URL, APIKey: "AIzaSECRET", CX: "cx"}
	_, err := g.Search(context.Background(), "q", 3)
	if err == nil || !strings.Contains(err.Error(), "403") || strings.Contains(err.Error(), "AIzaSECRET") {
		t.Fatalf("403: %v (must name the status, never the key)", err)
	}
	if _, err := ParseGoogle([]byte(`{"error":{"code":429,"message":"Quota exceeded"}}`)); err == nil || !strings.Contains(err.Error(), "Quota") {
		t.Fatalf("error body: %v", err)
	}
	for _, parse := range []func([]byte) ([]Hit, error){ParseGoogle, ParseSearxNG, ParseBrave} {
		if _, err := parse([]byte(`<html>rate limited</html>`)); err == nil {
			t.Error("HTML accepted as JSON")
		}
		if hits, err := parse([]byte(`{}`)); err != nil || len(hits) != 0 {
			t.Errorf("empty response: %v %v", hits, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"google.json", "searxng.json", "brave.json"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"items":[{"link":"http://x","pagemap":{"metatags":[{"article:published_time":7}]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, parse := range []func([]byte) ([]Hit, error){ParseGoogle, ParseSearxNG, ParseBrave} {
			hits, err := parse(data)
			if err != nil {
				continue
			}
			for _, h := range hits {
				if !httpURL(h.URL) {
					t.Fatalf("non-http URL passed: %q", h.URL)
				}
			}
		}
	})
}

// TestHostileResultURLs: a search API that returns URLs with IPv6 zones,
// internal addresses or other schemes never crashes the source; each
// result keeps its snippet (the page is not fetched) or is dropped.
func TestHostileResultURLs(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"results":[
			{"url":"http://[::1%25lo]:18081/","title":"zone","content":"zone snippet"},
			{"url":"http://[::127.0.0.1]/x","title":"compat","content":"compat snippet"},
			{"url":"http://169.254.169.254/latest/meta-data/","title":"metadata","content":"metadata snippet"},
			{"url":"javascript:alert(1)","title":"js","content":"js snippet"},
			{"url":"http://%zz/","title":"bad","content":"bad snippet"}]}`)
	}))
	t.Cleanup(srv.Close)
	// The API itself is on loopback: allow just that, guard the rest.
	f := fetch.New(fetch.Options{AllowPrefixes: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Timeout: 2 * time.Second})
	src := &Source{Engine: &SearxNG{Getter: f, BaseURL: srv.URL + "/"}, Pages: f}
	res, err := src.Search(context.Background(), "anything", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) < 3 {
		t.Fatalf("%d results: the zone, compat and metadata results keep their snippets", len(res))
	}
	for _, r := range res {
		if !strings.HasPrefix(r.Content, "[snippet only") {
			t.Errorf("result %s was fetched: %q", r.URL, r.Content)
		}
		if strings.HasPrefix(r.URL, "javascript:") {
			t.Errorf("a javascript: result survived")
		}
	}
}

// oneHit is an engine that finds one page.
type oneHit struct{}

func (oneHit) Name() string { return "one" }
func (oneHit) Search(context.Context, string, int) ([]Hit, error) {
	return []Hit{{URL: "https://example.com/a", Title: "A", Snippet: "a snippet"}}, nil
}

// panicPages panics reading any page.
type panicPages struct{}

func (panicPages) Page(context.Context, string, fetch.Request) (*fetch.Page, error) {
	panic("reader exploded")
}

// TestPageReadPanicFailsEverySearchOfIt: a page whose read panicked fails
// the searches that want it, each time, instead of reading later as an
// empty page.
func TestPageReadPanicFailsEverySearchOfIt(t *testing.T) {
	t.Parallel()
	src := &Source{Engine: oneHit{}, Pages: panicPages{}}
	for i := range 2 {
		res, err := src.Search(context.Background(), "a", 5)
		if err == nil || !strings.Contains(err.Error(), "reader exploded") {
			t.Fatalf("search %d = %v, %v; want the panic as its error", i, res, err)
		}
	}
}
