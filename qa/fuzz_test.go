package qa

import (
	"strings"
	"testing"

	"github.com/quarryhq/quarry/kb"
)

// FuzzAnswer: any question over any chunk text gives a confidence in
// [0, 1], quotes that are sentences of the chunks, and at most 3
// suggestions, never a panic.
func FuzzAnswer(f *testing.F) {
	f.Add("Which composer was born first, Antonín Dvořák or Giuseppe Verdi?", "Giuseppe Verdi (10 October 1813 – 27 January 1901) was an Italian opera composer. He was born in Le Roncole.", "Giuseppe Verdi")
	f.Add("요금은 언제 납부하나요?", "한빛전력의 전기 요금은 매월 25일까지 납부해야 합니다. 납부는 자동이체로 할 수 있습니다.", "요금 납부 안내")
	f.Add("Are Tim O'Brien and Erica Jong of the same nationality?", "\x00\xff. Tim O'Brien. ! ? 2003 2003", "")
	f.Fuzz(func(t *testing.T, question, text, title string) {
		hits := []kb.Result{{ChunkID: 1, SourceURL: "kb://k/a", Title: title, Text: text}, {ChunkID: 2, SourceURL: "kb://k/b", Title: question, Text: question + " " + text}}
		// The knowledge base is about a name the title holds, and never
		// mentions one the text does not hold either.
		held := func(name string) (scope, error) {
			switch {
			case strings.Contains(title, name):
				return scopeAbout, nil
			case !strings.Contains(text, name):
				return scopeNever, nil
			}
			return scopeSome, nil
		}
		ans, err := answer(question, Language(question), hits, held)
		if err != nil {
			t.Fatal(err)
		}
		if ans.Confidence < 0 || ans.Confidence > 1 {
			t.Fatalf("confidence %v", ans.Confidence)
		}
		if len(ans.Suggestions) > 3 {
			t.Fatalf("%d suggestions", len(ans.Suggestions))
		}
		for _, q := range ans.Quotes {
			if !strings.Contains(ans.Answer, q.Text) || q.Number < 1 || q.Number > len(ans.Sources) {
				t.Fatalf("quote %+v not in %q", q, ans.Answer)
			}
		}
		if ans.Unknown != (len(ans.Quotes) == 0) {
			t.Fatalf("unknown %v with %d quotes", ans.Unknown, len(ans.Quotes))
		}
	})
}
