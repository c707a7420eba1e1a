package openai_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/internal/providertest"
	"github.com/quarryhq/quarry/llm/openai"
)

const testKey = "sk-test-0123456789abcdef"

// completion is a chat.completion object as api.openai.com returns it.
func completion(content, finish string, in, out int) string {
	c, _ := json.Marshal(content)
	return fmt.Sprintf(`{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion","created":1741569952,`+
		`"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"message":{"role":"assistant","content":%s,`+
		`"refusal":null,"annotations":[]},"logprobs":null,"finish_reason":%q}],"usage":{"prompt_tokens":%d,`+
		`"completion_tokens":%d,"total_tokens":%d,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},`+
		`"completion_tokens_details":{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,`+
		`"rejected_prediction_tokens":0}},"service_tier":"default","system_fingerprint":"fp_06737a9306"}`,
		c, finish, in, out, in+out)
}

// sseReply replays a streamed completion the way api.openai.com sends it:
// a role chunk, one chunk per piece, a finish chunk, a usage chunk with no
// choices (stream_options.include_usage) and data: [DONE].
func sseReply(pieces []string, finish string, in, out int) func(http.ResponseWriter, *http.Request) {
	const head = `{"id":"chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT","object":"chat.completion.chunk","created":1741569952,` +
		`"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_06737a9306",`
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		events := []string{head + `"choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`}
		for _, p := range pieces {
			c, _ := json.Marshal(p)
			events = append(events, head+`"choices":[{"index":0,"delta":{"content":`+string(c)+`},"logprobs":null,"finish_reason":null}],"usage":null}`)
		}
		events = append(events,
			head+`"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"`+finish+`"}],"usage":null}`,
			head+fmt.Sprintf(`"choices":[],"usage":{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,`+
				`"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":`+
				`{"reasoning_tokens":0,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}}`, in, out, in+out),
			"[DONE]")
		for _, e := range events {
			_, _ = io.WriteString(w, "data: "+e+"\n\n")
			w.(http.Flusher).Flush()
		}
	}
}

func newClient(t *testing.T, cfg openai.Config) *openai.Client {
	t.Helper()
	c, err := openai.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func ptr[T any](v T) *T { return &v }

func TestChat(t *testing.T) {
	t.Parallel()
	schema := &llm.Schema{Name: "answer", JSON: map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"answer": map[string]any{"type": "string"}},
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
			replies: []func(http.ResponseWriter, *http.Request){providertest.JSONReply(200, completion("Hello again!", "stop", 19, 4))},
			check: func(t *testing.T, body map[string]any) {
				wantMessages := []any{
					map[string]any{"role": "system", "content": "Be brief."},
					map[string]any{"role": "user", "content": "Hi"},
					map[string]any{"role": "assistant", "content": "Hello."},
					map[string]any{"role": "user", "content": "Say hello again."},
				}
				if !reflect.DeepEqual(body["messages"], wantMessages) {
					t.Errorf("messages = %#v, want %#v", body["messages"], wantMessages)
				}
				providertest.WantField(t, body, "max_tokens", 256.0)
				providertest.WantField(t, body, "temperature", 0.2)
				providertest.WantField(t, body, "top_p", 0.9)
				providertest.WantAbsent(t, body, "stream", "stream_options", "response_format", "max_completion_tokens")
			},
			wantText:  "Hello again!",
			wantStop:  "stop",
			wantUsage: llm.Usage{Calls: 1, InputTokens: 19, OutputTokens: 4},
		},
		{
			name:    "defaults: no system, no temperature, 1024 tokens",
			req:     llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi"}}},
			replies: []func(http.ResponseWriter, *http.Request){providertest.JSONReply(200, completion("Hi!", "length", 8, 1024))},
			check: func(t *testing.T, body map[string]any) {
				providertest.WantField(t, body, "messages", []any{map[string]any{"role": "user", "content": "Hi"}})
				providertest.WantField(t, body, "max_tokens", 1024.0)
				providertest.WantAbsent(t, body, "temperature", "top_p")
			},
			wantText:  "Hi!",
			wantStop:  "length",
			wantUsage: llm.Usage{Calls: 1, InputTokens: 8, OutputTokens: 1024},
		},
		{
			name:    "streamed reply",
			req:     conversation,
			stream:  true,
			replies: []func(http.ResponseWriter, *http.Request){sseReply([]string{"Hel", "lo ", "again", "!"}, "stop", 19, 4)},
			check: func(t *testing.T, body map[string]any) {
				providertest.WantField(t, body, "stream", true)
				providertest.WantField(t, body, "stream_options", map[string]any{"include_usage": true})
				providertest.WantField(t, body, "max_tokens", 256.0)
				if m, _ := body["messages"].([]any); len(m) != 4 {
					t.Errorf("messages = %v, want 4", body["messages"])
				}
			},
			wantText:   "Hello again!",
			wantDeltas: []string{"Hel", "lo ", "again", "!"},
			wantStop:   "stop",
			wantUsage:  llm.Usage{Calls: 1, InputTokens: 19, OutputTokens: 4},
		},
		{
			name:    "structured output",
			req:     llm.Request{Messages: conversation.Messages, Schema: schema},
			replies: []func(http.ResponseWriter, *http.Request){providertest.JSONReply(200, completion(`{"answer":"hello"}`, "stop", 30, 6))},
			check: func(t *testing.T, body map[string]any) {
				providertest.WantField(t, body, "response_format", map[string]any{
					"type": "json_schema",
					"json_schema": map[string]any{
						"name":   "answer",
						"schema": providertest.JSONRoundTrip(t, schema.JSON),
						"strict": false,
					},
				})
			},
			wantText:  `{"answer":"hello"}`,
			wantStop:  "stop",
			wantUsage: llm.Usage{Calls: 1, InputTokens: 30, OutputTokens: 6},
		},
		{
			name:   "structured output streamed",
			req:    llm.Request{Messages: conversation.Messages, Schema: schema},
			stream: true,
			replies: []func(http.ResponseWriter, *http.Request){
				sseReply([]string{`{"ans`, `wer":"hel`, `lo"}`}, "stop", 30, 6),
			},
			check: func(t *testing.T, body map[string]any) {
				rf, _ := body["response_format"].(map[string]any)
				if rf["type"] != "json_schema" {
					t.Errorf("response_format = %v", body["response_format"])
				}
				providertest.WantField(t, body, "stream", true)
			},
			wantText:   `{"answer":"hello"}`,
			wantDeltas: []string{`{"ans`, `wer":"hel`, `lo"}`},
			wantStop:   "stop",
			wantUsage:  llm.Usage{Calls: 1, InputTokens: 30, OutputTokens: 6},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.replies...)
			c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "gpt-4o-mini"})
			var deltas []string
			var onDelta func(string)
			if tt.stream {
				onDelta = func(s string) { deltas = append(deltas, s) }
			}
			resp, err := c.Chat(context.Background(), tt.req, onDelta)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			r := providertest.OnlyRequest(t, srv, "/v1/chat/completions")
			if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
				t.Errorf("Authorization = %q", got)
			}
			providertest.WantField(t, r.Body, "model", "gpt-4o-mini")
			tt.check(t, r.Body)

			providertest.CheckResponse(t, resp, deltas, providertest.Want{Text: tt.wantText, Stop: tt.wantStop, Model: "gpt-4o-mini-2024-07-18", Deltas: tt.wantDeltas, Usage: tt.wantUsage})
		})
	}
}

func TestChatRetries(t *testing.T) {
	t.Parallel()
	ok := providertest.JSONReply(200, completion("done", "stop", 5, 1))
	tests := []struct {
		name       string
		maxRetries int
		replies    []func(http.ResponseWriter, *http.Request)
		wantReqs   int
		wantStatus int // 0: success
	}{
		{
			name:     "429 with Retry-After: 0, then success",
			replies:  []func(http.ResponseWriter, *http.Request){providertest.JSONReply(429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "Retry-After", "0"), ok},
			wantReqs: 2,
		},
		{
			name:     "429 with retry-after-ms: 10, then success",
			replies:  []func(http.ResponseWriter, *http.Request){providertest.JSONReply(429, `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`, "retry-after-ms", "10"), ok},
			wantReqs: 2,
		},
		{
			name: "500 twice with default backoff, then success",
			replies: []func(http.ResponseWriter, *http.Request){
				providertest.JSONReply(500, `{"error":{"message":"The server had an error","type":"server_error","param":null,"code":null}}`),
				providertest.JSONReply(502, `<html>Bad Gateway</html>`),
				ok,
			},
			wantReqs: 3,
		},
		{
			name:       "503 past MaxRetries",
			maxRetries: 1,
			replies:    []func(http.ResponseWriter, *http.Request){providertest.JSONReply(503, `{"error":{"message":"overloaded","type":"server_error"}}`, "retry-after-ms", "1")},
			wantReqs:   2,
			wantStatus: 503,
		},
		{
			name:       "400 is not retried",
			replies:    []func(http.ResponseWriter, *http.Request){providertest.JSONReply(400, `{"error":{"message":"Invalid 'messages'","type":"invalid_request_error","param":"messages","code":null}}`), ok},
			wantReqs:   1,
			wantStatus: 400,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.replies...)
			c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "m", MaxRetries: tt.maxRetries})
			resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, nil)
			providertest.CheckRetried(t, srv, "openai", resp, err, tt.wantReqs, tt.wantStatus)
		})
	}
}

// TestChatEndsWaitingToRetry: a caller's context that ends while the
// client waits to retry an error answer gives the context's error, and
// never the answer's body, which here echoes the key.
func TestChatEndsWaitingToRetry(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.EchoingOverload(testKey))
	c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "m", MaxRetries: 3})
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
			name: "401 echoing the key",
			reply: providertest.JSONReply(401, `{"error":{"message":"Incorrect API key provided: `+testKey+
				`. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`),
			wantStatus: 401,
			wantMsg:    "Incorrect API key provided: [redacted]",
		},
		{
			name:       "401 streamed",
			stream:     true,
			reply:      providertest.JSONReply(401, `{"error":{"message":"bad key `+testKey+`","type":"invalid_request_error","code":"invalid_api_key"}}`),
			wantStatus: 401,
			wantMsg:    "bad key [redacted]",
		},
		{
			name:       "Ollama-style error",
			reply:      providertest.JSONReply(404, `{"error":"model \"m\" not found, try pulling it first"}`),
			wantStatus: 404,
			wantMsg:    `model "m" not found`,
		},
		{
			name:       "vLLM-style error",
			reply:      providertest.JSONReply(400, `{"object":"error","message":"max_tokens is too large","type":"BadRequestError","param":null,"code":400}`),
			wantStatus: 400,
			wantMsg:    "max_tokens is too large",
		},
		{
			name:       "plain-text error",
			reply:      func(w http.ResponseWriter, _ *http.Request) { http.Error(w, "no such route", http.StatusNotFound) },
			wantStatus: 404,
			wantMsg:    "no such route",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.reply)
			c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "m"})
			var onDelta func(string)
			if tt.stream {
				onDelta = func(string) {}
			}
			_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, onDelta)
			providertest.CheckAPIError(t, srv, err, tt.wantStatus, tt.wantMsg, testKey)
		})
	}
}

func TestChatStreamErrorEvent(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"par"},"finish_reason":null}]}`+"\n\n")
		_, _ = io.WriteString(w, `data: {"error":{"message":"engine crashed","type":"server_error"}}`+"\n\n")
	})
	c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", Model: "m"})
	var deltas []string
	_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, func(s string) { deltas = append(deltas, s) })
	if err == nil || !strings.Contains(err.Error(), "engine crashed") {
		t.Fatalf("err = %v, want the stream's error", err)
	}
	if !reflect.DeepEqual(deltas, []string{"par"}) {
		t.Errorf("deltas = %q", deltas)
	}
}

func TestChatEmptyReply(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		stream bool
		reply  func(http.ResponseWriter, *http.Request)
	}{
		{name: "plain", reply: providertest.JSONReply(200, completion("", "length", 12, 1024))},
		{name: "null content", reply: providertest.JSONReply(200, strings.Replace(completion("", "length", 12, 1024), `"content":""`, `"content":null`, 1))},
		{name: "streamed", stream: true, reply: sseReply(nil, "length", 12, 1024)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := providertest.NewServer(t, tt.reply)
			c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", Model: "m"})
			var onDelta func(string)
			if tt.stream {
				onDelta = func(s string) { t.Errorf("onDelta(%q) for an empty reply", s) }
			}
			resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, onDelta)
			if !errors.Is(err, llm.ErrEmptyReply) {
				t.Fatalf("err = %v, want llm.ErrEmptyReply", err)
			}
			// The tokens were spent; callers that count usage still see them.
			if resp == nil || resp.Usage != (llm.Usage{Calls: 1, InputTokens: 12, OutputTokens: 1024}) || resp.StopReason != "length" {
				t.Errorf("resp = %+v", resp)
			}
		})
	}
}

func TestChatTimeoutAndCancel(t *testing.T) {
	t.Parallel()
	first := `data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"one"},"finish_reason":null}]}` + "\n\n"
	providertest.TestTimeoutAndCancel(t, first, func(t *testing.T, url string, timeout time.Duration) llm.Provider {
		return newClient(t, openai.Config{BaseURL: url + "/v1", Model: "m", Timeout: timeout, MaxRetries: -1})
	})
}

// TestChatMaxCompletionTokens checks that api.openai.com, whose reasoning
// models reject max_tokens, gets max_completion_tokens instead.
func TestChatMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, providertest.JSONReply(200, completion("ok", "stop", 1, 1)))
	target, _ := url.Parse(srv.URL)
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Host != "api.openai.com" {
			return nil, fmt.Errorf("request to %s", r.URL.Host)
		}
		r = r.Clone(r.Context())
		r.URL.Scheme, r.URL.Host = target.Scheme, target.Host
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newClient(t, openai.Config{APIKey: testKey, Model: "o4-mini", HTTPClient: hc})
	if _, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}, MaxTokens: 300}, nil); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	r := srv.Requests()[0]
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %s", r.Path)
	}
	providertest.WantField(t, r.Body, "max_completion_tokens", 300.0)
	if _, ok := r.Body["max_tokens"]; ok {
		t.Errorf("max_tokens sent to api.openai.com")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNoEnvironment checks that the SDK's OPENAI_* variables are ignored:
// a local server must not receive a key meant for api.openai.com.
// Not parallel: it sets environment variables.
func TestNoEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-from-env")
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	t.Setenv("OPENAI_ORG_ID", "org-from-env")
	srv := providertest.NewServer(t, providertest.JSONReply(200, completion("ok", "stop", 1, 1)))
	c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", Model: "llama3.2"})
	if _, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, nil); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	h := srv.Requests()[0].Header
	if h.Get("Authorization") != "" || h.Get("OpenAI-Organization") != "" {
		t.Errorf("environment leaked into the request: Authorization=%q OpenAI-Organization=%q", h.Get("Authorization"), h.Get("OpenAI-Organization"))
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     openai.Config
		wantErr string
	}{
		{name: "defaults", cfg: openai.Config{Model: "gpt-4o-mini"}},
		{name: "local server without key", cfg: openai.Config{BaseURL: "http://localhost:11434/v1/", Model: "qwen3:8b"}},
		{name: "no model", cfg: openai.Config{APIKey: testKey}, wantErr: "model is required"},
		{name: "bad scheme", cfg: openai.Config{BaseURL: "ftp://example.com/v1", Model: "m"}, wantErr: "base URL"},
		{name: "no host", cfg: openai.Config{BaseURL: "localhost:8000", Model: "m"}, wantErr: "base URL"},
		{name: "unparsable", cfg: openai.Config{BaseURL: "http://[::1", Model: "m"}, wantErr: "base URL"},
		{name: "bad scheme with a password", cfg: openai.Config{BaseURL: "htp://user:PW_SECRET@example.com/v1", Model: "m"}, wantErr: "base URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := openai.New(tt.cfg)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				if got, want := c.Name(), "openai:"+tt.cfg.Model; got != want {
					t.Errorf("Name = %q, want %q", got, want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || strings.Contains(err.Error(), "PW_SECRET") {
				t.Fatalf("err = %v, want %q without the password", err, tt.wantErr)
			}
		})
	}
}

// TestBaseURLWithAQuery: a base URL with a query (a key in it) could not
// work, the API's paths being appended to it: it is refused, without the
// key in the error.
func TestBaseURLWithAQuery(t *testing.T) {
	t.Parallel()
	for _, base := range []string{"http://127.0.0.1:1/v1?key=SECRETQ", "http://127.0.0.1:1/v1?", "http://127.0.0.1:1/v1#"} {
		_, err := openai.New(openai.Config{BaseURL: base, Model: "m"})
		if err == nil || strings.Contains(err.Error(), "SECRETQ") || !strings.Contains(err.Error(), "no query") {
			t.Fatalf("%s: err = %v, want the query refused without its key", base, err)
		}
	}
}

func TestChatUnknownRole(t *testing.T) {
	t.Parallel()
	c := newClient(t, openai.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "m"})
	_, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: "tool", Content: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "unknown role") {
		t.Fatalf("err = %v", err)
	}
}

// TestChatStreamVaryingChunkIDs: servers that give every chunk its own id
// (as llama.cpp's and some vLLM builds do) stream one reply all the same.
func TestChatStreamVaryingChunkIDs(t *testing.T) {
	t.Parallel()
	srv := providertest.NewServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i, piece := range []string{"Hel", "lo", " there"} {
			fmt.Fprintf(w, `data: {"id":"chatcmpl-%d","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`+"\n\n", i, piece)
		}
		_, _ = io.WriteString(w, `data: {"id":"chatcmpl-9","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":3,"total_tokens":6}}`+"\n\n")
		_, _ = io.WriteString(w, "data: [DONE]\n\n")
	})
	c := newClient(t, openai.Config{BaseURL: srv.URL + "/v1", Model: "m"})
	var deltas []string
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "x"}}}, func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello there" || resp.StopReason != "stop" || resp.Usage.InputTokens != 3 || len(deltas) != 3 {
		t.Fatalf("resp %+v deltas %q", resp, deltas)
	}
}
