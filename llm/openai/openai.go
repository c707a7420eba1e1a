// Package openai is an llm.Provider for the OpenAI Chat Completions API and
// every server that speaks it: vLLM, Ollama, llama.cpp server, LM Studio and
// hosted OpenAI-compatible gateways. It only translates between llm's types
// and the wire format; retries, Retry-After and per-attempt timeouts are left
// to the official SDK (github.com/openai/openai-go/v3).
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

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
	model   string
	apiKey  string
	timeout time.Duration
	// maxCompletionTokens selects the "max_completion_tokens" field over
	// "max_tokens"; see tokenLimitField.
	maxCompletionTokens bool
	chat                sdk.ChatCompletionService
}

var _ llm.Provider = (*Client)(nil)

// New validates cfg, applies its defaults and returns a Client. It does not
// contact the server.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("openai: model is required")
	}
	conn, err := provider.Resolve("openai", cfg.BaseURL, DefaultBaseURL, "http(s)://host[:port]/path", cfg.MaxRetries, cfg.Timeout)
	if err != nil {
		return nil, err
	}

	// The service is built directly rather than through sdk.NewClient,
	// which would read OPENAI_API_KEY, OPENAI_BASE_URL, OPENAI_ORG_ID and
	// friends from the environment: only cmd/ reads the environment, and a
	// local server must never receive a key meant for api.openai.com.
	opts := []option.RequestOption{
		option.WithBaseURL(conn.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(conn.Retries),
		option.WithRequestTimeout(conn.Timeout),
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	return &Client{
		model:               cfg.Model,
		apiKey:              cfg.APIKey,
		timeout:             conn.Timeout,
		maxCompletionTokens: tokenLimitField(conn.URL) == "max_completion_tokens",
		chat:                sdk.NewChatCompletionService(opts...),
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
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	var resp *llm.Response
	if onDelta == nil {
		resp, err = c.complete(ctx, params)
	} else {
		resp, err = c.stream(ctx, params, onDelta)
	}
	if err != nil {
		return nil, err
	}
	if resp.Text == "" {
		return resp, fmt.Errorf("openai: %w (finish_reason %q)", llm.ErrEmptyReply, resp.StopReason)
	}
	return resp, nil
}

func (c *Client) params(req llm.Request) (sdk.ChatCompletionNewParams, error) {
	p := sdk.ChatCompletionNewParams{Model: shared.ChatModel(c.model)}
	if req.System != "" {
		p.Messages = append(p.Messages, sdk.SystemMessage(req.System))
	}
	ms, err := provider.Messages("openai", req.Messages,
		func(t string) sdk.ChatCompletionMessageParamUnion { return sdk.UserMessage(t) },
		func(t string) sdk.ChatCompletionMessageParamUnion { return sdk.AssistantMessage(t) })
	if err != nil {
		return p, err
	}
	p.Messages = append(p.Messages, ms...)
	maxTokens := provider.MaxTokens(req)
	if c.maxCompletionTokens {
		p.MaxCompletionTokens = sdk.Int(maxTokens)
	} else {
		p.MaxTokens = sdk.Int(maxTokens)
	}
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.TopP != nil {
		p.TopP = sdk.Float(*req.TopP)
	}
	if req.Schema != nil {
		name := provider.SchemaName(req.Schema)
		// strict stays false: strict mode demands every property be
		// required and additionalProperties false, which llm.SchemaFor does
		// not promise, and local servers treat the schema as a grammar anyway.
		p.ResponseFormat = sdk.ChatCompletionNewParamsResponseFormatUnion{
			OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{
					Name:   name,
					Schema: req.Schema.JSON,
					Strict: sdk.Bool(false),
				},
			},
		}
	}
	return p, nil
}

func (c *Client) complete(ctx context.Context, params sdk.ChatCompletionNewParams) (*llm.Response, error) {
	var raw *http.Response
	var tried provider.Attempts
	cc, err := c.chat.New(ctx, params, option.WithResponseInto(&raw), option.WithMiddleware(tried.Observe))
	if err != nil {
		return nil, c.wrapErr(ctx, err, raw, &tried)
	}
	resp := &llm.Response{
		Model: cc.Model,
		Usage: llm.Usage{
			Calls:        1,
			InputTokens:  int(cc.Usage.PromptTokens),
			OutputTokens: int(cc.Usage.CompletionTokens),
		},
	}
	if len(cc.Choices) > 0 {
		resp.Text = cc.Choices[0].Message.Content
		resp.StopReason = cc.Choices[0].FinishReason
	}
	return resp, nil
}

func (c *Client) stream(ctx context.Context, params sdk.ChatCompletionNewParams, onDelta func(string)) (*llm.Response, error) {
	params.StreamOptions = sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)}
	var raw *http.Response
	var tried provider.Attempts
	s := c.chat.NewStreaming(ctx, params, option.WithResponseInto(&raw), option.WithMiddleware(tried.Observe))
	defer s.Close()

	var acc sdk.ChatCompletionAccumulator
	var usage sdk.CompletionUsage
	firstID := ""
	for s.Next() {
		chunk := s.Current()
		// OpenAI keeps one id per stream; compatible servers (llama.cpp,
		// some vLLM and Ollama builds) vary it per chunk, which the SDK's
		// accumulator refuses. The chunks are one reply either way.
		if firstID == "" {
			firstID = chunk.ID
		}
		chunk.ID = firstID
		if !acc.AddChunk(chunk) {
			return nil, fmt.Errorf("openai: stream: chunk %q could not be accumulated", chunk.ID)
		}
		for _, ch := range chunk.Choices {
			if ch.Index == 0 && ch.Delta.Content != "" {
				onDelta(ch.Delta.Content)
			}
		}
		// The accumulator adds every chunk's usage; OpenAI reports it once,
		// in the last chunk, but some compatible servers repeat a running
		// total on every chunk, so the last report wins here.
		if chunk.JSON.Usage.Valid() {
			usage = chunk.Usage
		}
	}
	if err := s.Err(); err != nil {
		return nil, c.wrapErr(ctx, err, raw, &tried)
	}
	resp := &llm.Response{
		Model: acc.Model,
		Usage: llm.Usage{
			Calls:        1,
			InputTokens:  int(usage.PromptTokens),
			OutputTokens: int(usage.CompletionTokens),
		},
	}
	if len(acc.Choices) > 0 {
		resp.Text = acc.Choices[0].Message.Content
		resp.StopReason = acc.Choices[0].FinishReason
	}
	return resp, nil
}

// wrapErr turns an SDK error into an *llm.APIError when the server answered
// with an error status, and otherwise keeps ctx's error visible to
// errors.Is. raw is the last HTTP response, if any: it gives the status when
// a server's error body is not OpenAI-shaped.
func (c *Client) wrapErr(ctx context.Context, err error, raw *http.Response, tried *provider.Attempts) error {
	err, done := provider.ContextErr(ctx, err, "openai: chat", c.timeout, tried)
	if done {
		return err
	}
	var apiErr *sdk.Error
	var streamErr *ssestream.StreamError
	switch {
	case errors.As(err, &apiErr):
		msg := apiErr.Message
		if msg == "" {
			msg = bodyMessage(apiErr.Response)
		}
		return &llm.APIError{Provider: "openai", StatusCode: apiErr.StatusCode, Message: c.redact(msg)}
	case raw != nil && raw.StatusCode >= 400:
		// The SDK could not decode an error body that is not OpenAI-shaped,
		// e.g. Ollama's {"error": "…"}.
		return &llm.APIError{Provider: "openai", StatusCode: raw.StatusCode, Message: c.redact(bodyMessage(raw))}
	case errors.As(err, &streamErr):
		// An error event after a 200: the status is long gone.
		return fmt.Errorf("openai: stream: %s", c.redact(streamErr.Message))
	}
	return fmt.Errorf("openai: chat: %w", err)
}

// bodyMessage is the most readable part of an error body: error.message,
// error (a string), message or detail, or else the body itself. The SDK
// leaves the body it read in res.Body.
func bodyMessage(res *http.Response) string {
	if res == nil {
		return ""
	}
	fallback := http.StatusText(res.StatusCode)
	if res.Body == nil {
		return fallback
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, 8<<10))
	if err != nil || len(bytes.TrimSpace(b)) == 0 {
		return fallback
	}
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  any             `json:"detail"`
	}
	if json.Unmarshal(b, &body) != nil {
		return string(bytes.TrimSpace(b))
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
	return string(bytes.TrimSpace(b))
}

func (c *Client) redact(s string) string { return provider.Redact(s, c.apiKey) }
