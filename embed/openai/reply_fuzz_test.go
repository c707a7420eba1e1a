package openai

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// FuzzReply: whatever an embeddings server answers, with any status, the
// client never panics and returns either an error or one finite vector
// per input, all of one dimension, each of length 1 or 0; an error never
// holds the key.
func FuzzReply(f *testing.F) {
	const key = "sk-fuzz-secret-0123"
	for _, s := range []struct {
		status int
		body   string
	}{
		{200, `{"object":"list","data":[{"object":"embedding","index":1,"embedding":[0,1]},{"object":"embedding","index":0,"embedding":[3,4]}],"model":"m"}`},
		{200, `{"data":[{"index":0,"embedding":[]},{"index":1,"embedding":[]}]}`},
		{200, `{"data":[{"index":0,"embedding":[1e39]},{"index":1,"embedding":[1]}]}`},
		{200, `{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}`},
		{200, `{"data":[{"index":-1,"embedding":[1]},{"index":7,"embedding":[1,2,3]}]}`},
		{200, `{"data":null}`},
		{400, `{"error":{"message":"bad key ` + key + `"}}`},
		{503, strings.Repeat("x", 1000) + key},
		{200, `[`},
	} {
		f.Add(s.status, s.body)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
		}))
		defer srv.Close()
		c, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: key, Model: "m", MaxRetries: 1,
			sleep: func(context.Context, time.Duration) error { return nil }})
		if err != nil {
			t.Fatal(err)
		}
		vecs, err := c.Embed(context.Background(), []string{"a", "b"})
		if err != nil {
			if strings.Contains(err.Error(), key) {
				t.Fatalf("the error holds the key: %v", err)
			}
			return
		}
		if len(vecs) != 2 || len(vecs[0]) == 0 || len(vecs[0]) != len(vecs[1]) || c.Dimension() != len(vecs[0]) {
			t.Fatalf("%d %q: vectors %v, dimension %d", status, body, vecs, c.Dimension())
		}
		for _, v := range vecs {
			var s float64
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("%q: a component %v", body, x)
				}
				s += float64(x) * float64(x)
			}
			if s != 0 && math.Abs(s-1) > 1e-3 {
				t.Fatalf("%q: |v|² = %v, %s", body, s, fmt.Sprint(v))
			}
		}
	})
}
