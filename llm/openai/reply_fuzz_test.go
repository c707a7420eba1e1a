package openai_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/openai"
)

// FuzzReply: whatever a server answers a chat completion with, whatever
// its status, the client returns a reply or an error, never a panic, and
// no error holds the API key, even one the body echoes.
func FuzzReply(f *testing.F) {
	f.Add(200, completion("Hello", "stop", 3, 1))
	f.Add(200, `{"choices":[{"index":0,"message":{"content":null}}]}`)
	f.Add(400, `{"error":{"message":"Incorrect API key provided: `+testKey+`","type":"invalid_request_error"}}`)
	f.Add(401, `{"error":"bad key `+testKey+`"}`)
	f.Add(422, `{"detail":[{"loc":["body"],"msg":"`+testKey+`"}]}`)
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
		c, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", APIKey: testKey, Model: "m", MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(context.Background(), llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "Hi"}}}, nil)
		if err != nil && strings.Contains(err.Error(), testKey) {
			t.Fatalf("status %d: the error holds the key: %v", status, err)
		}
	})
}
