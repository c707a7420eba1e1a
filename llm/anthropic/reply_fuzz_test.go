package anthropic_test

import (
	"testing"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/anthropic"
	"github.com/quarryhq/quarry/llm/internal/providertest"
)

// FuzzReply: whatever a server answers a message with, whatever its
// status, no panic and no key in an error (providertest.FuzzReply).
func FuzzReply(f *testing.F) {
	providertest.FuzzReply(f, testKey, func(url, key string) (llm.Provider, error) {
		return anthropic.New(anthropic.Config{BaseURL: url, APIKey: key, Model: "m", MaxRetries: -1})
	}, map[string]int{
		message("Hello", "end_turn", 3, 1):               200,
		`{"content":[{"type":"tool_use","input":null}]}`: 200,
		`{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key ` + testKey + `"}}`: 401,
		`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`:                            529,
		"<html>" + testKey + "</html>": 500,
		"":                             200,
	})
}
