package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/anthropic"
	"github.com/quarryhq/quarry/llm/internal/providertest"
)

const testKey = "sk-ant-api03-test0123456789"

// jsonReply answers as the API does, with a request-id header.
func jsonReply(status int, body string, headers ...string) providertest.Reply {
	return providertest.JSONReply(status, body, append(headers, "request-id", "req_011CSHoEeqs5C35K2UUqR7Fy")...)
}

func errorJSON(typ, msg string) string {
	return fmt.Sprintf(`{"type":"error","error":{"type":%q,"message":%q},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`, typ, msg)
}

// message is a Message object as api.anthropic.com returns it; content is
// its JSON content array.
func message(content, stop string, in, out int) string {
	return fmt.Sprintf(`{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant",`+
		`"model":"claude-sonnet-4-5-20250929","content":%s,"stop_reason":%q,"stop_sequence":null,`+
		`"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,`+
		`"cache_creation":{"ephemeral_5m_input_tokens":0,"ephemeral_1h_input_tokens":0},`+
		`"output_tokens":%d,"service_tier":"standard"}}`, content, stop, in, out)
}

func textContent(s string) string {
	b, _ := json.Marshal(s)
	return `[{"type":"text","text":` + string(b) + `}]`
}

// sseReply replays a streamed message the way api.anthropic.com sends it:
// message_start (with input usage), per block a content_block_start, its
// deltas and content_block_stop, a ping, message_delta (stop reason and
// output usage) and message_stop. A block is text, or tool_use when
// toolName is set, in which case pieces are partial_json.
func sseReply(toolName string, pieces []string, stop string, in, out int) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		send := func(event, data string) {
			_, _ = io.WriteString(w, "event: "+event+"\ndata: "+data+"\n\n")
			w.(http.Flusher).Flush()
		}
		send("message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U",`+
			`"type":"message","role":"assistant","model":"claude-sonnet-4-5-20250929","content":[],"stop_reason":null,`+
			`"stop_sequence":null,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,`+
			`"output_tokens":1,"service_tier":"standard"}}}`, in))
		if toolName == "" {
			send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		} else {
			send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"tool_use",`+
				`"id":"toolu_01T1x1fJ34qAmk2tNTrN7Up6","name":"`+toolName+`","input":{}}}`)
			send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}`)
		}
		send("ping", `{"type": "ping"}`)
		for _, p := range pieces {
			b, _ := json.Marshal(p)
			if toolName == "" {
				send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(b)+`}}`)
			} else {
				send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":`+string(b)+`}}`)
			}
		}
		send("content_block_stop", `{"type":"content_block_stop","index":0}`)
		send("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out))
		send("message_stop", `{"type":"message_stop"}`)
	}
}

func newClient(t *testing.T, cfg anthropic.Config) *anthropic.Client {
	t.Helper()
	if cfg.APIKey == "" {
		cfg.APIKey = testKey
	}
	c, err := anthropic.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func userSays(s string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: s}}}
}

func TestChat(t *testing.T) {
	t.Parallel()
	schema := &llm.Schema{Name: "answer", JSON: map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"answer": map[string]any{"type": "string", "description": "the reply"}},
		"required":             []any{"answer"},
		"additionalProperties": false,
	}}
	conversation := llm.Request{
		System: "Be brief.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: "Hi"},
			{Role: llm.RoleAssistant, Content: "Hello."},
			{Role: llm.RoleUser, Content: "Say hello again."},
		},
		MaxTokens:   256,
		Temperature: ptr(0.2),
		TopP:        ptr(0.9),
	}
	wantTools := func(t *testing.T, body map[string]any) {
		t.Helper()
		tools, _ := body["tools"].([]any)
		if len(tools) != 1 {
			t.Fatalf("tools = %#v, want one", body["tools"])
		}
		tool, _ := tools[0].(map[string]any)
		if tool["name"] != "answer" {
			t.Errorf("tool name = %v", tool["name"])
		}
		providertest.WantField(t, tool, "input_schema", providertest.JSONRoundTrip(t, schema.JSON))
		providertest.WantField(t, body, "tool_choice", map[string]any{"type": "tool", "name": "answer"})
	}
	tests := []struct {
		name    string
		req     llm.Request
		stream  bool
		replies []func(http.ResponseWriter, *http.Request)
		// check asserts the request body beyond what every case shares.
		check      func(t *testing.T, body map[string]any)
		wantText   string
		wantDeltas []string
		wantStop   string
		wantUsage  llm.Usage
	}{
		{
			name:    "plain reply with usage",
			req:     conversation,
			replies: []func(http.ResponseWriter, *http.Request){jsonReply(200, message(textContent("Hello again!"), "end_turn", 21, 6))},
			check: func(t *testing.T, body map[string]any) {
				providertest.WantField(t, body, "system", []any{map[string]any{"type": "text", "text": "Be brief."}})
				providertest.WantField(t, body, "messages", []any{
					map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Hi"}}},
					map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "text", "text": "Hello."}}},
					map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "Say hello again."}}},
				})
				providertest.WantField(t, body, "max_tokens", 256.0)
				providertest.WantField(t, body, "temperature", 0.2)
				providertest.WantField(t, body, "top_p", 0.9)
				providertest.WantAbsent(t, body, "stream", "tools", "tool_choice")
			},
			wantText:  "Hello again!",
			wantStop:  "end_turn",
			wantUsage: llm.Usage{Calls: 1, InputTokens: 21, OutputTokens: 6},
		},
		{
			name:    "defaults: no system, no temperature, 1024 tokens",
			req:     userSays("Hi"),
			replies: []func(http.ResponseWriter, *http.Request){jsonReply(200, message(textContent("Hi!"), "max_tokens", 8, 1024))},
			check: func(t *testing.T, body map[string]any) {
				providertest.WantField(t, body, "max_tokens", 1024.0)
				providertest.WantAbsent(t, body, "system", "temperature", "top_p")
			},
			wantText:  "Hi!",
			wantStop:  "max_tokens",
			wantUsage: llm.Usage{Calls: 1, InputTokens: 8, OutputTokens: 1024},
		},
		{
			name:    "streamed reply",
			req:     conversation,
			stream:  true,
			replies: []func(http.ResponseWriter, *http.Request){sseReply("", []string{"Hel", "lo ", "again", "!"}, "end_turn", 21, 6)},
			check: func(t *testing.T, body map[string]any) {
				providertest.WantField(t, body, "stream", true)
				providertest.WantField(t, body, "max_tokens", 256.0)
				if m, _ := body["messages"].([]any); len(m) != 3 {
					t.Errorf("messages = %v, want 3", body["messages"])
				}
			},
			wantText:   "Hello again!",
			wantDeltas: []string{"Hel", "lo ", "again", "!"},
			wantStop:   "end_turn",
			wantUsage:  llm.Usage{Calls: 1, InputTokens: 21, OutputTokens: 6},
		},
		{
			name: "structured output",
			req:  llm.Request{Messages: conversation.Messages, Schema: schema},
			replies: []func(http.ResponseWriter, *http.Request){jsonReply(200, message(
				`[{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"answer","input":{"answer":"hello"}}]`,
				"tool_use", 380, 40))},
			check:     wantTools,
			wantText:  `{"answer":"hello"}`,
			wantStop:  "tool_use",
			wantUsage: llm.Usage{Calls: 1, InputTokens: 380, OutputTokens: 40},
		},
		{
			name:   "structured output streamed",
			req:    llm.Request{Messages: conversation.Messages, Schema: schema},
			stream: true,
			replies: []func(http.ResponseWriter, *http.Request){
				sseReply("answer", []string{`{"ans`, `wer": "hel`, `lo"}`}, "tool_use", 380, 40),
			},
			check: func(t *testing.T, body map[string]any) {
				wantTools(t, body)
				providertest.WantField(t, body, "stream", true)
			},
			wantText:   `{"answer": "hello"}`,
			wantDeltas: []string{`{"ans`, `wer": "hel`, `lo"}`},
			wantStop:   "tool_use",
			wantUsage:  llm.Usage{Calls: 1, InputTokens: 380, OutputTokens: 40},
		},
		{
			name: "schema asked, model answered in text",
			req:  llm.Request{Messages: conversation.Messages, Schema: schema},
			replies: []func(http.ResponseWriter, *http.Request){jsonReply(200, message(
				textContent(`{"answer":"hello"}`), "end_turn", 380, 12))},
			check:     wantTools,
			wantText:  `{"answer":"hello"}`,
			wantStop:  "end_turn",
			wantUsage: llm.Usage{Calls: 1, InputTokens: 380, OutputTokens: 12},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.replies...)
			c := newClient(t, anthropic.Config{BaseURL: srv.URL, Model: "claude-sonnet-4-5"})
			var deltas []string
			var onDelta func(string)
			if tt.stream {
				onDelta = func(s string) { deltas = append(deltas, s) }
			}
			resp, err := c.Chat(context.Background(), tt.req, onDelta)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			r := providertest.OnlyRequest(t, srv, "/v1/messages")
			if got := r.Header.Get("x-api-key"); got != testKey {
				t.Errorf("x-api-key = %q", got)
			}
			if got := r.Header.Get("anthropic-version"); got != "2023-06-01" {
				t.Errorf("anthropic-version = %q", got)
			}
			if got := r.Header.Get("Authorization"); got != "" {
				t.Errorf("Authorization = %q, want none", got)
			}
			providertest.WantField(t, r.Body, "model", "claude-sonnet-4-5")
			tt.check(t, r.Body)

			providertest.CheckResponse(t, resp, deltas, providertest.Want{Text: tt.wantText, Stop: tt.wantStop, Model: "claude-sonnet-4-5-20250929", Deltas: tt.wantDeltas, Usage: tt.wantUsage})
		})
	}
}

func TestChatRetries(t *testing.T) {
	t.Parallel()
	ok := jsonReply(200, message(textContent("done"), "end_turn", 5, 1))
	tests := []struct {
		name       string
		maxRetries int
		replies    []func(http.ResponseWriter, *http.Request)
		wantReqs   int
		wantStatus int // 0: success
	}{
		{
			name:     "429 with retry-after: 0, then success",
			replies:  []func(http.ResponseWriter, *http.Request){jsonReply(429, errorJSON("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"), "retry-after", "0"), ok},
			wantReqs: 2,
		},
		{
			name:     "429 with retry-after-ms: 10, then success",
			replies:  []func(http.ResponseWriter, *http.Request){jsonReply(429, errorJSON("rate_limit_error", "rate limited"), "retry-after-ms", "10"), ok},
			wantReqs: 2,
		},
		{
			name: "500 twice with default backoff, then success",
			replies: []func(http.ResponseWriter, *http.Request){
				jsonReply(500, errorJSON("api_error", "Internal server error")),
				jsonReply(529, errorJSON("overloaded_error", "Overloaded")),
				ok,
			},
			wantReqs: 3,
		},
		{
			name:       "529 past MaxRetries",
			maxRetries: 1,
			replies:    []func(http.ResponseWriter, *http.Request){jsonReply(529, errorJSON("overloaded_error", "Overloaded"), "retry-after-ms", "1")},
			wantReqs:   2,
			wantStatus: 529,
		},
		{
			name:       "400 is not retried",
			replies:    []func(http.ResponseWriter, *http.Request){jsonReply(400, errorJSON("invalid_request_error", "messages: at least one message is required")), ok},
			wantReqs:   1,
			wantStatus: 400,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.replies...)
			c := newClient(t, anthropic.Config{BaseURL: srv.URL, Model: "m", MaxRetries: tt.maxRetries})
			resp, err := c.Chat(context.Background(), userSays("x"), nil)
			providertest.CheckRetried(t, srv, "anthropic", resp, err, tt.wantReqs, tt.wantStatus)
		})
	}
}

// TestChatEndsWaitingToRetry: a caller's context that ends while the
// client waits to retry an error answer gives the context's error, and
// never the answer's body, which here echoes the key.
func TestChatEndsWaitingToRetry(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.EchoingOverload(testKey))
	c := newClient(t, anthropic.Config{BaseURL: srv.URL, APIKey: testKey, Model: "m", MaxRetries: 3})
	providertest.CheckEndsWaitingToRetry(t, func(ctx context.Context) error {
		_, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, nil)
		return err
	}, testKey)
}

func TestChatErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		stream     bool
		reply      func(http.ResponseWriter, *http.Request)
		wantStatus int
		wantMsg    string
	}{
		{
			name:       "401 echoing the key",
			reply:      jsonReply(401, errorJSON("authentication_error", "invalid x-api-key "+testKey)),
			wantStatus: 401,
			wantMsg:    "authentication_error: invalid x-api-key [redacted]",
		},
		{
			name:       "401 streamed",
			stream:     true,
			reply:      jsonReply(401, errorJSON("authentication_error", "invalid x-api-key")),
			wantStatus: 401,
			wantMsg:    "authentication_error: invalid x-api-key",
		},
		{
			name:       "404 unknown model",
			reply:      jsonReply(404, errorJSON("not_found_error", "model: claude-nope")),
			wantStatus: 404,
			wantMsg:    "not_found_error: model: claude-nope",
		},
		{
			name: "proxy page",
			reply: func(w http.ResponseWriter, _ *http.Request) {
				http.Error(w, "forbidden by proxy", http.StatusForbidden)
			},
			wantStatus: 403,
			wantMsg:    "forbidden by proxy",
		},
		{
			name:   "error event mid-stream",
			stream: true,
			reply: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				_, _ = io.WriteString(w, "event: message_start\ndata: "+`{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}`+"\n\n")
				_, _ = io.WriteString(w, "event: error\ndata: "+`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`+"\n\n")
			},
			wantStatus: 529,
			wantMsg:    "overloaded_error: Overloaded",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.reply)
			c := newClient(t, anthropic.Config{BaseURL: srv.URL, Model: "m"})
			var onDelta func(string)
			if tt.stream {
				onDelta = func(string) {}
			}
			_, err := c.Chat(context.Background(), userSays("x"), onDelta)
			providertest.CheckAPIError(t, srv, err, tt.wantStatus, tt.wantMsg, testKey)
		})
	}
}

func TestChatEmptyReply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stream bool
		reply  func(http.ResponseWriter, *http.Request)
		stop   string
	}{
		{name: "no content", reply: jsonReply(200, message(`[]`, "end_turn", 12, 2)), stop: "end_turn"},
		{name: "empty text", reply: jsonReply(200, message(textContent(""), "refusal", 12, 2)), stop: "refusal"},
		{name: "streamed", stream: true, reply: sseReply("", nil, "end_turn", 12, 2), stop: "end_turn"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.reply)
			c := newClient(t, anthropic.Config{BaseURL: srv.URL, Model: "m"})
			var onDelta func(string)
			if tt.stream {
				onDelta = func(s string) { t.Errorf("onDelta(%q) for an empty reply", s) }
			}
			resp, err := c.Chat(context.Background(), userSays("x"), onDelta)
			if !errors.Is(err, llm.ErrEmptyReply) {
				t.Fatalf("err = %v, want llm.ErrEmptyReply", err)
			}
			// The tokens were spent; callers that count usage still see them.
			if resp == nil || resp.Usage != (llm.Usage{Calls: 1, InputTokens: 12, OutputTokens: 2}) || resp.StopReason != tt.stop {
				t.Errorf("resp = %+v", resp)
			}
		})
	}
}

func TestChatTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	first := "event: message_start\ndata: " + `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"output_tokens":1}}}` + "\n\n"
	providertest.TestTimeoutAndCancel(t, first, func(t *testing.T, url string, timeout time.Duration) llm.Provider {
		return newClient(t, anthropic.Config{BaseURL: url, Model: "m", Timeout: timeout, MaxRetries: -1})
	})
}

// TestNoEnvironment checks that the SDK's ANTHROPIC_* variables are
// ignored. Not parallel: it sets environment variables.
func TestNoEnvironment(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv("ANTHROPIC_CUSTOM_HEADERS", "X-From-Env: yes")
	srv := providertest.NewServer(t, jsonReply(200, message(textContent("ok"), "end_turn", 1, 1)))
	c := newClient(t, anthropic.Config{BaseURL: srv.URL, Model: "m"})
	if _, err := c.Chat(context.Background(), userSays("x"), nil); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	h := srv.Requests()[0].Header
	if h.Get("x-api-key") != testKey || h.Get("X-From-Env") != "" {
		t.Errorf("environment leaked into the request: x-api-key=%q X-From-Env=%q", h.Get("x-api-key"), h.Get("X-From-Env"))
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     anthropic.Config
		wantErr string
	}{
		{name: "defaults", cfg: anthropic.Config{APIKey: testKey, Model: "claude-sonnet-4-5"}},
		{name: "no key", cfg: anthropic.Config{Model: "m"}, wantErr: "API key is required"},
		{name: "no model", cfg: anthropic.Config{APIKey: testKey}, wantErr: "model is required"},
		{name: "bad scheme", cfg: anthropic.Config{BaseURL: "ws://example.com", APIKey: testKey, Model: "m"}, wantErr: "base URL"},
		{name: "no host", cfg: anthropic.Config{BaseURL: "api.anthropic.com", APIKey: testKey, Model: "m"}, wantErr: "base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := anthropic.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got, want := c.Name(), "anthropic:"+tt.cfg.Model; got != want {
					t.Errorf("Name = %q, want %q", got, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if strings.Contains(err.Error(), testKey) {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

func TestChatBadRequest(t *testing.T) {
	t.Parallel()
	c := newClient(t, anthropic.Config{BaseURL: "http://127.0.0.1:1", Model: "m"})
	tests := []struct {
		name    string
		req     llm.Request
		wantErr string
	}{
		{name: "unknown role", req: llm.Request{Messages: []llm.Message{{Role: "tool", Content: "x"}}}, wantErr: "unknown role"},
		{name: "array schema", req: llm.Request{Messages: userSays("x").Messages, Schema: &llm.Schema{Name: "list", JSON: map[string]any{"type": "array"}}}, wantErr: "must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.Chat(context.Background(), tt.req, nil)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
		})
	}
}
