package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// fakeServer speaks the OpenAI embeddings wire format and records requests.
type fakeServer struct {
	mu       sync.Mutex
	requests []request
	// script answers per call index; nil means a normal answer.
	script func(call int, w http.ResponseWriter) bool
}

func (f *fakeServer) handler(t *testing.T) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			t.Errorf("got %s %s, want POST /v1/embeddings", r.Method, r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test-secret" {
			t.Errorf("Authorization = %q", got)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		var req request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Errorf("decode: %v", err)
		}
		f.mu.Lock()
		call := len(f.requests)
		f.requests = append(f.requests, req)
		f.mu.Unlock()
		if f.script != nil && f.script(call, w) {
			return
		}
		// Real servers may return data out of order; index says where it goes.
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{Object: "embedding", Index: i, Embedding: []float32{float32(len(req.Input[i])), 0, 0}})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"object": "list", "data": data, "model": req.Model,
			"usage": map[string]int{"prompt_tokens": 8, "total_tokens": 8},
		})
	})
}

func newClient(t *testing.T, f *fakeServer, batch int) (*Client, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(f.handler(t))
	t.Cleanup(srv.Close)
	var slept []time.Duration
	c, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: "sk-test-secret", Model: "text-embedding-3-small", BatchSize: batch,
		sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	return c, &slept
}

func TestEmbedBatchesAndOrder(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	c, _ := newClient(t, f, 2)
	vecs, err := c.Embed(context.Background(), []string{"a", "bb", "ccc", "dddd", "eeeee"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 3 || len(f.requests[0].Input) != 2 || f.requests[2].Input[0] != "eeeee" {
		t.Fatalf("batches: %+v", f.requests)
	}
	if f.requests[0].Model != "text-embedding-3-small" || f.requests[0].EncodingFormat != "float" {
		t.Fatalf("request shape: %+v", f.requests[0])
	}
	for i, v := range vecs {
		// normalised, so the first component is 1 for every input
		if len(v) != 3 || v[0] != 1 {
			t.Fatalf("vector %d = %v", i, v)
		}
	}
	if c.Dimension() != 3 || c.Name() != "openai:text-embedding-3-small" {
		t.Fatalf("dimension %d name %s", c.Dimension(), c.Name())
	}
}

func TestRetriesHonourRetryAfter(t *testing.T) {
	t.Parallel()
	f := &fakeServer{script: func(call int, w http.ResponseWriter) bool {
		switch call {
		case 0:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
			fmt.Fprint(w, `{"error":{"message":"Rate limit reached","type":"requests"}}`)
			return true
		case 1:
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		return false
	}}
	c, slept := newClient(t, f, 8)
	if _, err := c.Embed(context.Background(), []string{"x"}); err != nil {
		t.Fatal(err)
	}
	if len(f.requests) != 3 || len(*slept) != 2 || (*slept)[0] != 7*time.Second {
		t.Fatalf("requests %d, slept %v", len(f.requests), *slept)
	}
}

func TestClientErrorsAreNotRetriedAndHideTheKey(t *testing.T) {
	t.Parallel()
	f := &fakeServer{script: func(call int, w http.ResponseWriter) bool {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":{"message":"Incorrect API key provided: sk-test-secret","type":"invalid_request_error"}}`)
		return true
	}}
	c, _ := newClient(t, f, 8)
	_, err := c.Embed(context.Background(), []string{"x"})
	if err == nil || len(f.requests) != 1 {
		t.Fatalf("err %v after %d requests", err, len(f.requests))
	}
	if strings.Contains(err.Error(), "sk-test-secret") || !strings.Contains(err.Error(), "401") {
		t.Fatalf("error leaks key or lacks status: %v", err)
	}
}

// TestLongErrorHidesTheKey: a server's error message is cut to its first
// 300 characters after the key is taken out, so a cut through the key
// leaves none of it, and never through a character.
func TestLongErrorHidesTheKey(t *testing.T) {
	t.Parallel()
	for _, lead := range []string{strings.Repeat("a", 290), strings.Repeat("a", 295), "a" + strings.Repeat("é", 160)} {
		f := &fakeServer{script: func(call int, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusBadRequest)
			msg := lead + " sk-test-secret and more"
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg}})
			return true
		}}
		c, _ := newClient(t, f, 8)
		_, err := c.Embed(context.Background(), []string{"x"})
		if err == nil {
			t.Fatal("no error")
		}
		if strings.Contains(err.Error(), "sk-test") || strings.Contains(err.Error(), "sk-") || !utf8.ValidString(err.Error()) {
			t.Errorf("after %d bytes: %q leaks part of the key or cuts a character", len(lead), err.Error())
		}
	}
}

func TestDimensionMismatch(t *testing.T) {
	t.Parallel()
	f := &fakeServer{}
	c, _ := newClient(t, f, 8)
	c.dim.Store(1536)
	if _, err := c.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "1536") {
		t.Fatalf("mismatch not reported: %v", err)
	}
}

func TestConfigValidation(t *testing.T) {
	t.Parallel()
	if _, err := New(Config{BaseURL: "ftp://x", Model: "m"}); err == nil {
		t.Fatal("bad base url accepted")
	}
	if _, err := New(Config{}); err == nil || !strings.Contains(err.Error(), "model") {
		t.Fatalf("missing model: %v", err)
	}
	if _, err := New(Config{BaseURL: "http://127.0.0.1:1/v1?key=SECRETQ", Model: "m"}); err == nil || strings.Contains(err.Error(), "SECRETQ") || !strings.Contains(err.Error(), "no query") {
		t.Fatalf("a base url with a query: %v", err)
	}
}
