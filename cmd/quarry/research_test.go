package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/research/pdf"
)

var researchCorpus = filepath.Join("testdata", "research", "corpus.jsonl")

const composerQ = "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?"

func TestResearchOffline(t *testing.T) {
	data := t.TempDir()
	out, errOut, err := run(t, data, "research", composerQ, "--docs", researchCorpus, "--format", "json")
	if err != nil {
		t.Fatalf("research: %v\n%s", err, errOut)
	}
	if !strings.Contains(errOut, "offline extractive engine") {
		t.Errorf("stderr does not say the engine is offline: %s", errOut)
	}
	var r struct {
		ID, Question, Status, Engine string
		Plan                         map[string]any
		SubQuestions                 []map[string]any `json:"sub_questions"`
		Sources                      []map[string]any
		Learnings                    []map[string]any
		Report                       struct {
			Title, Markdown string
			Sections        []map[string]any
			References      []struct {
				Number   int
				SourceID string `json:"source_id"`
				URL      string
				Title    string
			}
		}
		Usage         map[string]any
		Timings       map[string]any
		Facts         []map[string]any
		Discrepancies []map[string]any
		Checks        struct {
			Rate        float64 `json:"citation_support_rate"`
			Passages    int     `json:"cited_passages"`
			Unsupported []any
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(r.Facts) == 0 || r.Discrepancies == nil {
		t.Fatalf("facts %d, discrepancies %v", len(r.Facts), r.Discrepancies)
	}
	for _, k := range []string{"id", "text", "source_id", "confidence", "verified", "section"} {
		if _, ok := r.Facts[0][k]; !ok {
			t.Errorf("fact lacks %s: %v", k, r.Facts[0])
		}
	}
	if r.Checks.Rate != 1 || r.Checks.Passages == 0 || r.Checks.Unsupported == nil {
		t.Errorf("offline citation check: %+v", r.Checks)
	}
	if r.ID == "" || r.Question != composerQ || r.Status != "completed" || r.Engine != "offline" || r.Plan == nil || len(r.SubQuestions) < 5 || len(r.Learnings) == 0 || r.Usage == nil || r.Timings == nil {
		t.Fatalf("research fields: %+v", r)
	}
	for _, k := range []string{"id", "url", "title", "domain", "credibility"} {
		if _, ok := r.Sources[0][k]; !ok {
			t.Errorf("source lacks %s: %v", k, r.Sources[0])
		}
	}
	if _, ok := r.Sources[0]["content"]; ok {
		t.Error("source content printed in the JSON")
	}
	for _, k := range []string{"llm_calls", "input_tokens", "output_tokens"} {
		if _, ok := r.Usage[k]; !ok {
			t.Errorf("usage lacks %s: %v", k, r.Usage)
		}
	}
	urls := map[string]bool{}
	read := map[string]bool{}
	for _, s := range r.Sources {
		read[s["url"].(string)] = true
	}
	for i, ref := range r.Report.References {
		if ref.Number != i+1 || !read[ref.URL] {
			t.Fatalf("reference %+v is not a source read in this run", ref)
		}
		urls[ref.URL] = true
	}
	name := app.DocsKBName(researchCorpus)
	for _, id := range []string{"w00612", "w02079"} { // Dvořák and Verdi
		if !urls["kb://"+name+"/"+id] {
			t.Errorf("gold paragraph %s not among the references: %v", id, urls)
		}
	}
	md := r.Report.Markdown
	for _, want := range []string{"# " + composerQ, "offline extractive engine", "## Executive summary", "## References", "[1] "} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q", want)
		}
	}

	// show, list, events.
	shown, _, err := run(t, data, "research", "show", r.ID)
	if err != nil || shown != md {
		t.Fatalf("show: %v\n%s", err, shown)
	}
	list, _, err := run(t, data, "research", "list", "--json")
	if err != nil || !strings.Contains(list, r.ID) || !strings.Contains(list, `"status":"completed"`) {
		t.Fatalf("list: %v %s", err, list)
	}
	page, _, err := run(t, data, "research", "show", r.ID, "--format", "html")
	if err != nil || !strings.HasPrefix(page, `<article class="quarry-report">`) || !strings.Contains(page, `href="#ref-1"`) || strings.Contains(page, "<script") {
		t.Fatalf("show --format html: %v %.300s", err, page)
	}
	checked, _, err := run(t, data, "research", "show", r.ID, "--check")
	if err != nil || !strings.Contains(checked, "citation support: ") || !strings.Contains(checked, "(1.00)") {
		t.Fatalf("show --check: %v %q", err, checked)
	}
	evs, _, err := run(t, data, "research", "show", r.ID, "--events")
	if err != nil || !strings.Contains(evs, `"type":"agent"`) || !strings.Contains(evs, `"type":"report"`) {
		t.Fatalf("events: %v", err)
	}
	// A second run reuses the ingested knowledge base by name.
	out, _, err = run(t, data, "research", "Who was Giuseppe Verdi?", "--source", "kb:"+name, "--level", "quick", "--out", filepath.Join(data, "r.md"))
	if err != nil || out != "" {
		t.Fatalf("--out: %v %q", err, out)
	}
	// Legacy --depth N alone: a single pass of breadth N.
	out, _, err = run(t, data, "research", "Who was Giuseppe Verdi?", "--source", "kb:"+name, "--depth", "3", "--format", "json")
	if err != nil || !strings.Contains(out, `"breadth": 3`) || strings.Contains(out, `"depth": 1`) || !strings.Contains(out, `"stop_reason": "depth 0 reached"`) {
		t.Fatalf("legacy depth: %v", err)
	}

	bad := []struct {
		args []string
		want string
	}{
		{[]string{"research", "", "--source", "kb:" + name}, "question: must not be empty"},
		{[]string{"research", strings.Repeat("q", 2001), "--source", "kb:" + name}, "question: must be at most 2000 characters"},
		{[]string{"research", "q", "--source", "kb:" + name, "--level", "deep"}, "level: must be quick, standard or comprehensive"},
		{[]string{"research", "q", "--source", "kb:" + name, "--breadth", "2", "--depth", "6"}, "depth: must be between 0 and 5"},
		{[]string{"research", "q", "--source", "kb:" + name, "--breadth", "0"}, "breadth: must be between 1 and 20"},
		{[]string{"research", "q", "--source", "kb:" + name, "--timeout", "900000h"}, "timeout: must be at most 24h0m0s"},
		{[]string{"research", "q", "--source", "kb:" + name, "--timeout", "-1s"}, "timeout: must not be negative"},
		{[]string{"research", "q", "--source", "kb:missing"}, `knowledge base "missing" does not exist`},
		{[]string{"research", "q", "--source", "bogus"}, `unknown source "bogus"`},
		{[]string{"research", "q"}, "source: give --source"},
		{[]string{"research", "q", "--source", "kb:" + name, "--format", "docx"}, "format: must be markdown, json, html or pdf"},
		{[]string{"research", "q", "--source", "kb:" + name, "--format", "pdf"}, "out: --format pdf writes a file"},
		{[]string{"research", "q", "--source", "kb:" + name, "--llm", "gemini"}, "llm: must be offline"},
		{[]string{"research", "--resume", "no-such-id"}, "not found"},
		{[]string{"research", "show", "no-such-id"}, "not found"},
	}
	for _, b := range bad {
		_, _, err := run(t, data, b.args...)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%.60q: err = %v, want %q", b.args, err, b.want)
		}
	}
}

// TestResearchOpenAICompatible runs a research through the OpenAI
// chat-completions wire format against a local server, as with vLLM or
// Ollama: QUARRY_LLM picks the provider, OPENAI_BASE_URL the server.
func TestResearchOpenAICompatible(t *testing.T) {
	var mu sync.Mutex
	var schemas []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, "bad request "+r.URL.Path, http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model          string `json:"model"`
			ResponseFormat struct {
				JSONSchema struct {
					Name string `json:"name"`
				} `json:"json_schema"`
			} `json:"response_format"`
		}
		_ = json.Unmarshal(body, &req)
		mu.Lock()
		schemas = append(schemas, req.ResponseFormat.JSONSchema.Name)
		mu.Unlock()
		var content string
		switch req.ResponseFormat.JSONSchema.Name {
		case "research_plan":
			content = `{"strategy":"compare birth years","sub_questions":[{"text":"When was Giuseppe Verdi born?","priority":1,"queries":["Giuseppe Verdi"]},{"text":"When was Antonín Dvořák born?","priority":2,"queries":["Antonín Dvořák"]}],"estimated_seconds":20}`
		case "research_analysis":
			content = "<think>both found</think>```json\n" + `{"learnings":[{"text":"Verdi was born in 1813.","source_ids":["S1"]}],"directions":[],"is_complete":true,"confidence":0.9,"relevance":1,"quality":0.8,` +
				`"facts":[{"source_id":"S1","quote":"Giuseppe Fortunino Francesco Verdi (9 or 10 October 1813 – 27 January 1901) was an Italian opera composer.","topic":"Giuseppe Verdi birth year","value":"1813"},{"source_id":"S1","quote":"Verdi was born in Busseto.","topic":"Giuseppe Verdi birthplace","value":"Busseto"}]}` + "\n```"
		case "citation_judge":
			// Two passages passed the lexical check; the second adds a
			// place its source does not give.
			content = `{"verdicts":[{"id":"P1","supported":true,"reason":""},{"id":"P2","supported":false,"reason":"the source does not say Bohemia"}]}`
		case "research_report":
			content = `{"title":"Verdi was born first","summary":"Verdi was born in 1813 [cite:S1], before Dvořák [cite:S2]. See also [cite:S77].","sections":[{"heading":"Birth years","body":"Verdi: 1813 [cite:S1]. Verdi was an Italian opera composer from Bohemia [cite:S1]."}]}`
		}
		resp := map[string]any{"id": "c1", "object": "chat.completion", "created": 1, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": content}}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 20, "total_tokens": 120}}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	setenv(t, "QUARRY_LLM", "openai:local-model")
	setenv(t, "OPENAI_BASE_URL", srv.URL+"/v1")
	setenv(t, "OPENAI_API_KEY", "sk-test")
	data := t.TempDir()
	out, errOut, err := run(t, data, "research", composerQ, "--docs", researchCorpus, "--format", "json")
	if err != nil {
		t.Fatalf("research: %v\n%s", err, errOut)
	}
	var r struct {
		Engine string
		Facts  []struct {
			Method, Section, Text string
		}
		RejectedClaims []struct{ Reason string } `json:"rejected_claims"`
		Checks         struct {
			Judge       string
			Judged      int
			Unsupported []struct{ Text, Reason string }
		}
		Usage struct {
			Calls int `json:"llm_calls"`
			In    int `json:"input_tokens"`
		}
		Report struct {
			Markdown   string
			References []struct {
				SourceID string `json:"source_id"`
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.Engine != "openai:local-model" || r.Usage.Calls != 4 || r.Usage.In != 400 {
		t.Fatalf("engine %s usage %+v (schemas %v)", r.Engine, r.Usage, schemas)
	}
	if len(r.Report.References) != 2 || strings.Contains(r.Report.Markdown, "S77") || !strings.Contains(r.Report.Markdown, "Verdi was born in 1813 [1], before Dvořák [2].") {
		t.Fatalf("report:\n%s", r.Report.Markdown)
	}
	if strings.Contains(errOut+out, "sk-test") {
		t.Fatal("the API key leaked into the output")
	}
	// Facts came from the model where it gave them; the invented one did not.
	var model int
	for _, f := range r.Facts {
		if f.Method == "model" {
			model++
			if f.Section != "Giuseppe Verdi birth year" || !strings.HasPrefix(f.Text, "Giuseppe Fortunino") {
				t.Errorf("model fact %+v", f)
			}
		}
	}
	if model != 1 || len(r.RejectedClaims) != 1 || r.RejectedClaims[0].Reason != "the quote is not in the source text" {
		t.Fatalf("facts %+v rejected %+v", r.Facts, r.RejectedClaims)
	}
	if r.Checks.Judge != "openai:local-model" || r.Checks.Judged != 2 || len(r.Checks.Unsupported) != 3 || r.Checks.Unsupported[2].Text != "Verdi was an Italian opera composer from Bohemia" || !strings.Contains(r.Checks.Unsupported[2].Reason, "does not say Bohemia") {
		t.Fatalf("checks %+v", r.Checks)
	}
}

// TestResearchPDF: research show --format pdf writes the report as a PDF
// printed by Chromium (skipped without it, failed under CI).
func TestResearchPDF(t *testing.T) {
	if _, err := pdf.Chromium(""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	data := t.TempDir()
	out, errOut, err := run(t, data, "research", composerQ, "--docs", researchCorpus, "--format", "json")
	if err != nil {
		t.Fatalf("research: %v\n%s", err, errOut)
	}
	var r struct{ ID string }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "r.pdf")
	if _, errOut, err := run(t, data, "research", "show", r.ID, "--format", "pdf", "--out", file); err != nil {
		t.Fatalf("show --format pdf: %v\n%s", err, errOut)
	}
	b, err := os.ReadFile(file)
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("not a PDF (%v): %q", err, b[:min(len(b), 16)])
	}
}
