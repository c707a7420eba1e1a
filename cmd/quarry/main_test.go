package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry/app"
)

// testEnvs holds each test's environment (setenv): the CLI under test
// reads it instead of the process's, so no test sees a real key.
var testEnvs sync.Map // *testing.T → map[string]string

// setenv sets an environment variable for the CLI runs of this test only.
func setenv(t *testing.T, k, v string) {
	m, _ := testEnvs.LoadOrStore(t, map[string]string{})
	m.(map[string]string)[k] = v
	t.Cleanup(func() { testEnvs.Delete(t) })
}

func envOf(t *testing.T) func(string) (string, bool) {
	m, _ := testEnvs.Load(t)
	env, _ := m.(map[string]string)
	return func(k string) (string, bool) { v, ok := env[k]; return v, ok }
}

// run executes the CLI in-process with its own data dir and returns stdout,
// stderr and the error.
func run(t *testing.T, dataDir string, args ...string) (string, string, error) {
	t.Helper()
	return runCtx(context.Background(), t, dataDir, args...)
}

// runCtx is run with a context (a worker runs until it ends). A later
// --config in args wins over the test one.
func runCtx(ctx context.Context, t *testing.T, dataDir string, args ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "out"))
	errf, _ := os.Create(filepath.Join(dir, "err"))
	defer out.Close()
	defer errf.Close()
	a := &cli{stdout: out, stderr: errf, env: envOf(t)}
	root := a.rootCmd()
	root.SetArgs(append([]string{"--data-dir", dataDir, "--config", filepath.Join("testdata", "config.yaml")}, args...))
	err := root.ExecuteContext(ctx)
	a.close()
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errf.Name())
	return string(o), string(e), err
}

func TestCLIEndToEnd(t *testing.T) {
	data := t.TempDir()
	ko := filepath.Join("..", "..", "kb", "testdata", "korean")
	if _, _, err := run(t, data, "kb", "create", "ko"); err != nil {
		t.Fatal(err)
	}
	out, _, err := run(t, data, "kb", "add", "ko", filepath.Join(ko, "corpus.jsonl"), "--json")
	if err != nil || !strings.Contains(out, `"added": 12`) {
		t.Fatalf("add: %s %v", out, err)
	}
	out, _, err = run(t, data, "kb", "search", "ko", "인터넷은 언제 개통했나요", "--k", "2", "--json")
	var res []map[string]any
	if err != nil || json.Unmarshal([]byte(out), &res) != nil || len(res) != 2 || res[0]["source_url"] != "kb://ko/k2" {
		t.Fatalf("search: %s %v", out, err)
	}
	for _, k := range []string{"chunk_id", "source_url", "title", "score", "text"} {
		if _, ok := res[0][k]; !ok {
			t.Fatalf("result lacks %s: %v", k, res[0])
		}
	}
	out, _, err = run(t, data, "kb", "stats", "ko", "--json")
	if err != nil || !strings.Contains(out, `"sources": 12`) || !strings.Contains(out, `"stale": 0`) {
		t.Fatalf("stats: %s %v", out, err)
	}
	out, _, err = run(t, data, "eval", "retrieval", "--kb", "ko", "--queries", filepath.Join(ko, "queries.jsonl"),
		"--qrels", filepath.Join(ko, "qrels.tsv"), "--k", "10", "--json")
	var ev map[string]any
	if err != nil || json.Unmarshal([]byte(out), &ev) != nil {
		t.Fatalf("eval: %s %v", out, err)
	}
	for _, k := range []string{"ndcg", "recall", "mrr", "recall_at_100", "k", "queries", "mode", "p50_ms", "p99_ms"} {
		if _, ok := ev[k]; !ok {
			t.Fatalf("eval output lacks %s: %s", k, out)
		}
	}
	if ev["queries"].(float64) != 12 || ev["mrr"].(float64) < 0.85 {
		t.Fatalf("eval figures: %s", out)
	}
	out, _, err = run(t, data, "kb", "list", "--json")
	if err != nil || !strings.Contains(out, `"name": "ko"`) {
		t.Fatalf("list: %s %v", out, err)
	}

	// Bad input names the field and the rule.
	bad := []struct {
		args []string
		want string
	}{
		{[]string{"kb", "search", "ko", "x", "--k", "0"}, "k: must be between 1 and 1000"},
		{[]string{"kb", "search", "ko", strings.Repeat("a", 10001)}, "query: must be at most 10000 characters"},
		{[]string{"kb", "create", "../evil"}, "name:"},
		{[]string{"kb", "search", "missing", "x"}, `knowledge base "missing": not found`},
		{[]string{"kb", "search", "ko", "x", "--mode", "fuzzy"}, "mode: must be bm25, vector or hybrid"},
		{[]string{"kb", "search", "ko", "x", "--embedder", "hash", "--embed-dim", "64"}, "was embedded with hash-v1/384"},
		{[]string{"kb", "create", "huge", "--embed-dim", "2000000000"}, "embed-dim: must be between 1 and 16000"},
		{[]string{"eval", "retrieval", "--kb", "ko", "--queries", "q", "--qrels", "r", "--k", "0"}, "k: must be between 1 and 100"},
	}
	for _, b := range bad {
		_, _, err := run(t, data, b.args...)
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%v: err = %v, want %q", b.args, err, b.want)
		}
	}

	if _, _, err := run(t, data, "kb", "rm", "ko"); err != nil {
		t.Fatal(err)
	}
	if out, _, _ := run(t, data, "kb", "list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("after rm: %s", out)
	}
}

func TestConfigPrecedence(t *testing.T) {
	env := map[string]string{"QUARRY_LOG_LEVEL": "info", "QUARRY_EMBED_DIM": "128", "ANTHROPIC_API_KEY": "sk-ant-from-env"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	a := &cli{stdout: os.Stdout, stderr: os.Stderr, env: lookup}
	root := a.rootCmd()
	fs := root.PersistentFlags()
	_ = fs.Parse([]string{"--config", filepath.Join("testdata", "config.yaml"), "--embed-dim", "64"})
	if err := a.cfg.Load(fs, lookup); err != nil {
		t.Fatal(err)
	}
	// file says log_level debug, env info (env wins); env dim 128, flag 64 (flag wins);
	// file sets embed_model, nothing overrides it.
	if a.cfg.LogLevel != "info" || a.cfg.EmbedDim != 64 || a.cfg.EmbedModel != "from-file" || a.cfg.AnthropicKey != "sk-ant-from-env" {
		t.Fatalf("config: %+v", a.cfg)
	}
	env["QUARRY_EMBEDDER"] = "bogus"
	if err := (&app.Config{}).Load(fs, lookup); err == nil || !strings.Contains(err.Error(), "embedder: must be hash or openai") {
		t.Fatalf("bad embedder: %v", err)
	}
	delete(env, "QUARRY_EMBEDDER")
	env["QUARRY_SEARCH"] = "Database"
	c := &app.Config{}
	if err := c.Load(fs, lookup); err != nil || c.Search != app.SearchDatabase {
		t.Fatalf("QUARRY_SEARCH=Database: %v, search %q", err, c.Search)
	}
	env["QUARRY_SEARCH"] = "disk"
	if err := (&app.Config{}).Load(fs, lookup); err == nil || !strings.Contains(err.Error(), "search: must be auto, database or memory") {
		t.Fatalf("bad search: %v", err)
	}
	delete(env, "QUARRY_SEARCH")
	env["QUARRY_INDEX_MEMORY"] = "4096"
	if err := c.Load(fs, lookup); err != nil || c.IndexMemory != 4096 {
		t.Fatalf("QUARRY_INDEX_MEMORY=4096: %v, %d", err, c.IndexMemory)
	}
	env["QUARRY_INDEX_MEMORY"] = "16"
	if err := (&app.Config{}).Load(fs, lookup); err == nil || !strings.Contains(err.Error(), "index-memory: must be between 64 and 65536") {
		t.Fatalf("index memory of 16 MB: %v", err)
	}
	delete(env, "QUARRY_INDEX_MEMORY")
	env["QUARRY_VECTOR_EF"] = "400"
	if err := c.Load(fs, lookup); err != nil || c.VectorEF != 400 {
		t.Fatalf("QUARRY_VECTOR_EF=400: %v, %d", err, c.VectorEF)
	}
	env["QUARRY_VECTOR_EF"] = "1001"
	if err := (&app.Config{}).Load(fs, lookup); err == nil || !strings.Contains(err.Error(), "vector-ef: must be between 1 and 1000") {
		t.Fatalf("vector ef of 1001: %v", err)
	}
	delete(env, "QUARRY_VECTOR_EF")
	env["QUARRY_INDEX_EF_CONSTRUCTION"] = "200"
	if err := c.Load(fs, lookup); err != nil || c.IndexEFConstruction != 200 {
		t.Fatalf("QUARRY_INDEX_EF_CONSTRUCTION=200: %v, %d", err, c.IndexEFConstruction)
	}
	env["QUARRY_INDEX_EF_CONSTRUCTION"] = "16"
	if err := (&app.Config{}).Load(fs, lookup); err == nil || !strings.Contains(err.Error(), "index-ef-construction: must be between 32 and 1000") {
		t.Fatalf("index ef_construction of 16: %v", err)
	}
}

// TestRealEnvironmentIsNotRead: keys in the test process's environment
// never reach the CLI under test (it would call the real API).
func TestRealEnvironmentIsNotRead(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-real-key-must-not-be-used")
	t.Setenv("QUARRY_LLM", "anthropic")
	_, errOut, err := run(t, t.TempDir(), "research", composerQ, "--docs", researchCorpus, "--level", "quick")
	if err != nil || !strings.Contains(errOut, "offline extractive engine") {
		t.Fatalf("the real environment was read: %v\n%s", err, errOut)
	}
}

// TestCreateThatAddsNothingLeavesNothing: "kb add --create" whose inputs
// all fail, and "kb crawl --create" whose URL the SSRF guard refuses,
// leave no empty knowledge base behind; one that existed stays.
func TestCreateThatAddsNothingLeavesNothing(t *testing.T) {
	data := t.TempDir()
	bad := filepath.Join(t.TempDir(), "blob.bin")
	if err := os.WriteFile(bad, []byte{0, 1, 2, 0xff}, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "kb", "add", "fresh", bad, "--create"); err == nil {
		t.Fatal("an add of nothing but a binary file succeeded")
	}
	if _, _, err := run(t, data, "kb", "add", "fresh2", filepath.Join(data, "missing"), "--create"); err == nil {
		t.Fatal("an add of a missing path succeeded")
	}
	if _, _, err := run(t, data, "--allow-private=false", "kb", "crawl", "site", "http://127.0.0.1:1/", "--create"); err == nil {
		t.Fatal("a crawl of loopback succeeded")
	}
	list, _, err := run(t, data, "kb", "list")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fresh", "fresh2", "site"} {
		if strings.Contains(list, name) {
			t.Errorf("knowledge base %q left behind:\n%s", name, list)
		}
	}
	// An existing knowledge base is never removed.
	if _, _, err := run(t, data, "kb", "create", "kept"); err != nil {
		t.Fatal(err)
	}
	_, _, _ = run(t, data, "kb", "add", "kept", bad, "--create")
	if list, _, _ := run(t, data, "kb", "list"); !strings.Contains(list, "kept") {
		t.Fatalf("an existing knowledge base was removed:\n%s", list)
	}
}

// kb add --chunk-tokens cuts a document to that size; added again at
// the same size it is unchanged, at another it is cut again; a size out of
// range is refused naming the flag, before anything is opened.
func TestKBAddChunkTokens(t *testing.T) {
	data := t.TempDir()
	doc := filepath.Join(t.TempDir(), "notes.md")
	var b strings.Builder
	b.WriteString("# Notes\n\n")
	for i := range 25 { // about 350 tokens: one chunk at the default size
		fmt.Fprintf(&b, "Paragraph %d says that the garden needs water every morning in summer.\n\n", i)
	}
	if err := os.WriteFile(doc, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	add := func(args ...string) map[string]any {
		t.Helper()
		out, errOut, err := run(t, data, append([]string{"kb", "add", "notes", doc, "--create", "--json"}, args...)...)
		if err != nil {
			t.Fatalf("kb add %v: %v\n%s", args, err, errOut)
		}
		var rep map[string]any
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("report %q: %v", out, err)
		}
		return rep
	}
	if rep := add(); rep["added"] != 1.0 || rep["chunks"] != 1.0 {
		t.Fatalf("default size: %v", rep)
	}
	if rep := add("--chunk-tokens", "100"); rep["updated"] != 1.0 || rep["chunks"].(float64) < 3 {
		t.Fatalf("100 tokens: %v", rep)
	}
	if rep := add("--chunk-tokens", "100"); rep["unchanged"] != 1.0 {
		t.Fatalf("100 tokens again: %v", rep)
	}
	if rep := add(); rep["updated"] != 1.0 || rep["chunks"] != 1.0 {
		t.Fatalf("default size again: %v", rep)
	}
	fresh := t.TempDir()
	for _, bad := range []string{"10", "9000"} {
		if _, _, err := run(t, fresh, "kb", "add", "other", doc, "--create", "--chunk-tokens", bad); err == nil || !strings.Contains(err.Error(), "chunk-tokens: must be between 64 and 8000, got "+bad) {
			t.Errorf("--chunk-tokens %s: %v", bad, err)
		}
	}
	if out, _, err := run(t, fresh, "kb", "list"); err != nil || strings.Contains(out, "other") {
		t.Errorf("a refused size created the knowledge base: %q %v", out, err)
	}
}

func TestVersion(t *testing.T) {
	out, _, err := run(t, t.TempDir(), "version")
	if err != nil || !strings.HasPrefix(out, "quarry ") || !strings.Contains(out, runtime.Version()) {
		t.Fatalf("version: %q %v", out, err)
	}
}

// TestEvalAnswersCLI: eval research and eval ask over the README's notes
// and their dataset give the figures, and a dataset that breaks the
// format is exit 2 naming the rule.
func TestEvalAnswersCLI(t *testing.T) {
	data := t.TempDir()
	if _, e, err := run(t, data, "kb", "add", "notes", filepath.Join("..", "..", "examples", "notes"), "--create"); err != nil {
		t.Fatalf("%v %s", err, e)
	}
	dataset := filepath.Join("..", "..", "eval", "testdata", "research", "notes.jsonl")
	out, _, err := run(t, data, "eval", "research", "--kb", "notes", "--dataset", dataset, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Scores struct {
			Answerable    int     `json:"answerable"`
			PageAmongRefs float64 `json:"page_among_references"`
			InSummary     float64 `json:"answer_in_summary"`
		}
		Questions []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil || r.Scores.Answerable != 4 || len(r.Questions) != 5 || r.Scores.PageAmongRefs < 0.75 || r.Scores.InSummary < 0.75 {
		t.Fatalf("eval research: %v %s", err, out)
	}
	runA, runB := filepath.Join(t.TempDir(), "a.json"), filepath.Join(t.TempDir(), "b.json")
	out, _, err = run(t, data, "eval", "ask", "--kb", "notes", "--dataset", dataset, "--out", runA)
	if err != nil || !strings.Contains(out, "confidence ROC AUC") || !strings.Contains(out, "unanswerable refused") {
		t.Fatalf("eval ask: %v %s", err, out)
	}
	// The chunks ask read are recorded: an extractive answer quotes them,
	// so every right answer's string was read.
	var askRun struct {
		Scores struct {
			Right       float64 `json:"right"`
			InRead      float64 `json:"answer_in_chunks_read"`
			RightOfRead float64 `json:"right_of_read"`
		}
		Questions []struct {
			ID     string `json:"id"`
			InRead *bool  `json:"answer_in_chunks_read"`
		}
	}
	if b, err := os.ReadFile(runA); err != nil || json.Unmarshal(b, &askRun) != nil {
		t.Fatalf("stored ask run: %v", err)
	}
	if s := askRun.Scores; s.Right == 0 || s.InRead < s.Right || math.Abs(s.RightOfRead-s.Right/s.InRead) > 1e-9 {
		t.Errorf("answer in chunks read %v, right of those %v, right %v: every right answer was read", s.InRead, s.RightOfRead, s.Right)
	}
	for _, q := range askRun.Questions {
		if (q.InRead == nil) != (q.ID == "n5") {
			t.Errorf("%s: answer_in_chunks_read %v: recorded for answerable questions only", q.ID, q.InRead)
		}
	}
	// A stored run beside another configuration's.
	if _, _, err := run(t, data, "eval", "ask", "--kb", "notes", "--dataset", dataset, "--ablate", "window", "--out", runB); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, data, "eval", "compare", runA, runB)
	if err != nil || !strings.Contains(out, "B: "+runB+" (offline-extractive without window)") || !regexp.MustCompile(`(?m)^  right +[0-9.]+ +[0-9.]+ +[+-][0-9.]+$`).MatchString(out) {
		t.Fatalf("eval compare: %v %s", err, out)
	}
	if _, _, err := run(t, data, "eval", "compare", runA, dataset); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "not an eval research or eval ask run") {
		t.Fatalf("compare with a dataset: %v", err)
	}
	// The runs of a directory averaged per dataset, and two directories
	// side by side: the research run beside the first ask run.
	dirA, dirB := filepath.Dir(runA), filepath.Dir(runB)
	researchOut, _, err := run(t, data, "eval", "research", "--kb", "notes", "--dataset", dataset, "--json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirA, "research.json"), []byte(researchOut), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, err = run(t, data, "eval", "table", dirA)
	if err != nil || !strings.Contains(out, "research: 1 datasets, 1 runs") || !strings.Contains(out, "ask: 1 datasets, 1 runs") ||
		!regexp.MustCompile(`(?m)^\| notes \| 1 \| [0-9.]+ \|`).MatchString(out) || !regexp.MustCompile(`(?m)^\| mean \| \| [0-9.]+ \|`).MatchString(out) {
		t.Fatalf("eval table: %v %s", err, out)
	}
	out, _, err = run(t, data, "eval", "table", dirA, dirB)
	if err != nil || strings.Contains(out, "research:") || !strings.Contains(out, "ask: 1 datasets, 1 runs") {
		t.Fatalf("eval table, two directories: %v %s", err, out)
	}
	if _, _, err := run(t, data, "eval", "table", t.TempDir()); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "holds no .json file") {
		t.Fatalf("eval table of an empty directory: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dirB, "dataset.json"), []byte(`{"id": "a"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "eval", "table", dirB); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "dataset.json") {
		t.Fatalf("eval table of a directory with another JSON file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(bad, []byte(`{"id": "a", "question": "Why?"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := run(t, data, "eval", "ask", "--kb", "notes", "--dataset", bad); err == nil || exitCode(err) != exitUsage || !strings.Contains(err.Error(), "needs answers and pages") {
		t.Fatalf("a question without answers: %v", err)
	}
}
