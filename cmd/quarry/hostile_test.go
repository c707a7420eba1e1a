package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/quarryhq/quarry/app"
)

func isUsage(err error) bool { return err != nil && exitCode(err) == exitUsage }

// TestDocsNeverMixFolders: two paths that differ only in a space (or in
// non-ASCII letters) get two knowledge bases; a file deleted from a folder
// leaves its knowledge base; a missing or empty path leaves nothing.
func TestDocsNeverMixFolders(t *testing.T) {
	root := t.TempDir()
	data := t.TempDir()
	spaced, dashed := filepath.Join(root, "notes", "my notes"), filepath.Join(root, "notes", "my-notes")
	ko1, ko2 := filepath.Join(root, "노트"), filepath.Join(root, "메모")
	for dir, text := range map[string]string{
		spaced: "Project Falcon launched in 2019 with a budget of 4 million.",
		dashed: "Project Falcon was cancelled in 2021 after a confidential review.",
		ko1:    "Project Falcon has a secret codename Kestrel.",
		ko2:    "Project Falcon has a public codename Osprey.",
	} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "falcon.md"), []byte("# Falcon\n\n"+text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if app.DocsKBName(spaced) == app.DocsKBName(dashed) || app.DocsKBName(ko1) == app.DocsKBName(ko2) {
		t.Fatalf("names collide: %s %s %s %s", app.DocsKBName(spaced), app.DocsKBName(dashed), app.DocsKBName(ko1), app.DocsKBName(ko2))
	}
	for _, dir := range []string{spaced, dashed, ko1, ko2} {
		out, errOut, err := run(t, data, "research", "What happened to Project Falcon?", "--docs", dir, "--level", "quick", "--format", "json")
		if err != nil {
			t.Fatalf("%s: %v\n%s", dir, err, errOut)
		}
		var r struct {
			Sources []struct{ URL string }
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatal(err)
		}
		if len(r.Sources) == 0 {
			t.Fatalf("%s: nothing read", dir)
		}
		for _, s := range r.Sources {
			if !strings.HasPrefix(s.URL, "file://"+filepath.ToSlash(dir)+"/") {
				t.Fatalf("research on %s read %s", dir, s.URL)
			}
		}
	}

	// A deleted file leaves the folder's knowledge base on the next run.
	extra := filepath.Join(spaced, "extra.md")
	if err := os.WriteFile(extra, []byte("# Extra\n\nProject Falcon hired 12 engineers.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := run(t, data, "research", "Project Falcon engineers", "--docs", spaced, "--level", "quick"); err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	if err := os.Remove(extra); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := run(t, data, "research", "Project Falcon engineers", "--docs", spaced, "--level", "quick")
	if err != nil || !strings.Contains(errOut, "1 removed") {
		t.Fatalf("after deleting a file: %v %s", err, errOut)
	}
	stats, _, err := run(t, data, "kb", "stats", app.DocsKBName(spaced), "--json")
	if err != nil || !strings.Contains(stats, `"sources": 1`) {
		t.Fatalf("stats after deleting a file: %v %s", err, stats)
	}

	// Missing and empty paths: an error, and no knowledge base left.
	empty := filepath.Join(root, "empty")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(root, "missing"), empty} {
		if _, _, err := run(t, data, "research", "anything", "--docs", p); !isUsage(err) {
			t.Fatalf("--docs %s: %v, want invalid input", p, err)
		}
		if list, _, _ := run(t, data, "kb", "list"); strings.Contains(list, app.DocsKBName(p)) {
			t.Fatalf("--docs %s left %s behind:\n%s", p, app.DocsKBName(p), list)
		}
	}
}

// TestUntrustedTextStaysText: markup, links and terminal escapes in a
// document and a question reach no output as markup or escapes.
func TestUntrustedTextStaysText(t *testing.T) {
	dir := t.TempDir()
	data := t.TempDir()
	page := `<html><head><title>Falcon <script>alert(1)</script> notes</title></head><body>
<p>Project Falcon launched in 2019 &lt;img src=x onerror=alert(1)&gt; with [a link](javascript:alert(2)) in the text.</p>
<p>Project Falcon is run by the <b>Kestrel</b> team.` + "\x1b[2J\x1b]0;pwned\x07" + `</p></body></html>`
	if err := os.WriteFile(filepath.Join(dir, "falcon.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := run(t, data, "research", "Project Falcon launch \x1b[31mred\x1b[0m", "--docs", dir, "--level", "quick")
	if err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<script|<img`), regexp.MustCompile(`[^\\]\]\(javascript:`), regexp.MustCompile("\x1b")} {
		if bad.MatchString(out) || bad.MatchString(errOut) {
			t.Errorf("output carries %s:\n%s", bad, out)
		}
	}
	list, _, err := run(t, data, "research", "list")
	if err != nil || strings.Contains(list, "\x1b") || !strings.Contains(list, "Project Falcon launch [31mred [0m") {
		t.Fatalf("list: %v %q", err, list)
	}
}

// TestFlagsCheckedFirst: bad flags and files are invalid input (exit 2)
// naming the field, before any work.
func TestFlagsCheckedFirst(t *testing.T) {
	data := t.TempDir()
	cases := []struct {
		args  []string
		field string
	}{
		{[]string{"research", "show", "some-id", "--format", "bogus"}, "format"},
		{[]string{"research", "q", "--docs", researchCorpus, "--out", t.TempDir()}, "out"},
		{[]string{"research", "q", "--docs", researchCorpus, "--out", filepath.Join(t.TempDir(), "no", "r.md")}, "out"},
		{[]string{"eval", "retrieval", "--kb", "x", "--queries", researchCorpus, "--qrels", filepath.Join(t.TempDir(), "missing.tsv")}, "qrels"},
	}
	for _, tc := range cases {
		_, _, err := run(t, data, tc.args...)
		if !isUsage(err) || !strings.HasPrefix(err.Error(), tc.field+":") {
			t.Errorf("%v: %v, want invalid input naming %s", tc.args, err, tc.field)
		}
	}
	if list, _, _ := run(t, data, "research", "list", "--json"); strings.TrimSpace(list) != "[]" {
		t.Fatalf("a bad flag still ran a research: %s", list)
	}
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("log_level: info\nllm_modle: openai:gpt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCtx(t.Context(), t, data, "--config", cfg, "kb", "list")
	if !isUsage(err) || !strings.Contains(err.Error(), `line 2: unknown key "llm_modle"`) || !strings.Contains(err.Error(), "llm_base_url") {
		t.Fatalf("config typo: %v", err)
	}
}

// TestWatchAndCancelCLI: watch --json replays a finished research's events
// one per line, numbered 1, 2, 3, …; bad ids and --after values and the
// cancel of a finished research are clear errors.
func TestWatchAndCancelCLI(t *testing.T) {
	data := t.TempDir()
	out, errOut, err := run(t, data, "research", composerQ, "--docs", researchCorpus, "--level", "quick", "--format", "json")
	if err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	var r struct{ ID string }
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "quarry research watch "+r.ID) {
		t.Fatalf("the id was not announced when the research started:\n%s", errOut)
	}
	lines, _, err := run(t, data, "research", "watch", r.ID, "--json")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(lines), "\n") {
		var e struct {
			Seq  int
			Type string
		}
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Seq != n+1 {
			t.Fatalf("line %d: %q (%v)", n+1, l, err)
		}
		n++
	}
	if n < 10 {
		t.Fatalf("%d events", n)
	}
	tail, _, err := run(t, data, "research", "watch", r.ID, "--after", strconv.Itoa(n-1))
	if err != nil || strings.Count(tail, "\n") != 1 || !strings.Contains(tail, "completed") {
		t.Fatalf("watch --after %d: %v %q", n-1, err, tail)
	}
	if _, _, err := run(t, data, "research", "watch", r.ID, "--after", strconv.Itoa(n+10)); !isUsage(err) || !strings.HasPrefix(err.Error(), "after:") {
		t.Fatalf("--after beyond the end: %v", err)
	}
	if _, _, err := run(t, data, "research", "watch", "no-such-id"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("unknown id: %v", err)
	}
	if _, _, err := run(t, data, "research", "cancel", r.ID); err == nil || exitCode(err) != exitError || !strings.Contains(err.Error(), "is completed, not running") {
		t.Fatalf("cancel of a completed research: %v", err)
	}
}
