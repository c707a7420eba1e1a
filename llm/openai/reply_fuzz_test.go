package openai_test

import (
	"testing"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/internal/providertest"
	"github.com/quarryhq/quarry/llm/openai"
)

// FuzzReply: whatever a server answers a chat completion with, whatever
// its status, no panic and no key in an error (providertest.FuzzReply).
func FuzzReply(f *testing.F) {
	providertest.FuzzReply(f, testKey, func(url, key string) (llm.Provider, error) {
		return openai.New(openai.Config{BaseURL: url + "/v1", APIKey: key, Model: "m", MaxRetries: -1})
	}, map[string]int{
		completion("Hello", "stop", 3, 1):                                                                    200,
		`{"choices":[{"index":0,"message":{"content":null}}]}`:                                               200,
		`{"error":{"message":"Incorrect API key provided: ` + testKey + `","type":"invalid_request_error"}}`: 400,
		`{"error":"bad key ` + testKey + `"}`:                                                                401,
		`{"detail":[{"loc":["body"],"msg":"` + testKey + `"}]}`:                                              422,
		"<html>" + testKey + "</html>":                                                                       500,
		"":                                                                                                   200,
	})
}
