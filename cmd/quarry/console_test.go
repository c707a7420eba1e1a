package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConsoleCLI: a dataset from BEIR files, pipelines with the seed's
// rules, and retrieve marking golden chunks in a test pipeline.
func TestConsoleCLI(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corpusFile := write("corpus.jsonl", `{"_id": "d1", "title": "Aspirin", "text": "Aspirin lowers the risk of heart attacks in adults with heart disease."}
{"_id": "d2", "title": "Vitamin D", "text": "Vitamin D supplements do not prevent fractures in healthy older adults."}
{"_id": "d3", "title": "Coffee", "text": "Drinking coffee is linked to a lower risk of type 2 diabetes."}
`)
	queries := write("queries.jsonl", `{"_id": "q1", "text": "Does aspirin prevent heart attacks?"}
{"_id": "q2", "text": "Does vitamin D prevent fractures?"}
{"_id": "q3", "text": "An unjudged question"}
`)
	qrels := write("qrels.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
	badQrels := write("bad.tsv", "query-id\tcorpus-id\tscore\nq1\td404\t1\n")
	if _, e, err := run(t, data, "kb", "add", "sci", corpusFile, "--create"); err != nil {
		t.Fatal(err, e)
	}
	out, e, err := run(t, data, "dataset", "create", "sci-dev", "--from-beir", queries, qrels, "--kb", "sci")
	if err != nil || !strings.Contains(out, "2 questions") {
		t.Fatalf("dataset: %v %s %s", err, out, e)
	}
	if _, _, err := run(t, data, "dataset", "create", "bad", "--from-beir", queries+","+badQrels, "--kb", "sci"); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "d404") {
		t.Fatalf("golden documents the knowledge base lacks: %v", err)
	}
	if _, _, err := run(t, data, "pipeline", "create", "sci-test", "--kb", "sci", "--type", "test", "--dataset", "sci-dev", "--mode", "bm25", "--top-k", "2"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "pipeline", "create", "sci-hybrid", "--kb", "sci"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"pipeline", "create", "x", "--kb", "sci", "--type", "prod"}, "pipeline_type must be 'normal' or 'test'"},
		{[]string{"pipeline", "list", "--type", "prod"}, "pipeline_type must be 'normal' or 'test'"},
		{[]string{"pipeline", "create", "x", "--kb", "sci", "--top-k", "21"}, "Top K must be between 1 and 20"},
		{[]string{"pipeline", "create", "x", "--kb", "sci", "--top-k", "0"}, "Top K must be between 1 and 20"},
		{[]string{"retrieve", "--pipeline", "sci-test", strings.Repeat("q", 10001)}, "Query must be 1-10000 characters"},
		{[]string{"retrieve", "--pipeline", "sci-test", "q", "--top-k", "0"}, ""},
		{[]string{"pipeline", "create", "x", "--kb", "sci", "--type", "test"}, "needs a dataset"},
	} {
		_, _, err := run(t, data, c.args...)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.args[:2], err)
			}
			continue
		}
		if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args[:2], err, c.want)
		}
	}
	if _, _, err := run(t, data, "retrieve", "--pipeline", "nope", "q"); err == nil || !strings.Contains(err.Error(), "Invalid pipeline ID") {
		t.Fatalf("unknown pipeline: %v", err)
	}
	list, _, err := run(t, data, "pipeline", "list", "--type", "test", "--dataset", "sci-dev", "--json")
	if err != nil || !strings.Contains(list, `"sci-test"`) || strings.Contains(list, "sci-hybrid") {
		t.Fatalf("filtered list: %v %s", err, list)
	}
	out, _, err = run(t, data, "retrieve", "--pipeline", "sci-test", "Does aspirin prevent heart attacks?", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		QuestionID    string  `json:"question_id"`
		RetrievalTime float64 `json:"retrieval_time"`
		Chunks        []struct {
			DatasourceID string  `json:"datasource_id"`
			Score        float64 `json:"score"`
			IsGolden     *bool   `json:"is_golden"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.QuestionID != "q1" || len(r.Chunks) != 2 || r.RetrievalTime <= 0 {
		t.Fatalf("retrieve: %v %s", err, out)
	}
	if r.Chunks[0].DatasourceID != "kb://sci/d1" || r.Chunks[0].Score != 1 || r.Chunks[0].IsGolden == nil || !*r.Chunks[0].IsGolden || *r.Chunks[1].IsGolden {
		t.Fatalf("golden marks: %s", out)
	}
	// A normal pipeline marks nothing.
	out, _, err = run(t, data, "retrieve", "--pipeline", "sci-hybrid", "Does aspirin prevent heart attacks?", "--json")
	if err != nil || strings.Contains(out, "is_golden") {
		t.Fatalf("normal pipeline: %v %s", err, out)
	}
	if _, _, err := run(t, data, "pipeline", "rm", "sci-hybrid"); err != nil {
		t.Fatal(err)
	}
}

// TestConsoleEvalGenerateCLI: JSON Lines datasets, pipeline update, eval
// pipeline side by side, generate against an OpenAI-compatible server and
// with a Claude key from the environment, and the chat commands.
func TestConsoleEvalGenerateCLI(t *testing.T) {
	data, dir := t.TempDir(), t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corpusFile := write("corpus.jsonl", `{"_id": "d1", "title": "Aspirin", "text": "Aspirin lowers the risk of heart attacks in adults with heart disease."}
{"_id": "d2", "title": "Vitamin D", "text": "Vitamin D supplements do not prevent fractures in healthy older adults."}
`)
	dataset := write("dev.jsonl", `{"id": "a", "question": "Does aspirin prevent heart attacks?", "answer": "Aspirin lowers the risk of heart attacks.", "doc_ids": ["d1"]}
{"id": "b", "question": "Does vitamin D prevent fractures?", "chunks": [{"doc_id": "d2", "chunk_index": 0}]}
`)
	if _, e, err := run(t, data, "kb", "add", "sci", corpusFile, "--create"); err != nil {
		t.Fatal(err, e)
	}
	if out, e, err := run(t, data, "dataset", "create", "dev", "--from-jsonl", dataset, "--kb", "sci"); err != nil || !strings.Contains(out, "2 questions") {
		t.Fatal(err, out, e)
	}
	bad := write("bad.jsonl", `{"id": "a", "question": "q", "doc_ids": ["d404"]}`)
	if _, _, err := run(t, data, "dataset", "create", "bad", "--from-jsonl", bad, "--kb", "sci"); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "d404") {
		t.Fatalf("a golden document the knowledge base lacks: %v", err)
	}
	for _, args := range [][]string{
		{"pipeline", "create", "bm25", "--kb", "sci", "--mode", "bm25", "--type", "test", "--dataset", "dev"},
		{"pipeline", "create", "vec", "--kb", "sci", "--mode", "bm25"},
		{"pipeline", "update", "vec", "--mode", "vector", "--top-k", "3", "--type", "test", "--dataset", "dev"},
	} {
		if _, e, err := run(t, data, args...); err != nil {
			t.Fatal(args, err, e)
		}
	}
	out, _, err := run(t, data, "pipeline", "show", "vec")
	if err != nil || !strings.Contains(out, `"mode": "vector"`) || !strings.Contains(out, `"top_k": 3`) || !strings.Contains(out, `"dataset": "dev"`) {
		t.Fatalf("updated: %v %s", err, out)
	}
	if _, _, err := run(t, data, "pipeline", "update", "vec", "--top-k", "0"); err == nil || !strings.Contains(err.Error(), "Top K must be between 1 and 20") {
		t.Fatalf("update past the rules: %v", err)
	}
	out, _, err = run(t, data, "eval", "pipeline", "bm25", "vec")
	if err != nil || !strings.Contains(out, "nDCG@10") || !strings.Contains(out, "Δ vec") || !strings.Contains(out, "stored as runs 1, 2") {
		t.Fatalf("eval table: %v\n%s", err, out)
	}
	out, _, err = run(t, data, "eval", "pipeline", "bm25", "--json", "--k", "5")
	var runJSON struct {
		Overall   map[string]any   `json:"overall"`
		Questions []map[string]any `json:"questions"`
	}
	if err != nil || json.Unmarshal([]byte(out), &runJSON) != nil || len(runJSON.Questions) != 2 || runJSON.Overall["k"] != 5.0 || runJSON.Overall["ndcg"].(float64) <= 0 {
		t.Fatalf("eval json: %v %s", err, out)
	}
	for _, key := range []string{"ndcg", "recall", "precision", "mrr", "hit_rate", "queries", "p50_ms"} {
		if _, ok := runJSON.Overall[key]; !ok {
			t.Errorf("overall lacks %s: %s", key, out)
		}
	}
	if out, _, err := run(t, data, "eval", "show", "3"); err != nil || !strings.Contains(out, `"query_id": "b"`) {
		t.Fatalf("eval show: %v %s", err, out)
	}

	llmSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != "/v1/chat/completions" || !strings.Contains(string(body), `"model":"llama3"`) || !strings.Contains(string(body), `"temperature":0.2`) {
			http.Error(w, "unexpected request: "+string(body), 400)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"c1","object":"chat.completion","created":1,"model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":"Aspirin lowers the risk [S1]."},"finish_reason":"stop"}],"usage":{"prompt_tokens":90,"completion_tokens":10,"total_tokens":100}}`)
	}))
	defer llmSrv.Close()
	out, e, err := run(t, data, "generate", "--pipeline", "bm25", "Does aspirin prevent heart attacks?", "--model", "vllm:llama3", "--endpoint", llmSrv.URL+"/v1", "--temperature", "0.2", "--json", "--chat", "new")
	var g struct {
		Answer     string  `json:"answer"`
		TokensUsed int     `json:"tokens_used"`
		LLMTime    float64 `json:"llm_time"`
		ChatID     string  `json:"chat_id"`
		Messages   int     `json:"chat_messages"`
		Sources    []any   `json:"sources"`
	}
	if err != nil || json.Unmarshal([]byte(out), &g) != nil || g.Answer != "Aspirin lowers the risk [S1]." || g.TokensUsed != 100 || g.LLMTime <= 0 || g.ChatID == "" || g.Messages != 2 || len(g.Sources) == 0 {
		t.Fatalf("generate: %v %s %s", err, out, e)
	}
	if out, _, err := run(t, data, "chat", "show", g.ChatID); err != nil || !strings.Contains(out, "Aspirin lowers the risk") {
		t.Fatalf("chat show: %v %s", err, out)
	}
	if _, _, err := run(t, data, "chat", "clear", g.ChatID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "chat", "show", g.ChatID); err == nil {
		t.Fatal("a cleared chat is still there")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "claude"}, "api_key is required for Claude"},
		{[]string{"--model", "vllm:llama3"}, "endpoint is required for vLLM"},
		{[]string{"--model", "vllm:llama3", "--endpoint", "localhost:8000"}, "Invalid vLLM endpoint URL"},
		{[]string{"--model", "vllm:llama3", "--endpoint", llmSrv.URL, "--temperature", "1.5"}, "Temperature must be between 0.0 and 1.0"},
		{[]string{"--model", "vllm:llama3", "--endpoint", llmSrv.URL, "--max-tokens", "50"}, "Max tokens must be between 100 and 4000"},
	} {
		_, _, err := run(t, data, append([]string{"generate", "--pipeline", "bm25", "q"}, c.args...)...)
		if err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	setenv(t, "ANTHROPIC_API_KEY", "not-a-claude-key")
	if _, _, err := run(t, data, "generate", "--pipeline", "bm25", "q", "--model", "claude"); err == nil || !strings.Contains(err.Error(), "Invalid Claude API key format") || strings.Contains(err.Error(), "not-a-claude-key") {
		t.Fatalf("a key from the environment gets the same rule: %v", err)
	}
	if _, _, err := run(t, data, "dataset", "rm", "dev"); err != nil {
		t.Fatal(err)
	}
	if out, _, err := run(t, data, "pipeline", "show", "bm25"); err != nil || strings.Contains(out, `"dataset"`) {
		t.Fatalf("a pipeline after its dataset went: %v %s", err, out)
	}
}
