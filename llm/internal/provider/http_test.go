package provider

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		header http.Header
		want   time.Duration
	}{
		{name: "none", header: http.Header{}, want: -1},
		{name: "seconds", header: http.Header{"Retry-After": {"2"}}, want: 2 * time.Second},
		{name: "fractional seconds", header: http.Header{"Retry-After": {"0.5"}}, want: 500 * time.Millisecond},
		{name: "milliseconds win", header: http.Header{"Retry-After": {"30"}, "Retry-After-Ms": {"10"}}, want: 10 * time.Millisecond},
		{name: "over a minute is not honoured", header: http.Header{"Retry-After": {"3600"}}, want: -1},
		{name: "negative", header: http.Header{"Retry-After": {"-1"}}, want: -1},
		{name: "garbage", header: http.Header{"Retry-After": {"soon"}}, want: -1},
		{name: "a date in the past", header: http.Header{"Retry-After": {"Wed, 21 Oct 2015 07:28:00 GMT"}}, want: -1},
	}
	for _, tt := range tests {
		if got := retryAfter(tt.header); got != tt.want {
			t.Errorf("%s: retryAfter = %v, want %v", tt.name, got, tt.want)
		}
	}
	date := http.Header{"Retry-After": {time.Now().Add(5 * time.Second).UTC().Format(http.TimeFormat)}}
	if got := retryAfter(date); got <= 3*time.Second || got > 5*time.Second {
		t.Errorf("a date 5 s ahead: retryAfter = %v", got)
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	for n, want := range []time.Duration{BaseDelay, 2 * BaseDelay, 4 * BaseDelay, 8 * BaseDelay, MaxDelay, MaxDelay, MaxDelay} {
		for range 20 {
			if got := backoff(n); got > want || got < want*3/4 {
				t.Fatalf("backoff(%d) = %v, want within [%v, %v]", n, got, want*3/4, want)
			}
		}
	}
	if got := backoff(1000); got > MaxDelay {
		t.Errorf("backoff(1000) = %v", got)
	}
}

// TestPostShouldRetry checks that a server's x-should-retry overrides
// the status: a 500 it marks final is not retried, a 400 it marks
// retryable is.
func TestPostShouldRetry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status      int
		shouldRetry string
		wantReqs    int32
	}{
		{status: 500, shouldRetry: "false", wantReqs: 1},
		{status: 400, shouldRetry: "true", wantReqs: 3},
		{status: 409, wantReqs: 3},
		{status: 404, wantReqs: 1},
	}
	for _, tt := range tests {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			n.Add(1)
			if tt.shouldRetry != "" {
				w.Header().Set("X-Should-Retry", tt.shouldRetry)
			}
			w.Header().Set("Retry-After-Ms", "1")
			http.Error(w, "no", tt.status)
		}))
		conn := Conn{Retries: 2, Timeout: time.Second}
		var tried Attempts
		_, err := conn.Post(context.Background(), nil, srv.URL, http.Header{}, []byte("{}"), &tried)
		srv.Close()
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != tt.status || !strings.Contains(string(se.Body), "no") {
			t.Errorf("%d %q: err = %v", tt.status, tt.shouldRetry, err)
		}
		if n.Load() != tt.wantReqs {
			t.Errorf("%d %q: %d requests, want %d (%s)", tt.status, tt.shouldRetry, n.Load(), tt.wantReqs, &tried)
		}
	}
}

// TestPostConnectionRefused: a server that is not there is tried again,
// and the error says so.
func TestPostConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	var tried Attempts
	_, err := Conn{Retries: 1, Timeout: time.Second}.Post(context.Background(), nil, url, http.Header{}, nil, &tried)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("err = %v", err)
	}
	if got := tried.String(); got != "2 attempts; the last got no answer from the server" {
		t.Errorf("attempts = %q", got)
	}
}

// TestPostCancelWhileWaiting: a caller that gives up while a retry waits
// gets its own error at once, not after the wait.
func TestPostCancelWhileWaiting(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Retry-After", "50")
		http.Error(w, "slow down", http.StatusTooManyRequests)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Conn{Retries: 3}.Post(ctx, nil, srv.URL, http.Header{}, nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "429") {
		t.Fatalf("err = %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("waited %v for a retry the caller no longer wanted", time.Since(start))
	}
}

// TestStatusErrorHidesCredentials: an error answer that echoes the
// request's credentials shows without them, cut to maxErrorText, however
// it reaches a message: from Post, or through ContextErr once the
// caller's context has ended (which no caller redacts).
func TestStatusErrorHidesCredentials(t *testing.T) {
	t.Parallel()
	const key = "sk-proj-0123456789abcdef"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "bad request from "+r.Header.Get("Authorization")+" and "+r.Header.Get("X-Api-Key")+strings.Repeat(" padding", 100), http.StatusBadRequest)
	}))
	defer srv.Close()
	h := http.Header{"Authorization": {"Bearer " + key}, "X-Api-Key": {key + "-2"}, "Content-Type": {"application/json"}}
	var tried Attempts
	_, err := Conn{}.Post(context.Background(), nil, srv.URL, h, nil, &tried)
	var se *StatusError
	if !errors.As(err, &se) || !strings.Contains(string(se.Body), key) {
		t.Fatalf("err = %v, want a StatusError holding the raw answer", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	final, done := ContextErr(ctx, err, "chat", time.Second, &tried)
	for _, e := range []error{err, final} {
		msg := e.Error()
		if strings.Contains(msg, "sk-proj") || !strings.Contains(msg, "bad request from [redacted] and [redacted]") || len(msg) > maxErrorText+100 {
			t.Errorf("message %q: want the answer without its credentials, cut", msg)
		}
	}
	if !done || !errors.Is(final, context.Canceled) {
		t.Errorf("ContextErr = %v, %v", final, done)
	}
}
