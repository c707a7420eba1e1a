package anthropic_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/anthropic"
)

// FuzzReply: whatever a server answers a message with, whatever
// its status, the client returns a reply or an error, never a panic, and
// no error holds the API key, even one the body echoes.
func FuzzReply(f *testing.F) {
	f.Add(200, message("Hello", "end_turn", 3, 1))
	f.Add(200, `{"content":[{"type":"tool_use","input":null}]}`)
	f.Add(401, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key `+testKey+`"}}`)
	f.Add(529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	f.Add(500, "<html>"+testKey+"</html>")
	f.Add(200, "")
	f.Fuzz(func(t *testing.T, status int, body string) {
		status = 200 + (status%400+400)%400 // 200–599
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		defer srv.Close()
		c, err := anthropic.New(anthropic.Config{BaseURL: srv.URL, APIKey: testKey, Model: "m", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi"}}}, nil)
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Fatalf("status %d: the error holds the key: %v", status, err)
		}
	})
}
