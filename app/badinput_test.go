package app_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/eval"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/research"
)

// TestOfflineBadDocuments runs the offline engine (a quick research and
// ask) over the documents the answers issue lists as bad input: a page
// that is all code, all table or all navigation, a question whose words
// the sources hold only inside code, a document with no headings, an
// empty and a one-sentence source, a question in one language over
// sources in another, and 10,000 sentences in one page. Each research
// completes; its summary quotes no sentence that is not prose (a
// heading, navigation, a table row, code quoted as a sentence) and none
// of the navigation or table lines; ask answers (a table's row may be
// its answer, quoted as it is) or says it does not know, and quotes no
// navigation. The deadline is a guard against a hang, not a timing target
// (BenchmarkSelect10kSentences times the long page).
func TestOfflineBadDocuments(t *testing.T) {
	var long strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&long, "Sentence %d says that the pump in room %d runs at %d litres a minute. ", i, i%97, 10+i%41)
		if i%12 == 11 {
			long.WriteString("\n\n")
		}
	}
	for _, c := range []struct {
		name      string
		question  string
		docs      []string
		forbidden []string // lines that must never reach the summary
	}{
		{"all code", "How do I list the files in a directory with their sizes?",
			[]string{"```\n$ ls -la /tmp\ntotal 8\ndrwxrwxrwt 2 root root 4096 Jan 1 00:00 .\n$ du -sh *\n```", "The `ls` command lists directory contents; `-l` adds sizes."}, nil},
		{"all table", "Which option shows hidden files?",
			[]string{"| option | meaning |\n|---|---|\n| -a | all, hidden files included |\n| -l | long format |", "Options change what ls prints."}, []string{"| -a |", "|---|"}},
		{"all navigation", "What is the default value of shared_buffers?",
			[]string{"Home > Docs > Config\n\nNext | Previous | Up\n\nPrev Up Next", "shared_buffers (integer)\n\nSets the amount of memory the database server uses for shared memory buffers. The default is typically 128 megabytes (128MB)."},
			[]string{"Next | Previous", "Home > Docs", "Prev Up Next"}},
		{"words only in code", "What does frobnicate_all return?",
			[]string{"Example:\n\n    result = frobnicate_all(items)\n    print(result)\n\nThe example prints what the call gives back.", "Nothing else is said here about the library."}, nil},
		{"no headings", "How often are stale pages crawled again?",
			[]string{"The crawler re-crawls stale pages every five minutes. A page that fails three times is marked stale and kept. Nothing is deleted.", "Fees are paid monthly."}, nil},
		{"empty and one-sentence", "When did Giuseppe Verdi die?",
			[]string{"", "Giuseppe Verdi died on 27 January 1901 in Milan."}, nil},
		{"another language", "한빛전력의 요금은 언제까지 납부해야 하나요?",
			[]string{"Hanbit Power's bills are due on the 25th of every month.", "Payment by direct debit is available."}, nil},
		{"10,000 sentences", "How fast does the pump in room 42 run?",
			[]string{long.String(), "Pumps are serviced yearly."}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			a := app.New(app.Config{DataDir: t.TempDir()}, nil)
			defer a.Close()
			rn, err := a.Runner(ctx)
			if err != nil {
				t.Fatal(err)
			}
			svc, emb, err := a.OpenKB(ctx, "bad", true)
			if err != nil {
				t.Fatal(err)
			}
			k, err := svc.Get(ctx, "bad")
			if err != nil {
				t.Fatal(err)
			}
			var docs []kb.Document
			for i, text := range c.docs {
				if text != "" {
					docs = append(docs, kb.Document{URL: fmt.Sprintf("kb://bad/d%d", i), Title: fmt.Sprintf("d%d", i), Text: text})
				}
			}
			if _, err := svc.AddDocuments(ctx, k, docs, kb.AddOptions{Embedder: emb}); err != nil {
				t.Fatalf("ingest: %v", err)
			}
			r, err := rn.Start(ctx, c.question, research.Options{Sources: []string{"kb:bad"}, Level: "quick"})
			if err != nil || r.Status != research.StatusCompleted || r.Report == nil {
				t.Fatalf("research: %v (%s %s)", err, r.Status, r.Error)
			}
			summary := r.Report.Summary
			if bad := eval.NonProse(summary); len(bad) > 0 {
				t.Errorf("summary sentences that are not prose %q in:\n%s", bad, summary)
			}
			for _, f := range c.forbidden {
				if strings.Contains(summary, f) {
					t.Errorf("summary quotes %q:\n%s", f, summary)
				}
			}
			asker, err := a.Asker(ctx, "bad")
			if err != nil {
				t.Fatal(err)
			}
			ans, err := asker.Ask(ctx, qa.Request{Question: c.question})
			if err != nil {
				t.Fatalf("ask: %v", err)
			}
			if !ans.Unknown && strings.TrimSpace(ans.Answer) == "" {
				t.Errorf("ask answered with nothing: %+v", ans)
			}
			if c.name == "all navigation" && strings.Contains(ans.Answer, "Next") {
				t.Errorf("ask quotes navigation: %s", ans.Answer)
			}
		})
	}
}
