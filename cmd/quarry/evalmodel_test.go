package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestEvalResearchModelContext: with a model, eval research records what
// the model is shown and reports whether the answer string was in it. The
// answer sits at the end of a long chunk, past the first 1,500 bytes a
// source once showed: the model sees the window that bears on the
// question.
func TestEvalResearchModelContext(t *testing.T) {
	questionRE := regexp.MustCompile(`(?m)^(?:Original question|Question): (.*)$`)
	var mu sync.Mutex
	var prompts []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
			ResponseFormat struct {
				JSONSchema struct {
					Name string `json:"name"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		prompt := req.Messages[len(req.Messages)-1].Content
		mu.Lock()
		prompts = append(prompts, prompt)
		mu.Unlock()
		q := ""
		if m := questionRE.FindStringSubmatch(prompt); m != nil {
			q = m[1]
		}
		var content any
		switch req.ResponseFormat.JSONSchema.Name {
		case "research_plan":
			content = map[string]any{"strategy": "s", "sub_questions": []any{map[string]any{"text": q, "priority": 1, "queries": []string{q}}}, "estimated_seconds": 5}
		case "research_analysis":
			content = map[string]any{"learnings": []any{}, "directions": []any{}, "is_complete": true, "confidence": 0.5, "relevance": 0.5, "quality": 0.5}
		case "research_report":
			content = map[string]any{"title": q, "summary": "A scripted model writes no answer [cite:S1].", "sections": []any{}}
		default:
			content = map[string]any{"verdicts": []any{}}
		}
		c, _ := json.Marshal(content)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": string(c)}}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}})
	}))
	defer srv.Close()

	docs := t.TempDir()
	var page strings.Builder
	page.WriteString("# Configuration\n\nThis page lists the repository settings.\n\n")
	for i := range 18 { // one chunk of ~450 tokens, the answer at its end
		fmt.Fprintf(&page, "core.option%d\n\nThis option controls behaviour number %d of the working tree and is rarely changed by users.\n\n", i, i)
	}
	page.WriteString("gc.auto\n\nWhen there are approximately more than this many loose objects in the repository, git gc --auto will pack them. The default value is 6700.\n\n")
	if err := os.WriteFile(filepath.Join(docs, "config.md"), []byte(page.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	set := filepath.Join(t.TempDir(), "set.jsonl")
	q := `{"id":"q1","question":"By default, how many loose objects pile up before git gc --auto packs them?","pages":["config.md"],"answers":["6700"],"unanswerable":false,"lang":"en"}` + "\n"
	if err := os.WriteFile(set, []byte(q), 0o644); err != nil {
		t.Fatal(err)
	}
	setenv(t, "QUARRY_LLM", "openai:scripted")
	setenv(t, "OPENAI_BASE_URL", srv.URL+"/v1")
	setenv(t, "OPENAI_API_KEY", "sk-test")
	data := t.TempDir()
	if _, errOut, err := run(t, data, "kb", "add", "conf", docs, "--create"); err != nil {
		t.Fatalf("kb add: %v\n%s", err, errOut)
	}
	out, errOut, err := run(t, data, "eval", "research", "--kb", "conf", "--dataset", set, "--json", "--allow-private")
	if err != nil {
		t.Fatalf("eval research: %v\n%s", err, errOut)
	}
	var res struct {
		Scores struct {
			InContext float64 `json:"answer_in_model_context"`
		}
		Questions []struct {
			PageRead  bool  `json:"page_read"`
			InContext *bool `json:"in_model_context"`
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(res.Questions) != 1 || !res.Questions[0].PageRead || res.Questions[0].InContext == nil || !*res.Questions[0].InContext || res.Scores.InContext != 1 {
		t.Fatalf("the answer string did not reach the model's context (%d prompts):\n%s", len(prompts), out)
	}
	// The analyst itself read the answer (not only the writer, whose
	// prompt lists the facts extracted from every source).
	analysed := false
	for _, p := range prompts {
		analysed = analysed || strings.Contains(p, "New data:") && strings.Contains(p, "gc.auto") && strings.Contains(p, "The default value is 6700.")
	}
	if !analysed {
		t.Errorf("the analysis prompt lacks the answer and its setting's name:\n%q", prompts)
	}
	if i := strings.Index(page.String(), "6700"); i < 1500 {
		t.Fatalf("the answer is at byte %d: too early to test a window past the first 1,500", i)
	}
}

// TestEvalAblateNamesTheRule: an unknown rule is an error naming the
// flag and the rules there are.
func TestEvalAblateNamesTheRule(t *testing.T) {
	_, _, err := run(t, t.TempDir(), "eval", "ask", "--kb", "k", "--dataset", "d.jsonl", "--ablate", "heading,bogus")
	if err == nil || !strings.Contains(err.Error(), `ablate: unknown rule "bogus"`) || !strings.Contains(err.Error(), "window") {
		t.Fatalf("err = %v", err)
	}
}
