// Package openai is an llm.Provider for the OpenAI Chat Completions API and
// every server that speaks it: vLLM, Ollama, llama.cpp server, LM Studio and
// hosted OpenAI-compatible gateways. It speaks the one endpoint Quarry
// calls, POST /chat/completions, plain or streamed as server-sent events,
// with the retries, Retry-After and per-attempt timeout of
// llm/internal/provider; its tests hold it to the wire format.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/internal/provider"
)

// Defaults applied by New.
const (
	DefaultBaseURL    = "https://api.openai.com/v1"
	DefaultMaxRetries = provider.DefaultMaxRetries
	DefaultTimeout    = provider.DefaultTimeout
)

// Config configures a Client. Only Model is required.
type Config struct {
	// BaseURL is the API root including /v1, e.g. http://localhost:11434/v1
	// for Ollama or http://localhost:8000/v1 for vLLM (default DefaultBaseURL).
	BaseURL string
	// APIKey is sent as "Authorization: Bearer …"; empty sends no
	// Authorization header, which local servers accept.
	APIKey string
	// Model is the model id the server knows, e.g. "gpt-4o-mini" or "qwen3:8b".
	Model string
	// MaxRetries is how often a 408, 409, 429, 5xx or connection failure is
	// retried, honouring Retry-After (0 = DefaultMaxRetries; negative = never).
	MaxRetries int
	// Timeout bounds one attempt, from sending the request to reading the
	// last byte of the reply, streamed or not (0 = DefaultTimeout; negative
	// = none, the caller's ctx decides). A timed-out attempt is not retried.
	Timeout time.Duration
	// HTTPClient, when set, sends the requests (proxies, custom TLS).
	HTTPClient *http.Client
}

// Client is an llm.Provider for one model on one OpenAI-compatible server.
// It is safe for concurrent use.
type Client struct {
	model  string
	apiKey string
	conn   provider.Conn
	http   *http.Client
	// maxCompletionTokens selects the "max_completion_tokens" field over
	// "max_tokens"; see tokenLimitField.
	maxCompletionTokens bool
}

var _ llm.Provider = (*Client)(nil)

// New validates cfg, applies its defaults and returns a Client. It does not
// contact the server, and reads nothing from the environment: a local
// server must never receive a key meant for api.openai.com.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: model is required")
	}
	conn, err := provider.Resolve("openai", cfg.BaseURL, DefaultBaseURL, "http(s)://host[:port]/path", cfg.MaxRetries, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return &Client{
		model:               cfg.Model,
		apiKey:              cfg.APIKey,
		conn:                conn,
		http:                cfg.HTTPClient,
		maxCompletionTokens: tokenLimitField(conn.URL) == "max_completion_tokens",
	}, nil
}

// tokenLimitField names the request field that caps the reply. OpenAI has
// deprecated "max_tokens" and its reasoning models (o-series, gpt-5) reject
// it, but OpenAI-compatible servers (Ollama, LM Studio, older vLLM and
// llama.cpp builds) only know "max_tokens" and silently ignore the newer
// name. So api.openai.com gets "max_completion_tokens" and every other
// server "max_tokens".
func tokenLimitField(base *url.URL) string {
	if strings.EqualFold(base.Hostname(), "api.openai.com") {
		return "max_completion_tokens"
	}
	return "max_tokens"
}

// Name implements llm.Provider.
func (c *Client) Name() string { return "openai:" + c.model }

// Chat implements llm.Provider. When onDelta is non-nil the reply is
// streamed and onDelta receives each piece of content in order. A reply
// with no text returns the Response (its usage was still spent) together
// with an error wrapping llm.ErrEmptyReply.
func (c *Client) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	body, err := c.body(req, onDelta != nil)
	if err != nil {
		return nil, err
	}
	header := http.Header{"Accept": {"application/json"}}
	if onDelta != nil {
		header.Set("Accept", "text/event-stream")
	}
	if c.apiKey != "" {
		header.Set("Authorization", "Bearer "+c.apiKey)
	}
	var tried provider.Attempts
	httpResp, err := c.conn.Post(ctx, c.http, c.conn.BaseURL+"/chat/completions", header, body, &tried)
	if err != nil {
		return nil, c.wrapErr(ctx, err, &tried)
	}
	defer httpResp.Body.Close()
	var resp *llm.Response
	if onDelta == nil {
		resp, err = readCompletion(httpResp)
	} else {
		resp, err = readStream(httpResp, onDelta)
	}
	if err != nil {
		return nil, c.wrapErr(ctx, err, &tried)
	}
	if resp.Text == "" {
		return resp, fmt.Errorf("openai: %w (finish_reason %q)", llm.ErrEmptyReply, resp.StopReason)
	}
	return resp, nil
}

// message is one turn as the API takes it.
type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// request is the body of POST /chat/completions, with only the fields
// Quarry sends.
type request struct {
	Model               string          `json:"model"`
	Messages            []message       `json:"messages"`
	MaxTokens           int64           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int64           `json:"max_completion_tokens,omitempty"`
	Temperature         *float64        `json:"temperature,omitempty"`
	TopP                *float64        `json:"top_p,omitempty"`
	ResponseFormat      *responseFormat `json:"response_format,omitempty"`
	Stream              bool            `json:"stream,omitempty"`
	StreamOptions       *streamOptions  `json:"stream_options,omitempty"`
}

type responseFormat struct {
	Type       string     `json:"type"`
	JSONSchema jsonSchema `json:"json_schema"`
}

type jsonSchema struct {
	Name   string         `json:"name"`
	Schema map[string]any `json:"schema"`
	Strict bool           `json:"strict"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

func (c *Client) body(req llm.Request, stream bool) ([]byte, error) {
	r := request{Model: c.model, Temperature: req.Temperature, TopP: req.TopP}
	if req.System != "" {
		r.Messages = append(r.Messages, message{Role: "system", Content: req.System})
	}
	ms, err := provider.Messages("openai", req.Messages,
		func(t string) message { return message{Role: llm.RoleUser, Content: t} },
		func(t string) message { return message{Role: llm.RoleAssistant, Content: t} })
	if err != nil {
		return nil, err
	}
	r.Messages = append(r.Messages, ms...)
	if c.maxCompletionTokens {
		r.MaxCompletionTokens = provider.MaxTokens(req)
	} else {
		r.MaxTokens = provider.MaxTokens(req)
	}
	if req.Schema != nil {
		// strict stays false: strict mode demands every property be
		// required and additionalProperties false, which llm.SchemaFor does
		// not promise, and local servers treat the schema as a grammar anyway.
		r.ResponseFormat = &responseFormat{Type: "json_schema", JSONSchema: jsonSchema{
			Name:   provider.SchemaName(req.Schema),
			Schema: req.Schema.JSON,
		}}
	}
	if stream {
		r.Stream = true
		r.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("openai: request: %w", err)
	}
	return b, nil
}

// usage is the token count of a reply.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

func (u usage) llm() llm.Usage {
	return llm.Usage{Calls: 1, InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
}

// completion is a reply, with only the fields Quarry reads.
type completion struct {
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage usage `json:"usage"`
}

func readCompletion(r *http.Response) (*llm.Response, error) {
	var cc completion
	if err := json.NewDecoder(r.Body).Decode(&cc); err != nil {
		return nil, fmt.Errorf("reading the reply: %w", err)
	}
	resp := &llm.Response{Model: cc.Model, Usage: cc.Usage.llm()}
	for _, ch := range cc.Choices {
		if ch.Index != 0 {
			continue
		}
		if ch.Message.Content != nil {
			resp.Text = *ch.Message.Content
		}
		resp.StopReason = ch.FinishReason
	}
	return resp, nil
}

// chunk is one event of a streamed reply. An error event carries Error
// instead (OpenAI and vLLM send one when generation fails after the 200).
type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// streamError is an error event of a stream that began with 200.
type streamError struct{ message string }

func (e *streamError) Error() string { return "stream: " + e.message }

// readStream reads a streamed reply. Chunks' ids are not compared: OpenAI
// keeps one per stream, compatible servers (llama.cpp, some vLLM and
// Ollama builds) vary it per chunk, and the chunks are one reply either
// way. OpenAI reports usage once, in the last chunk; some compatible
// servers repeat a running total on every chunk, so the last report wins.
func readStream(r *http.Response, onDelta func(string)) (*llm.Response, error) {
	resp := &llm.Response{Usage: llm.Usage{Calls: 1}}
	var text strings.Builder
	errDone := errors.New("done")
	err := provider.Events(r.Body, func(ev provider.Event) error {
		if ev.Data == "[DONE]" {
			return errDone
		}
		var ch chunk
		if err := json.Unmarshal([]byte(ev.Data), &ch); err != nil {
			return fmt.Errorf("stream: event %.80q: %w", ev.Data, err)
		}
		if len(ch.Error) > 0 && string(ch.Error) != "null" {
			return &streamError{message: bodyMessage(0, append(append([]byte(`{"error":`), ch.Error...), '}'))}
		}
		if resp.Model == "" {
			resp.Model = ch.Model
		}
		for _, c := range ch.Choices {
			if c.Index != 0 {
				continue
			}
			if c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				onDelta(c.Delta.Content)
			}
			if c.FinishReason != nil && *c.FinishReason != "" {
				resp.StopReason = *c.FinishReason
			}
		}
		if ch.Usage != nil {
			resp.Usage = ch.Usage.llm()
		}
		return nil
	})
	if err != nil && err != errDone {
		return nil, err
	}
	resp.Text = text.String()
	return resp, nil
}

// wrapErr turns an error answer into an *llm.APIError, and otherwise keeps
// ctx's error visible to errors.Is.
func (c *Client) wrapErr(ctx context.Context, err error, tried *provider.Attempts) error {
	err, done := provider.ContextErr(ctx, err, "openai: chat", c.conn.Timeout, tried)
	if done {
		return err
	}
	var se *provider.StatusError
	var streamErr *streamError
	switch {
	case errors.As(err, &se):
		return &llm.APIError{Provider: "openai", StatusCode: se.StatusCode, Message: c.redact(bodyMessage(se.StatusCode, se.Body))}
	case errors.As(err, &streamErr):
		// An error event after a 200: the status is long gone.
		return fmt.Errorf("openai: %s", c.redact(streamErr.Error()))
	}
	return fmt.Errorf("openai: chat: %w", err)
}

// bodyMessage is the most readable part of an error body: error.message
// (OpenAI, vLLM), error as a string (Ollama), message or detail, or else
// the body itself, or the status text when the body is empty.
func bodyMessage(status int, b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return http.StatusText(status)
	}
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(b, &body) != nil {
		return string(b)
	}
	var nested struct {
		Message string `json:"message"`
	}
	var flat string
	switch {
	case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
		return nested.Message
	case json.Unmarshal(body.Error, &flat) == nil && flat != "":
		return flat
	case body.Message != "":
		return body.Message
	case body.Detail != nil:
		return fmt.Sprint(body.Detail)
	}
	return string(b)
}

func (c *Client) redact(s string) string { return provider.Redact(s, c.apiKey) }
