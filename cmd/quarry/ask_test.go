package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
)

// TestAskCLI: an answer in Korean with its source, a follow-up in the
// same session across two runs, and the bad inputs' exit codes.
func TestAskCLI(t *testing.T) {
	data := t.TempDir()
	if _, errOut, err := run(t, data, "kb", "add", "ko", filepath.Join("..", "..", "qa", "testdata", "ko.jsonl"), "--create"); err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	out, errOut, err := run(t, data, "ask", "ko", "요금은 언제 납부하나요?")
	if err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	if !strings.Contains(out, "25일") || !strings.Contains(out, "kb://ko/fees") || !strings.Contains(out, "confidence: ") || !strings.Contains(errOut, "언어 모델") {
		t.Fatalf("answer:\n%s\n%s", out, errOut)
	}
	i := strings.Index(errOut, "--session ")
	if i < 0 {
		t.Fatalf("no session in %s", errOut)
	}
	sid := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(errOut[i+len("--session "):]), ")"))
	out, _, err = run(t, data, "ask", "ko", "사업자는요?", "--session", sid, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var ans struct {
		SessionID   string `json:"session_id"`
		Answer      string
		Sources     []string
		Confidence  float64
		Suggestions []string
		Unknown     bool
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil || ans.SessionID != sid || !strings.Contains(ans.Answer, "말일") || ans.Unknown || ans.Suggestions == nil {
		t.Fatalf("follow-up in the session: %v %s", err, out)
	}
	out, _, err = run(t, data, "ask", "ko", "화성 탐사선의 발사 일정은 어떻게 되나요?", "--json")
	if err != nil || !strings.Contains(out, `"unknown": true`) {
		t.Fatalf("unanswerable: %v %s", err, out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ask", "ko", "q", "--session", "nope"}, exitUsage, "session_id"},
		{[]string{"ask", "ko", strings.Repeat("질", 2001)}, exitUsage, "1-2000 characters, got 2001"},
		{[]string{"ask", "ko", "q", "--top-k", "21"}, exitUsage, "top_k"},
		{[]string{"ask", "ko"}, exitUsage, "question"},
		{[]string{"ask", "nope", "q"}, exitError, `"nope" does not exist`},
		{[]string{"ask", "ko", "q", "--session", "2c1c7f3e-8f2a-4d4b-9f53-6b2f0e6f7a10"}, exitError, "not found"},
	} {
		_, _, err := run(t, data, c.args...)
		if err == nil || exitCode(err) != c.code || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.60v: %.200v (exit %d), want exit %d with %q", c.args[2:], err, exitCode(err), c.code, c.want)
		}
	}
}

// TestAskWithModelCLI: with a model configured, ask makes one structured
// call to an OpenAI-compatible server (response_format json_schema) and
// reports its answer with the citations checked.
func TestAskWithModelCLI(t *testing.T) {
	data := t.TempDir()
	if _, errOut, err := run(t, data, "kb", "add", "ko", filepath.Join("..", "..", "qa", "testdata", "ko.jsonl"), "--create"); err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	var format string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			ResponseFormat struct {
				Type string `json:"type"`
			} `json:"response_format"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		format = body.ResponseFormat.Type
		reply, _ := json.Marshal(`{"answer": "매월 25일까지 납부합니다 [1].", "citations": [1], "confidence": 0.8, "suggestions": ["연체료는 얼마인가요?"], "unknown": false}`)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"qwen3","choices":[{"index":0,"message":{"role":"assistant","content":%s},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":10,"total_tokens":20}}`, reply)
	}))
	defer srv.Close()
	out, errOut, err := run(t, data, "ask", "ko", "요금은 언제 납부하나요?", "--json", "--llm", "openai:qwen3", "--llm-base-url", srv.URL+"/v1")
	if err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	var ans struct {
		Answer     string
		Sources    []string
		Confidence float64
		Engine     string
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil || ans.Answer != "매월 25일까지 납부합니다 [1]." || ans.Engine != "openai:qwen3" || ans.Confidence != 0.8 || len(ans.Sources) != 1 || format != "json_schema" {
		t.Fatalf("%v %s (format %q)", err, out, format)
	}
}
