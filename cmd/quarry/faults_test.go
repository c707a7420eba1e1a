package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// faultyModel is an OpenAI-compatible server that misbehaves as told on
// the first `times` requests (all of them when times < 0) and answers the
// research's structured calls properly otherwise.
func faultyModel(t *testing.T, fault string, times int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		i := n.Add(1)
		var req struct {
			Model          string `json:"model"`
			ResponseFormat struct {
				JSONSchema struct{ Name string } `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		content := goodReply(req.ResponseFormat.JSONSchema.Name)
		if times < 0 || i <= int64(times) {
			switch fault {
			case "prose":
				content = "Sure! Here is my plan: first I will look things up, then I will answer."
			case "truncated":
				content = content[:len(content)/2]
			case "fences":
				content = "```json\n" + content + "\n```"
			case "think":
				content = "<think>The user wants a plan. Let me think {about it}.</think>\n" + content
			case "429":
				w.Header().Set("Retry-After", "1")
				http.Error(w, `{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}`, http.StatusTooManyRequests)
				return
			case "500":
				http.Error(w, `{"error":{"message":"the engine crashed","type":"server_error"}}`, http.StatusInternalServerError)
				return
			case "hang":
				<-r.Context().Done()
				return
			}
		}
		resp := map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func goodReply(schema string) string {
	switch schema {
	case "research_plan":
		return `{"strategy":"compare birth years","sub_questions":[{"text":"When was Giuseppe Verdi born?","priority":1,"queries":["Giuseppe Verdi"]},{"text":"When was Antonín Dvořák born?","priority":2,"queries":["Antonín Dvořák"]}],"estimated_seconds":20}`
	case "research_analysis":
		return `{"learnings":[{"text":"Verdi was born in 1813.","source_ids":["S1"]}],"directions":[],"is_complete":true,"confidence":0.9,"relevance":1,"quality":0.8}`
	case "citation_judge":
		return `{"verdicts":[]}`
	case "research_report":
		return `{"title":"Verdi was born first","summary":"Verdi was born in 1813 [cite:S1].","sections":[{"heading":"Birth years","body":"Verdi: 1813 [cite:S1]."}]}`
	}
	return `{}`
}

// TestFaults is the table in docs/faults.md: what a user sees when the model
// misbehaves. Structured-output faults are repaired or retried; a model
// that is rate limited, failing, silent or unreachable fails the research
// (resumable) with the cause named, never "completed" with nothing read.
func TestFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fault   string
		times   int
		timeout string
		ok      bool
		want    string // in the error when !ok
	}{
		{"prose", 1, "", true, ""},
		{"truncated", 1, "", true, ""},
		{"fences", -1, "", true, ""},
		{"think", -1, "", true, ""},
		{"429", 1, "", true, ""},
		{"429", -1, "4s", false, "429"},
		{"500", -1, "", false, "500"},
		{"hang", -1, "3s", false, "no plan within the time budget"},
		{"refused", -1, "", false, "connection refused"},
	}
	for _, tc := range cases {
		t.Run(tc.fault+map[bool]string{true: "-once", false: "-always"}[tc.times > 0], func(t *testing.T) {
			t.Parallel()
			srv, calls := faultyModel(t, tc.fault, tc.times)
			base := srv.URL + "/v1"
			if tc.fault == "refused" {
				srv.Close()
			}
			data := t.TempDir()
			args := []string{"--llm", "openai:local", "--llm-base-url", base, "research", composerQ, "--docs", researchCorpus, "--format", "json"}
			if tc.timeout != "" {
				args = append(args, "--timeout", tc.timeout)
			}
			out, errOut, err := run(t, data, args...)
			if tc.ok {
				if err != nil || !strings.Contains(out, `"status": "completed"`) {
					t.Fatalf("want completed after the fault: %v\n%s", err, errOut)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want a failure naming %q (%d model calls)\n%s", err, tc.want, calls.Load(), errOut)
			}
			if !strings.Contains(errOut, "failed at stage planning") || !strings.Contains(errOut, "quarry research --resume") {
				t.Fatalf("the user is not told the research can be resumed:\n%s", errOut)
			}
			list, _, _ := run(t, data, "research", "list", "--json")
			if !strings.Contains(list, `"status":"failed"`) {
				t.Fatalf("stored status: %s", list)
			}
		})
	}
}
