package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
)

// TestVectorIndexUnfinishedIsRebuilt: an index a build left invalid (its
// process gone before the build ended) is not searched through, and the
// next EnsureVectorIndex drops it and builds it again.
func TestVectorIndexUnfinishedIsRebuilt(t *testing.T) {
	s := openVectorPG(t)
	ctx := context.Background()
	kb := vectorKB(t, s, "unfinished")
	if err := s.EnsureVectorIndex(ctx, kb); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprint("chunks_cvec_kb", kb.ID)
	if _, err := s.SQL.ExecContext(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass($1)`, name); err != nil {
		t.Fatal(err)
	}
	postgres.ForgetIndexes(s)
	if plan := vectorPlan(t, s, kb.ID, 2); strings.Contains(plan, name) {
		t.Fatalf("the query reads an invalid index:\n%s", plan)
	}
	if err := s.EnsureVectorIndex(ctx, kb); err != nil {
		t.Fatal(err)
	}
	var valid bool
	if err := s.SQL.QueryRowContext(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)`, name).Scan(&valid); err != nil || !valid {
		t.Fatalf("index valid %v (%v) after the rebuild", valid, err)
	}
	if plan := vectorPlan(t, s, kb.ID, 2); !strings.Contains(plan, name) {
		t.Fatalf("the query does not read the rebuilt index:\n%s", plan)
	}
}

// openSessionsPG opens a store with several connections, each its own
// session, on QUARRY_TEST_PGVECTOR_SERVER_URL's server (PostgreSQL with
// pgvector; .ci/run builds pgvector into the server it tests) or, without
// it, QUARRY_TEST_PGVECTOR_URL's; PGlite, which gives every connection the
// one session it has, skips the test.
func openSessionsPG(t *testing.T) *postgres.Store {
	t.Helper()
	env := "QUARRY_TEST_PGVECTOR_SERVER_URL"
	if os.Getenv(env) == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI requires a PostgreSQL server with pgvector (.ci/run builds it)", env)
		}
		env = "QUARRY_TEST_PGVECTOR_URL"
	}
	s := openPG(t, env, 4)
	if !s.HasPGVector() {
		t.Fatalf("%s server has no pgvector", env)
	}
	ctx := context.Background()
	a, err := s.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := s.SQL.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var pa, pb int
	if err := a.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pa); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pb); err != nil {
		t.Fatal(err)
	}
	if pa == pb {
		t.Skip("the server gives every connection one session (PGlite): no write can run beside a build")
	}
	return s
}

// writerInTheWay opens a transaction that holds the lock a write of
// chunks takes, which a build waits for before it starts, and waits until
// a build of the chunks table waits for it. The transaction ends with the
// test, or when the returned func is called.
func writerInTheWay(t *testing.T, s *postgres.Store, build func()) (end func()) {
	t.Helper()
	ctx := context.Background()
	tx, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `LOCK TABLE chunks IN ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	end = func() { _ = tx.Commit() }
	t.Cleanup(end)
	go build()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var waiting bool
		if err := s.SQL.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND query LIKE 'CREATE INDEX%' AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return end
		}
		if time.Now().After(deadline) {
			t.Fatal("no build came to wait for the open write")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestVectorIndexBuildLetsWritesThrough: while a knowledge base's index is
// built (here held at its start by a write that has not committed),
// chunks are written to another knowledge base and the one being indexed
// is searched exactly; a second build of the same index leaves it to the
// first at once.
func TestVectorIndexBuildLetsWritesThrough(t *testing.T) {
	s := openSessionsPG(t)
	ctx := context.Background()
	a := vectorKB(t, s, "building")
	b, err := s.KBCreate(ctx, store.KBCreateParams{Name: "beside", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	built := make(chan error, 1)
	end := writerInTheWay(t, s, func() { built <- s.EnsureVectorIndex(ctx, a) })

	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := s.SourcePutBatch(wctx, b.ID, []store.SourcePut{{
		Source: store.Source{URL: "https://beside.test/", Title: "t", Content: "c", ContentHash: "h"},
		Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 1, Embedding: []float32{1, 0}, Terms: "t"}},
	}}); err != nil {
		t.Fatalf("a write to another knowledge base during the build: %v", err)
	}
	hits, err := s.ChunkVectorSearch(wctx, store.VectorQuery{KBID: a.ID, Dimension: 2, Vector: []float32{1, 0.1}, K: 2, Filter: store.ChunkFilter{IncludeStale: true}})
	if err != nil || len(hits) != 2 {
		t.Fatalf("search during the build: %+v (%v)", hits, err)
	}
	if err := s.EnsureVectorIndex(wctx, a); err != nil {
		t.Fatalf("a second build beside the first: %v", err)
	}
	end()
	if err := <-built; err != nil {
		t.Fatal(err)
	}
	if plan := vectorPlan(t, s, a.ID, 2); !strings.Contains(plan, fmt.Sprint("chunks_cvec_kb", a.ID)) {
		t.Fatalf("the query does not read the index built:\n%s", plan)
	}
}

// TestKBDeleteCancelsItsBuild: deleting a knowledge base whose index is
// being built cancels the build and leaves no index behind.
func TestKBDeleteCancelsItsBuild(t *testing.T) {
	s := openSessionsPG(t)
	ctx := context.Background()
	kb := vectorKB(t, s, "gone")
	built := make(chan error, 1)
	end := writerInTheWay(t, s, func() { built <- s.EnsureVectorIndex(ctx, kb) })
	deleted := make(chan error, 1)
	go func() { deleted <- s.KBDelete(ctx, "gone") }()
	select {
	case err := <-built:
		if err == nil || !strings.Contains(err.Error(), "canceling statement") {
			t.Fatalf("build ended with %v, want it cancelled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the build was not cancelled")
	}
	end() // the drop waits, as the build did, for the open write
	if err := <-deleted; err != nil {
		t.Fatal(err)
	}
	var n int
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'chunks_%vec_kb'||$1::text`, fmt.Sprint(kb.ID)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d vector indexes (%v) after the knowledge base was deleted", n, err)
	}
	if _, err := s.KBGet(ctx, "gone"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("knowledge base after delete: %v", err)
	}
}

// TestAnalysisBesideABuild: an ingest's analysis of the tables does not
// wait for a vector index being built (which holds the chunks table's
// lock an analysis needs for as long as the build runs): it gives up
// after 100 ms, says so, and the ingest goes on.
func TestAnalysisBesideABuild(t *testing.T) {
	url := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	ctx := context.Background()
	var logs bytes.Buffer
	s, err := postgres.Open(ctx, url, postgres.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "beside", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	// The lock CREATE INDEX CONCURRENTLY holds while it builds.
	if _, err := tx.ExecContext(ctx, `LOCK TABLE chunks IN SHARE UPDATE EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.AfterIngest(wctx, kb, 1000); err != nil {
		t.Fatalf("an ingest failed beside a build: %v", err)
	}
	if !strings.Contains(logs.String(), "tables not analysed") || !strings.Contains(logs.String(), "lock timeout") {
		t.Fatalf("nothing said: %q", logs.String())
	}
}

// TestVectorIndexBuildsOneAtATime: two knowledge bases' first builds
// asked for at once both end with an index, the second begun after the
// first (two at once on one table end one as a deadlock).
func TestVectorIndexBuildsOneAtATime(t *testing.T) {
	s := openSessionsPG(t)
	ctx := context.Background()
	var kbs []*store.KB
	for _, name := range []string{"first", "second"} {
		kbs = append(kbs, vectorKB(t, s, name))
	}
	first := make(chan error, 1)
	end := writerInTheWay(t, s, func() { first <- s.EnsureVectorIndex(ctx, kbs[0]) })
	second := make(chan error, 1)
	go func() { second <- s.EnsureVectorIndex(ctx, kbs[1]) }()
	time.Sleep(200 * time.Millisecond) // the second is waiting for the first
	end()
	for i, ch := range []chan error{first, second} {
		if err := <-ch; err != nil {
			t.Fatalf("build %d: %v", i+1, err)
		}
		if plan := vectorPlan(t, s, kbs[i].ID, 2); !strings.Contains(plan, fmt.Sprint("chunks_cvec_kb", kbs[i].ID)) {
			t.Fatalf("build %d: the query does not read its index:\n%s", i+1, plan)
		}
	}
}

// indexValid reports whether the knowledge base's centred index is there
// and valid, read from the catalog.
func indexValid(t *testing.T, s *postgres.Store, kbID int64) bool {
	t.Helper()
	var valid bool
	err := s.SQL.QueryRowContext(context.Background(), `SELECT coalesce((SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)), false)`,
		fmt.Sprint("chunks_cvec_kb", kbID)).Scan(&valid)
	if err != nil {
		t.Fatal(err)
	}
	return valid
}

// waitIndexValid waits up to 30 s for the knowledge base's index.
func waitIndexValid(t *testing.T, s *postgres.Store, kbID int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !indexValid(t, s, kbID); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("kb %d: no valid index after 30 s", kbID)
		}
	}
}

// TestBackgroundIndex: in a long-lived process an ingest's AfterIngest
// returns before its vector index is built, which is built all the same;
// a knowledge base whose index a build left unfinished (it ended with the
// process that ran it) gets it built again when it is searched, and one
// with no index (in its first ingest, perhaps) does not.
func TestBackgroundIndex(t *testing.T) {
	s := openVectorPG(t)
	s.SetBackgroundIndex(true)
	ctx := context.Background()
	ingested := vectorKB(t, s, "ingested")
	if err := s.AfterIngest(ctx, ingested, 3); err != nil {
		t.Fatal(err)
	}
	waitIndexValid(t, s, ingested.ID)

	orphan := vectorKB(t, s, "orphan")
	search := func() {
		t.Helper()
		hits, err := s.ChunkVectorSearch(ctx, store.VectorQuery{KBID: orphan.ID, Dimension: 2, Vector: []float32{1, 0.1}, K: 2, Filter: store.ChunkFilter{IncludeStale: true}})
		if err != nil || len(hits) != 2 {
			t.Fatalf("search before the index: %+v (%v)", hits, err)
		}
	}
	search()
	time.Sleep(500 * time.Millisecond)
	var n int
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'chunks_%vec_kb'||$1::text`, fmt.Sprint(orphan.ID)).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d vector indexes (%v) built for a search of a knowledge base that had none", n, err)
	}
	// What a build cancelled with its process leaves.
	id := fmt.Sprint(orphan.ID)
	if _, err := s.SQL.ExecContext(ctx, `CREATE INDEX chunks_cvec_kb`+id+` ON chunks USING hnsw ((embedding_vec::halfvec(2)) halfvec_ip_ops) WHERE kb_id = `+id); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SQL.ExecContext(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = to_regclass('chunks_cvec_kb'||$1::text)`, id); err != nil {
		t.Fatal(err)
	}
	search()
	waitIndexValid(t, s, orphan.ID)
	if plan := vectorPlan(t, s, orphan.ID, 2); !strings.Contains(plan, "chunks_cvec_kb"+id) {
		t.Fatalf("the query does not read the index built again:\n%s", plan)
	}
}

// TestCloseStopsBackgroundBuilds: closing the store cancels a build
// running in the background (here held at its start by an open write)
// instead of waiting for it.
func TestCloseStopsBackgroundBuilds(t *testing.T) {
	s := openSessionsPG(t)
	s.SetBackgroundIndex(true)
	ctx := context.Background()
	kb := vectorKB(t, s, "stopped")
	end := writerInTheWay(t, s, func() {
		if err := s.AfterIngest(ctx, kb, 3); err != nil {
			t.Error(err)
		}
	})
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Close waited for the build")
	}
	end()
}

// vectorKB creates a knowledge base of two dimensions with putVectors'
// three chunks written to it.
func vectorKB(t *testing.T, s *postgres.Store, name string) *store.KB {
	t.Helper()
	kb, err := s.KBCreate(context.Background(), store.KBCreateParams{Name: name, Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	putVectors(t, s, kb, name)
	return kb
}

// TestKBDeleteBesideABuild: deleting a knowledge base while another's
// index is being built does not wait for that build, nor end it: the
// deleted one's index, empty, is left, and the build finishes.
func TestKBDeleteBesideABuild(t *testing.T) {
	s := openSessionsPG(t)
	ctx := context.Background()
	gone := vectorKB(t, s, "gone")
	if err := s.EnsureVectorIndex(ctx, gone); err != nil {
		t.Fatal(err)
	}
	building := vectorKB(t, s, "building")
	built := make(chan error, 1)
	end := writerInTheWay(t, s, func() { built <- s.EnsureVectorIndex(ctx, building) })
	dctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := s.KBDelete(dctx, "gone"); err != nil {
		t.Fatalf("delete beside a build: %v", err)
	}
	end()
	if err := <-built; err != nil {
		t.Fatalf("the build beside the delete: %v", err)
	}
	if !indexValid(t, s, building.ID) {
		t.Fatal("no index after the build")
	}
}

// TestVectorIndexBuildDropsOrphans: an index a deleted knowledge base
// left (its delete found another build holding the chunks table) is
// dropped by the next build, whatever knowledge base that build is for.
func TestVectorIndexBuildDropsOrphans(t *testing.T) {
	s := openVectorPG(t)
	ctx := context.Background()
	gone := vectorKB(t, s, "gone")
	if err := s.EnsureVectorIndex(ctx, gone); err != nil {
		t.Fatal(err)
	}
	left := func() int {
		t.Helper()
		var n int
		if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM pg_class
			WHERE relname IN ($1, $2, $3)`, fmt.Sprint("chunks_cvec_kb", gone.ID), fmt.Sprint("chunks_hvec_kb", gone.ID), fmt.Sprint("chunks_vec_kb", gone.ID)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if left() != 1 {
		t.Fatal("no index built")
	}
	// The delete as it ends beside another build: the rows go, the index
	// stays.
	if _, err := s.SQL.ExecContext(ctx, `DELETE FROM knowledge_bases WHERE id = $1`, gone.ID); err != nil {
		t.Fatal(err)
	}
	postgres.ForgetIndexes(s)
	if left() != 1 {
		t.Fatal("the index went with the rows")
	}
	next := vectorKB(t, s, "next")
	if err := s.EnsureVectorIndex(ctx, next); err != nil {
		t.Fatal(err)
	}
	if n := left(); n != 0 {
		t.Fatalf("%d indexes of the deleted knowledge base left after the next build", n)
	}
	if !indexValid(t, s, next.ID) {
		t.Fatal("no index for the next knowledge base")
	}
}

// wideKB creates a knowledge base of 4,001 dimensions, more than pgvector
// indexes, holding one chunk, and returns it with the chunk's embedding.
func wideKB(t *testing.T, s *postgres.Store) (*store.KB, []float32) {
	t.Helper()
	ctx := context.Background()
	wide, err := s.KBCreate(ctx, store.KBCreateParams{Name: "wide", Embedder: "hash", Dimension: 4001})
	if err != nil {
		t.Fatal(err)
	}
	v := make([]float32, 4001)
	v[1] = 1
	if _, err := s.SourcePutBatch(ctx, wide.ID, []store.SourcePut{{
		Source: store.Source{URL: "https://wide.test/", Title: "t", Content: "c", ContentHash: "w"},
		Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 1, Embedding: v, Terms: "t"}},
	}}); err != nil {
		t.Fatal(err)
	}
	return wide, v
}

// TestNoVectorIndexPgvectorCannotBuild: a knowledge base of vectors
// wider than pgvector indexes (4,000 dimensions at half precision, 2,000
// at full) gets no build, not a failed one after every ingest: its
// chunks are ranked exactly.
func TestNoVectorIndexPgvectorCannotBuild(t *testing.T) {
	s := openVectorPG(t)
	ctx := context.Background()
	wide, v := wideKB(t, s)
	if err := s.EnsureVectorIndex(ctx, wide); err != nil {
		t.Fatalf("EnsureVectorIndex of a %d-dimension knowledge base: %v, want nothing to do", wide.Dimension, err)
	}
	var n int
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE $1`, fmt.Sprintf("chunks_%%vec_kb%d", wide.ID)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("%d indexes begun for vectors pgvector cannot index", n)
	}
	hits, err := s.ChunkVectorSearch(ctx, store.VectorQuery{KBID: wide.ID, Dimension: len(v), Vector: v, K: 1})
	if err != nil || len(hits) != 1 {
		t.Fatalf("exact search: %d hits, %v; want 1", len(hits), err)
	}
}

// TestExactVectorSearchBudget: a vector search of a knowledge base with
// no vector index yet (its first ingest's, being written or built) ranks
// all its chunks exactly, and waits exactVectorBudget for that: held past
// it (here by a lock on the chunks table, as a million chunks beside a
// build hold it for seconds), it fails with store.ErrVectorIndexBuilding,
// a 503, and the searches after it fail so at once for exactRetry; a
// search its caller ends, or of a knowledge base that can have no index,
// is not reported so.
func TestExactVectorSearchBudget(t *testing.T) {
	s := openSessionsPG(t)
	const retry = time.Second
	defer postgres.SetExactVectorBudget(300*time.Millisecond, retry)()
	ctx := context.Background()
	kb := vectorKB(t, s, "budget")
	q := store.VectorQuery{KBID: kb.ID, Dimension: 2, Vector: []float32{1, 0}, K: 2}
	wide, _ := wideKB(t, s)
	hits, err := s.ChunkVectorSearch(ctx, q)
	if err != nil || len(hits) != 2 {
		t.Fatalf("unhindered search: %d hits, %v; want 2", len(hits), err)
	}
	tx, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `LOCK TABLE chunks IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.ChunkVectorSearch(short, q); err == nil || errors.Is(err, store.ErrVectorIndexBuilding) {
		t.Fatalf("search its caller ended: %v, want its own error", err)
	}
	// A knowledge base pgvector cannot index (over 4,000 dimensions) will
	// have no index: its exact ranking is waited for as long as it takes.
	long := make([]float32, 4001)
	long[0] = 1
	wait, cancelWait := context.WithTimeout(ctx, 2*time.Second)
	defer cancelWait()
	if _, err := s.ChunkVectorSearch(wait, store.VectorQuery{KBID: wide.ID, Dimension: len(long), Vector: long, K: 1}); err == nil || errors.Is(err, store.ErrVectorIndexBuilding) {
		t.Fatalf("search of a knowledge base that cannot be indexed: %v, want its caller's deadline", err)
	}
	held, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	_, err = s.ChunkVectorSearch(held, q)
	if !errors.Is(err, store.ErrVectorIndexBuilding) || errcode.Of(err) != errcode.Unavailable {
		t.Fatalf("search held past its budget: %v (%s), want store.ErrVectorIndexBuilding, unavailable", err, errcode.Of(err))
	}
	slow := time.Now()
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Not waited for again until retry has passed, in this process or
	// another (a second store over the same schema: a one-shot command).
	if _, err := s.ChunkVectorSearch(ctx, q); !errors.Is(err, store.ErrVectorIndexBuilding) && time.Since(slow) < retry {
		t.Fatalf("search right after one past its budget: %v, want store.ErrVectorIndexBuilding", err)
	}
	other, err := postgres.Open(ctx, postgres.ConnString(s), postgres.Options{MaxConns: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.ChunkVectorSearch(ctx, q); !errors.Is(err, store.ErrVectorIndexBuilding) && time.Since(slow) < retry {
		t.Fatalf("another process's search right after one past its budget: %v, want store.ErrVectorIndexBuilding", err)
	}
	time.Sleep(time.Until(slow.Add(retry)))
	if hits, err := s.ChunkVectorSearch(ctx, q); err != nil || len(hits) != 2 {
		t.Fatalf("search after retry: %d hits, %v; want 2", len(hits), err)
	}
	if hits, err := other.ChunkVectorSearch(ctx, q); err != nil || len(hits) != 2 {
		t.Fatalf("another process's search after retry: %d hits, %v; want 2", len(hits), err)
	}
}
