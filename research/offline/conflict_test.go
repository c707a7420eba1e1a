package offline_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store/sqlite"
)

// planted is a source whose pages are fixed: every query gets them all.
type planted []search.Result

func (p planted) Name() string { return "web" }
func (p planted) Search(context.Context, string, int) ([]search.Result, error) {
	return p, nil
}

func day(y int) *time.Time {
	t := time.Date(y, 1, 15, 0, 0, 0, 0, time.UTC)
	return &t
}

// TestPlantedConflicts runs whole offline researches over pages that
// disagree, one corpus per resolution strategy, and checks the JSON and the
// rendered report.
func TestPlantedConflicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strategy, question, winner string
		pages                      planted
	}{
		{"consensus", "How tall is the Eiffel Tower?", "330 metres", planted{
			// Three sources worded independently agree; one disagrees.
			{URL: "https://a.example/eiffel", Title: "Eiffel Tower facts", Content: "The Eiffel Tower is 330 metres tall, including its antennas. It stands in Paris.", Credibility: 0.5, Kind: "web"},
			{URL: "https://b.example/tower", Title: "Visiting the Eiffel Tower", Content: "Standing 330 metres tall, the Eiffel Tower was the tallest man-made structure in the world until 1930.", Credibility: 0.5, Kind: "web"},
			{URL: "https://c.example/paris", Title: "Paris landmarks", Content: "The Eiffel Tower was measured at 330 metres after a new antenna was fitted.", Credibility: 0.5, Kind: "web"},
			{URL: "https://d.example/wrong", Title: "Tower trivia", Content: "According to one guidebook, the Eiffel Tower reaches a height of 300 metres.", Credibility: 0.5, Kind: "web"},
		}},
		{"recency", "What is the population of Springfield?", "35,000 people", planted{
			{URL: "https://old.example/springfield", Title: "Springfield 2010", Content: "The population of Springfield was 30,000 people in the census.", Credibility: 0.6, Kind: "web", Published: day(2010)},
			{URL: "https://new.example/springfield", Title: "Springfield 2020", Content: "The population of Springfield was 35,000 people in the census.", Credibility: 0.6, Kind: "web", Published: day(2020)},
		}},
		{"credibility", "When was Giuseppe Verdi born?", "1813", planted{
			{URL: "https://someblog.example/verdi", Title: "My Verdi notes", Content: "Giuseppe Verdi was born in 1814 in Le Roncole.", Credibility: 0.45, Kind: "web"},
			{URL: "https://www.britannica.com/verdi", Title: "Giuseppe Verdi", Content: "Giuseppe Verdi was born in 1813 in Le Roncole.", Credibility: 0.75, Kind: "web"},
		}},
		{"uncertainty", "How high is Mount Foo?", "", planted{
			{URL: "https://one.example/foo", Title: "Mount Foo", Content: "Mount Foo rises to 2,100 metres above the sea.", Credibility: 0.5, Kind: "web"},
			{URL: "https://two.example/foo", Title: "Hiking Mount Foo", Content: "Mount Foo rises to 2,400 metres above the sea.", Credibility: 0.5, Kind: "web"},
		}},
	} {
		t.Run(tc.strategy, func(t *testing.T) {
			t.Parallel()
			st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "q.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			var stages []string
			rn := &research.Runner{Engine: offline.Engine{}, Sources: []search.Source{tc.pages}, Store: st,
				OnEvent: func(e research.Event) {
					if e.Status != nil {
						stages = append(stages, e.Status.Stage)
					}
				}}
			r, err := rn.Start(context.Background(), tc.question, research.Options{Sources: []string{"web"}, Level: research.LevelQuick})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(stages, " "), "executing verifying synthesizing") {
				t.Errorf("stages %v", stages)
			}
			// The JSON carries the discrepancy with its fields.
			data, _ := json.Marshal(r)
			var out struct {
				Facts []struct {
					ID, Text, Section string
					SourceID          string `json:"source_id"`
					Confidence        float64
					Verified          bool
				}
				Discrepancies []struct {
					ID, Topic, Strategy, Resolution string
					FactIDs                         []string `json:"fact_ids"`
					Confidence                      float64
				}
			}
			if err := json.Unmarshal(data, &out); err != nil {
				t.Fatal(err)
			}
			if len(out.Discrepancies) != 1 {
				t.Fatalf("discrepancies: %+v", out.Discrepancies)
			}
			d := out.Discrepancies[0]
			if d.Strategy != tc.strategy || len(d.FactIDs) < 2 || d.Topic == "" || d.Confidence <= 0 || !strings.HasPrefix(d.Resolution, tc.winner) {
				t.Fatalf("discrepancy: %+v", d)
			}
			if len(out.Facts) < len(tc.pages) || out.Facts[0].SourceID == "" || out.Facts[0].Section == "" {
				t.Fatalf("facts: %+v", out.Facts)
			}
			if tc.strategy == "consensus" {
				// The three that agree verify each other.
				verified := 0
				for _, f := range out.Facts {
					if f.Verified {
						verified++
					}
				}
				if verified < 3 {
					t.Fatalf("%d facts verified, want the 3 that agree: %+v", verified, out.Facts)
				}
			}
			// The report shows it, with citations that resolve.
			md := r.Report.Markdown
			part := md[strings.Index(md, "## Conflicting evidence"):]
			if !strings.Contains(md, "## Conflicting evidence") || !strings.Contains(part, "("+tc.strategy+", confidence") {
				t.Fatalf("report:\n%s", md)
			}
			for _, ref := range r.Report.References {
				if !strings.Contains(md, "["+strconv.Itoa(ref.Number)+"]") {
					t.Errorf("reference %d never cited", ref.Number)
				}
			}
			if r.Checks == nil || r.Checks.CitationSupportRate != 1 || r.Checks.CitedPassages == 0 {
				t.Errorf("offline citation check: %+v", r.Checks)
			}
			if r.Report.Metadata.Discrepancies != 1 || r.Report.Metadata.SourcesByKind["web"] != len(tc.pages) || r.Report.Quality <= 0 {
				t.Errorf("metadata %+v quality %v", r.Report.Metadata, r.Report.Quality)
			}
		})
	}
}
