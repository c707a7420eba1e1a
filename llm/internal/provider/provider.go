// Package provider holds what the LLM provider clients share: resolving a
// client's connection settings, sending a request with retries and a
// per-attempt timeout, reading a server-sent event stream, keeping a
// caller's context error visible, and scrubbing the API key from what
// servers echo.
package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/llm"
)

// Defaults for every provider.
const (
	DefaultMaxRetries = 3
	DefaultTimeout    = 120 * time.Second
)

// Conn is a client's resolved connection settings.
type Conn struct {
	// BaseURL is the validated base URL without a trailing slash.
	BaseURL string
	URL     *url.URL
	Retries int
	// Timeout bounds one attempt; 0 means none.
	Timeout time.Duration
}

// Resolve validates base (defaultBase when empty; form describes the
// expected shape in the error) and applies the retry and timeout defaults:
// 0 takes the default, a negative value turns it off.
func Resolve(name, base, defaultBase, form string, retries int, timeout time.Duration) (Conn, error) {
	base = strings.TrimSpace(base)
	if base == "" {
		base = defaultBase
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Conn{}, fmt.Errorf("%s: base URL %q: want %s", name, fetch.RedactRaw(base), form)
	}
	if strings.ContainsAny(base, "?#") {
		return Conn{}, fmt.Errorf("%s: base URL %q: must have no query or fragment (the API's paths are appended to it); want %s", name, fetch.RedactRaw(base), form)
	}
	return Conn{BaseURL: strings.TrimRight(base, "/"), URL: u, Retries: orDefault(retries, DefaultMaxRetries), Timeout: orDefault(timeout, DefaultTimeout)}, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Attempts records how the server answered each attempt of one call, so a
// call that ran out of time can say why: rate limited, failing, or silent.
// A nil *Attempts records nothing.
type Attempts struct {
	mu         sync.Mutex
	n          int
	status     int
	retryAfter string
}

// note records one attempt's answer, nil when none came.
func (a *Attempts) note(resp *http.Response) {
	if a == nil {
		return
	}
	a.mu.Lock()
	a.n++
	a.status, a.retryAfter = 0, ""
	if resp != nil {
		a.status, a.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	}
	a.mu.Unlock()
}

// String describes the attempts: "2 attempts; the last was answered HTTP
// 429 Too Many Requests (Retry-After 30)".
func (a *Attempts) String() string {
	if a == nil {
		return ""
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	n := fmt.Sprintf("%d attempts", a.n)
	if a.n == 1 {
		n = "1 attempt"
	}
	switch {
	case a.n == 0:
		return "no request was sent"
	case a.status == 0:
		return n + "; the last got no answer from the server"
	case a.status < 300:
		return n + fmt.Sprintf("; the last was answered HTTP %d but the reply never completed", a.status)
	case a.retryAfter != "":
		return n + fmt.Sprintf("; the last was answered HTTP %d %s (Retry-After %s)", a.status, http.StatusText(a.status), a.retryAfter)
	}
	return n + fmt.Sprintf("; the last was answered HTTP %d %s", a.status, http.StatusText(a.status))
}

// ContextErr keeps ctx's error visible to errors.Is when a transport error
// wrapped it away, says what the server did before ctx ended (from tried, which may
// be nil), and names a per-attempt timeout (the caller's ctx still alive)
// as such. done reports that the returned error is final.
func ContextErr(ctx context.Context, err error, op string, timeout time.Duration, tried *Attempts) (_ error, done bool) {
	if ctxErr := ctx.Err(); ctxErr != nil {
		if !errors.Is(err, ctxErr) {
			// Final, so never redacted by the caller: a StatusError
			// shows without the request's credentials.
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		if tried != nil {
			return fmt.Errorf("%s: %w (%s)", op, err, tried), true
		}
	}
	if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: no complete reply within %s: %w", op, timeout, err), true
	}
	return err, false
}

// Redact removes the API key from text a server sent back, in case it
// echoes the request's credentials.
func Redact(s, apiKey string) string {
	if apiKey == "" {
		return s
	}
	return strings.ReplaceAll(s, apiKey, "[redacted]")
}

// MaxTokens is the request's output limit, llm.DefaultMaxTokens when unset.
func MaxTokens(req llm.Request) int64 {
	if req.MaxTokens <= 0 {
		return llm.DefaultMaxTokens
	}
	return int64(req.MaxTokens)
}

// Messages converts the conversation with the wire format's constructors, refusing
// roles it does not know.
func Messages[T any](name string, ms []llm.Message, user, assistant func(string) T) ([]T, error) {
	out := make([]T, 0, len(ms))
	for i, m := range ms {
		switch m.Role {
		case llm.RoleUser:
			out = append(out, user(m.Content))
		case llm.RoleAssistant:
			out = append(out, assistant(m.Content))
		default:
			return nil, fmt.Errorf("%s: message %d: unknown role %q", name, i, m.Role)
		}
	}
	return out, nil
}

// SchemaName is the name structured output is requested under.
func SchemaName(s *llm.Schema) string {
	if s.Name == "" {
		return "response"
	}
	return s.Name
}
