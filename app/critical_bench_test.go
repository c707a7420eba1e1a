package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/research"
)

// alphaScript is the scripted model of the HTTP benchmarks' research.
var alphaScript = script{Topic: "alpha", Learning: "Alpha was designed in 1999 by Beta Labs.", Title: "Alpha",
	Summary: "Alpha was designed by Beta Labs in 1999 [cite:S1].", Heading: "Design", Section: "Beta Labs designed Alpha as a small protocol in 1999 [cite:S1]."}

// BenchmarkCriticalPathHTTP runs a breadth 4 / depth 2 research through
// the whole stack over loopback: an OpenAI-compatible model server that
// answers every call after a fixed latency (1 s, or
// QUARRY_BENCH_LLM_LATENCY), a SearxNG-style search API and the result
// pages served by the same host (the user's own search backend), fetched
// by the research fetcher. It reports the wall time beside the critical
// path — every model call in sequence (plan, one analysis per round,
// report, citation judge) plus, per round, one search and one page fetch
// (the rest run concurrently) — and the prompt tokens the run sends over
// ~20 KB pages; it fails when it cannot measure:
//
//	go test ./app -run '^$' -bench CriticalPathHTTP -benchtime 1x
func BenchmarkCriticalPathHTTP(b *testing.B) {
	llmLatency := time.Second
	if v := os.Getenv("QUARRY_BENCH_LLM_LATENCY"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("QUARRY_BENCH_LLM_LATENCY: %v", err)
		}
		llmLatency = d
	}
	const searchLatency, pageLatency = 50 * time.Millisecond, 30 * time.Millisecond
	var round atomic.Int64
	filler := strings.Repeat("<p>Engineers at Beta Labs measured how alpha behaves on lossy links, how it recovers from dropped frames and how much energy each exchange costs a battery-powered node; the results shaped the second revision of the protocol.</p>", 90)
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var req struct {
			Model          string `json:"model"`
			ResponseFormat struct {
				JSONSchema struct{ Name string } `json:"json_schema"`
			} `json:"response_format"`
			Messages []struct{ Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.Unmarshal(body, &req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		time.Sleep(llmLatency)
		var n int64
		if req.ResponseFormat.JSONSchema.Name == "research_analysis" {
			n = round.Add(1)
		}
		content, _ := alphaScript.reply(req.ResponseFormat.JSONSchema.Name, req.Messages[len(req.Messages)-1].Content, n)
		writeCompletion(w, req.Model, body, content)
	}))
	defer model.Close()
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/search":
			time.Sleep(searchLatency)
			q := r.URL.Query().Get("q")
			var res []string
			for i := range 5 {
				res = append(res, fmt.Sprintf(`{"url":"%s/page/%s/%d","title":"%s %d","content":"About %s."}`, site.URL, strings.ReplaceAll(q, " ", "-"), i, q, i, q))
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"results":[%s]}`, strings.Join(res, ","))
		case strings.HasPrefix(r.URL.Path, "/page/"):
			time.Sleep(pageLatency)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			// A page of ~20 KB of prose, as an article or a documentation
			// page is: what the prompts are built from.
			fmt.Fprintf(w, `<html><head><title>%s</title></head><body><main><p>Alpha is a small protocol that Beta Labs designed in 1999 for sensor networks. This page, %s, describes it in detail, with its origins, design, uses and critics.</p>%s</main></body></html>`, r.URL.Path, r.URL.Path, filler)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	// direct: the research run in this goroutine (quarry research);
	// queue/…: created, queued as a River job and run by a worker (quarry
	// serve, quarry worker), timed from the queuing to the stored end.
	for _, mode := range []string{"direct/sqlite", "queue/sqlite", "direct/postgres", "queue/postgres"} {
		b.Run(mode, func(b *testing.B) {
			cfg := app.Config{DataDir: b.TempDir(), Embedder: "hash", LLM: "openai:bench", LLMBaseURL: model.URL + "/v1", LLMAPIKey: "sk-bench",
				WebSearch: "searxng", SearxNGURL: site.URL, AllowPrivate: true}
			if strings.HasSuffix(mode, "/postgres") {
				cfg.DatabaseURL = testpg.Schema(b, "QUARRY_TEST_POSTGRES_URL")
			}
			criticalPath(b, app.New(cfg, nil), strings.HasPrefix(mode, "queue/"), &round, llmLatency, searchLatency+pageLatency)
		})
	}
}

// criticalPath runs the benchmark's research b.N times in a and reports
// its wall time beside the critical path.
func criticalPath(b *testing.B, a *app.App, queued bool, round *atomic.Int64, llmLatency, perRound time.Duration) {
	defer a.Close()
	ctx := context.Background()
	rn, err := a.Runner(ctx)
	if err != nil {
		b.Fatal(err)
	}
	rn.Concurrency = 8
	run := func() (*research.Research, error) {
		return rn.Start(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Breadth: 4, Depth: 2, DepthSet: true})
	}
	if queued {
		q, err := a.Jobs(ctx, app.JobOptions{Workers: 2, Runner: rn})
		if err != nil {
			b.Fatal(err)
		}
		defer q.Close()
		if err := q.Start(ctx); err != nil {
			b.Fatal(err)
		}
		run = func() (*research.Research, error) {
			r, err := rn.Create(ctx, "What is alpha?", research.Options{Sources: []string{"web"}, Breadth: 4, Depth: 2, DepthSet: true})
			if err != nil {
				return nil, err
			}
			if err := q.EnqueueResearch(ctx, r.ID); err != nil {
				return nil, err
			}
			for {
				time.Sleep(5 * time.Millisecond)
				if r, err = research.Load(ctx, a.CurrentStore(), r.ID); err != nil || r.Status == research.StatusCompleted || r.Status == research.StatusFailed {
					return r, err
				}
			}
		}
	}
	var wall, critical time.Duration
	var calls, rounds, in, out int
	for range b.N {
		round.Store(0)
		t0 := time.Now()
		r, err := run()
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0)
		if r.Status != research.StatusCompleted || r.Usage.Calls < 4 || len(r.Rounds) < 2 || r.Checks == nil || r.Checks.Judged == 0 {
			b.Fatalf("cannot measure: status %s, %d model calls, %d rounds, checks %+v, error %s", r.Status, r.Usage.Calls, len(r.Rounds), r.Checks, r.Error)
		}
		calls, rounds = r.Usage.Calls, len(r.Rounds)
		in, out = r.Usage.InputTokens, r.Usage.OutputTokens
		critical += time.Duration(calls)*llmLatency + time.Duration(rounds)*perRound
	}
	b.ReportMetric(float64(wall.Milliseconds())/float64(b.N), "wall_ms")
	b.ReportMetric(float64(critical.Milliseconds())/float64(b.N), "critical_ms")
	b.ReportMetric(float64(wall)/float64(critical), "wall/critical")
	b.ReportMetric(float64(calls), "llm_calls")
	b.ReportMetric(float64(rounds), "rounds")
	// Tokens as the model server counts them (request and reply bytes / 4:
	// the prompts, schemas included; the completions are this fake's).
	b.ReportMetric(float64(in), "prompt_tokens")
	b.ReportMetric(float64(out), "completion_tokens")
}
