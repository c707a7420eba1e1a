package openai_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/openai"
)

// Any OpenAI-compatible server (OpenAI, Ollama, vLLM, llama.cpp, LM
// Studio) is an llm.Provider through this client. Here the server is a
// stand-in answering one chat completion.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"local",
			"choices":[{"index":0,"message":{"role":"assistant","content":"Verdi was born in 1813."},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":12,"completion_tokens":7,"total_tokens":19}}`)
	}))
	defer srv.Close()

	var p llm.Provider
	p, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1", Model: "local"})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := p.Chat(context.Background(), llm.Request{
		System:   "Answer in one sentence.",
		Messages: []llm.Message{{Role: "user", Content: "When was Verdi born?"}},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Name())
	fmt.Println(resp.Text, resp.StopReason, resp.Usage.InputTokens, resp.Usage.OutputTokens)
	// Output:
	// openai:local
	// Verdi was born in 1813. stop 12 7
}
