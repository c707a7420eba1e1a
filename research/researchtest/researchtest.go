// Package researchtest is the one set-up of the research and jobs tests:
// a store of their own, a search source that answers every query, and a
// scripted model that answers each structured call by its schema.
package researchtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

// Store opens an embedded store in the test's temporary directory, closed
// when the test ends.
func Store(t testing.TB) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "quarry.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Source answers every query with two documents named after it, each
// stating a fact with a number.
type Source struct {
	// SourceName is the source's name (its Name, search.Source's).
	SourceName string
	// Latency delays every answer.
	Latency time.Duration
	// Fail makes every query fail as a refused connection does.
	Fail bool
	// Block, when set, makes the queries holding it wait for ctx's end.
	Block string
	// Pad lengthens every document to about this many bytes.
	Pad int
	// Hold, while set, makes every query wait for it to be cleared or
	// for ctx's end.
	Hold atomic.Bool
	// Entered, when set, is closed by the first query.
	Entered chan struct{}

	calls atomic.Int64
	once  sync.Once
	mu    sync.Mutex
	seen  []string
}

// NewSource is a Source named name.
func NewSource(name string) *Source { return &Source{SourceName: name} }

// Name implements search.Source.
func (f *Source) Name() string { return f.SourceName }

// Search implements search.Source.
func (f *Source) Search(ctx context.Context, q string, k int) ([]search.Result, error) {
	f.calls.Add(1)
	f.mu.Lock()
	f.seen = append(f.seen, q)
	f.mu.Unlock()
	if f.Entered != nil {
		f.once.Do(func() { close(f.Entered) })
	}
	for f.Hold.Load() {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	if f.Block != "" && strings.Contains(q, f.Block) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if f.Latency > 0 {
		select {
		case <-time.After(f.Latency):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if f.Fail {
		return nil, errors.New("connection refused")
	}
	var out []search.Result
	for i := range min(k, 2) {
		slug := strings.ReplaceAll(strings.ToLower(q), " ", "-")
		out = append(out, search.Result{URL: fmt.Sprintf("https://%s.test/%s/%d", f.SourceName, slug, i), Title: q + " " + fmt.Sprint(i),
			Content: fmt.Sprintf("%s is documented here. Fact %d about %s: the value is %d.", q, i, q, 40+i) + strings.Repeat(" More detail follows here.", f.Pad/26), Kind: "web", Credibility: 0.5})
	}
	return out, nil
}

// Calls is how many queries the source was asked.
func (f *Source) Calls() int64 { return f.calls.Load() }

// Queries are the queries the source was asked, in order.
func (f *Source) Queries() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// The scripted model's replies: a plan of two sub-questions, an analysis
// that is not complete (citing a source that does not exist and naming
// a direction) and one that is, a report citing a source and a fact that
// exist and one that does not.
const (
	PlanJSON     = `{"strategy":"look it up","sub_questions":[{"text":"alpha origins","priority":2,"queries":["alpha origins"]},{"text":"alpha uses","priority":1,"queries":["alpha uses"]}],"estimated_seconds":30}`
	Analysis0    = `{"learnings":[{"text":"Alpha is documented.","source_ids":["S1"]},{"text":"Invented.","source_ids":["S99"]}],"directions":[{"text":"alpha history","parent_id":"Q1","queries":["alpha history"]}],"is_complete":false,"confidence":0.4,"relevance":0.8,"quality":0.5}`
	Analysis1    = `{"learnings":[{"text":"History known.","source_ids":["S5"]}],"directions":[],"is_complete":true,"confidence":0.9,"relevance":0.9,"quality":0.6}`
	ReportJSON   = `{"title":"Alpha","summary":"Alpha is documented [cite:S1]. A made-up claim [cite:S42]. The value is 40 per fact [cite:F1].","sections":[{"heading":"Uses","body":"The value is 40 [cite:S1,S3]. Alpha was first found on Mars in 1999 [cite:S1]."}]}`
	ProseNotJSON = "I think alpha is great, but I will not give JSON."
)

// ReplyBySchema answers each structured call by the schema it asks for:
// the analyses in turn (the last one again after them), and every
// citation supported.
func ReplyBySchema(analyses ...string) func(int, llm.Request) (string, error) {
	var mu sync.Mutex
	n := 0
	return func(_ int, req llm.Request) (string, error) {
		switch req.Schema.Name {
		case "research_plan":
			return PlanJSON, nil
		case "research_analysis":
			mu.Lock()
			defer mu.Unlock()
			a := analyses[min(n, len(analyses)-1)]
			n++
			return a, nil
		case "research_report":
			return ReportJSON, nil
		case "citation_judge":
			return JudgeAll(req, nil), nil
		}
		return "", fmt.Errorf("unexpected schema %s", req.Schema.Name)
	}
}

var judgePassage = regexp.MustCompile(`(?m)^Passage (P\d+): (.*)$`)

// JudgeAll answers a citation judge request: every passage supported
// unless reject says otherwise.
func JudgeAll(req llm.Request, reject func(passage string) bool) string {
	type verdict struct {
		ID        string `json:"id"`
		Supported bool   `json:"supported"`
		Reason    string `json:"reason"`
	}
	var vs []verdict
	for _, m := range judgePassage.FindAllStringSubmatch(req.Messages[0].Content, -1) {
		v := verdict{ID: m[1], Supported: true}
		if reject != nil && reject(m[2]) {
			v.Supported, v.Reason = false, "the source says the opposite"
		}
		vs = append(vs, v)
	}
	out, _ := json.Marshal(map[string]any{"verdicts": vs})
	return string(out)
}
