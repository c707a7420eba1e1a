package wikipedia

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/fetch"
)

func TestSearch(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/query.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		for p, v := range map[string]string{"action": "query", "format": "json", "formatversion": "2", "generator": "search",
			"gsrsearch": "Dvořák Verdi", "gsrlimit": "3", "prop": "extracts|info", "inprop": "url", "exintro": "1", "explaintext": "1"} {
			if q.Get(p) != v {
				t.Errorf("%s = %q, want %q", p, q.Get(p), v)
			}
		}
		if !strings.HasPrefix(r.Header.Get("User-Agent"), "QuarryBot/") {
			t.Errorf("Wikimedia requires a descriptive User-Agent; got %q", r.Header.Get("User-Agent"))
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(data)
	}))
	defer srv.Close()
	s := &Source{Getter: fetch.New(fetch.Options{AllowPrivate: true}), BaseURL: srv.URL + "/w/api.php"}
	res, err := s.Search(context.Background(), "Dvořák Verdi", 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Title != "Giuseppe Verdi" || res[1].Title != "Antonín Dvořák" {
		t.Fatalf("results in search order without empty extracts: %+v", res)
	}
	if res[1].URL != "https://en.wikipedia.org/wiki/Anton%C3%ADn_Dvo%C5%99%C3%A1k" || !strings.Contains(res[1].Content, "8 September 1841") || res[1].Kind != "wikipedia" || res[1].Credibility != Credibility {
		t.Errorf("result: %+v", res[1])
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	if _, err := Parse([]byte(`{"error":{"code":"maxlag","info":"Waiting for a database server: 7 seconds lagged.","*":"See https://en.wikipedia.org/w/api.php for API usage."},"servedby":"mw1234"}`)); err == nil || !strings.Contains(err.Error(), "maxlag") {
		t.Fatalf("API error: %v", err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "slow down")
	}))
	defer srv.Close()
	s := &Source{Getter: fetch.New(fetch.Options{AllowPrivate: true}), BaseURL: srv.URL}
	if _, err := s.Search(context.Background(), "x", 3); err == nil || !strings.Contains(err.Error(), "429") {
		t.Fatalf("429: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	data, err := os.ReadFile("testdata/query.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
	f.Add([]byte(`{"query":{"pages":[{"title":"x","extract":"y","fullurl":"javascript:1"}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Parse(data)
		if err != nil {
			return
		}
		for _, r := range res {
			if !strings.HasPrefix(r.URL, "http://") && !strings.HasPrefix(r.URL, "https://") {
				t.Fatalf("non-http URL %q", r.URL)
			}
		}
	})
}
