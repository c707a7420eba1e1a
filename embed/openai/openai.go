// Package openai is an embed.Embedder for any server that speaks the
// OpenAI /v1/embeddings API: OpenAI itself, vLLM, Ollama, llama.cpp, TEI.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/textclean"
)

// Config configures the client.
type Config struct {
	// BaseURL up to and including /v1, e.g. https://api.openai.com/v1 or
	// http://localhost:11434/v1.
	BaseURL string
	APIKey  string
	Model   string
	// Dim, when set, is sent as "dimensions" and checked on every vector.
	Dim int
	// BatchSize caps inputs per request (default 64).
	BatchSize int
	// MaxRetries on 429 and 5xx (default 4).
	MaxRetries int
	HTTPClient *http.Client
	// sleep is replaced in tests.
	sleep func(context.Context, time.Duration) error
}

// Client is an OpenAI-compatible embedder.
type Client struct {
	cfg Config
	// dim is the configured dimension, else the first one observed: set
	// once, read by searches that embed their queries concurrently.
	dim atomic.Int64
}

var _ embed.Embedder = (*Client)(nil)

// New validates cfg and returns a client.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.openai.com/v1"
	}
	if !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://") {
		return nil, errors.New("embedder base_url: must be an http(s) URL")
	}
	if strings.ContainsAny(cfg.BaseURL, "?#") {
		return nil, errors.New("embedder base_url: must have no query or fragment (/embeddings is appended to it)")
	}
	if cfg.Model == "" {
		return nil, errors.New("embedder model: must not be empty")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.MaxRetries <= 0 {
		cfg.MaxRetries = 4
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.sleep == nil {
		cfg.sleep = sleepCtx
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	c := &Client{cfg: cfg}
	c.dim.Store(int64(cfg.Dim))
	return c, nil
}

// Name is "openai:<model>".
func (c *Client) Name() string { return "openai:" + c.cfg.Model }

// Dimension is the configured or first observed dimension.
func (c *Client) Dimension() int { return int(c.dim.Load()) }

type request struct {
	Model          string   `json:"model"`
	Input          []string `json:"input"`
	EncodingFormat string   `json:"encoding_format"`
	Dimensions     int      `json:"dimensions,omitempty"`
}

type response struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Embed sends texts in batches and returns vectors in input order.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += c.cfg.BatchSize {
		batch := texts[start:min(len(texts), start+c.cfg.BatchSize)]
		vecs, err := c.embedBatch(ctx, batch)
		if err != nil {
			return nil, err
		}
		out = append(out, vecs...)
	}
	return out, nil
}

// StatusError is a non-2xx answer from the server.
type StatusError struct {
	Status  int
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("embeddings: server answered %d: %s", e.Status, e.Message)
}

func (c *Client) embedBatch(ctx context.Context, batch []string) ([][]float32, error) {
	body, err := json.Marshal(request{Model: c.cfg.Model, Input: batch, EncodingFormat: "float", Dimensions: c.cfg.Dim})
	if err != nil {
		return nil, fmt.Errorf("embeddings: %w", err)
	}
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, err := c.do(ctx, body, len(batch))
		if err == nil {
			return vecs, nil
		}
		var se *StatusError
		retryable := errors.As(err, &se) && (se.Status == http.StatusTooManyRequests || se.Status >= 500) ||
			!errors.As(err, &se) && ctx.Err() == nil && isNetErr(err)
		if !retryable || attempt >= c.cfg.MaxRetries {
			return nil, err
		}
		wait := retryAfter
		if wait <= 0 {
			wait = time.Duration(float64(500*time.Millisecond) * float64(int(1)<<attempt) * (0.5 + rand.Float64()))
		}
		if err := c.cfg.sleep(ctx, min(wait, 60*time.Second)); err != nil {
			return nil, fmt.Errorf("embeddings: %w", err)
		}
	}
}

type netErr struct{ err error }

func (e netErr) Error() string { return e.err.Error() }
func (e netErr) Unwrap() error { return e.err }

func isNetErr(err error) bool { var n netErr; return errors.As(err, &n) }

func (c *Client) do(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, 0, fmt.Errorf("embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return nil, 0, netErr{fmt.Errorf("embeddings: %w", fetch.RedactError(err))} // it names the URL
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, netErr{fmt.Errorf("embeddings: read: %w", err)}
	}
	if resp.StatusCode/100 != 2 {
		msg := strings.TrimSpace(string(raw))
		var r response
		if json.Unmarshal(raw, &r) == nil && r.Error != nil {
			msg = r.Error.Message
		}
		// The key out first, then the cut: a cut through the key would
		// leave its first part for no replacement to find.
		if c.cfg.APIKey != "" {
			msg = strings.ReplaceAll(msg, c.cfg.APIKey, "***")
		}
		msg = textclean.Clip(msg, maxMessage)
		return nil, retryAfter(resp.Header.Get("Retry-After")), &StatusError{Status: resp.StatusCode, Message: msg}
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, 0, fmt.Errorf("embeddings: decode response: %w", err)
	}
	if len(r.Data) != n {
		return nil, 0, fmt.Errorf("embeddings: asked for %d vectors, got %d", n, len(r.Data))
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, 0, fmt.Errorf("embeddings: bad or repeated index %d in response", d.Index)
		}
		if len(d.Embedding) == 0 {
			return nil, 0, fmt.Errorf("embeddings: vector %d is empty", d.Index)
		}
		c.dim.CompareAndSwap(0, int64(len(d.Embedding)))
		if want := c.dim.Load(); int64(len(d.Embedding)) != want {
			return nil, 0, fmt.Errorf("embeddings: vector %d has %d dimensions, want %d", d.Index, len(d.Embedding), want)
		}
		embed.Normalize(d.Embedding)
		out[d.Index] = d.Embedding
	}
	return out, 0, nil
}

// maxMessage is the most of a server's error message kept, in characters.
const maxMessage = 300

func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(h, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(h); err == nil {
		return time.Until(t)
	}
	return 0
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
