package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/textclean"
)

// Backoff bounds when a server gives no usable Retry-After: the n-th retry
// waits BaseDelay·2ⁿ, at most MaxDelay, less up to a quarter at random so
// that clients rate-limited together do not return together. A server's
// Retry-After is honoured up to MaxRetryAfter.
const (
	BaseDelay     = 500 * time.Millisecond
	MaxDelay      = 8 * time.Second
	MaxRetryAfter = 60 * time.Second
)

// maxErrorBody caps how much of an error answer is read.
const maxErrorBody = 64 << 10

// StatusError is an answer with an error status, after any retries. Body
// holds the first 64 KiB of what the server said.
type StatusError struct {
	StatusCode int
	Body       []byte
	// secrets are the request's credentials (credentials), which a
	// server may echo: Error never shows them.
	secrets []string
}

// Error is the status and the start of what the server said, the
// request's credentials replaced: it may reach a log or an event as it
// is, when the caller's context ended before the caller could redact it.
func (e *StatusError) Error() string {
	msg := string(bytes.TrimSpace(e.Body))
	for _, s := range e.secrets {
		msg = Redact(msg, s)
	}
	// The credentials out first, then the cut: a cut through one would
	// leave its first part for no replacement to find.
	return fmt.Sprintf("HTTP %d: %s", e.StatusCode, textclean.Clip(msg, maxErrorText))
}

// maxErrorText is the most of an error answer's text Error shows.
const maxErrorText = 300

// credentials are the values of a request's headers that carry a secret
// (a name holding auth, key, token or secret), each also without its
// scheme ("Bearer sk-…" and "sk-…").
func credentials(h http.Header) []string {
	var out []string
	for name, vs := range h {
		n := strings.ToLower(name)
		if !strings.Contains(n, "auth") && !strings.Contains(n, "key") && !strings.Contains(n, "token") && !strings.Contains(n, "secret") {
			continue
		}
		for _, v := range vs {
			if _, rest, ok := strings.Cut(v, " "); ok && rest != "" {
				out = append(out, rest)
			}
			if v != "" {
				out = append(out, v)
			}
		}
	}
	// The longest first: a value that holds another is replaced whole.
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// Post sends body as JSON to url and returns the first answer with a 2xx
// status. A 408, 409, 429 or 5xx answer, or a connection that fails before
// any answer, is tried again up to c.Retries times, after the wait the
// server asks for (retry-after-ms or Retry-After) or else a backoff; a
// server's x-should-retry header overrides the status. An attempt that
// runs out of c.Timeout is not tried again: a silent server stays silent.
//
// c.Timeout covers the whole attempt, reading the answer included: the
// returned body fails with context.DeadlineExceeded once it has passed, and
// closing the body releases the attempt. Every attempt is noted in tried.
// An error answer that is not retried becomes a *StatusError.
func (c Conn) Post(ctx context.Context, hc *http.Client, url string, header http.Header, body []byte, tried *Attempts) (*http.Response, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	for attempt := 0; ; attempt++ {
		resp, err := c.try(ctx, hc, url, header, body)
		tried.note(resp)
		if err == nil && resp.StatusCode < 300 {
			return resp, nil
		}
		wait := time.Duration(-1)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
			_ = resp.Body.Close()
			err = &StatusError{StatusCode: resp.StatusCode, Body: b, secrets: credentials(header)}
			wait = retryAfter(resp.Header)
		}
		if attempt >= c.Retries || !retryable(ctx, resp, err) {
			return nil, err
		}
		if wait < 0 {
			wait = backoff(attempt)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			// The answer shows without the request's credentials (a
			// StatusError's Error): the caller redacts only an answer it
			// is given, and this error is final.
			return nil, fmt.Errorf("%w (waiting to retry after: %v)", ctx.Err(), err)
		case <-t.C:
		}
	}
}

// try sends one attempt under its own timeout, which closing the answer's
// body ends.
func (c Conn) try(ctx context.Context, hc *http.Client, url string, header http.Header, body []byte) (*http.Response, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if c.Timeout > 0 {
		actx, cancel = context.WithTimeout(ctx, c.Timeout)
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header = header.Clone()
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		err = attemptErr(actx, fetch.RedactError(err)) // it names the URL
		cancel()
		return nil, err
	}
	resp.Body = &attemptBody{ReadCloser: resp.Body, ctx: actx, cancel: cancel}
	return resp, nil
}

// retryable reports whether an attempt that ended in err (resp being its
// answer, if any) is worth another.
func retryable(ctx context.Context, resp *http.Response, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return false
	}
	if resp == nil {
		return true // no answer: a refused or dropped connection
	}
	switch strings.ToLower(resp.Header.Get("X-Should-Retry")) {
	case "true":
		return true
	case "false":
		return false
	}
	s := resp.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// retryAfter is the wait a server asked for, or -1: retry-after-ms in
// milliseconds, else Retry-After in seconds or as an HTTP date. A wait
// longer than MaxRetryAfter is not honoured (-1).
func retryAfter(h http.Header) time.Duration {
	d := time.Duration(-1)
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil {
		d = time.Duration(ms * float64(time.Millisecond))
	} else if v := h.Get("Retry-After"); v != "" {
		if s, err := strconv.ParseFloat(v, 64); err == nil {
			d = time.Duration(s * float64(time.Second))
		} else if t, err := http.ParseTime(v); err == nil {
			d = time.Until(t)
		}
	}
	if d < 0 || d > MaxRetryAfter {
		return -1
	}
	return d
}

// backoff is the wait before retry n+1 when the server named none.
func backoff(n int) time.Duration {
	d := MaxDelay
	if n < 5 {
		d = min(BaseDelay<<n, MaxDelay)
	}
	return d - time.Duration(rand.Float64()*0.25*float64(d))
}

// attemptBody is an answer's body read under its attempt's timeout.
type attemptBody struct {
	io.ReadCloser
	ctx    context.Context // the attempt's
	cancel context.CancelFunc
}

func (b *attemptBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		err = attemptErr(b.ctx, err)
	}
	return n, err
}

func (b *attemptBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}

// attemptErr makes a send or read error that the attempt's ctx caused say
// so to errors.Is: context.Canceled when the caller gave up,
// context.DeadlineExceeded when the attempt ran out of time.
func attemptErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if !errors.Is(err, cerr) {
			return fmt.Errorf("%w (%v)", cerr, err)
		}
		return err
	}
	var te interface{ Timeout() bool }
	if !errors.Is(err, context.DeadlineExceeded) && errors.As(err, &te) && te.Timeout() {
		return fmt.Errorf("%w (%v)", context.DeadlineExceeded, err)
	}
	return err
}
