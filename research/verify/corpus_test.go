package verify

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The evaluation below runs verification on real text: the bundled
// Wikipedia mini-corpus (5,895 paragraphs of HotpotQA, each its own
// source and domain). Wikipedia paragraphs about different things rarely
// contradict each other, so a discrepancy found among them is almost
// always two things sharing a name or a sentence template: the false
// discrepancy rate. Planting a changed year into a copy of a real sentence,
// placed in another paragraph, measures how many real conflicts are found.

var debugCorpus = os.Getenv("VERIFY_DEBUG") != ""

func loadCorpus(tb testing.TB) []Source {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "..", "examples", "wiki", "corpus.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var out []Source
	for sc.Scan() {
		var d struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			tb.Fatal(err)
		}
		out = append(out, Source{ID: d.ID, Domain: d.ID + ".example", Credibility: 0.7, Content: d.Text})
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

type corpusEval struct {
	facts, discrepancies int
	planted, found       int
	recency              int
}

// evalCorpus runs both measures: discrepancies over the whole corpus, and
// every 20th fact with a dated role ("born in 1813") planted with its year
// moved by 3 into the next paragraph, in a newer source: half of them as
// they are, half reworded ("According to the records, …").
func evalCorpus(srcs []Source) corpusEval {
	var ev corpusEval
	r := Run(srcs)
	ev.facts, ev.discrepancies = len(r.Facts), len(r.Discrepancies)
	byID := map[string]Source{}
	for i, s := range srcs {
		byID[s.ID] = srcs[i]
	}
	n := 0
	for i, f := range r.Facts {
		v, ok := plantable(&r.Facts[i])
		if !ok {
			continue
		}
		if n++; n%20 != 0 {
			continue
		}
		changed := strconv.Itoa(int(v.num) + 3)
		sent := strings.Replace(f.Text, v.text, changed, 1)
		if n%40 == 0 {
			// Reworded: an opening phrase; otherwise copied as it is.
			if first, _, _ := strings.Cut(sent, " "); leadingArticle[strings.ToLower(first)] {
				sent = strings.ToLower(sent[:1]) + sent[1:]
			}
			sent = "According to the records, " + sent
		}
		orig := byID[f.SourceID]
		other := srcs[(indexOf(srcs, f.SourceID)+1)%len(srcs)]
		a := orig
		a.Published = date(2001)
		b := Source{ID: "planted", Domain: "planted.example", Credibility: 0.7, Published: date(2020), Content: other.Content + "\n\n" + sent}
		res := Run([]Source{a, b})
		ev.planted++
		before := ev.found
		for _, d := range res.Discrepancies {
			var orig, plant bool
			for _, id := range d.FactIDs {
				g := fact(res, id)
				orig = orig || g.SourceID == f.SourceID && g.Text == f.Text
				plant = plant || g.SourceID == "planted" && strings.Contains(g.Text, changed)
			}
			if orig && plant {
				ev.found++
				if d.Strategy == Recency && fact(res, d.Winner).SourceID == "planted" {
					ev.recency++
				} else if debugCorpus {
					println("NOT RECENCY", d.Strategy, d.Resolution, "|", f.Text)
				}
				break
			}
		}
		if debugCorpus && ev.found == before {
			println("MISS", f.Text, "|", sent, "|", len(res.Discrepancies))
		}
	}
	return ev
}

// plantable is a fact about a named subject with a year in a role.
func plantable(f *Fact) (value, bool) {
	if f.entity == "" {
		return value{}, false
	}
	for _, v := range f.values {
		if v.kind == "year" && v.role != "" && strings.Count(f.Text, v.text) == 1 {
			return v, true
		}
	}
	return value{}, false
}

func indexOf(srcs []Source, id string) int {
	for i, s := range srcs {
		if s.ID == id {
			return i
		}
	}
	return 0
}

// TestCorpusDiscrepancies guards the measures: at most 0.5 false
// discrepancies per 100 facts of real text, and at least 90% of planted
// conflicts found, 95% of those resolved by recency for the newer source.
func TestCorpusDiscrepancies(t *testing.T) {
	t.Parallel()
	ev := evalCorpus(loadCorpus(t))
	rate := 100 * float64(ev.discrepancies) / float64(ev.facts)
	recall := float64(ev.found) / float64(ev.planted)
	t.Logf("%d facts, %d discrepancies (%.2f per 100 facts); planted %d, found %d (%.3f), %d by recency", ev.facts, ev.discrepancies, rate, ev.planted, ev.found, recall, ev.recency)
	if ev.planted < 100 {
		t.Fatalf("only %d planted conflicts", ev.planted)
	}
	// A planted sentence can meet a homonym in the neighbouring paragraph
	// (two people named Kim Jong-kook), leaving that one uncertain.
	if rate > 0.5 || recall < 0.9 || float64(ev.recency) < 0.95*float64(ev.found) {
		t.Fatalf("false discrepancies %.2f per 100 facts (max 0.5), planted recall %.3f (min 0.9), %d of %d by recency", rate, recall, ev.recency, ev.found)
	}
}

// BenchmarkCorpusDiscrepancies reports the same measures:
//
//	go test ./research/verify -run '^$' -bench CorpusDiscrepancies -benchtime 1x
func BenchmarkCorpusDiscrepancies(b *testing.B) {
	srcs := loadCorpus(b)
	for range b.N {
		ev := evalCorpus(srcs)
		b.ReportMetric(float64(ev.facts), "facts")
		b.ReportMetric(100*float64(ev.discrepancies)/float64(ev.facts), "false_disc/100facts")
		b.ReportMetric(float64(ev.found)/float64(ev.planted), "planted_recall")
		b.ReportMetric(float64(ev.planted), "planted")
	}
}
