package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/store"
)

// ExerciseConsole is the conformance part for the RAG console: datasets, pipelines and evaluation runs.
func ExerciseConsole(t *testing.T, open Opener) {
	t.Helper()
	t.Run("Console", func(t *testing.T) { console(t, open) })
}

// console: datasets with their questions, pipelines and evaluation runs
// are created once by name, read, listed and deleted with what refers to
// them. It is one scenario over one store, each step on the rows the
// steps before it left, so it stays one function.
func console(t *testing.T, open Opener) {
	ctx := context.Background()
	s := open(t)
	k := mustKB(t, s, "scifact")
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	qs := []store.DatasetQuestion{
		{QueryID: "q2", Text: "second", Golden: []store.GoldenRef{{DocID: "d9", ChunkIndex: -1}}},
		{QueryID: "q1", Text: "first", Reference: "an answer", Golden: []store.GoldenRef{{DocID: "d1", ChunkIndex: 0}, {DocID: "d2", ChunkIndex: -1}}},
	}
	d, err := s.DatasetCreate(ctx, store.Dataset{Name: "dev", KBID: k.ID, CreatedAt: t0}, qs)
	if err != nil || d.ID == 0 || d.Questions != 2 {
		t.Fatalf("dataset: %+v %v", d, err)
	}
	if _, err := s.DatasetCreate(ctx, store.Dataset{Name: "dev", KBID: k.ID, CreatedAt: t0}, nil); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a taken name: %v", err)
	}
	if _, err := s.DatasetCreate(ctx, store.Dataset{Name: "twice", KBID: k.ID, CreatedAt: t0}, []store.DatasetQuestion{{QueryID: "a", Golden: []store.GoldenRef{}}, {QueryID: "a", Golden: []store.GoldenRef{}}}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a question twice: %v", err)
	}
	if _, err := s.DatasetGet(ctx, "twice"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused dataset left a row: %v", err)
	}
	byID, err := s.DatasetGet(ctx, fmt.Sprint(d.ID))
	if err != nil || byID.Name != "dev" || byID.Questions != 2 || !byID.CreatedAt.Equal(t0) {
		t.Fatalf("by id: %+v %v", byID, err)
	}
	got, err := s.DatasetQuestions(ctx, d.ID)
	if err != nil || len(got) != 2 || got[0].QueryID != "q1" || got[0].Reference != "an answer" || len(got[0].Golden) != 2 || got[0].Golden[1] != (store.GoldenRef{DocID: "d2", ChunkIndex: -1}) {
		t.Fatalf("questions: %+v %v", got, err)
	}
	if q, err := s.DatasetQuestionByText(ctx, d.ID, "first"); err != nil || q.QueryID != "q1" || len(q.Golden) != 2 {
		t.Fatalf("question by text: %+v %v", q, err)
	}
	if _, err := s.DatasetQuestionByText(ctx, d.ID, "third"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no such question: %v", err)
	}
	p, err := s.PipelineCreate(ctx, store.Pipeline{Name: "hybrid", Type: "test", KBID: k.ID, DatasetID: &d.ID, Settings: []byte(`{"mode":"hybrid"}`), CreatedAt: t0, UpdatedAt: t0})
	if err != nil || p.ID == 0 {
		t.Fatal(err)
	}
	if _, err := s.PipelineCreate(ctx, store.Pipeline{Name: "bm25", Type: "normal", KBID: k.ID, Settings: []byte(`{}`), CreatedAt: t0, UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PipelineCreate(ctx, store.Pipeline{Name: "bm25", Type: "normal", KBID: k.ID, Settings: []byte(`{}`), CreatedAt: t0, UpdatedAt: t0}); !errors.Is(err, store.ErrExists) {
		t.Fatalf("a taken pipeline name: %v", err)
	}
	for _, c := range []struct {
		f    store.PipelineFilter
		want string
	}{{store.PipelineFilter{}, "bm25 hybrid"}, {store.PipelineFilter{Type: "test"}, "hybrid"}, {store.PipelineFilter{DatasetID: &d.ID}, "hybrid"}, {store.PipelineFilter{DatasetID: &d.ID, Type: "normal"}, ""}} {
		list, err := s.PipelineList(ctx, c.f)
		var names []string
		for _, p := range list {
			names = append(names, p.Name)
		}
		if err != nil || list == nil || strings.Join(names, " ") != c.want {
			t.Fatalf("filter %+v: %v %v", c.f, names, err)
		}
	}
	p.Type, p.Settings, p.UpdatedAt = "normal", []byte(`{"mode":"bm25"}`), t0.Add(time.Minute)
	if err := s.PipelineUpdate(ctx, *p); err != nil {
		t.Fatal(err)
	}
	again, err := s.PipelineGet(ctx, "hybrid")
	if err != nil || again.Type != "normal" || string(again.Settings) != `{"mode":"bm25"}` || *again.DatasetID != d.ID || !again.UpdatedAt.Equal(t0.Add(time.Minute)) || again.KBName != "scifact" || again.DatasetName != "dev" {
		t.Fatalf("updated: %+v %v", again, err)
	}
	run, err := s.EvalRunCreate(ctx, store.EvalRun{PipelineID: &p.ID, PipelineName: "hybrid", DatasetID: &d.ID, DatasetName: "dev", K: 10, CreatedAt: t0,
		Overall: []byte(`{"ndcg":0.5}`), Questions: []byte(`[{"query_id":"q1"}]`)})
	if err != nil || run.ID == 0 {
		t.Fatalf("eval run: %+v %v", run, err)
	}
	if _, err := s.EvalRunCreate(ctx, store.EvalRun{PipelineName: "gone", DatasetName: "dev", K: 5, CreatedAt: t0, Overall: []byte(`{}`), Questions: []byte(`[]`)}); err != nil {
		t.Fatal(err)
	}
	if runs, err := s.EvalRunList(ctx, &p.ID, 10); err != nil || len(runs) != 1 || runs[0].ID != run.ID || string(runs[0].Overall) != `{"ndcg":0.5}` || runs[0].Questions != nil {
		t.Fatalf("runs of a pipeline: %+v %v", runs, err)
	}
	if runs, err := s.EvalRunList(ctx, nil, 10); err != nil || len(runs) != 2 || runs[0].PipelineName != "gone" {
		t.Fatalf("all runs, newest first: %+v %v", runs, err)
	}
	// Deleting the dataset leaves its pipelines without one.
	if err := s.DatasetDelete(ctx, d.ID); err != nil {
		t.Fatal(err)
	}
	if again, err := s.PipelineGet(ctx, fmt.Sprint(p.ID)); err != nil || again.DatasetID != nil {
		t.Fatalf("after the dataset went: %+v %v", again, err)
	}
	if err := s.PipelineDelete(ctx, p.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PipelineGet(ctx, "hybrid"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted pipeline: %v", err)
	}
	// A run outlives its pipeline and dataset, by name.
	if got, err := s.EvalRunGet(ctx, run.ID); err != nil || got.PipelineID != nil || got.DatasetID != nil || got.PipelineName != "hybrid" || got.K != 10 || !got.CreatedAt.Equal(t0) || string(got.Questions) != `[{"query_id":"q1"}]` {
		t.Fatalf("run after its pipeline went: %+v %v", got, err)
	}
	if _, err := s.EvalRunGet(ctx, run.ID+100); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no such run: %v", err)
	}
	for _, err := range []error{s.PipelineDelete(ctx, p.ID), s.DatasetDelete(ctx, d.ID)} {
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("delete twice: %v", err)
		}
	}
}
