// Package providertest holds the recording HTTP server and assertions the
// LLM provider adapters' tests share; each test supplies the replies in its
// provider's own wire format.
package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/llm"
)

// Seen is one request as the server received it.
type Seen struct {
	Method, Path string
	Header       http.Header
	Body         map[string]any
}

// Reply answers one request.
type Reply = func(w http.ResponseWriter, r *http.Request)

// Server records every request and answers the n-th with replies[n] (the
// last one repeats).
type Server struct {
	*httptest.Server
	replies []Reply

	mu   sync.Mutex
	reqs []Seen
}

// NewServer starts a recording server, closed when the test ends. A request
// body that is not JSON fails the test.
func NewServer(t *testing.T, replies ...Reply) *Server {
	t.Helper()
	f := &Server{replies: replies}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			t.Errorf("request body is not JSON: %v: %s", err, raw)
		}
		f.mu.Lock()
		n := len(f.reqs)
		f.reqs = append(f.reqs, Seen{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		f.mu.Unlock()
		f.replies[min(n, len(f.replies)-1)](w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// Requests returns the requests received so far.
func (f *Server) Requests() []Seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Seen(nil), f.reqs...)
}

// JSONReply answers with status and a JSON body, after setting the given
// header name/value pairs.
func JSONReply(status int, body string, headers ...string) Reply {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// WantField checks one field of a request body.
func WantField(t *testing.T, body map[string]any, key string, want any) {
	t.Helper()
	if got, ok := body[key]; !ok || !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", key, got, want)
	}
}

// JSONRoundTrip returns v as it looks after encoding/json decodes it.
func JSONRoundTrip(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// WantAbsent checks that a request body leaves out the given fields.
func WantAbsent(t *testing.T, body map[string]any, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if v, ok := body[k]; ok {
			t.Errorf("%s sent: %v", k, v)
		}
	}
}

// CheckRetried checks a Chat call made against srv after retries: the
// number of requests the server saw, and either the reply "done" from one
// call (wantStatus 0) or an *llm.APIError of provider with wantStatus.
func CheckRetried(t *testing.T, srv *Server, provider string, resp *llm.Response, err error, wantReqs, wantStatus int) {
	t.Helper()
	if got := len(srv.Requests()); got != wantReqs {
		t.Errorf("server saw %d requests, want %d", got, wantReqs)
	}
	if wantStatus == 0 {
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
		if resp.Text != "done" || resp.Usage.Calls != 1 {
			t.Errorf("resp = %+v", resp)
		}
		return
	}
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != wantStatus || apiErr.Provider != provider {
		t.Fatalf("err = %v, want *llm.APIError with status %d", err, wantStatus)
	}
}

// CheckAPIError checks that a Chat call against srv made one request and
// failed with an *llm.APIError of wantStatus whose message contains
// wantMsg, and that the error nowhere shows secret.
func CheckAPIError(t *testing.T, srv *Server, err error, wantStatus int, wantMsg, secret string) {
	t.Helper()
	var apiErr *llm.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v (%T), want *llm.APIError", err, err)
	}
	if apiErr.StatusCode != wantStatus || !strings.Contains(apiErr.Message, wantMsg) {
		t.Errorf("err = %+v, want status %d and message containing %q", apiErr, wantStatus, wantMsg)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%+v %#v", err, apiErr), secret) {
		t.Errorf("error leaks the API key: %v", err)
	}
	if got := len(srv.Requests()); got != 1 {
		t.Errorf("server saw %d requests, want 1", got)
	}
}

// OnlyRequest returns the single request srv saw, checking that it was a
// POST to path.
func OnlyRequest(t *testing.T, srv *Server, path string) Seen {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server saw %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != path {
		t.Errorf("request = %s %s, want POST %s", r.Method, r.Path, path)
	}
	return r
}

// Want is the reply a Chat call should return.
type Want struct {
	Text, Stop, Model string
	Deltas            []string
	Usage             llm.Usage
}

// CheckResponse compares a reply, and the deltas streamed for it, with want.
func CheckResponse(t *testing.T, resp *llm.Response, deltas []string, want Want) {
	t.Helper()
	if resp.Text != want.Text {
		t.Errorf("Text = %q, want %q", resp.Text, want.Text)
	}
	if !reflect.DeepEqual(deltas, want.Deltas) {
		t.Errorf("deltas = %q, want %q", deltas, want.Deltas)
	}
	if resp.StopReason != want.Stop {
		t.Errorf("StopReason = %q, want %q", resp.StopReason, want.Stop)
	}
	if resp.Usage != want.Usage {
		t.Errorf("Usage = %+v, want %+v", resp.Usage, want.Usage)
	}
	if resp.Model != want.Model {
		t.Errorf("Model = %q", resp.Model)
	}
}

// hangingServer accepts requests and never answers until the client gives
// up (or the test ends); firstEvent, when set, is streamed first as an
// event-stream. Each request is announced on the returned channel.
func hangingServer(t *testing.T, firstEvent string) (*httptest.Server, <-chan struct{}) {
	t.Helper()
	arrived := make(chan struct{}, 8)
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if firstEvent != "" {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, firstEvent)
			w.(http.Flusher).Flush()
		}
		arrived <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-done:
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, arrived
}

// NewHangingClient builds a provider client for a server URL with a
// per-attempt timeout and no retries.
type NewHangingClient func(t *testing.T, url string, timeout time.Duration) llm.Provider

// TestTimeoutAndCancel checks that a Chat call against a server that never
// answers ends with the attempt's timeout, or with the caller's ctx when
// it is cancelled, before any reply, streamed or not, and mid-stream after
// firstEvent (one event in the provider's stream format).
func TestTimeoutAndCancel(t *testing.T, firstEvent string, newClient NewHangingClient) {
	tests := []struct {
		name         string
		stream       bool
		headersFirst bool
		cancel       bool // cancel ctx once the server has the request, instead of a Timeout
		want         error
	}{
		{name: "timeout", want: context.DeadlineExceeded},
		{name: "timeout streamed", stream: true, want: context.DeadlineExceeded},
		{name: "timeout mid-stream", stream: true, headersFirst: true, want: context.DeadlineExceeded},
		{name: "cancel", cancel: true, want: context.Canceled},
		{name: "cancel mid-stream", stream: true, headersFirst: true, cancel: true, want: context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			first := ""
			if tt.headersFirst {
				first = firstEvent
			}
			srv, arrived := hangingServer(t, first)
			timeout := 200 * time.Millisecond
			if tt.cancel {
				timeout = -1
			}
			c := newClient(t, srv.URL, timeout)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tt.cancel {
				go func() {
					<-arrived
					cancel()
				}()
			}
			var onDelta func(string)
			if tt.stream {
				onDelta = func(string) {}
			}
			_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, onDelta)
			t.Logf("err: %v", err)
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

// NewReplyClient is a provider's client of a server at url, with key and
// no retries.
type NewReplyClient func(url, key string) (llm.Provider, error)

// FuzzReply fuzzes what a server answers a non-streamed chat with, at any
// status from 200 to 599 (seeds: status and body pairs): the client
// returns a reply or an error, never a panic, and no error holds key,
// even one the body echoes.
func FuzzReply(f *testing.F, key string, newClient NewReplyClient, seeds map[string]int) {
	for body, status := range seeds {
		f.Add(status, body)
	}
	f.Fuzz(func(t *testing.T, status int, body string) {
		status = 200 + (status%400+400)%400
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		defer srv.Close()
		c, err := newClient(srv.URL, key)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi"}}}, nil)
		if err != nil && strings.Contains(err.Error(), key) {
			t.Fatalf("status %d: the error holds the key: %v", status, err)
		}
	})
}

// EchoingOverload answers 503 with a body that echoes key, asking to be
// tried again in 30 seconds: a server that repeats the request's
// credentials back.
func EchoingOverload(key string) Reply {
	return JSONReply(503, `{"error":{"message":"overloaded; you sent Authorization: Bearer `+key+`"}}`, "Retry-After", "30")
}

// CheckEndsWaitingToRetry calls chat with a context that ends while the
// client waits to retry an EchoingOverload answer: the error is the
// context's, with the server's message but never the key.
func CheckEndsWaitingToRetry(t *testing.T, chat func(context.Context) error, key string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := chat(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's deadline", err)
	}
	if strings.Contains(err.Error(), key) || !strings.Contains(err.Error(), `HTTP 503: {"error":{"message":"overloaded; you sent Authorization: `) || !strings.Contains(err.Error(), "[redacted]") {
		t.Errorf("err = %v: want the server's message, never the key", err)
	}
}
