package qa

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/internal/jsonx"
	"github.com/quarryhq/quarry/internal/textseg"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/store/sqlite"
)

const hotpotDir = "../../shared/data/hotpotqa/"

// BenchmarkAskHotpot asks the 40 HotpotQA dev questions over the bundled
// 5,895-paragraph corpus, offline, and 40 questions about things the
// corpus does not hold (testdata/unanswerable.jsonl: each names what the
// corpus lacks, checked absent). It reports how often the gold answer is
// in the answer, how often an answerable question is wrongly "I don't
// know", how often an unanswerable one is rightly so, and the
// calibration: how often the quoted sentences hold the answer when the
// confidence is at or over Threshold against under it.
func BenchmarkAskHotpot(b *testing.B) {
	dev := readQuestions(b, hotpotDir+"questions_dev.jsonl")
	absent := readQuestions(b, "testdata/unanswerable.jsonl")
	ctx := context.Background()
	svc, emb := benchKB(b, "hotpot", hotpotDir+"corpus.jsonl")
	search := SearchFunc(func(ctx context.Context, q kb.Query) ([]kb.Result, error) { return svc.Search(ctx, "hotpot", emb, q) })
	a := &Asker{Search: search, Sessions: &session.Memory{}, Chunks: func(ctx context.Context) (int, error) { return svc.Chunks(ctx, "hotpot") }}
	for range b.N {
		var hit, wrongUnknown, rightUnknown int
		var highN, highHit, lowN, lowHit, baseHit int
		for _, q := range dev {
			ans, err := a.Ask(ctx, Request{Question: q.Question})
			if err != nil {
				b.Fatal(err)
			}
			if ans.Unknown {
				wrongUnknown++
			} else if contains(ans.Answer, q.Answer) {
				hit++
			}
			// Calibration: the sentences it would quote, whatever the
			// confidence.
			hits, err := search(ctx, kb.Query{Text: q.Question, K: DefaultTopK, Mode: kb.ModeHybrid, Language: "en"})
			if err != nil {
				b.Fatal(err)
			}
			chosen, conf, _, err := pick(q.Question, hits, a.holds(ctx))
			if err != nil {
				b.Fatal(err)
			}
			var text strings.Builder
			for _, c := range chosen {
				text.WriteString(strings.Join(c.Sentences, " ") + " ")
			}
			holds := contains(text.String(), q.Answer)
			// The baseline at the same length: the top result's first
			// three sentences.
			if len(hits) > 0 {
				var lead strings.Builder
				for i, sp := range textseg.Spans(hits[0].Text) {
					if i == maxQuotes {
						break
					}
					lead.WriteString(hits[0].Text[sp.Start:sp.End] + " ")
				}
				if contains(lead.String(), q.Answer) {
					baseHit++
				}
			}
			if conf >= Threshold {
				highN++
				if holds {
					highHit++
				}
			} else {
				lowN++
				if holds {
					lowHit++
				}
			}
		}
		for _, q := range absent {
			ans, err := a.Ask(ctx, Request{Question: q.Question})
			if err != nil {
				b.Fatal(err)
			}
			if ans.Unknown {
				rightUnknown++
			}
		}
		rate := func(n, d int) float64 {
			if d == 0 {
				return 0
			}
			return float64(n) / float64(d)
		}
		b.ReportMetric(rate(hit, len(dev)), "answer-in-answer")
		b.ReportMetric(rate(baseHit, len(dev)), "baseline-top1-lead3")
		b.ReportMetric(rate(wrongUnknown, len(dev)), "answerable-unknown")
		b.ReportMetric(rate(rightUnknown, len(absent)), "unanswerable-unknown")
		b.ReportMetric(rate(highHit, highN), "holds-when-confident")
		b.ReportMetric(rate(lowHit, lowN), "holds-when-not")
		b.Logf("confident %d (answer held in %d), not %d (held in %d)", highN, highHit, lowN, lowHit)
	}
}

// contains reports whether the gold answer appears in text, ignoring
// case and punctuation.
func contains(text, gold string) bool {
	norm := func(s string) string {
		var b strings.Builder
		for _, r := range strings.ToLower(s) {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				b.WriteRune(r)
			} else {
				b.WriteRune(' ')
			}
		}
		return " " + strings.Join(strings.Fields(b.String()), " ") + " "
	}
	g := strings.TrimSpace(norm(gold))
	if g == "" {
		return false
	}
	if strings.Contains(norm(text), " "+g+" ") {
		return true
	}
	return false
}

// BenchmarkAskKorean asks 24 Korean questions over a 15-page Korean
// knowledge base (testdata/ko_city.jsonl, a made-up city's services) and
// 10 about services it does not describe, offline. It reports how often
// the answer is in Korean and cites only Korean chunks, how often the
// gold answer is in it (Korean attaches particles, so the gold string must
// start a word, not end one), and how often each kind is "I don't know".
func BenchmarkAskKorean(b *testing.B) {
	ctx := context.Background()
	svc, emb := benchKB(b, "city", "testdata/ko_city.jsonl", hotpotDir+"corpus.jsonl") // English chunks beside the Korean ones
	qs := readQuestions(b, "testdata/ko_questions.jsonl")
	a := &Asker{Sessions: &session.Memory{}, Search: SearchFunc(func(ctx context.Context, q kb.Query) ([]kb.Result, error) { return svc.Search(ctx, "city", emb, q) })}
	hangul := func(s string) bool {
		for _, r := range s {
			if unicode.Is(unicode.Hangul, r) {
				return true
			}
		}
		return false
	}
	for range b.N {
		var answerable, absent, korean, koSources, hit, baseHit, wrongUnknown, rightUnknown int
		for _, q := range qs {
			ans, err := a.Ask(ctx, Request{Question: q.Question})
			if err != nil {
				b.Fatal(err)
			}
			onlyKo := true
			for _, qt := range ans.Quotes {
				onlyKo = onlyKo && hangul(qt.Text)
			}
			if ans.Language == "ko" && hangul(ans.Answer) && hangul(ans.Note) && (ans.Unknown || len(ans.Quotes) > 0) {
				korean++
			}
			if onlyKo {
				koSources++
			}
			if q.Absent != "" {
				absent++
				if ans.Unknown {
					rightUnknown++
				}
				continue
			}
			answerable++
			switch {
			case ans.Unknown:
				wrongUnknown++
			case startsWord(ans.Answer, q.Answer):
				hit++
			}
			// The baseline at the same length: the top result's first
			// three sentences.
			hits, err := svc.Search(ctx, "city", emb, kb.Query{Text: q.Question, K: DefaultTopK, Mode: kb.ModeHybrid, Language: "ko"})
			if err != nil {
				b.Fatal(err)
			}
			if len(hits) > 0 {
				var lead strings.Builder
				for i, sp := range textseg.Spans(hits[0].Text) {
					if i < maxQuotes {
						lead.WriteString(hits[0].Text[sp.Start:sp.End] + " ")
					}
				}
				if startsWord(lead.String(), q.Answer) {
					baseHit++
				}
			}
		}
		n := float64(len(qs))
		b.ReportMetric(float64(korean)/n, "answered-in-korean")
		b.ReportMetric(float64(koSources)/n, "korean-sources-only")
		b.ReportMetric(float64(hit)/float64(answerable), "answer-in-answer")
		b.ReportMetric(float64(baseHit)/float64(answerable), "baseline-top1-lead3")
		b.ReportMetric(float64(wrongUnknown)/float64(answerable), "answerable-unknown")
		b.ReportMetric(float64(rightUnknown)/float64(absent), "unanswerable-unknown")
	}
}

// startsWord reports whether gold appears in text at the start of a word
// (Korean attaches particles and endings after it), ignoring commas.
func startsWord(text, gold string) bool {
	norm := func(s string) string {
		return " " + strings.Join(strings.Fields(strings.NewReplacer(",", " ", ".", " ").Replace(s)), " ")
	}
	return strings.Contains(norm(text), norm(gold))
}

// question is a benchmark question: its gold answer, or what the
// knowledge base lacks.
type question struct{ Question, Answer, Absent string }

// readQuestions reads a JSON Lines file of questions; a missing file fails
// the benchmark (docs/benchmarks.md's figures need it).
func readQuestions(b *testing.B, path string) []question {
	out, err := jsonx.ReadLinesFile[question](path)
	if err != nil {
		b.Fatalf("the benchmark needs %s (../shared/data for the HotpotQA files): %v", path, err)
	}
	return out
}

// benchKB ingests files into a fresh SQLite knowledge base.
func benchKB(b *testing.B, name string, files ...string) (*kb.Service, embed.Embedder) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	svc := kb.New(st, nil)
	emb := embed.Hash{Dim: 384}
	if _, err := svc.Create(ctx, name, "", emb); err != nil {
		b.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, name, files, kb.AddOptions{Embedder: emb}); err != nil {
		b.Fatalf("the benchmark needs its files (../shared/data for HotpotQA): %v", err)
	}
	return svc, emb
}
