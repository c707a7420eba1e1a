package app_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/research"
)

// FuzzOffline runs the whole offline engine — ingest (chunking, analysis,
// embedding), a quick research over the knowledge base, and ask — over
// any two documents and any question. Whatever the input, nothing panics:
// the research completes or is refused as invalid input, and ask answers
// or refuses the same way. Seeds are real pages: HotpotQA paragraphs, a
// Korean manual's lines, a documentation page with code, and the
// fragment that once crashed the offline writer.
func FuzzOffline(f *testing.F) {
	seeds := [][3]string{
		{"What is the capital of France?", "Paris is the capital of France. data)", ""},
		{"Which composer was born first, Antonín Dvořák or Giuseppe Verdi?",
			"Antonín Leopold Dvořák ( ; ] ; 8 September 1841 – 1 May 1904) was a Czech composer. After Bedřich Smetana, he was the second Czech composer to achieve worldwide recognition.",
			"Giuseppe Fortunino Francesco Verdi (] ; 9 or 10 October 1813 – 27 January 1901) was an Italian opera composer."},
		{"요금은 언제 납부하나요?", "# 요금 안내\n\n한빛전력의 전기 요금은 매월 25일까지 납부해야 합니다. 납부는 자동이체로 할 수 있습니다.\n\n편집 → 실행 취소", "사업자는 매월 말일까지 납부합니다."},
		{"How do I list the files in a directory?", "## ls\n\n```\n$ ls -la /tmp\n```\n\nThe `ls` command lists directory contents. Options: -a, -l.", "| option | meaning |\n|---|---|\n| -a | all |"},
		{"What is the default value of shared_buffers?", "shared_buffers (integer)\n\nSets the amount of memory the database server uses for shared memory buffers. The default is typically 128 megabytes (128MB).", "Home > Docs > Config\n\nNext | Previous | Up"},
		{"Who?", "", "."},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1], s[2])
	}
	ctx := context.Background()
	a := app.New(app.Config{DataDir: f.TempDir()}, nil)
	f.Cleanup(func() { a.Close() })
	rn, err := a.Runner(ctx)
	if err != nil {
		f.Fatal(err)
	}
	var n atomic.Int64
	f.Fuzz(func(t *testing.T, question, doc1, doc2 string) {
		// A hang is a failure too, with its input kept.
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		name := fmt.Sprintf("fuzz%d", n.Add(1))
		svc, emb, err := a.OpenKB(ctx, name, true)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := svc.Delete(context.WithoutCancel(ctx), name); err != nil {
				t.Error(err)
			}
		}()
		k, err := svc.Get(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		docs := []kb.Document{{URL: "kb://" + name + "/a", Title: "a", Text: doc1}, {URL: "kb://" + name + "/b", Title: "b", Text: doc2}}
		if _, err := svc.AddDocuments(ctx, k, docs, kb.AddOptions{Embedder: emb}); err != nil {
			t.Fatalf("ingest: %v", err)
		}
		r, err := rn.Start(ctx, question, research.Options{Sources: []string{"kb:" + name}, Level: "quick"})
		switch {
		case errcode.Of(err) == errcode.Invalid:
		case err != nil:
			t.Fatalf("research: %v", err)
		case r.Status != research.StatusCompleted || r.Report == nil:
			t.Fatalf("research %s without a report: %s", r.Status, r.Error)
		}
		asker, err := a.Asker(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		ans, err := asker.Ask(ctx, qa.Request{Question: question})
		switch {
		case errcode.Of(err) == errcode.Invalid:
		case err != nil:
			t.Fatalf("ask: %v", err)
		case ans.Confidence < 0 || ans.Confidence > 1 || strings.Contains(ans.Answer, "panic"):
			t.Fatalf("ask: confidence %v, answer %q", ans.Confidence, ans.Answer)
		}
	})
}
