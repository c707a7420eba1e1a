package app_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/research"
)

// BenchmarkTokensVsPeer runs one research at breadth 4 / depth 2 with
// Quarry and with dzhng/deep-research against one world on loopback, and
// reports the tokens each sends the model:
//
//   - an OpenAI-compatible model server that counts every request's bytes
//     / 4 as prompt tokens (messages and schema) and its reply's as
//     completion tokens. It answers Quarry's calls with the scripted
//     replies of BenchmarkCriticalPathHTTP and any other call with JSON
//     filled from the request's own schema (an array as long as its
//     description's "max of N"), so completions are this fake's and only
//     the prompt side says what each program sends;
//   - one search index served both as a SearxNG-style API (Quarry) and as
//     Firecrawl's /v1/search with each page's text as markdown (the
//     peer), 5 results per query;
//   - pages of ~20 KB of real prose (HotpotQA paragraphs from
//     ../shared/data), the same text whichever program reads them.
//
// The peer runs from a checkout of it with its dependencies installed,
// named by QUARRY_PEER_DIR, through bench/peer/drive.mts (deepResearch,
// then writeFinalReport, as its run.ts does without the interactive
// feedback questions); see bench/peer/README.md. The benchmark fails when
// the checkout or the data is missing.
//
//	QUARRY_PEER_DIR=/path/to/deep-research go test ./app -run '^$' -bench TokensVsPeer -benchtime 1x
func BenchmarkTokensVsPeer(b *testing.B) {
	peerDir := os.Getenv("QUARRY_PEER_DIR")
	if peerDir == "" {
		b.Fatal("QUARRY_PEER_DIR must name a checkout of dzhng/deep-research with its node_modules installed (bench/peer/README.md)")
	}
	driver, err := filepath.Abs(filepath.Join("..", "bench", "peer", "drive.mts"))
	if err != nil {
		b.Fatal(err)
	}
	w := newTokenWorld(b)
	defer w.Close()
	for range b.N {
		// Quarry.
		w.reset()
		a := app.New(app.Config{DataDir: b.TempDir(), Embedder: "hash", LLM: "openai:bench", LLMBaseURL: w.URL + "/v1", LLMAPIKey: "sk-bench",
			WebSearch: "searxng", SearxNGURL: w.URL, AllowPrivate: true}, nil)
		rn, err := a.Runner(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		r, err := rn.Start(context.Background(), tokenQuestion, research.Options{Sources: []string{"web"}, Breadth: 4, Depth: 2, DepthSet: true})
		if err != nil {
			b.Fatal(err)
		}
		a.Close()
		if r.Status != research.StatusCompleted || len(r.Sources) == 0 {
			b.Fatalf("cannot measure Quarry: status %s, %d sources, error %s", r.Status, len(r.Sources), r.Error)
		}
		qCalls, qIn, qOut, qPages, qRounds := w.calls.Load(), w.prompt.Load(), w.completion.Load(), len(r.Sources), len(r.Rounds)

		// The peer.
		w.reset()
		cmd := exec.Command(filepath.Join(peerDir, "node_modules", ".bin", "tsx"), driver)
		cmd.Dir = peerDir
		cmd.Env = append(os.Environ(), "PEER_DIR="+peerDir, "PEER_QUERY="+tokenQuestion, "PEER_BREADTH=4", "PEER_DEPTH=2",
			"OPENAI_KEY=sk-bench", "OPENAI_ENDPOINT="+w.URL+"/v1", "OPENAI_MODEL=gpt-4o-mini", "CUSTOM_MODEL=gpt-4o-mini",
			"FIRECRAWL_KEY=fc-bench", "FIRECRAWL_BASE_URL="+w.URL)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("the peer failed: %v\n%s", err, out)
		}
		var res struct {
			Learnings, URLs, ReportChars int
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if err := json.Unmarshal([]byte(lines[len(lines)-1]), &res); err != nil || res.URLs == 0 || w.searches.Load() == 0 {
			b.Fatalf("cannot measure the peer (%v): %d searches\n%s", err, w.searches.Load(), out)
		}
		pCalls, pIn, pOut := w.calls.Load(), w.prompt.Load(), w.completion.Load()

		b.ReportMetric(float64(qIn), "quarry_prompt_tokens")
		b.ReportMetric(float64(qOut), "quarry_completion_tokens")
		b.ReportMetric(float64(qCalls), "quarry_calls")
		b.ReportMetric(float64(qPages), "quarry_sources")
		b.ReportMetric(float64(qRounds), "quarry_rounds")
		b.ReportMetric(float64(pIn), "peer_prompt_tokens")
		b.ReportMetric(float64(pOut), "peer_completion_tokens")
		b.ReportMetric(float64(pCalls), "peer_calls")
		b.ReportMetric(float64(res.URLs), "peer_sources")
		b.ReportMetric(float64(qIn)/float64(pIn), "prompt_ratio")
		b.ReportMetric(float64(qIn+qOut)/float64(pIn+pOut), "total_ratio")
	}
}

const tokenQuestion = "How did the composers of the Romantic era shape national opera?"

// tokenWorld is the model server, search index and pages both programs
// use, with the model traffic counted.
type tokenWorld struct {
	*httptest.Server
	paras                            []string
	calls, prompt, completion, round atomic.Int64
	searches                         atomic.Int64
}

func (w *tokenWorld) reset() {
	w.calls.Store(0)
	w.prompt.Store(0)
	w.completion.Store(0)
	w.round.Store(0)
	w.searches.Store(0)
}

func newTokenWorld(b *testing.B) *tokenWorld {
	f, err := os.Open(filepath.Join("..", "..", "shared", "data", "hotpotqa", "corpus.jsonl"))
	if err != nil {
		b.Fatalf("the benchmark needs ../shared/data: %v", err)
	}
	defer f.Close()
	w := &tokenWorld{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var d struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			b.Fatal(err)
		}
		w.paras = append(w.paras, d.Text)
	}
	if len(w.paras) < 1000 {
		b.Fatalf("corpus: %d paragraphs", len(w.paras))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", w.model)
	mux.HandleFunc("GET /search", func(rw http.ResponseWriter, r *http.Request) {
		w.searches.Add(1)
		var res []map[string]string
		for i, u := range w.results(r.URL.Query().Get("q")) {
			res = append(res, map[string]string{"url": u, "title": fmt.Sprintf("Result %d", i), "content": w.page(u)[:200]})
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(map[string]any{"results": res})
	})
	mux.HandleFunc("POST /v1/search", func(rw http.ResponseWriter, r *http.Request) {
		w.searches.Add(1)
		var req struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Query == "" {
			http.Error(rw, `{"success":false,"error":"query is required"}`, http.StatusBadRequest)
			return
		}
		var data []map[string]string
		for i, u := range w.results(req.Query) {
			if req.Limit > 0 && i >= req.Limit {
				break
			}
			p := w.page(u)
			data = append(data, map[string]string{"url": u, "title": fmt.Sprintf("Result %d", i), "description": p[:200], "markdown": p})
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(map[string]any{"success": true, "data": data})
	})
	mux.HandleFunc("GET /page/", func(rw http.ResponseWriter, r *http.Request) {
		var body strings.Builder
		for _, p := range strings.Split(w.page(r.URL.Path), "\n\n") {
			body.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
		}
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, "<html><head><title>%s</title></head><body><main>%s</main></body></html>", html.EscapeString(r.URL.Path), body.String())
	})
	w.Server = httptest.NewServer(mux)
	return w
}

// results are a query's 5 page URLs.
func (w *tokenWorld) results(q string) []string {
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(q), "-"), "-")
	var out []string
	for i := range 5 {
		out = append(out, fmt.Sprintf("%s/page/%s/%d", w.URL, slug, i))
	}
	return out
}

// page is a URL's text: consecutive corpus paragraphs from a place the
// URL picks, ~20 KB.
func (w *tokenWorld) page(u string) string {
	if i := strings.Index(u, "/page/"); i >= 0 {
		u = u[i:]
	}
	h := fnv.New32a()
	h.Write([]byte(u))
	start := int(h.Sum32() % uint32(len(w.paras)))
	var parts []string
	n := 0
	for i := start; n < 20_000; i = (i + 1) % len(w.paras) {
		parts = append(parts, w.paras[i])
		n += len(w.paras[i]) + 2
	}
	return strings.Join(parts, "\n\n")
}

// model answers a chat completion: Quarry's calls as scripted, any other
// from its schema.
func (w *tokenWorld) model(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model          string `json:"model"`
		ResponseFormat struct {
			JSONSchema struct {
				Name   string          `json:"name"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		} `json:"response_format"`
		Messages []struct{ Content string } `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) == 0 {
		http.Error(rw, "bad request", http.StatusBadRequest)
		return
	}
	name := req.ResponseFormat.JSONSchema.Name
	var round int64
	if name == "research_analysis" {
		round = w.round.Add(1)
	}
	content, ok := operaScript.reply(name, req.Messages[len(req.Messages)-1].Content, round)
	if !ok {
		var schema map[string]any
		if err := json.Unmarshal(req.ResponseFormat.JSONSchema.Schema, &schema); err != nil {
			http.Error(rw, "response_format.json_schema.schema: "+err.Error(), http.StatusBadRequest)
			return
		}
		// Seeded by the prompt, not the call's turn: the same run fills the
		// same way however its concurrent calls interleave.
		h := fnv.New32a()
		h.Write([]byte(req.Messages[len(req.Messages)-1].Content))
		v, _ := json.Marshal(fill(schema, "answer", int64(h.Sum32()%1000)))
		content = string(v)
	}
	w.calls.Add(1)
	w.prompt.Add(int64(len(body) / 4))
	w.completion.Add(int64(len(content) / 4))
	writeCompletion(rw, req.Model, body, content)
}

// operaScript is Quarry's scripted model in the token world.
var operaScript = script{Topic: "national opera", Learning: "National opera drew on folk song and history.", Title: "National opera",
	Summary: "Romantic composers drew on folk song and history [cite:S1].", Heading: "Folk song", Section: "Composers drew on folk song [cite:S1]."}

var (
	maxOfRE = regexp.MustCompile(`(?i)max(?:imum)? of (\d+)`)
	nonSlug = regexp.MustCompile(`[^a-z0-9]+`)
)

// fill is a value of a JSON schema: objects with every property, arrays
// as long as their description's "max of N" (else 3), strings a sentence
// naming the field.
func fill(schema map[string]any, name string, seed int64) any {
	switch schema["type"] {
	case "object":
		out := map[string]any{}
		props, _ := schema["properties"].(map[string]any)
		for k, p := range props {
			ps, _ := p.(map[string]any)
			out[k] = fill(ps, k, seed)
		}
		return out
	case "array":
		n := 3
		if d, _ := schema["description"].(string); d != "" {
			if m := maxOfRE.FindStringSubmatch(d); m != nil {
				n, _ = strconv.Atoi(m[1])
			}
		}
		items, _ := schema["items"].(map[string]any)
		var out []any
		for i := range n {
			out = append(out, fill(items, fmt.Sprintf("%s %d", name, i+1), seed*10+int64(i)))
		}
		return out
	case "number", "integer":
		return 1
	case "boolean":
		return true
	}
	return fmt.Sprintf("Romantic composers shaped national opera through folk song and history (%s, %d).", name, seed)
}
