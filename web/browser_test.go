package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/server"
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
func serve(t *testing.T) string {
	t.Helper()
	a := app.New(app.Config{DataDir: t.TempDir(), LLM: "offline", Embedder: "hash", LogLevel: "warn", AllowPrivate: true}, slog.New(slog.DiscardHandler))
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
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln, 5*time.Second) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
		_ = a.Close()
	})
	return "http://" + ln.Addr().String()
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
	// the step, not the browser.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
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
	base := serve(t)
	for _, w := range []struct {
		name          string
		width, height int
	}{{"desktop", 1280, 900}, {"phone", 390, 844}} {
		t.Run(w.name, func(t *testing.T) {
			bctx := browser(t, w.width, w.height)
			ctx, cancel := context.WithTimeout(bctx, 90*time.Second)
			defer cancel()
			css := func(s string) chromedp.CSS { return chromedp.CSS(s) }
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
			screenshot(t, ctx, "research-"+w.name)
			axe(t, ctx, "research")

			// A citation jumps to its reference, not to another page.
			if err := chromedp.Do(ctx, chromedp.Click(css(`article.report a[href^="#ref-"]`))); err != nil {
				t.Fatal(err)
			}
			if hash, err := chromedp.Run(ctx, chromedp.Evaluate[string](`location.hash`)); err != nil || !strings.HasPrefix(hash, "#/research/") {
				t.Fatalf("a citation changed the route to %q: %v", hash, err)
			}

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

			// Console: with no pipeline yet it says how to make one.
			if err := chromedp.Do(ctx, chromedp.Navigate(base+"/#/console"), chromedp.WaitVisible(css(`main h1`))); err != nil {
				t.Fatal(err)
			}
			screenshot(t, ctx, "console-"+w.name)
			axe(t, ctx, "console")

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
