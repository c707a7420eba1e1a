// Package anthropic is an llm.Provider for Claude through the Anthropic
// Messages API. It only translates between llm's types and the wire format;
// retries, retry-after and per-attempt timeouts are left to the official SDK
// (github.com/anthropics/anthropic-sdk-go). Structured output is a forced
// tool call whose input is the JSON reply.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/internal/provider"
)

// Defaults applied by New.
const (
	DefaultBaseURL    = "https://api.anthropic.com"
	DefaultMaxRetries = provider.DefaultMaxRetries
	DefaultTimeout    = provider.DefaultTimeout
)

// Config configures a Client. APIKey and Model are required.
type Config struct {
	// BaseURL is the API root without /v1 (default DefaultBaseURL).
	BaseURL string
	// APIKey is sent as the x-api-key header.
	APIKey string
	// Model is the model id, e.g. "claude-sonnet-4-5".
	Model string
	// MaxRetries is how often a 408, 409, 429, 5xx (529 overloaded
	// included), timed-out attempt or connection failure is retried,
	// honouring retry-after (0 = DefaultMaxRetries; negative = never).
	MaxRetries int
	// Timeout bounds one attempt, from sending the request to reading the
	// last byte of the reply, streamed or not (0 = DefaultTimeout; negative
	// = none, the caller's ctx decides).
	Timeout time.Duration
	// HTTPClient, when set, sends the requests (proxies, custom TLS).
	HTTPClient *http.Client
}

// Client is an llm.Provider for one Claude model. It is safe for concurrent
// use.
type Client struct {
	model    string
	apiKey   string
	timeout  time.Duration
	messages sdk.MessageService
}

var _ llm.Provider = (*Client)(nil)

// New validates cfg, applies its defaults and returns a Client. It does not
// contact the server.
func New(cfg Config) (*Client, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("anthropic: model is required")
	}
	if strings.TrimSpace(cfg.APIKey) == "" {
		return nil, errors.New("anthropic: API key is required")
	}
	conn, err := provider.Resolve("anthropic", cfg.BaseURL, DefaultBaseURL, "http(s)://host[:port]", cfg.MaxRetries, cfg.Timeout)
	if err != nil {
		return nil, err
	}

	// WithoutEnvironmentDefaults: only cmd/ reads the environment, so the
	// SDK must not pick up ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, profiles
	// or custom headers behind the caller's back.
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(conn.BaseURL),
		option.WithAPIKey(cfg.APIKey),
		option.WithMaxRetries(conn.Retries),
	}
	if conn.Timeout > 0 {
		// Also spares Messages.New its refusal of large max_tokens without
		// streaming, which only applies when no timeout is set.
		opts = append(opts, option.WithRequestTimeout(conn.Timeout))
	}
	if cfg.HTTPClient != nil {
		opts = append(opts, option.WithHTTPClient(cfg.HTTPClient))
	}
	client := sdk.NewClient(opts...)
	return &Client{model: cfg.Model, apiKey: cfg.APIKey, timeout: conn.Timeout, messages: client.Messages}, nil
}

// Name implements llm.Provider.
func (c *Client) Name() string { return "anthropic:" + c.model }

// Chat implements llm.Provider. When onDelta is non-nil the reply is
// streamed: onDelta receives each text delta and, when req.Schema is set,
// each piece of the tool input JSON, so the pieces add up to Response.Text.
// A reply with no text returns the Response (its usage was still spent)
// together with an error wrapping llm.ErrEmptyReply.
func (c *Client) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return nil, err
	}
	var msg *sdk.Message
	var tried provider.Attempts
	observe := option.WithMiddleware(tried.Observe)
	if onDelta == nil {
		msg, err = c.messages.New(ctx, params, observe)
	} else {
		msg, err = c.stream(ctx, params, req.Schema != nil, onDelta, observe)
	}
	if err != nil {
		return nil, c.wrapErr(ctx, err, &tried)
	}
	u := msg.Usage
	resp := &llm.Response{
		Text:       replyText(msg, req.Schema),
		Model:      string(msg.Model),
		StopReason: string(msg.StopReason),
		Usage: llm.Usage{
			Calls: 1,
			// input_tokens leaves out tokens read from or written to the
			// prompt cache; they were still part of the prompt.
			InputTokens:  int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens),
			OutputTokens: int(u.OutputTokens),
		},
	}
	if resp.Text == "" {
		return resp, fmt.Errorf("anthropic: %w (stop_reason %q)", llm.ErrEmptyReply, resp.StopReason)
	}
	return resp, nil
}

func (c *Client) params(req llm.Request) (sdk.MessageNewParams, error) {
	p := sdk.MessageNewParams{Model: sdk.Model(c.model), MaxTokens: provider.MaxTokens(req)}
	if req.System != "" {
		p.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	ms, err := provider.Messages("anthropic", req.Messages,
		func(t string) sdk.MessageParam { return sdk.NewUserMessage(sdk.NewTextBlock(t)) },
		func(t string) sdk.MessageParam { return sdk.NewAssistantMessage(sdk.NewTextBlock(t)) })
	if err != nil {
		return p, err
	}
	p.Messages = ms
	if req.Temperature != nil {
		p.Temperature = sdk.Float(*req.Temperature)
	}
	if req.TopP != nil {
		p.TopP = sdk.Float(*req.TopP)
	}
	if req.Schema != nil {
		schema, err := inputSchema(req.Schema.JSON)
		if err != nil {
			return p, fmt.Errorf("anthropic: schema %s: %w", req.Schema.Name, err)
		}
		name := provider.SchemaName(req.Schema)
		p.Tools = []sdk.ToolUnionParam{{OfTool: &sdk.ToolParam{
			Name:        name,
			Description: sdk.String("Give the answer as this tool's input, which must match its JSON schema."),
			InputSchema: schema,
		}}}
		p.ToolChoice = sdk.ToolChoiceParamOfTool(name)
	}
	return p, nil
}

// inputSchema carries a JSON Schema object into the SDK's input_schema,
// which models type, properties and required as fields and the rest as
// extra fields. Tool inputs are always objects.
func inputSchema(m map[string]any) (sdk.ToolInputSchemaParam, error) {
	var s sdk.ToolInputSchemaParam
	if t, ok := m["type"]; ok && t != "object" {
		return s, fmt.Errorf("type %v: a tool input schema must be an object", t)
	}
	s.Properties = m["properties"]
	switch req := m["required"].(type) {
	case nil:
	case []string:
		s.Required = req
	case []any:
		for _, r := range req {
			name, ok := r.(string)
			if !ok {
				return s, fmt.Errorf("required: %v is not a property name", r)
			}
			s.Required = append(s.Required, name)
		}
	default:
		return s, fmt.Errorf("required: %T is not a list", req)
	}
	for k, v := range m {
		if k == "type" || k == "properties" || k == "required" {
			continue
		}
		if s.ExtraFields == nil {
			s.ExtraFields = map[string]any{}
		}
		s.ExtraFields[k] = v
	}
	return s, nil
}

func (c *Client) stream(ctx context.Context, params sdk.MessageNewParams, schema bool, onDelta func(string), opts ...option.RequestOption) (*sdk.Message, error) {
	s := c.messages.NewStreaming(ctx, params, opts...)
	defer s.Close()
	var msg sdk.Message
	for s.Next() {
		ev := s.Current()
		if err := msg.Accumulate(ev); err != nil {
			return nil, fmt.Errorf("stream: %w", err)
		}
		if ev.Type != "content_block_delta" {
			continue
		}
		switch {
		case ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
			onDelta(ev.Delta.Text)
		case ev.Delta.Type == "input_json_delta" && schema && ev.Delta.PartialJSON != "":
			onDelta(ev.Delta.PartialJSON)
		}
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return &msg, nil
}

// replyText is the text of msg or, when a schema was asked for, the input
// of the forced tool call. A model that answered in text anyway gets its
// text returned, for llm.Structured to repair.
func replyText(msg *sdk.Message, schema *llm.Schema) string {
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "tool_use":
			if schema != nil && b.Name == provider.SchemaName(schema) && len(b.Input) > 0 {
				return string(b.Input)
			}
		case "text":
			text.WriteString(b.Text)
		}
	}
	return text.String()
}

// wrapErr turns an SDK error into an *llm.APIError when the API answered
// with an error, and otherwise keeps ctx's error visible to errors.Is.
func (c *Client) wrapErr(ctx context.Context, err error, tried *provider.Attempts) error {
	err, done := provider.ContextErr(ctx, err, "anthropic: messages", c.timeout, tried)
	if done {
		return err
	}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		typ, msg := errorBody(apiErr.RawJSON())
		status := apiErr.StatusCode
		if s, ok := streamErrorStatus[typ]; ok && status < 400 {
			// An error event in a stream that began with 200.
			status = s
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
		if typ != "" {
			msg = typ + ": " + msg
		}
		return &llm.APIError{Provider: "anthropic", StatusCode: status, Message: c.redact(msg)}
	}
	return fmt.Errorf("anthropic: messages: %w", err)
}

// streamErrorStatus maps the error types of the API's error events to the
// status the same error has as an HTTP answer.
var streamErrorStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      529,
}

// errorBody reads {"type":"error","error":{"type":…,"message":…}}; a body
// of another shape (a proxy's HTML page) is returned whole as the message.
func errorBody(raw string) (typ, msg string) {
	var body struct {
		Error struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal([]byte(raw), &body) == nil && (body.Error.Type != "" || body.Error.Message != "") {
		return body.Error.Type, body.Error.Message
	}
	return "", strings.TrimSpace(raw)
}

func (c *Client) redact(s string) string { return provider.Redact(s, c.apiKey) }
