package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/verify"
	"github.com/quarryhq/quarry/server"
	"github.com/quarryhq/quarry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var corpus = filepath.Join("..", "cmd", "quarry", "testdata", "research", "corpus.jsonl")

// chromium finds the browser: QUARRY_CHROMIUM, or Debian's chromium.
// Under CI=true a missing browser fails the test instead of skipping it.
func chromium(t *testing.T) string {
	for _, p := range []string{os.Getenv("QUARRY_CHROMIUM"), "/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if p != "" {
			if _, err := os.Stat(p); err == nil {
				return p
			}
		}
	}
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: CI requires it for the browser tests (apt-get install chromium)")
	}
	t.Skip("chromium is not installed")
	return ""
}

// serve runs quarry serve's handler over a fresh embedded store with the
// bundled wiki knowledge base, offline.
func serve(t *testing.T) (string, *app.App) {
	t.Helper()
	base, a, _ := serveOn(t, app.Config{DataDir: t.TempDir()}, "127.0.0.1:0")
	return base, a
}

// serveOn is serve with a configuration and an address; stop ends the
// server as SIGTERM does (its researches checkpoint for the next start).
func serveOn(t *testing.T, cfg app.Config, addr string) (base string, a *app.App, stop func()) {
	t.Helper()
	cfg.LLM, cfg.Embedder, cfg.LogLevel, cfg.AllowPrivate = "offline", "hash", "warn", true
	a = app.New(cfg, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	svc, emb, err := a.OpenKB(ctx, "wiki", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "wiki", []string{corpus}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(ctx, a, server.Options{Rate: -1, IPRate: -1}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln, 5*time.Second) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
			_ = a.Close()
		})
	}
	t.Cleanup(stop)
	return "http://" + ln.Addr().String(), a, stop
}

// browser starts headless Chromium at a window width; the context ends it.
func browser(t *testing.T, width, height int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.WindowSize(width, height),
		chromedp.Flag("lang", "en-US"),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// Start the browser on this context, so that a step's timeout ends
	// the step, not the browser; headless Chromium clamps its window to
	// 500 px, so the viewport is set to the width asked for.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), int64(height))); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// A page's script errors (an uncaught exception, console.error) fail
	// the test that showed the page.
	var mu sync.Mutex
	var errs []string
	err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *cdpruntime.EventExceptionThrown:
			msg := e.ExceptionDetails.Text
			if x := e.ExceptionDetails.Exception; x != nil {
				msg += " " + x.Description
			}
			errs = append(errs, msg)
		case *cdpruntime.EventConsoleAPICalled:
			if e.Type == cdpruntime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				errs = append(errs, "console.error: "+strings.Join(parts, " "))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, e := range errs {
			t.Errorf("script error in the page: %s", e)
		}
	})
	return ctx
}

// fits fails unless the page is no wider than the viewport (content that
// is wider scrolls in its own box).
func fits(t *testing.T, ctx context.Context, what string) {
	t.Helper()
	type dims struct{ Page, View int }
	d, err := chromedp.Run(ctx, chromedp.Evaluate[dims](`({page: document.documentElement.scrollWidth, view: innerWidth})`))
	if err != nil {
		t.Fatal(err)
	}
	if d.Page > d.View {
		t.Errorf("%s: the page is %d px wide in a %d px viewport", what, d.Page, d.View)
	}
}

// shots is where screenshots go (QUARRY_SCREENSHOTS, or a temp folder the
// test prints).
func shots(t *testing.T) string {
	dir := os.Getenv("QUARRY_SCREENSHOTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "quarry-ui-screenshots")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	p := filepath.Join(shots(t), name+".png")
	if err := os.WriteFile(p, buf, 0o644); err != nil {
		t.Fatal(err)
	}
}

// axe runs axe-core's checks in the page and fails on serious or critical
// violations.
func axe(t *testing.T, ctx context.Context, page string) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "axe", "axe.min.js"))
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Violations []struct {
			ID, Impact, Help string
			Nodes            []struct{ Target []any }
		}
	}
	if err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](string(src))); err != nil {
		t.Fatalf("axe on %s: %v", page, err)
	}
	res, err := chromedp.Run(ctx, chromedp.Evaluate[result](`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}}).then(r => ({violations: r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => ({target: n.target}))}))}))`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe on %s: %v", page, err)
	}
	for _, v := range res.Violations {
		if v.Impact == "serious" || v.Impact == "critical" {
			targets, _ := json.Marshal(v.Nodes)
			t.Errorf("%s: %s (%s): %s %s", page, v.ID, v.Impact, v.Help, targets)
		}
	}
}

// TestUI walks each page's main journey in a real Chromium at 1280 px and
// 390 px: a research started from the form completes live with citations
// that resolve to references; an ask whose suggestion is clicked; the
// knowledge page's search. Each page is checked with axe-core and
// screenshotted.
func TestUI(t *testing.T) {
	base, _ := serve(t)
	model := fakeModel(t)
	for _, c := range []struct{ path, body string }{
		{"/v1/datasets", `{"name": "wiki-dev", "knowledge_base": "wiki", "questions": [{"id": "a", "question": "When was Antonín Dvořák born?", "answer": "8 September 1841", "doc_ids": ["w00612"]}]}`},
		{"/v1/pipelines", `{"name": "wiki-test", "pipeline_type": "test", "knowledge_base": "wiki", "dataset_id": "wiki-dev", "settings": {"mode": "bm25", "top_k": 3}}`},
		{"/v1/pipelines", `{"name": "wiki-hybrid", "pipeline_type": "test", "knowledge_base": "wiki", "dataset_id": "wiki-dev", "settings": {"mode": "hybrid", "top_k": 3}}`},
	} {
		r, err := http.Post(base+c.path, "application/json", strings.NewReader(c.body))
		if err != nil || r.StatusCode != 201 {
			t.Fatalf("%s: %v %v", c.path, r, err)
		}
		r.Body.Close()
	}
	for _, w := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		t.Run(w.name, func(t *testing.T) {
			bctx := browser(t, w.width, w.height)
			// A guard against a hang, not a timing target: the whole
			// journey, under -race beside the other packages' tests on
			// two cores, has taken most of 90 s.
			ctx, cancel := context.WithTimeout(bctx, 4*time.Minute)
			defer cancel()
			css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
			// First load: what was transferred and when the page could be used.
			if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/research"), chromedp.WaitVisible(css(`#question`))); err != nil {
				t.Fatal(err)
			}
			type load struct{ Bytes, Interactive float64 }
			l, err := chromedp.Run(ctx, chromedp.Evaluate[load](`(() => { const nav = performance.getEntriesByType('navigation')[0]; const res = performance.getEntriesByType('resource').filter(r => !r.name.includes('/v1/')); return {bytes: nav.transferSize + res.reduce((a, r) => a + r.transferSize, 0), interactive: nav.domInteractive}; })()`))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("first load: %.0f bytes transferred, interactive at %.0f ms", l.Bytes, l.Interactive)
			if l.Bytes > 200*1024 {
				t.Errorf("first load transferred %.0f bytes, over 200 KB", l.Bytes)
			}
			// Research: start one, watch it complete, follow a citation.
			steps := []struct {
				name string
				act  chromedp.Action[chromedp.Void]
			}{
				{"open the page", chromedp.Navigate(base + "/#/research")},
				{"see the form", chromedp.WaitVisible(css(`#question`))},
				{"type a question", chromedp.SendKeys(css(`#question`), "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?")},
				{"start it", chromedp.Click(css(`form button[type=submit]`))},
				{"see the report", chromedp.WaitVisible(css(`article.report[aria-busy="false"]`))},
			}
			for _, st := range steps {
				if err := chromedp.Do(ctx, st.act); err != nil {
					page, perr := chromedp.Run(bctx, chromedp.Evaluate[string](`location.hash + ' | ' + document.querySelector('main').innerText.slice(0, 1500)`))
					t.Fatalf("research journey, %s: %v\npage (%v): %s", st.name, err, perr, page)
				}
			}
			report, err := chromedp.Run(ctx, chromedp.Text(css(`article.report`)))
			if err != nil {
				t.Fatal(err)
			}
			refs, err := chromedp.Run(ctx, chromedp.Evaluate[int](`[...document.querySelectorAll('article.report a[href^="#ref-"]')].filter(a => document.getElementById(a.getAttribute('href').slice(1))).length`))
			if err != nil || !strings.Contains(report, "Verdi") || refs == 0 {
				t.Fatalf("report (%d citations that resolve, %v): %.300s", refs, err, report)
			}
			if agents, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.agent').length`)); err != nil || agents == 0 {
				t.Fatalf("no live agent panel: %d %v", agents, err)
			}
			// Facts and conflicts have a panel of their own.
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('[aria-labelledby="facts-h"]').innerText.includes('verified by two or more')`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("no facts panel: %v", err)
			}
			screenshot(t, ctx, "research-"+w.name)
			axe(t, ctx, "research")

			// A citation jumps to its reference, not to another page.
			if err := chromedp.Do(ctx, chromedp.Click(css(`article.report a[href^="#ref-"]`))); err != nil {
				t.Fatal(err)
			}
			if hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); err != nil || !strings.HasPrefix(hash, "#/research/") {
				t.Fatalf("a citation changed the route to %q: %v", hash, err)
			}

			// The research list shows its thread; the thread lists its
			// queries. The report links its thread too, so the list's
			// link is the one in the threads table: waiting for any such
			// link could find the report's, about to be replaced, and
			// click a node no longer in the page. The table is redrawn
			// every 5 s, so the link is followed in the page's own
			// script, which finds it as it stands.
			steps = []struct {
				name string
				act  chromedp.Action[chromedp.Void]
			}{
				{"open the list", chromedp.Navigate(base + "/#/research")},
				{"see the thread", chromedp.WaitVisible(css(`main tbody a[href^="#/research/thread/"]`))},
				{"open the thread", chromedp.Evaluate[chromedp.Void](`document.querySelector('main tbody a[href^="#/research/thread/"]').click()`)},
				{"see its queries", chromedp.WaitVisible(css(`main ol.messages li a[href^="#/research/"]`))},
			}
			for _, st := range steps {
				if err := chromedp.Do(ctx, st.act); err != nil {
					page, perr := chromedp.Run(bctx, chromedp.Evaluate[string](`location.hash + ' | ' + document.querySelector('main').innerText.slice(0, 1500)`))
					t.Fatalf("threads, %s: %v\npage (%v): %s", st.name, err, perr, page)
				}
			}
			axe(t, ctx, "thread")

			// Ask: an answer with sources and suggestions; a suggestion asks.
			if err := chromedp.Do(ctx,
				chromedp.Navigate(base+"/#/ask"),
				chromedp.WaitVisible(css(`#ask-q`)),
				chromedp.SendKeys(css(`#ask-q`), "When was Giuseppe Verdi born?"),
				chromedp.Click(css(`main form button[type=submit]`)),
				chromedp.WaitVisible(css(`.msg:not(.user)`)),
			); err != nil {
				t.Fatalf("ask journey: %v", err)
			}
			if answer, err := chromedp.Run(ctx, chromedp.Text(css(`.msg:not(.user)`))); err != nil || !strings.Contains(answer, "1813") {
				t.Fatalf("answer %q: %v", answer, err)
			}
			if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('.msg .chips button').length`)); n > 0 {
				if err := chromedp.Do(ctx, chromedp.Click(css(`.msg .chips button`))); err != nil {
					t.Fatal(err)
				}
				if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('.msg:not(.user)').length >= 2`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
					t.Fatalf("a clicked suggestion was not asked: %v", err)
				}
			}
			screenshot(t, ctx, "ask-"+w.name)
			axe(t, ctx, "ask")

			// Knowledge: the base, its counts and a search.
			if err := chromedp.Do(ctx,
				chromedp.Navigate(base+"/#/knowledge/wiki"),
				chromedp.WaitVisible(css(`#kb-q`)),
				chromedp.SendKeys(css(`#kb-q`), "Dvořák"),
				chromedp.Click(css(`#kb-search`)),
				chromedp.WaitVisible(css(`ol.results li`)),
			); err != nil {
				t.Fatalf("knowledge journey: %v", err)
			}
			screenshot(t, ctx, "knowledge-"+w.name)
			axe(t, ctx, "knowledge")

			// Console: retrieve with golden marks, a generation streamed from
			// a fake model server (after the form refused a bad temperature
			// with the seed's message), an evaluation.
			if err := chromedp.Do(ctx,
				chromedp.Navigate(base+"/#/console"),
				chromedp.WaitVisible(css(`#r-q`)),
				chromedp.SendKeys(css(`#r-q`), "When was Antonín Dvořák born?"),
				chromedp.Click(css(`main form button.primary`)),
				chromedp.WaitVisible(css(`.golden`)),
			); err != nil {
				t.Fatalf("console retrieve: %v", err)
			}
			fits(t, ctx, "console retrieve")
			screenshot(t, ctx, "console-retrieve-"+w.name)
			axe(t, ctx, "console retrieve")
			if err := chromedp.Do(ctx,
				chromedp.Click(css(`#tab-generate`)),
				chromedp.WaitVisible(css(`#g-model`)),
				chromedp.SetValue(css(`#g-type`), "vllm"),
				chromedp.SendKeys(css(`#g-model`), "llama3"),
				chromedp.SendKeys(css(`#g-endpoint`), model+"/v1"),
				chromedp.SetValue(css(`#g-temp`), "1.5"),
				chromedp.SendKeys(css(`#g-q`), "When was Dvořák born?"),
				chromedp.Click(css(`main form button.primary`)),
			); err != nil {
				t.Fatalf("console generate: %v", err)
			}
			if msg, err := chromedp.Run(ctx, chromedp.Text(css(`#g-temp-err`))); err != nil || msg != "Temperature must be between 0.0 and 1.0" {
				t.Fatalf("the form did not show the seed's message: %q %v", msg, err)
			}
			if err := chromedp.Do(ctx,
				chromedp.SetValue(css(`#g-temp`), "0.2"),
				chromedp.Click(css(`main form button.primary`)),
			); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('.msg .meta')].some(m => m.textContent.includes('60 tokens'))`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
				t.Fatalf("no generated answer with its timings: %v", err)
			}
			if ans, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('.msg:not(.user) p')].map(p => p.textContent).join(' ')`)); !strings.Contains(ans, "8 September 1841") {
				t.Fatalf("answer: %q", ans)
			}
			fits(t, ctx, "console generate")
			screenshot(t, ctx, "console-generate-"+w.name)
			axe(t, ctx, "console generate")
			if err := chromedp.Do(ctx,
				chromedp.Click(css(`#tab-evaluate`)),
				chromedp.WaitVisible(css(`main fieldset input[type=checkbox]`)),
				chromedp.Evaluate[chromedp.Void](`document.querySelectorAll('main fieldset input[type=checkbox]').forEach((b) => b.checked || b.click())`),
				chromedp.Click(css(`main form button.primary`)),
				chromedp.WaitVisible(css(`main table th[scope=row]`)),
				chromedp.WaitVisible(css(`main svg.chart rect`)),
			); err != nil {
				t.Fatalf("console evaluate: %v", err)
			}
			// The chart draws a bar per metric for the pipeline, its label
			// carrying the numbers for a screen reader.
			if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('main svg.chart rect').length`)); err != nil || n != 10 {
				t.Fatalf("chart bars: %d %v", n, err)
			}
			// The two pipelines compared in a sentence, not an object's name.
			if txt, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('main').innerText`)); err != nil || !strings.Contains(txt, "better on") || strings.Contains(txt, "[object") {
				t.Fatalf("evaluation text: %v\n%s", err, txt)
			}
			screenshot(t, ctx, "console-evaluate-"+w.name)
			axe(t, ctx, "console evaluate")

			// An unknown research is a page that says so.
			if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/research/no-such-id")); err != nil {
				t.Fatal(err)
			}
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('main h1') && document.querySelector('main h1').textContent === 'Research not found'`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
				t.Fatalf("unknown research: %v", err)
			}
		})
	}
	t.Logf("screenshots: %s", shots(t))
	fmt.Fprintln(os.Stderr, "UI screenshots in", shots(t))
}

// fakeModel is an OpenAI-compatible server that streams one answer, as
// api.openai.com's chat completions do.
func fakeModel(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Stream bool `json:"stream"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		const head = `{"id":"c","object":"chat.completion.chunk","created":1,"model":"llama3",`
		if !body.Stream {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":"Dvořák was born on 8 September 1841 [S1]."},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}`)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, piece := range []string{"Dvořák was born ", "on 8 September 1841 [S1]."} {
			b, _ := json.Marshal(piece)
			fmt.Fprintf(w, "data: %s\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", head, b)
			w.(http.Flusher).Flush()
		}
		fmt.Fprintf(w, "data: %s\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":10,\"total_tokens\":60}}\n\ndata: [DONE]\n\n", head)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestUIToken: once a token exists the pages ask for one, refuse a wrong
// one with a message, keep the right one for the tab, and ask again when
// it is revoked; nothing is put in the URL or localStorage.
func TestUIToken(t *testing.T) {
	base, a := serve(t)
	ctx := context.Background()
	st, err := a.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret, _, err := server.CreateToken(ctx, st, "ui", []string{"research", "kb"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	bctx := browser(t, 1280, 900)
	tctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(tctx,
		chromedp.Navigate(base+"/#/knowledge"),
		chromedp.WaitVisible(css(`#token-input`)),
		chromedp.SendKeys(css(`#token-input`), "qry_wrong"),
		chromedp.Click(css(`#token-form button[type=submit]`)),
		chromedp.WaitVisible(css(`#token-error`)),
	); err != nil {
		t.Fatalf("a wrong token: %v", err)
	}
	axe(t, tctx, "token prompt")
	if err := chromedp.Do(tctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById('token-input').value = ''`),
		chromedp.SendKeys(css(`#token-input`), secret),
		chromedp.Click(css(`#token-form button[type=submit]`)),
		chromedp.WaitVisible(css(`main table a[href="#/knowledge/wiki"]`)),
	); err != nil {
		t.Fatalf("the right token: %v", err)
	}
	where, err := chromedp.Run(tctx, chromedp.Evaluate[string](`location.href + ' ' + JSON.stringify(localStorage)`))
	if err != nil || strings.Contains(where, secret) {
		t.Fatalf("the token is in the URL or localStorage: %s %v", where, err)
	}
	if err := st.TokenRevoke(ctx, "ui", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(tctx, chromedp.Navigate(base+"/#/ask"), chromedp.WaitVisible(css(`#token-input`))); err != nil {
		t.Fatalf("a revoked token did not bring the prompt back: %v", err)
	}
}

// TestUIKnowledge: files added through the file picker (a binary one
// listed with its reason beside the good one), and a crawl of a local
// site followed to its log.
func TestUIKnowledge(t *testing.T) {
	base, _ := serve(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "notes.md")
	bad := filepath.Join(dir, "blob.bin")
	if err := os.WriteFile(good, []byte("# Fees\n\nFees are due on the 25th of every month."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte{0, 1, 2, 3, 0xff, 0xfe, 0, 0, 7}, 0o644); err != nil {
		t.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><head><title>Home</title></head><body><p>Welcome to the billing help pages of the example utility company.</p><a href="/late">late fees</a></body></html>`)
		case "/late":
			fmt.Fprint(w, `<html><head><title>Late fees</title></head><body><p>Late fees start ten days after the due date and are two percent of the amount.</p></body></html>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	bctx := browser(t, 1280, 900)
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	// The name field checks the server's rule in the browser: its pattern
	// compiles (with the v flag Chromium uses), so "-bad" is refused there.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/#/knowledge/wiki"),
		chromedp.WaitVisible(css(`#kb-q`)),
		chromedp.SendKeys(css(`#kb-name`), "-bad"),
	); err != nil {
		t.Fatal(err)
	}
	if bad, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('kb-name').validity.patternMismatch`)); err != nil || !bad {
		t.Fatalf("the name pattern let -bad through: %v", err)
	}
	sources := `Number([...document.querySelectorAll('main > .table-wrap tbody tr')].find(r => r.cells[0].textContent === 'wiki').cells[1].textContent)`
	before, err := chromedp.Run(ctx, chromedp.Evaluate[int](sources))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.SetUploadFiles(css(`#kb-files`), []string{good, bad})); err != nil {
		t.Fatalf("upload: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!document.querySelector('ul[aria-label="Files not added"]')`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("no upload report: %v", err)
	}
	report, _ := chromedp.Run(ctx, chromedp.Text(css(`section.panel`)))
	if !strings.Contains(report, "Added 1") || !strings.Contains(report, "blob.bin") {
		t.Fatalf("upload report: %q", report)
	}
	// The knowledge bases' counts follow the upload without a reload.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`%s === %d`, sources, before+1), chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the source count stayed %d after the upload: %v", before, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(css(`#kb-url`), site.URL+"/"),
		chromedp.Click(css(`#kb-url ~ * button, form:has(#kb-url) button`)),
	); err != nil {
		t.Fatalf("crawl: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('form:has(#kb-url) tbody tr')].some(r => r.textContent.includes('success'))`, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
		t.Fatalf("the crawl log never said success: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('section.panel tbody tr')].some(r => r.textContent.includes('Late fees'))`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the crawled page is not among the sources: %v", err)
	}
	// A re-crawl schedule: a bad interval is refused naming the rule, a
	// good one is stored and shown.
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#kb-schedule').textContent.includes('No scheduled re-crawl')`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("no schedule shown as none: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(css(`#kb-every`), "500ms"), chromedp.Click(css(`#kb-schedule-set`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('form:has(#kb-every)').textContent.includes('at least 1s')`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("a 500ms schedule was not refused: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.SetValue(css(`#kb-every`), "1h"), chromedp.Click(css(`#kb-schedule-set`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('#kb-schedule').textContent.includes('every 1h0m0s')`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("the schedule is not shown: %v", err)
	}
	// A source's chunks, as the index holds them.
	if err := chromedp.Do(ctx, chromedp.Click(css(`button.show-chunks`))); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`[...document.querySelectorAll('ol.chunks li')].some(li => li.textContent.includes('tokens')) && /^\d+ chunks of /.test(document.querySelector('ol.chunks').previousElementSibling.textContent)`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("no chunk list with its count: %v", err)
	}
	screenshot(t, ctx, "knowledge-upload-crawl-desktop")
	axe(t, ctx, "knowledge after upload and crawl")
	// A knowledge base made now is the research form's preselected source,
	// though "wiki" sorts before it.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(css(`#kb-name`), "zeta"),
		chromedp.Click(css(`form:has(#kb-name) button`)),
	); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`location.hash === '#/knowledge/zeta'`, chromedp.WithPollingTimeout(10*time.Second))); err != nil {
		t.Fatalf("zeta not created: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/research"), chromedp.WaitVisible(css(`#question`))); err != nil {
		t.Fatal(err)
	}
	if sel, err := chromedp.Run(ctx, chromedp.Evaluate[string](`[...document.querySelectorAll('fieldset input:checked')].map(b => b.value).join(',')`)); err != nil || sel != "kb:zeta" {
		t.Fatalf("preselected %q, want kb:zeta: %v", sel, err)
	}
}

// TestUIReconnect: the server restarts while a research page follows a
// running research; the page says it lost the connection, reconnects from
// the last event it had, and ends with the report and every message once.
func TestUIReconnect(t *testing.T) {
	search := slowSearch(t, 1500*time.Millisecond) // a research of two rounds lasts 3 s or more: the page sees it running
	cfg := app.Config{DataDir: t.TempDir(), WebSearch: "searxng", SearxNGURL: search.URL}
	base, _, stop := serveOn(t, cfg, "127.0.0.1:0")
	addr := strings.TrimPrefix(base, "http://")
	r, err := http.Post(base+"/v1/researches", "application/json", strings.NewReader(`{"question": "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?", "sources": ["web"], "level": "standard"}`))
	if err != nil || r.StatusCode != 202 {
		t.Fatalf("%v %v", r, err)
	}
	var c struct{ ID string }
	_ = json.NewDecoder(r.Body).Decode(&c)
	r.Body.Close()
	bctx := browser(t, 1280, 900)
	ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
	defer cancel()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/research/"+c.ID), chromedp.WaitVisible(css(`.agent`))); err != nil {
		t.Fatalf("follow: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelector('main').innerText.includes('executing')`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("the research never reached executing: %v", err)
	}
	stop()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!document.getElementById('banner').hidden`, chromedp.WithPollingTimeout(20*time.Second))); err != nil {
		t.Fatalf("no banner when the server went away: %v", err)
	}
	screenshot(t, ctx, "research-reconnecting-desktop")
	serveOn(t, cfg, addr) // the next start resumes the research
	if err := chromedp.Do(ctx, chromedp.WaitVisible(css(`article.report[aria-busy="false"]`))); err != nil {
		t.Fatalf("no report after the restart: %v", err)
	}
	type counts struct{ Shown, Stored int }
	n, err := chromedp.Run(ctx, chromedp.Evaluate[counts](`fetch('/v1/researches/`+c.ID+`/events?after=0', {headers: {Accept: 'text/event-stream'}}).then(r => r.text()).then(t => ({
		shown: document.querySelectorAll('ol[aria-label="Message log"] li').length,
		stored: (t.match(/^event: (message|warning)$/gm) || []).length}))`, chromedp.EvalAwaitPromise))
	if err != nil || n.Shown != n.Stored || n.Stored == 0 {
		t.Fatalf("messages shown %d, stored %d (%v): lost or repeated across the restart", n.Shown, n.Stored, err)
	}
	if hidden, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('banner').hidden`)); !hidden {
		t.Fatal("the banner stayed after the reconnect")
	}
}

// slowSearch is a SearxNG-style search that answers after delay, and
// serves the pages its results name.
func slowSearch(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
			q := r.URL.Query().Get("q")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"results":[{"url":"%s/page/%d","title":"On %s","content":"About %s."}]}`, srv.URL, len(q), q, q)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Composers</title></head><body><article><p>Antonín Dvořák was a Czech composer born on 8 September 1841 in Nelahozeves.</p><p>Giuseppe Verdi was an Italian opera composer born on 10 October 1813 in Le Roncole.</p></article></body></html>`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestUIKorean: an ask in Korean over a Korean knowledge base is answered
// in Korean, and the page has a font for Hangul (fonts-noto-cjk), so the
// screenshot shows text, not boxes.
func TestUIKorean(t *testing.T) {
	base, a := serve(t)
	ctx := context.Background()
	svc, emb, err := a.OpenKB(ctx, "ko", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "ko", []string{filepath.Join("..", "qa", "testdata", "ko.jsonl")}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	tctx := askPhone(t, base, "ko", "요금은 언제 납부하나요?")
	answer, err := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(`.msg:not(.user)`)))
	if err != nil || !strings.Contains(answer, "25일") || !strings.Contains(answer, "kb://ko/") {
		t.Fatalf("answer %q: %v", answer, err)
	}
	if ok, err := chromedp.Run(tctx, chromedp.Evaluate[bool](`document.fonts.check('16px "Noto Sans CJK KR"', '요금')`)); err != nil || !ok {
		t.Fatalf("no font for Hangul (install fonts-noto-cjk): %v", err)
	}
	screenshot(t, tctx, "ask-korean-phone")
	axe(t, tctx, "ask in Korean")
}

// askPhone opens the ask page at 390 px, asks question over the
// knowledge base kb and waits for the answer; the context ends with the
// test.
func askPhone(t *testing.T, base, kb, question string) context.Context {
	t.Helper()
	bctx := browser(t, 390, 844)
	tctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	t.Cleanup(cancel)
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(tctx,
		chromedp.Navigate(base+"/#/ask"),
		chromedp.WaitVisible(css(`#ask-q`)),
		chromedp.Evaluate[chromedp.Void](`(() => { const s = document.getElementById('ask-kb'); s.value = `+strconv.Quote(kb)+`; s.dispatchEvent(new Event('change')); })()`),
		chromedp.SendKeys(css(`#ask-q`), question),
		chromedp.Click(css(`main form button[type=submit]`)),
		chromedp.WaitVisible(css(`.msg:not(.user)`)),
	); err != nil {
		t.Fatalf("ask %q over %s: %v", question, kb, err)
	}
	return tctx
}

// TestUIAskCode: an answer that quotes a command shows it as code, apart
// from the sentence before it.
func TestUIAskCode(t *testing.T) {
	base, a := serve(t)
	ctx := context.Background()
	svc, emb, err := a.OpenKB(ctx, "git", true)
	if err != nil {
		t.Fatal(err)
	}
	page := filepath.Join(t.TempDir(), "gc.md")
	doc := "# Cleaning up a repository\n\nLoose objects pile up as you work, and a repository slows down when there are many of them. " +
		"To pack the loose objects of a repository by hand, run the garbage collector:\n\n```sh\ngit gc --aggressive --prune=now\n```\n\n" +
		"The collector also runs by itself after some commands.\n"
	if err := os.WriteFile(page, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "git", []string{page}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	tctx := askPhone(t, base, "git", "How do I pack the loose objects of a repository by hand?")
	code, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('.msg:not(.user) p code')].map(c => c.textContent)`))
	if err != nil || len(code) != 1 || code[0] != "git gc --aggressive --prune=now" {
		answer, _ := chromedp.Run(tctx, chromedp.Text(chromedp.CSS(`.msg:not(.user)`)))
		t.Fatalf("code shown %q (%v) in the answer %q", code, err, answer)
	}
	// A long source URL wraps inside the answer at 390 px, not past it.
	if over, err := chromedp.Run(tctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth - window.innerWidth`)); err != nil || over > 0 {
		t.Errorf("the page is %d px wider than the window (%v)", over, err)
	}
	screenshot(t, tctx, "ask-code-phone")
	axe(t, tctx, "ask with code")
}

// TestUILongReport opens a stored research whose report has 10,000 words
// and 200 citations, scrolls it from top to bottom in steps, and reports
// the frames the browser's timeline saw while it did (long frames over
// 50 ms are jank). The figures are printed, not asserted: timing belongs
// to measurements, not to pass or fail.
func TestUILongReport(t *testing.T) {
	base, a := serve(t)
	now := time.Now().UTC()
	r := research.Research{ID: "long-report", Question: "A long report", Status: research.StatusCompleted, CreatedAt: now, UpdatedAt: now}
	rep := &research.Report{Title: "A long report", Summary: "What follows is long [1]."}
	words := strings.Fields(strings.Repeat("The composer wrote operas and symphonies that audiences still hear in concert halls today ", 10))
	for i := 1; i <= 200; i++ {
		id := fmt.Sprintf("S%d", i)
		r.Sources = append(r.Sources, research.Source{ID: id, URL: fmt.Sprintf("https://example.org/page/%d", i), Title: fmt.Sprintf("Page %d", i), Domain: "example.org", Kind: "web", Content: fmt.Sprintf("Page %d says the composer wrote operas and symphonies.", i)})
		rep.References = append(rep.References, research.Reference{Number: i, SourceID: id, URL: fmt.Sprintf("https://example.org/page/%d", i), Title: fmt.Sprintf("Page %d", i), AccessedAt: now})
	}
	n := 0
	for s := range 20 {
		var body strings.Builder
		for range 5 {
			for range 5 { // 5 paragraphs of 5 sentences of ~20 words
				body.WriteString(strings.Join(words[:20], " ") + ". ")
			}
			n++
			fmt.Fprintf(&body, "They were written down [%d]. And played again [%d].\n\n", n, (n+100-1)%200+1)
		}
		rep.Sections = append(rep.Sections, research.Section{Heading: fmt.Sprintf("Part %d", s+1), Body: body.String()})
	}
	r.Report = rep
	tctx := openStored(t, base, a, r)
	type scroll struct {
		Words, Citations, Frames, Long int
		Max, P95                       float64
	}
	m, err := chromedp.Run(tctx, chromedp.Evaluate[scroll](`new Promise(done => {
		const article = document.querySelector('article.report');
		const words = article.textContent.split(/\s+/).length;
		const citations = article.querySelectorAll('sup.cite a').length;
		const times = []; let last = performance.now(); let y = 0;
		const step = () => {
			const t = performance.now(); times.push(t - last); last = t;
			window.scrollBy(0, 400); y += 400;
			if (y < document.body.scrollHeight) requestAnimationFrame(step);
			else { times.shift(); times.sort((a, b) => a - b);
				done({words, citations, frames: times.length, long: times.filter(x => x > 50).length,
					max: times[times.length - 1] || 0, p95: times[Math.floor(times.length * 0.95)] || 0}); }
		};
		requestAnimationFrame(step);
	})`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if m.Words < 10000 || m.Citations < 200 {
		t.Fatalf("the report has %d words and %d citations, want at least 10,000 and 200", m.Words, m.Citations)
	}
	t.Logf("scrolled a %d-word report with %d citations in %d frames: p95 %.1f ms, worst %.1f ms, %d over 50 ms", m.Words, m.Citations, m.Frames, m.P95, m.Max, m.Long)
}

// TestUIHostileReport: a report whose source text tries to inject script,
// styles and javascript: links is shown as text; nothing runs.
func TestUIHostileReport(t *testing.T) {
	base, a := serve(t)
	now := time.Now().UTC()
	hostile := `<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2"> <style>body{display:none}</style> [click](javascript:window.__pwned=3)`
	r := research.Research{ID: "hostile", Question: "Hostile <b>question</b>", Status: research.StatusCompleted, CreatedAt: now, UpdatedAt: now,
		Sources:       []research.Source{{ID: "S1", URL: "https://example.org/x", Title: "<i>Evil</i> page", Domain: "example.org", Kind: "web", Content: hostile}},
		Discrepancies: []verify.Discrepancy{{ID: "D1", Topic: "<script>window.__pwned=4</script>", Strategy: verify.Uncertainty, Resolution: "<img src=x onerror=\"window.__pwned=5\">", Confidence: 0.3}},
		Report: &research.Report{Title: "Hostile", Summary: "The page says " + hostile + " [1].",
			Sections:   []research.Section{{Heading: "<h1>Heading</h1>", Body: hostile + " [1]."}},
			References: []research.Reference{{Number: 1, SourceID: "S1", URL: "https://example.org/x", Title: "<i>Evil</i> page", AccessedAt: now}}}}
	tctx := openStored(t, base, a, r)
	type verdict struct {
		Pwned                     any
		Scripts, Styles, Handlers int
		JSLinks                   int
		Text                      string
		Visible                   bool
	}
	v, err := chromedp.Run(tctx, chromedp.Evaluate[verdict](`(async () => {
		await new Promise(r => setTimeout(r, 300));
		const main = document.querySelector('main');
		return {
			pwned: window.__pwned ?? null,
			scripts: main.querySelectorAll('script').length,
			styles: main.querySelectorAll('style, link[rel=stylesheet]').length,
			handlers: [...main.querySelectorAll('*')].filter(e => [...e.attributes].some(a => a.name.startsWith('on'))).length,
			jslinks: [...main.querySelectorAll('a')].filter(a => a.getAttribute('href')?.trim().toLowerCase().startsWith('javascript:')).length,
			text: main.innerText,
			visible: getComputedStyle(document.body).display !== 'none',
		};
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if v.Pwned != nil || v.Scripts+v.Styles+v.Handlers+v.JSLinks > 0 || !v.Visible {
		t.Fatalf("injected markup took effect: %+v", v)
	}
	if !strings.Contains(v.Text, "window.__pwned=1") || !strings.Contains(v.Text, "Heading") {
		t.Fatalf("the hostile text is not shown as text: %.600s", v.Text)
	}
	axe(t, tctx, "hostile report")
}

// TestUIResearchOptions: breadth, depth and budgets from the form; a bad
// value is explained beside its field, and nothing starts.
func TestUIResearchOptions(t *testing.T) {
	base, _ := serve(t)
	bctx := browser(t, 1280, 900)
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/#/research"),
		chromedp.WaitVisible(css(`#question`)),
		chromedp.SendKeys(css(`#question`), "Who was Giuseppe Verdi?"),
		chromedp.Click(css(`details summary`)),
		chromedp.SendKeys(css(`#depth`), "9"),
		chromedp.Click(css(`form button[type=submit]`)),
	); err != nil {
		t.Fatal(err)
	}
	// The browser refuses a depth over 5 before sending it.
	if over, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById('depth').validity.rangeOverflow && document.getElementById('depth').validationMessage !== ''`)); err != nil || !over {
		t.Fatalf("depth 9 passed the form's own check: %v", err)
	}
	// The server's rule for what the form cannot check, beside its field.
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById('depth').value = ''`),
		chromedp.SendKeys(css(`#timeout`), "soon"),
		chromedp.Click(css(`form button[type=submit]`)),
	); err != nil {
		t.Fatal(err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Poll[string](`document.getElementById('timeout-err').textContent`, chromedp.WithPollingTimeout(10*time.Second)))
	if err != nil || !strings.Contains(msg, "duration") {
		t.Fatalf("timeout error beside the field: %q %v", msg, err)
	}
	if hash, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); hash != "#/research" {
		t.Fatalf("a research started with a bad timeout: %s", hash)
	}
	if err := chromedp.Do(ctx,
		chromedp.Evaluate[chromedp.Void](`document.getElementById('depth').value = '0'; document.getElementById('breadth').value = '2'; document.getElementById('max-tokens').value = '50000'; document.getElementById('timeout').value = '2m'`),
		chromedp.Click(css(`form button[type=submit]`)),
		chromedp.WaitVisible(css(`article.report[aria-busy="false"]`)),
	); err != nil {
		page, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`location.hash + ' | ' + document.querySelector('main').innerText.slice(0, 800)`))
		t.Fatalf("research with breadth 2, depth 0: %v\n%s", err, page)
	}
	opts, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetch('/v1/researches/' + location.hash.split('/')[2]).then(r => r.json()).then(r => JSON.stringify(r.options))`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.Contains(opts, `"breadth":2`) || !strings.Contains(opts, `"max_tokens":50000`) {
		t.Fatalf("options stored: %s %v", opts, err)
	}
}

// openStored saves a finished research straight into the store and opens
// its page at 1280 px once the report is shown; the context ends with the
// test.
func openStored(t *testing.T, base string, a *app.App, r research.Research) context.Context {
	t.Helper()
	st, err := a.Store(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	state, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.ResearchSave(context.Background(), store.Research{ID: r.ID, Question: r.Question, Status: r.Status, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, State: state}, nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(browser(t, 1280, 900), 90*time.Second)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/research/"+r.ID), chromedp.WaitVisible(chromedp.CSS(`article.report[aria-busy="false"]`))); err != nil {
		t.Fatalf("open: %v", err)
	}
	return ctx
}
