// Package llmtest holds a scripted llm.Provider for tests and benchmarks.
package llmtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quarryhq/quarry/llm"
)

// Fake is a scripted provider. Reply decides each answer; it sees every
// request (and its index) so a test can answer by schema or content.
type Fake struct {
	// Model names the fake in Name ("fake:<Model>").
	Model string
	// Latency is waited before each answer (honouring ctx).
	Latency time.Duration
	// Reply returns the text of the answer to the n-th call (0-based) or an error.
	Reply func(n int, req llm.Request) (string, error)

	mu       sync.Mutex
	requests []llm.Request
}

var _ llm.Provider = (*Fake)(nil)

// Name implements llm.Provider.
func (f *Fake) Name() string { return "fake:" + f.Model }

// Chat implements llm.Provider. Usage counts characters/4 as tokens.
func (f *Fake) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err // as an HTTP client does with a finished ctx
	}
	if f.Latency > 0 {
		t := time.NewTimer(f.Latency)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	if f.Reply == nil {
		return nil, errors.New("llmtest: no Reply scripted")
	}
	text, err := f.Reply(n, req)
	if err != nil {
		return nil, err
	}
	if onDelta != nil {
		onDelta(text)
	}
	in := len(req.System)
	for _, m := range req.Messages {
		in += len(m.Content)
	}
	resp := &llm.Response{Text: text, Model: f.Model, StopReason: "stop", Usage: llm.Usage{Calls: 1, InputTokens: in/4 + 1, OutputTokens: len(text)/4 + 1}}
	if text == "" {
		// As the real providers do: the response, and ErrEmptyReply.
		return resp, fmt.Errorf("llmtest: %w", llm.ErrEmptyReply)
	}
	return resp, nil
}

// Requests returns the requests seen so far.
func (f *Fake) Requests() []llm.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]llm.Request(nil), f.requests...)
}

// Script answers calls in order from replies; past the end it fails.
func Script(replies ...string) func(int, llm.Request) (string, error) {
	return func(n int, _ llm.Request) (string, error) {
		if n >= len(replies) {
			return "", fmt.Errorf("llmtest: call %d not scripted", n)
		}
		return replies[n], nil
	}
}
