package llm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/llm"
)

func TestExtractJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
		wantErr        string
	}{
		{"plain", `{"a":1}`, `{"a":1}`, ""},
		{"fenced", "```json\n{\"a\": [1, 2]}\n```", `{"a": [1, 2]}`, ""},
		{"prose around", "Sure! Here is the JSON:\n{\"a\":\"}\"}\nHope this helps.", `{"a":"}"}`, ""},
		{"think block", "<think>maybe {\"a\":2}?</think>\n{\"a\":1}", `{"a":1}`, ""},
		{"closing think only", "reasoning {x}</think>{\"a\":1}", `{"a":1}`, ""},
		{"unclosed think", "<think>still thinking {\"a\":1}", "", "no JSON object"},
		{"escaped quote", `{"a":"say \"}\" now"}`, `{"a":"say \"}\" now"}`, ""},
		{"truncated", `{"learnings": ["one", "tw`, "", "truncated"},
		{"empty", "", "", "no JSON object"},
		{"prose only", "I cannot answer that.", "", "no JSON object"},
		{"mismatched then good", `{a] and {"b":true}`, `{"b":true}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := llm.ExtractJSON(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ExtractJSON(%q) = %q, %v; want error containing %q", tt.in, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ExtractJSON(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

func FuzzExtractJSON(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "```json\n{}\n```", "<think>x</think>{\"b\":[1,{}]}", `{"a":"\"}`, "[{]}", "</think>{}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := llm.ExtractJSON(s)
		if err != nil {
			return
		}
		if !strings.HasPrefix(got, "{") || !strings.HasSuffix(got, "}") {
			t.Fatalf("ExtractJSON(%q) = %q: not an object", s, got)
		}
		if !strings.Contains(s, got) {
			t.Fatalf("ExtractJSON(%q) = %q: not a substring of the input", s, got)
		}
		// A balanced object that is valid JSON must round-trip.
		var v any
		if json.Valid([]byte(got)) {
			if err := json.Unmarshal([]byte(got), &v); err != nil {
				t.Fatal(err)
			}
		}
	})
}
