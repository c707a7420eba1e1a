package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// fuzzRoutes are the routes whose JSON bodies FuzzRequestBody sends: the
// ones that read a body and do their work within the request.
var fuzzRoutes = []struct{ method, path string }{
	{"POST", "/v1/knowledge-bases"},
	{"POST", "/v1/knowledge-bases/wiki/ask"},
	{"POST", "/v1/pipelines"},
	{"PATCH", "/v1/pipelines/1"},
	{"POST", "/v1/pipelines/1/retrieve"},
	{"POST", "/v1/datasets"},
	{"POST", "/v1/sessions"},
	{"PUT", "/v1/knowledge-bases/wiki/schedule"},
}

// FuzzRequestBody: whatever body a client sends, the answer is never a
// 500, and an error is the one error shape.
func FuzzRequestBody(f *testing.F) {
	e := start(f, envOptions{})
	// One pipeline for the routes that name one.
	if r := e.post("/v1/pipelines", map[string]any{"name": "p", "knowledge_base": "wiki", "settings": map[string]any{"mode": "hybrid", "top_k": 3}}); r.Status != http.StatusCreated {
		f.Fatalf("pipeline: %d %s", r.Status, r.Body)
	}
	for i := range fuzzRoutes {
		f.Add(i, `{}`)
		f.Add(i, `{"name":"x","knowledge_base":"wiki","question":"Who was Verdi?","query":"Verdi","top_k":2,"settings":{"mode":"bm25"}}`)
		f.Add(i, `{"top_k":1e400,"settings":{"top_k":-1,"bm25_weight":"x"},"questions":[{"question":""}]}`)
		f.Add(i, `[1,2`)
		f.Add(i, `{"name":"a\u0000b","every":"-1s","url":"ftp://x"}`)
	}
	f.Fuzz(func(t *testing.T, route int, body string) {
		rt := fuzzRoutes[(route%len(fuzzRoutes)+len(fuzzRoutes))%len(fuzzRoutes)]
		req, err := http.NewRequest(rt.method, e.URL+rt.path, bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := e.client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", rt.method, rt.path, err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("%s %s %q: %d %s", rt.method, rt.path, body, resp.StatusCode, data)
		}
		if resp.StatusCode >= 400 {
			var shape struct {
				Error struct{ Code, Message string }
			}
			if json.Unmarshal(data, &shape) != nil || shape.Error.Code == "" || shape.Error.Message == "" {
				t.Fatalf("%s %s %q: %d, not the error shape: %s", rt.method, rt.path, body, resp.StatusCode, data)
			}
		}
	})
}
