package console_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/eval"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const docs = `{"_id": "d1", "title": "Aspirin", "text": "Aspirin lowers the risk of heart attacks in adults with heart disease."}
{"_id": "d2", "title": "Vitamin D", "text": "Vitamin D supplements do not prevent fractures in healthy older adults."}
{"_id": "d3", "title": "Coffee", "text": "Drinking coffee is linked to a lower risk of type 2 diabetes."}
{"_id": "d4", "title": "Sleep", "text": "Short sleep raises the risk of obesity in children and adults."}
`

type fixture struct {
	ctx  context.Context
	st   store.Store
	kb   *kb.Service
	emb  embed.Embedder
	c    *console.Service
	file string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, filepath.Join(dir, "q.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &fixture{ctx: ctx, st: st, kb: kb.New(st, nil), emb: embed.Hash{Dim: 64}, file: filepath.Join(dir, "corpus.jsonl")}
	if err := os.WriteFile(f.file, []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kb.Create(ctx, "sci", "", f.emb); err != nil {
		t.Fatal(err)
	}
	f.ingest(t)
	f.c = &console.Service{Store: st, Chats: &session.Memory{}, Models: app.ConsoleModels(console.ProviderOptions{}), KBs: func(context.Context, string) (*kb.Service, embed.Embedder, error) { return f.kb, f.emb, nil }}
	return f
}

func (f *fixture) ingest(t *testing.T) {
	t.Helper()
	if _, err := f.kb.AddPaths(f.ctx, "sci", []string{f.file}, kb.AddOptions{Embedder: f.emb}); err != nil {
		t.Fatal(err)
	}
}

func wantInvalid(t *testing.T, err error, field, msg string) {
	t.Helper()
	if err == nil || errcode.Field(err) != field || !strings.Contains(err.Error(), msg) {
		t.Fatalf("got %v (field %q), want %s: %q", err, errcode.Field(err), field, msg)
	}
}

func TestDatasetJSONL(t *testing.T) {
	f := newFixture(t)
	lines := `{"id": "a", "question": "Does aspirin prevent heart attacks?", "answer": "Aspirin lowers the risk of heart attacks.", "doc_ids": ["d1"]}

{"id": "b", "question": "Does vitamin D prevent fractures?", "chunks": [{"doc_id": "d2", "chunk_index": 0}]}
`
	qs, err := console.ReadJSONL(strings.NewReader(lines))
	if err != nil || len(qs) != 2 {
		t.Fatalf("%+v %v", qs, err)
	}
	if _, err := f.c.ImportJSONL(f.ctx, "dev", "sci", qs); err != nil {
		t.Fatal(err)
	}
	// A chunk id becomes a (document, position) reference.
	var coffee int64
	if err := f.st.ChunkScan(f.ctx, 1, func(c store.IndexedChunk) error {
		if c.DocID == "d3" {
			coffee = c.ID
		}
		return nil
	}); err != nil || coffee == 0 {
		t.Fatal(coffee, err)
	}
	byID := fmt.Sprintf(`{"id": "c", "question": "coffee and diabetes", "chunk_ids": [%d]}`, coffee)
	qs, err = console.ReadJSONL(strings.NewReader(byID))
	if err != nil {
		t.Fatal(err)
	}
	d, err := f.c.ImportJSONL(f.ctx, "by-id", "sci", qs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.st.DatasetQuestions(f.ctx, d.ID)
	if err != nil || len(got) != 1 || got[0].Golden[0] != (store.GoldenRef{DocID: "d3", ChunkIndex: 0}) {
		t.Fatalf("%+v %v", got, err)
	}

	for _, c := range []struct{ in, field, msg string }{
		{`{"id": "a", "question": "q", "doc_ids": ["d1"]}` + "\n" + `{"id": "a", "question": "q", "doc_ids": ["d1"]}`, "id", "line 2"},
		{`{"question": "", "doc_ids": ["d1"]}`, "question", "Query must be 1-10000 characters"},
		{`{"question": "q"}`, "golden", "give doc_ids, chunks or chunk_ids"},
		{`{"question": "q", "chunks": [{"doc_id": "d1", "chunk_index": -1}]}`, "chunks", "chunk_index of 0 or more"},
		{`{"question": "q", "doc_id": ["d1"]}`, "dataset", "unknown field"},
		{`[1, 2]`, "dataset", "line 1"},
		{`{"question": "q", "doc_ids": ["d1"]} {}`, "dataset", "one JSON object per line"},
		{"", "dataset", "no questions"},
	} {
		_, err := console.ReadJSONL(strings.NewReader(c.in))
		wantInvalid(t, err, c.field, c.msg)
	}
	// Golden chunks that the knowledge base does not hold.
	for _, in := range []string{
		`{"question": "q", "doc_ids": ["d404"]}`,
		`{"question": "q", "chunks": [{"doc_id": "d1", "chunk_index": 7}]}`,
		`{"question": "q", "chunk_ids": [999999]}`,
	} {
		qs, err := console.ReadJSONL(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.c.ImportJSONL(f.ctx, "bad", "sci", qs)
		wantInvalid(t, err, "golden", "do not exist in knowledge base")
	}
	if _, err := f.c.Dataset(f.ctx, "bad"); errcode.Of(err) != errcode.NotFound {
		t.Fatalf("a refused dataset was stored: %v", err)
	}
	if err := f.c.DeleteDataset(f.ctx, "by-id"); err != nil {
		t.Fatal(err)
	}
	if err := f.c.DeleteDataset(f.ctx, "by-id"); errcode.Of(err) != errcode.NotFound {
		t.Fatalf("delete twice: %v", err)
	}
}

// TestGoldenSurvivesReingest: golden refs name (document, position), so a
// re-ingest of the unchanged corpus, which may give chunks new row ids,
// keeps them golden.
func TestGoldenSurvivesReingest(t *testing.T) {
	f := newFixture(t)
	qs, err := console.ReadJSONL(strings.NewReader(`{"id": "a", "question": "Does aspirin prevent heart attacks?", "chunks": [{"doc_id": "d1", "chunk_index": 0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.ImportJSONL(f.ctx, "dev", "sci", qs); err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.CreatePipeline(f.ctx, console.PipelineSpec{Name: "t", Type: console.TypeTest, KB: "sci", Dataset: "dev", Settings: console.Settings{Mode: "bm25", TopK: 3}}); err != nil {
		t.Fatal(err)
	}
	check := func() {
		t.Helper()
		r, err := f.c.Retrieve(f.ctx, "t", "Does aspirin prevent heart attacks?", 0)
		if err != nil || len(r.Chunks) == 0 || r.QuestionID != "a" {
			t.Fatalf("%+v %v", r, err)
		}
		for _, c := range r.Chunks {
			if want := c.Metadata["doc_id"] == "d1"; c.IsGolden == nil || *c.IsGolden != want {
				t.Fatalf("chunk of %v: is_golden %v", c.Metadata["doc_id"], c.IsGolden)
			}
		}
	}
	check()
	f.ingest(t)
	check()
}

func TestPipelineUpdate(t *testing.T) {
	f := newFixture(t)
	if _, err := f.c.CreatePipeline(f.ctx, console.PipelineSpec{Name: "p", Type: console.TypeNormal, KB: "sci", Settings: console.Settings{Mode: "bm25", TopK: 3}}); err != nil {
		t.Fatal(err)
	}
	name, typ := "q", "prod"
	_, err := f.c.UpdatePipeline(f.ctx, "p", console.PipelineUpdate{Type: &typ})
	wantInvalid(t, err, "pipeline_type", "pipeline_type must be 'normal' or 'test'")
	_, err = f.c.UpdatePipeline(f.ctx, "p", console.PipelineUpdate{Settings: &console.Settings{Mode: "hybrid", TopK: 21}})
	wantInvalid(t, err, "top_k", "Top K must be between 1 and 20")
	typ = console.TypeTest
	_, err = f.c.UpdatePipeline(f.ctx, "p", console.PipelineUpdate{Type: &typ})
	wantInvalid(t, err, "dataset_id", "needs a dataset")
	p, err := f.c.UpdatePipeline(f.ctx, "p", console.PipelineUpdate{Name: &name, Settings: &console.Settings{Mode: "hybrid", TopK: 7}})
	if err != nil || p.Name != "q" || p.Settings.Mode != "hybrid" || p.Settings.TopK != 7 || p.Type != console.TypeNormal || !p.UpdatedAt.After(p.CreatedAt) && !p.UpdatedAt.Equal(p.CreatedAt) {
		t.Fatalf("%+v %v", p, err)
	}
	if _, err := f.c.UpdatePipeline(f.ctx, "p", console.PipelineUpdate{Name: &name}); err == nil || !strings.Contains(err.Error(), "Invalid pipeline ID") {
		t.Fatalf("the old name: %v", err)
	}
}

// TestEvaluate: two pipelines side by side, the figures stored, and at
// k=10 the same nDCG as eval.Retrieval over the same search.
func TestEvaluate(t *testing.T) {
	f := newFixture(t)
	queries := []corpus.Query{{ID: "q1", Text: "Does aspirin prevent heart attacks?"}, {ID: "q2", Text: "Does vitamin D prevent fractures?"}, {ID: "q3", Text: "risk in adults"}}
	qrels := corpus.Qrels{"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d4": 1, "d1": 1}}
	if _, err := f.c.ImportBEIR(f.ctx, "dev", "sci", queries, qrels); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"bm25", "vector"} {
		if _, err := f.c.CreatePipeline(f.ctx, console.PipelineSpec{Name: m, Type: console.TypeTest, KB: "sci", Dataset: "dev", Settings: console.Settings{Mode: m, TopK: 5}}); err != nil {
			t.Fatal(err)
		}
	}
	cmp, err := f.c.Evaluate(f.ctx, console.EvalRequest{Pipelines: []string{"bm25", "vector"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cmp.Runs) != 2 || len(cmp.Differences) != 1 || cmp.Dataset != "dev" || cmp.K != 10 {
		t.Fatalf("%+v", cmp)
	}
	for _, r := range cmp.Runs {
		search := func(ctx context.Context, q string) ([]string, error) {
			res, err := f.kb.Search(ctx, "sci", f.emb, kb.Query{Text: q, K: 300, Mode: r.Settings.Mode})
			return kb.DocRanking(res), err
		}
		want, err := eval.Retrieval(f.ctx, search, queries, qrels, 10)
		if err != nil {
			t.Fatal(err)
		}
		o := r.Overall
		if math.Abs(o.NDCG-want.NDCG) > 1e-12 || math.Abs(o.Recall-want.Recall) > 1e-12 || math.Abs(o.MRR-want.MRR) > 1e-12 || o.Queries != 3 {
			t.Fatalf("%s: %+v, eval retrieval %+v", r.Pipeline, o, want)
		}
		if len(r.Questions) != 3 || r.Questions[2].Golden != 2 || r.Questions[0].Level != "document" {
			t.Fatalf("%s questions: %+v", r.Pipeline, r.Questions)
		}
		stored, err := f.c.EvalRun(f.ctx, r.ID)
		if err != nil || stored.Overall.NDCG != o.NDCG || len(stored.Questions) != 3 || stored.Questions[1].QueryID != "q2" {
			t.Fatalf("stored run: %+v %v", stored, err)
		}
	}
	d := cmp.Differences[0]
	if d.Baseline != "bm25" || d.Pipeline != "vector" || math.Abs(d.NDCG-(cmp.Runs[1].Overall.NDCG-cmp.Runs[0].Overall.NDCG)) > 1e-12 || d.Better+d.Worse > 3 {
		t.Fatalf("difference: %+v", d)
	}
	runs, err := f.c.EvalRuns(f.ctx, "bm25", 10)
	if err != nil || len(runs) != 1 || runs[0].Questions != nil {
		t.Fatalf("runs of bm25: %+v %v", runs, err)
	}

	// Chunk-level judgements score the chunk ranking.
	qs, err := console.ReadJSONL(strings.NewReader(`{"id": "c", "question": "coffee diabetes", "chunks": [{"doc_id": "d3", "chunk_index": 0}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.c.ImportJSONL(f.ctx, "chunks", "sci", qs); err != nil {
		t.Fatal(err)
	}
	cmp, err = f.c.Evaluate(f.ctx, console.EvalRequest{Pipelines: []string{"bm25"}, Dataset: "chunks", K: 1})
	if err != nil || cmp.Runs[0].Questions[0].Level != "chunk" || cmp.Runs[0].Overall.HitRate != 1 || cmp.Runs[0].Questions[0].Retrieved[0] != "d3#0" {
		t.Fatalf("%+v %v", cmp, err)
	}

	for _, c := range []struct {
		req          console.EvalRequest
		field, msg   string
		wantNotFound bool
	}{
		{console.EvalRequest{}, "pipelines", "give 1-10 pipelines", false},
		{console.EvalRequest{Pipelines: []string{"bm25"}, K: 101}, "k", "between 1 and 100", false},
		{console.EvalRequest{Pipelines: []string{"nope"}}, "pipeline_id", "Invalid pipeline ID", true},
		{console.EvalRequest{Pipelines: []string{"bm25"}, Dataset: "nope"}, "dataset_id", "does not exist", true},
	} {
		_, err := f.c.Evaluate(f.ctx, c.req)
		if err == nil || errcode.Field(err) != c.field || !strings.Contains(err.Error(), c.msg) || (errcode.Of(err) == errcode.NotFound) != c.wantNotFound {
			t.Errorf("%+v: %v", c.req, err)
		}
	}
}

func TestModelConfigRules(t *testing.T) {
	t.Parallel()
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		m          console.ModelConfig
		field, msg string
	}{
		{console.ModelConfig{Type: "claude", ModelName: "m", APIKey: "sk-ant-x", Parameters: console.Params{Temperature: f(1.5)}}, "model_config.parameters.temperature", "Temperature must be between 0.0 and 1.0"},
		{console.ModelConfig{Type: "claude", ModelName: "m", APIKey: "sk-x"}, "model_config.api_key", "Invalid Claude API key format"},
		{console.ModelConfig{Type: "claude", ModelName: "m"}, "model_config.api_key", "api_key is required for Claude"},
		{console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: "ftp://x"}, "model_config.endpoint", "Invalid vLLM endpoint URL"},
		{console.ModelConfig{Type: "vllm", ModelName: "m"}, "model_config.endpoint", "endpoint is required for vLLM"},
		{console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: "http://h/v1", Parameters: console.Params{MaxTokens: 99}}, "model_config.parameters.max_tokens", "Max tokens must be between 100 and 4000"},
		{console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: "http://h/v1", Parameters: console.Params{MaxTokens: 4001}}, "model_config.parameters.max_tokens", "Max tokens must be between 100 and 4000"},
		{console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: "http://h/v1", Parameters: console.Params{TopP: f(-0.1)}}, "model_config.parameters.top_p", "Top P must be between 0.0 and 1.0"},
		{console.ModelConfig{Type: "gpt", ModelName: "m"}, "model_config.type", "type must be"},
		{console.ModelConfig{Type: "ollama"}, "model_config.model_name", "model_name is required"},
	} {
		err := c.m.Check()
		if err == nil || errcode.Field(err) != c.field || !strings.Contains(err.Error(), c.msg) || errcode.Of(err) != errcode.Invalid {
			t.Errorf("%+v: %v (field %q)", c.m, err, errcode.Field(err))
		}
	}
	m := console.ModelConfig{Type: "ollama", ModelName: "qwen3"}
	if err := m.Check(); err != nil || *m.Parameters.Temperature != 0.7 || m.Parameters.MaxTokens != 1000 || *m.Parameters.TopP != 0.9 {
		t.Fatalf("defaults: %+v %v", m.Parameters, err)
	}
	b, _ := json.Marshal(console.ModelConfig{Type: "claude", ModelName: "m", APIKey: "sk-ant-secret", Endpoint: "https://u:p@h/v1?key=k"})
	if s := string(b); strings.Contains(s, "secret") || strings.Contains(s, "u:p") || strings.Contains(s, "key=k") {
		t.Fatalf("a model config's JSON shows a credential: %s", s)
	}
	for _, bad := range []string{"http://user:secret@host:99999x/", "user:secret@host/v1", "http://user:secret@/v1"} {
		b, _ := json.Marshal(console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: bad})
		if s := string(b); strings.Contains(s, "secret") {
			t.Errorf("an endpoint that does not parse (%s) shows its credential: %s", bad, s)
		}
	}
}

// fakeLLM speaks one provider's wire format, records the requests' bodies
// and headers, and replies with reply (streamed when the request asks).
type fakeLLM struct {
	mu      sync.Mutex
	bodies  []map[string]any
	headers []http.Header
	srv     *httptest.Server
}

func newFakeLLM(t *testing.T, anthropicWire bool, reply func(i int) string) *fakeLLM {
	f := &fakeLLM{}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad json", 400)
			return
		}
		f.mu.Lock()
		i := len(f.bodies)
		f.bodies, f.headers = append(f.bodies, body), append(f.headers, r.Header.Clone())
		f.mu.Unlock()
		text := reply(i)
		stream, _ := body["stream"].(bool)
		switch {
		case anthropicWire && r.URL.Path == "/v1/messages":
			anthropicReply(w, text, stream)
		case !anthropicWire && r.URL.Path == "/v1/chat/completions":
			openAIReply(w, text, stream)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeLLM) requests() ([]map[string]any, []http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies, f.headers
}

// openAIReply answers as api.openai.com's chat completions do, whole or
// as server-sent chunks ending with a usage chunk and [DONE].
func openAIReply(w http.ResponseWriter, text string, stream bool) {
	if !stream {
		b, _ := json.Marshal(text)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1741569952,"model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":%s,"refusal":null},"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`, b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	const head = `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1741569952,"model":"llama3",`
	send := func(s string) { fmt.Fprintf(w, "data: %s\n\n", s); w.(http.Flusher).Flush() }
	send(head + `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`)
	for _, piece := range strings.SplitAfter(text, " ") {
		b, _ := json.Marshal(piece)
		send(head + `"choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}`)
	}
	send(head + `"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`)
	send(head + `"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}`)
	send("[DONE]")
}

// anthropicReply answers as api.anthropic.com's messages endpoint does.
func anthropicReply(w http.ResponseWriter, text string, stream bool) {
	b, _ := json.Marshal(text)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":20}}`, b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(ev, data string) { fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev, data); w.(http.Flusher).Flush() }
	send("message_start", `{"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":100,"output_tokens":1}}}`)
	send("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	for _, piece := range strings.SplitAfter(text, " ") {
		p, _ := json.Marshal(piece)
		send("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(p)+`}}`)
	}
	send("content_block_stop", `{"type":"content_block_stop","index":0}`)
	send("message_delta", `{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":20}}`)
	send("message_stop", `{"type":"message_stop"}`)
}

func TestGenerate(t *testing.T) {
	f := newFixture(t)
	if _, err := f.c.CreatePipeline(f.ctx, console.PipelineSpec{Name: "p", Type: console.TypeNormal, KB: "sci", Settings: console.Settings{Mode: "bm25", TopK: 3}}); err != nil {
		t.Fatal(err)
	}
	const reply = "Aspirin lowers the risk of heart attacks [S1]. It cures everything [S9]."
	for _, c := range []struct {
		name     string
		anthro   bool
		stream   bool
		model    func(url string) console.ModelConfig
		tokens   int
		keyField string
	}{
		{"vllm", false, false, func(u string) console.ModelConfig {
			return console.ModelConfig{Type: "vllm", ModelName: "llama3", Endpoint: u + "/v1"}
		}, 150, ""},
		{"vllm streamed", false, true, func(u string) console.ModelConfig {
			return console.ModelConfig{Type: "vllm", ModelName: "llama3", Endpoint: u + "/v1"}
		}, 150, ""},
		{"claude streamed", true, true, func(u string) console.ModelConfig {
			return console.ModelConfig{Type: "claude", ModelName: "claude-sonnet-4-5", APIKey: "sk-ant-test-secret", Endpoint: u}
		}, 120, "X-Api-Key"},
		{"openai", false, false, func(u string) console.ModelConfig {
			return console.ModelConfig{Type: "openai", ModelName: "gpt-4o-mini", APIKey: "sk-openai-secret", Endpoint: u + "/v1"}
		}, 150, "Authorization"},
	} {
		t.Run(c.name, func(t *testing.T) {
			llm := newFakeLLM(t, c.anthro, func(int) string { return reply })
			m := c.model(llm.srv.URL)
			m.Parameters = console.Params{Temperature: ptr(0.2), MaxTokens: 300}
			var deltas []string
			var onDelta func(string)
			if c.stream {
				onDelta = func(s string) { deltas = append(deltas, s) }
			}
			g, err := f.c.Generate(f.ctx, console.GenerateRequest{Pipeline: "p", Query: "Does aspirin prevent heart attacks?", TopK: 2, Model: m}, onDelta)
			if err != nil {
				t.Fatal(err)
			}
			if g.Answer != "Aspirin lowers the risk of heart attacks [S1]. It cures everything ." || len(g.Cited) != 1 || g.Cited[0] != 1 || g.Unsupported != 1 {
				t.Fatalf("citation check: %q %v %d", g.Answer, g.Cited, g.Unsupported)
			}
			if len(g.Sources) != 2 || g.Sources[0].Metadata["doc_id"] != "d1" || g.TokensUsed != c.tokens || g.RetrievalTime <= 0 || g.LLMTime <= 0 || g.GenerationTime < g.LLMTime+g.RetrievalTime {
				t.Fatalf("%+v", g)
			}
			if c.stream && strings.Join(deltas, "") != reply {
				t.Fatalf("streamed %q", deltas)
			}
			bodies, headers := llm.requests()
			if len(bodies) != 1 {
				t.Fatalf("%d requests", len(bodies))
			}
			body := bodies[0]
			if body["model"] != m.ModelName || body["temperature"] != 0.2 || body["top_p"] != 0.9 {
				t.Fatalf("request: %v", body)
			}
			maxTok := body["max_tokens"]
			if maxTok == nil {
				maxTok = body["max_completion_tokens"]
			}
			if maxTok != float64(300) {
				t.Fatalf("max tokens: %v", body)
			}
			raw, _ := json.Marshal(body["messages"])
			if !strings.Contains(string(raw), "[S1] Aspirin") || !strings.Contains(string(raw), "Question: Does aspirin prevent heart attacks?") {
				t.Fatalf("prompt: %s", raw)
			}
			if c.keyField != "" && !strings.Contains(headers[0].Get(c.keyField), m.APIKey) {
				t.Fatalf("the key was not sent in %s: %v", c.keyField, headers[0])
			}
			out, _ := json.Marshal(g)
			if m.APIKey != "" && strings.Contains(string(out), m.APIKey) {
				t.Fatal("the key is in the response")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestGenerateFailures(t *testing.T) {
	f := newFixture(t)
	f.c.Models = app.ConsoleModels(console.ProviderOptions{Timeout: 300 * time.Millisecond, MaxRetries: -1})
	if _, err := f.c.CreatePipeline(f.ctx, console.PipelineSpec{Name: "p", Type: console.TypeNormal, KB: "sci", Settings: console.Settings{Mode: "bm25", TopK: 3}}); err != nil {
		t.Fatal(err)
	}
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	stop := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-stop:
		}
	}))
	defer slow.Close()
	defer close(stop)
	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `<html>not json</html>`)
	}))
	defer garbage.Close()
	key := "sk-ant-very-secret-key"
	for _, c := range []struct {
		name string
		m    console.ModelConfig
		min  time.Duration
	}{
		{"down", console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: downURL + "/v1"}, 0},
		{"slow", console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: slow.URL + "/v1"}, 300 * time.Millisecond},
		{"garbage", console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: garbage.URL + "/v1"}, 0},
		{"claude down", console.ModelConfig{Type: "claude", ModelName: "m", APIKey: key, Endpoint: downURL}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.c.Generate(f.ctx, console.GenerateRequest{Pipeline: "p", Query: "aspirin", Model: c.m}, nil)
			var ge *console.GenerateError
			if !errors.As(err, &ge) || errcode.Of(err) != errcode.Unavailable {
				t.Fatalf("%v (%s)", err, errcode.Of(err))
			}
			if ge.RetrievalTime <= 0 || ge.LLMTime < c.min.Seconds() || ge.GenerationTime < ge.LLMTime {
				t.Fatalf("timings: %+v", ge)
			}
			if strings.Contains(err.Error(), key) {
				t.Fatalf("the key is in the error: %v", err)
			}
		})
	}
	// Bad input is refused before anything is retrieved or called.
	good := console.ModelConfig{Type: "vllm", ModelName: "m", Endpoint: downURL + "/v1"}
	for _, c := range []struct {
		req        console.GenerateRequest
		field, msg string
	}{
		{console.GenerateRequest{Pipeline: "nope", Query: "q", Model: good}, "pipeline_id", "Invalid pipeline ID"},
		{console.GenerateRequest{Pipeline: "p", Query: "", Model: good}, "query", "Query must be 1-10000 characters"},
		{console.GenerateRequest{Pipeline: "p", Query: "q", TopK: 21, Model: good}, "top_k", "Top K must be between 1 and 20"},
		{console.GenerateRequest{Pipeline: "p", Query: "q", Model: console.ModelConfig{Type: "claude", ModelName: "m", APIKey: "bad"}}, "model_config.api_key", "Invalid Claude API key format"},
		{console.GenerateRequest{Pipeline: "p", Query: "q", Model: good, ChatID: "4b0e1b6e-3e0c-4d5c-9a43-3f0a1c9e7a10"}, "", "session not found"},
	} {
		_, err := f.c.Generate(f.ctx, c.req, nil)
		if err == nil || errcode.Field(err) != c.field || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%+v: %v", c.req, err)
		}
	}
}

// TestChatLimit: a console chat keeps its turns for the model and refuses
// a turn past 50 messages until it is cleared.
func TestChatLimit(t *testing.T) {
	f := newFixture(t)
	if _, err := f.c.CreatePipeline(f.ctx, console.PipelineSpec{Name: "p", Type: console.TypeNormal, KB: "sci", Settings: console.Settings{Mode: "bm25", TopK: 1}}); err != nil {
		t.Fatal(err)
	}
	llm := newFakeLLM(t, false, func(i int) string { return fmt.Sprintf("answer %d [S1]", i) })
	m := console.ModelConfig{Type: "ollama", ModelName: "qwen3", Endpoint: llm.srv.URL + "/v1"}
	chat, err := f.c.NewChat(f.ctx, "aspirin")
	if err != nil {
		t.Fatal(err)
	}
	for i := range console.MaxChatMessages / 2 {
		g, err := f.c.Generate(f.ctx, console.GenerateRequest{Pipeline: "p", Query: fmt.Sprintf("question %d about aspirin", i), Model: m, ChatID: chat.ID}, nil)
		if err != nil || g.Messages != 2*(i+1) {
			t.Fatalf("turn %d: %+v %v", i, g, err)
		}
	}
	bodies, _ := llm.requests()
	msgs := bodies[len(bodies)-1]["messages"].([]any)
	// system + 48 earlier messages + this turn
	if len(msgs) != 1+console.MaxChatMessages-2+1 || !strings.Contains(fmt.Sprint(msgs[2]), "answer 0") {
		t.Fatalf("the last turn sent %d messages: %v", len(msgs), msgs[:3])
	}
	_, err = f.c.Generate(f.ctx, console.GenerateRequest{Pipeline: "p", Query: "one more", Model: m, ChatID: chat.ID}, nil)
	if err == nil || err.Error() != "Chat session has reached maximum message limit" && !strings.Contains(err.Error(), "Chat session has reached maximum message limit") || errcode.Of(err) != errcode.Conflict {
		t.Fatalf("past the cap: %v", err)
	}
	if err := f.c.ClearChat(f.ctx, chat.ID); err != nil {
		t.Fatal(err)
	}
	if err := f.c.ClearChat(f.ctx, chat.ID); errcode.Of(err) != errcode.NotFound {
		t.Fatalf("clear twice: %v", err)
	}
}
