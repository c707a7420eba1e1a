// Package anthropic is an llm.Provider for Claude through the Anthropic
// Messages API. It speaks the one endpoint Quarry calls, POST /v1/messages,
// plain or streamed as server-sent events, with the retries, retry-after
// and per-attempt timeout of llm/internal/provider; its tests hold it to
// the wire format. Structured output is a forced tool call whose input is
// the JSON reply.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

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
	// included) or connection failure is retried, honouring retry-after
	// (0 = DefaultMaxRetries; negative = never).
	MaxRetries int
	// Timeout bounds one attempt, from sending the request to reading the
	// last byte of the reply, streamed or not (0 = DefaultTimeout; negative
	// = none, the caller's ctx decides). A timed-out attempt is not retried.
	Timeout time.Duration
	// HTTPClient, when set, sends the requests (proxies, custom TLS).
	HTTPClient *http.Client
}

// Client is an llm.Provider for one Claude model. It is safe for concurrent
// use.
type Client struct {
	model  string
	apiKey string
	conn   provider.Conn
	http   *http.Client
}

var _ llm.Provider = (*Client)(nil)

// apiVersion is the Messages API version the client speaks.
const apiVersion = "2023-06-01"

// New validates cfg, applies its defaults and returns a Client. It does not
// contact the server, and reads nothing from the environment (no
// ANTHROPIC_API_KEY, base URL or custom headers behind the caller's back).
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
	return &Client{model: cfg.Model, apiKey: cfg.APIKey, conn: conn, http: cfg.HTTPClient}, nil
}

// Name implements llm.Provider.
func (c *Client) Name() string { return "anthropic:" + c.model }

// Chat implements llm.Provider. When onDelta is non-nil the reply is
// streamed: onDelta receives each text delta and, when req.Schema is set,
// each piece of the tool input JSON, so the pieces add up to Response.Text.
// A reply with no text returns the Response (its usage was still spent)
// together with an error wrapping llm.ErrEmptyReply.
func (c *Client) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	body, err := c.body(req, onDelta != nil)
	if err != nil {
		return nil, err
	}
	header := http.Header{
		"X-Api-Key":         {c.apiKey},
		"Anthropic-Version": {apiVersion},
		"Accept":            {"application/json"},
	}
	if onDelta != nil {
		header.Set("Accept", "text/event-stream")
	}
	var tried provider.Attempts
	httpResp, err := c.conn.Post(ctx, c.http, c.conn.BaseURL+"/v1/messages", header, body, &tried)
	if err != nil {
		return nil, c.wrapErr(ctx, err, &tried)
	}
	defer httpResp.Body.Close()
	var msg *reply
	if onDelta == nil {
		msg, err = readMessage(httpResp)
	} else {
		msg, err = readStream(httpResp, req.Schema != nil, onDelta)
	}
	if err != nil {
		return nil, c.wrapErr(ctx, err, &tried)
	}
	u := msg.Usage
	resp := &llm.Response{
		Text:       msg.text(req.Schema),
		Model:      msg.Model,
		StopReason: msg.StopReason,
		Usage: llm.Usage{
			Calls: 1,
			// input_tokens leaves out tokens read from or written to the
			// prompt cache; they were still part of the prompt.
			InputTokens:  u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			OutputTokens: u.OutputTokens,
		},
	}
	if resp.Text == "" {
		return resp, fmt.Errorf("anthropic: %w (stop_reason %q)", llm.ErrEmptyReply, resp.StopReason)
	}
	return resp, nil
}

// textBlock is a content block of a request.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type message struct {
	Role    string      `json:"role"`
	Content []textBlock `json:"content"`
}

type tool struct {
	Name        string         `json:"name"`
	Description string         `json:"description"`
	InputSchema map[string]any `json:"input_schema"`
}

type toolChoice struct {
	Type string `json:"type"`
	Name string `json:"name"`
}

// request is the body of POST /v1/messages, with only the fields Quarry
// sends.
type request struct {
	Model       string      `json:"model"`
	MaxTokens   int64       `json:"max_tokens"`
	System      []textBlock `json:"system,omitempty"`
	Messages    []message   `json:"messages"`
	Temperature *float64    `json:"temperature,omitempty"`
	TopP        *float64    `json:"top_p,omitempty"`
	Tools       []tool      `json:"tools,omitempty"`
	ToolChoice  *toolChoice `json:"tool_choice,omitempty"`
	Stream      bool        `json:"stream,omitempty"`
}

func (c *Client) body(req llm.Request, stream bool) ([]byte, error) {
	r := request{Model: c.model, MaxTokens: provider.MaxTokens(req), Temperature: req.Temperature, TopP: req.TopP, Stream: stream}
	if req.System != "" {
		r.System = []textBlock{{Type: "text", Text: req.System}}
	}
	ms, err := provider.Messages("anthropic", req.Messages,
		func(t string) message {
			return message{Role: llm.RoleUser, Content: []textBlock{{Type: "text", Text: t}}}
		},
		func(t string) message {
			return message{Role: llm.RoleAssistant, Content: []textBlock{{Type: "text", Text: t}}}
		})
	if err != nil {
		return nil, err
	}
	r.Messages = ms
	if req.Schema != nil {
		if err := checkInputSchema(req.Schema.JSON); err != nil {
			return nil, fmt.Errorf("anthropic: schema %s: %w", req.Schema.Name, err)
		}
		name := provider.SchemaName(req.Schema)
		r.Tools = []tool{{
			Name:        name,
			Description: "Give the answer as this tool's input, which must match its JSON schema.",
			InputSchema: req.Schema.JSON,
		}}
		r.ToolChoice = &toolChoice{Type: "tool", Name: name}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("anthropic: request: %w", err)
	}
	return b, nil
}

// checkInputSchema refuses a schema the API would: tool inputs are always
// objects, and required lists property names.
func checkInputSchema(m map[string]any) error {
	if t, ok := m["type"]; ok && t != "object" {
		return fmt.Errorf("type %v: a tool input schema must be an object", t)
	}
	switch req := m["required"].(type) {
	case nil, []string:
	case []any:
		for _, r := range req {
			if _, ok := r.(string); !ok {
				return fmt.Errorf("required: %v is not a property name", r)
			}
		}
	default:
		return fmt.Errorf("required: %T is not a list", req)
	}
	return nil
}

// usage is a reply's token count.
type usage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

// block is a content block of a reply: text, or a tool call whose input
// is the structured reply.
type block struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// partial gathers a streamed tool call's input_json_delta pieces.
	partial strings.Builder
}

// reply is a Message object, with only the fields Quarry reads.
type reply struct {
	Model      string   `json:"model"`
	Content    []*block `json:"content"`
	StopReason string   `json:"stop_reason"`
	Usage      usage    `json:"usage"`
}

// text is the reply's text or, when a schema was asked for, the input of
// the forced tool call. A model that answered in text anyway gets its text
// returned, for llm.Structured to repair.
func (m *reply) text(schema *llm.Schema) string {
	var text strings.Builder
	for _, b := range m.Content {
		switch b.Type {
		case "tool_use":
			input := string(b.Input)
			if b.partial.Len() > 0 {
				// Streamed: the pieces are the input, whether or not the
				// block's stop event came.
				input = b.partial.String()
			}
			if schema != nil && b.Name == provider.SchemaName(schema) && input != "" {
				return input
			}
		case "text":
			text.WriteString(b.Text)
		}
	}
	return text.String()
}

func readMessage(r *http.Response) (*reply, error) {
	var m reply
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
		return nil, fmt.Errorf("reading the reply: %w", err)
	}
	return &m, nil
}

// event is one event of a streamed reply, with only the fields Quarry
// reads: message_start carries the message (model, input usage),
// content_block_start a block, content_block_delta a piece of text or of
// tool input, message_delta the stop reason and output usage, error an
// error that came after the 200.
type event struct {
	Type         string `json:"type"`
	Message      *reply `json:"message"`
	Index        int    `json:"index"`
	ContentBlock *block `json:"content_block"`
	Delta        struct {
		Type        string `json:"type"`
		Text        string `json:"text"`
		PartialJSON string `json:"partial_json"`
		StopReason  string `json:"stop_reason"`
	} `json:"delta"`
	Usage *usage          `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// streamError is an error event of a stream that began with 200.
type streamError struct{ body []byte }

func (e *streamError) Error() string { return "stream: " + string(e.body) }

// readStream gathers a streamed reply into the Message it describes,
// passing text deltas (and, when schema, tool input pieces) to onDelta.
func readStream(r *http.Response, schema bool, onDelta func(string)) (*reply, error) {
	msg := &reply{}
	errStop := errors.New("stop")
	err := provider.Events(r.Body, func(ev provider.Event) error {
		var e event
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil {
			return fmt.Errorf("stream: event %.80q: %w", ev.Data, err)
		}
		switch e.Type {
		case "message_start":
			if e.Message != nil {
				msg.Model, msg.Usage = e.Message.Model, e.Message.Usage
			}
		case "content_block_start":
			if e.ContentBlock == nil || e.Index != len(msg.Content) {
				return fmt.Errorf("stream: content block %d out of order", e.Index)
			}
			msg.Content = append(msg.Content, e.ContentBlock)
		case "content_block_delta":
			if e.Index < 0 || e.Index >= len(msg.Content) {
				return fmt.Errorf("stream: delta for unknown content block %d", e.Index)
			}
			b := msg.Content[e.Index]
			switch {
			case e.Delta.Type == "text_delta" && b.Type == "text":
				b.Text += e.Delta.Text
				if e.Delta.Text != "" {
					onDelta(e.Delta.Text)
				}
			case e.Delta.Type == "input_json_delta" && b.Type == "tool_use":
				b.partial.WriteString(e.Delta.PartialJSON)
				if schema && e.Delta.PartialJSON != "" {
					onDelta(e.Delta.PartialJSON)
				}
			case e.Delta.Type == "text_delta" || e.Delta.Type == "input_json_delta":
				return fmt.Errorf("stream: %s for a %s block", e.Delta.Type, b.Type)
			}
		case "message_delta":
			if e.Delta.StopReason != "" {
				msg.StopReason = e.Delta.StopReason
			}
			if e.Usage != nil {
				// message_delta's counts are cumulative; input counts
				// appear here only when they changed.
				msg.Usage.OutputTokens = e.Usage.OutputTokens
				if e.Usage.InputTokens > 0 {
					msg.Usage.InputTokens = e.Usage.InputTokens
				}
			}
		case "message_stop":
			return errStop
		case "error":
			return &streamError{body: []byte(ev.Data)}
		}
		return nil
	})
	if err != nil && err != errStop {
		return nil, err
	}
	return msg, nil
}

// wrapErr turns an error answer, or an error event, into an
// *llm.APIError, and otherwise keeps ctx's error visible to errors.Is.
func (c *Client) wrapErr(ctx context.Context, err error, tried *provider.Attempts) error {
	err, done := provider.ContextErr(ctx, err, "anthropic: messages", c.conn.Timeout, tried)
	if done {
		return err
	}
	var se *provider.StatusError
	var streamErr *streamError
	var status int
	var raw []byte
	switch {
	case errors.As(err, &se):
		status, raw = se.StatusCode, se.Body
	case errors.As(err, &streamErr):
		raw = streamErr.body
	default:
		return fmt.Errorf("anthropic: messages: %w", err)
	}
	typ, msg := errorBody(string(raw))
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
