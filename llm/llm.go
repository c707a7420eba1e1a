// Package llm is Quarry's small interface to language models: one chat call
// (optionally streamed), structured JSON output validated against a schema
// and repaired or retried when a model wraps it in prose, fences or <think>
// blocks, and token usage per call. Providers live in sub-packages named
// after what they wrap: llm/openai (OpenAI and every OpenAI-compatible
// server) and llm/anthropic (Claude); llm/llmtest holds a scripted fake.
package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Message is one turn of a conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Schema asks for a JSON reply that matches a JSON Schema.
type Schema struct {
	// Name identifies the schema to providers that want one (letters,
	// digits, '_' and '-').
	Name string
	// JSON is the schema document.
	JSON map[string]any
}

// Request is one chat call.
type Request struct {
	System   string
	Messages []Message
	// MaxTokens caps the reply (0 = the provider's default, 1024).
	MaxTokens int
	// Temperature, when set, overrides the provider's default.
	Temperature *float64
	// TopP, when set, is nucleus sampling's probability mass (0–1).
	TopP *float64
	// Schema, when set, asks for JSON matching it.
	Schema *Schema
}

// Usage counts the tokens of one or more calls.
type Usage struct {
	Calls        int `json:"llm_calls"`
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Add returns u plus o.
func (u Usage) Add(o Usage) Usage {
	return Usage{Calls: u.Calls + o.Calls, InputTokens: u.InputTokens + o.InputTokens, OutputTokens: u.OutputTokens + o.OutputTokens}
}

// Total is input plus output tokens.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Response is a model's reply.
type Response struct {
	Text  string
	Model string
	// StopReason is the provider's, e.g. "stop", "length", "end_turn", "max_tokens".
	StopReason string
	Usage      Usage
}

// Provider is a language model. Chat sends req; when onDelta is non-nil the
// reply is streamed and onDelta receives each piece of text as it arrives.
// Implementations retry 429 and 5xx answers with backoff that honours
// Retry-After, and stop when ctx ends.
type Provider interface {
	// Name is "provider:model", e.g. "openai:gpt-4o-mini".
	Name() string
	Chat(ctx context.Context, req Request, onDelta func(string)) (*Response, error)
}

// DefaultMaxTokens is the reply cap when a request sets none.
const DefaultMaxTokens = 1024

// APIError is an error answer from a provider, after retries.
type APIError struct {
	Provider   string
	StatusCode int
	Message    string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("%s: HTTP %d: %s", e.Provider, e.StatusCode, truncate(strings.TrimSpace(e.Message), 300))
}

// ErrEmptyReply is returned when a model answers with no text.
var ErrEmptyReply = errors.New("model returned an empty reply")
