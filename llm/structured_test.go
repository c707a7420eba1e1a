package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/llmtest"
)

type analysis struct {
	Learnings  []string `json:"learnings" jsonschema:"facts learned"`
	IsComplete bool     `json:"is_complete"`
	Confidence float64  `json:"confidence"`
	Note       string   `json:"note,omitempty"`
}

func TestStructured(t *testing.T) {
	t.Parallel()
	good := `{"learnings":["a"],"is_complete":true,"confidence":0.8}`
	tests := []struct {
		name    string
		replies []string
		calls   int
		wantErr string
	}{
		{"valid first time", []string{good}, 1, ""},
		{"fenced with think", []string{"<think>hmm</think>```json\n" + good + "\n```"}, 1, ""},
		{"prose then valid on retry", []string{"The answer is that it is complete.", good}, 2, ""},
		{"truncated then valid", []string{`{"learnings":["a"`, good}, 2, ""},
		{"missing field then valid", []string{`{"learnings":[]}`, good}, 2, ""},
		{"wrong type twice", []string{`{"learnings":"a","is_complete":true,"confidence":1}`, `{"learnings":[1],"is_complete":true,"confidence":1}`}, 2, "does not match the schema"},
		{"empty twice", []string{"", "  "}, 2, "empty reply"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := &llmtest.Fake{Model: "t", Reply: llmtest.Script(tt.replies...)}
			out, usage, err := llm.Structured[analysis](context.Background(), fake, "analysis", llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: "analyze"}}})
			if usage.Calls != tt.calls {
				t.Errorf("calls = %d, want %d", usage.Calls, tt.calls)
			}
			reqs := fake.Requests()
			if reqs[0].Schema == nil || reqs[0].Schema.Name != "analysis" || reqs[0].Schema.JSON["type"] != "object" {
				t.Errorf("schema not sent: %+v", reqs[0].Schema)
			}
			if tt.wantErr != "" {
				var se *llm.StructuredError
				if !errors.As(err, &se) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want StructuredError containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Learnings) != 1 || !out.IsComplete || out.Confidence != 0.8 {
				t.Fatalf("out = %+v", out)
			}
			if tt.calls == 2 {
				last := reqs[1].Messages[len(reqs[1].Messages)-1]
				if !strings.Contains(last.Content, "not valid") {
					t.Errorf("retry did not carry the validation error: %q", last.Content)
				}
			}
		})
	}
}

func TestStructuredProviderError(t *testing.T) {
	t.Parallel()
	fake := &llmtest.Fake{Reply: func(int, llm.Request) (string, error) {
		return "", &llm.APIError{Provider: "fake", StatusCode: 500, Message: "boom"}
	}}
	_, _, err := llm.Structured[analysis](context.Background(), fake, "analysis", llm.Request{})
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.StatusCode != 500 {
		t.Fatalf("err = %v, want APIError 500", err)
	}
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("provider errors are retried by the provider, not here: %d calls", n)
	}
}
