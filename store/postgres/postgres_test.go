package postgres_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/storetest"
)

func openPG(t *testing.T, env string, maxConns int) *postgres.Store {
	t.Helper()
	url := testpg.Schema(t, env)
	s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: maxConns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store { return openPG(t, "QUARRY_TEST_POSTGRES_URL", 0) })
}

// TestPGVector runs the suite and a native nearest-neighbour query on a
// server with pgvector (PGlite in CI; it serves one connection at a time).
func TestPGVector(t *testing.T) {
	storetest.Exercise(t, func(t *testing.T) store.Store { return openPG(t, "QUARRY_TEST_PGVECTOR_URL", 1) })
	t.Run("NearestNeighbours", func(t *testing.T) {
		s := openPG(t, "QUARRY_TEST_PGVECTOR_URL", 1)
		if !s.HasPGVector() {
			t.Fatal("QUARRY_TEST_PGVECTOR_URL server has no pgvector")
		}
		storetest.ExerciseVector(t, s)
	})
}

// openVectorPG opens a store on QUARRY_TEST_PGVECTOR_URL's server, which
// must have pgvector.
// TestPGVectorOff: quarry.pgvector=off in the URL keeps pgvector out of
// a store on a server that has it (the exact ranking is what a server
// without it gets), and a database whose embeddings pgvector's column
// holds is not opened with it off; a value other than on or off is an
// error naming the setting.
func TestPGVectorOff(t *testing.T) {
	url := testpg.Schema(t, "QUARRY_TEST_PGVECTOR_URL")
	ctx := context.Background()
	with := func(v string) string { return url + "&" + postgres.VectorSetting + "=" + v }
	off, err := postgres.Open(ctx, with("off"), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	var column bool
	if err := off.SQL.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
		WHERE attrelid = 'chunks'::regclass AND attname = 'embedding_vec' AND NOT attisdropped)`).Scan(&column); err != nil {
		t.Fatal(err)
	}
	_ = off.Close()
	if off.HasPGVector() || column {
		t.Fatalf("off: pgvector %v, its column added %v; want neither", off.HasPGVector(), column)
	}
	if _, err := postgres.Open(ctx, with("maybe"), postgres.Options{MaxConns: 1}); err == nil || !strings.Contains(err.Error(), postgres.VectorSetting) {
		t.Fatalf("quarry.pgvector=maybe: %v, want an error naming the setting", err)
	}
	on, err := postgres.Open(ctx, with("on"), postgres.Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	_ = on.Close()
	if !on.HasPGVector() {
		t.Fatal("on: no pgvector on a server that has it")
	}
	if _, err := postgres.Open(ctx, with("off"), postgres.Options{MaxConns: 1}); err == nil || !strings.Contains(err.Error(), "pgvector's column") {
		t.Fatalf("off over embeddings pgvector holds: %v, want an error saying so", err)
	}
}

func openVectorPG(t *testing.T) *postgres.Store {
	t.Helper()
	s := openPG(t, "QUARRY_TEST_PGVECTOR_URL", 1)
	if !s.HasPGVector() {
		t.Fatal("QUARRY_TEST_PGVECTOR_URL server has no pgvector")
	}
	return s
}

// putVectors writes three one-chunk sources with two-dimensional
// embeddings to the knowledge base, at URLs of host.
func putVectors(t *testing.T, s *postgres.Store, kb *store.KB, host string) {
	t.Helper()
	var puts []store.SourcePut
	for i, v := range [][]float32{{1, 0}, {0.8, 0.2}, {0, 1}} {
		puts = append(puts, store.SourcePut{
			Source: store.Source{URL: fmt.Sprintf("https://%s.test/%d", host, i), Title: "t", Content: "c", ContentHash: fmt.Sprint(i)},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 1, Embedding: v, Terms: "t"}},
		})
	}
	if _, err := s.SourcePutBatch(context.Background(), kb.ID, puts); err != nil {
		t.Fatal(err)
	}
}

// TestEmbeddingStoredOnce: with pgvector, a chunk's embedding is written
// to the vector column only, and read back from it whole.
func TestEmbeddingStoredOnce(t *testing.T) {
	s := openVectorPG(t)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "once", Embedder: "hash", Dimension: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []float32{0.25, -1.5, 3e-7}
	_, err = s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{
		Source: store.Source{URL: "https://once.test/", Title: "once", Content: "x", ContentHash: "h"},
		Chunks: []store.Chunk{{ChunkIndex: 0, Text: "x", TokenCount: 1, Embedding: want, Terms: "x"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var bytea, vec int
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(embedding), count(embedding_vec) FROM chunks WHERE kb_id = $1`, kb.ID).Scan(&bytea, &vec); err != nil {
		t.Fatal(err)
	}
	if bytea != 0 || vec != 1 {
		t.Errorf("embeddings stored: %d in BYTEA, %d in the vector column; want 0 and 1", bytea, vec)
	}
	var got []float32
	if err := s.ChunkScan(ctx, kb.ID, func(c store.IndexedChunk) error { got = c.Embedding; return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("embedding read back = %v, want %v", got, want)
	}
}

// TestVectorIndexBuiltOnce: with pgvector, a knowledge base's HNSW index
// is not there while its first chunks are written (its vectors are
// searched exactly meanwhile), is built by EnsureVectorIndex over them,
// and is built once.
func TestVectorIndexBuiltOnce(t *testing.T) {
	s := openVectorPG(t)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "later", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	indexed := func() bool {
		t.Helper()
		var ok bool
		if err := s.SQL.QueryRowContext(ctx, `SELECT to_regclass('chunks_cvec_kb' || $1::text) IS NOT NULL`, kb.ID).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := s.EnsureVectorIndex(ctx, kb); err != nil || indexed() {
		t.Fatalf("an empty knowledge base got an index (%v): it would grow one insert at a time", err)
	}
	putVectors(t, s, kb, "later")
	search := func() []store.VectorHit {
		t.Helper()
		hits, err := s.ChunkVectorSearch(ctx, store.VectorQuery{KBID: kb.ID, Dimension: 2, Vector: []float32{1, 0.1}, K: 2, Filter: store.ChunkFilter{IncludeStale: true}})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}
	before := search()
	if indexed() || len(before) != 2 {
		t.Fatalf("before the build: indexed %v, hits %+v", indexed(), before)
	}
	for range 2 {
		if err := s.EnsureVectorIndex(ctx, kb); err != nil {
			t.Fatal(err)
		}
	}
	if !indexed() {
		t.Fatal("no index after EnsureVectorIndex")
	}
	if after := search(); !slices.Equal(after, before) {
		t.Fatalf("hits through the index %+v, exactly %+v", after, before)
	}
	if plan := vectorPlan(t, s, kb.ID, 2); !strings.Contains(plan, "chunks_cvec_kb") {
		t.Fatalf("the nearest-neighbour query does not read the centred index:\n%s", plan)
	}
}

// TestVectorIndexEFConstruction: the HNSW index is built with m = 16 and
// the ef_construction Options.IndexEFConstruction gives (the default
// without it; within pgvector's bounds, at least 2m).
func TestVectorIndexEFConstruction(t *testing.T) {
	for _, tc := range []struct{ opt, want int }{{0, postgres.DefaultEFConstruction}, {200, 200}, {8, 32}, {5000, 1000}} {
		t.Run(fmt.Sprint(tc.opt), func(t *testing.T) {
			url := testpg.Schema(t, "QUARRY_TEST_PGVECTOR_URL")
			s, err := postgres.Open(context.Background(), url, postgres.Options{MaxConns: 1, IndexEFConstruction: tc.opt})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "efc", Embedder: "hash", Dimension: 2})
			if err != nil {
				t.Fatal(err)
			}
			putVectors(t, s, kb, "efc")
			if err := s.EnsureVectorIndex(ctx, kb); err != nil {
				t.Fatal(err)
			}
			var opts string
			if err := s.SQL.QueryRowContext(ctx, `SELECT array_to_string(reloptions, ',') FROM pg_class WHERE oid = to_regclass('chunks_cvec_kb' || $1::text)`, kb.ID).Scan(&opts); err != nil {
				t.Fatal(err)
			}
			if want := fmt.Sprintf("m=16,ef_construction=%d", tc.want); opts != want {
				t.Fatalf("index options %q, want %q", opts, want)
			}
		})
	}
}

// TestVectorIndexOfEarlierVersions: a knowledge base indexed as before
// centred indexes — at full precision, or at half precision uncentred —
// keeps its index, gets no second one and is searched through it.
func TestVectorIndexOfEarlierVersions(t *testing.T) {
	for _, c := range []struct{ name, index, expr string }{
		{"full", "chunks_vec_kb", "(embedding_vec::vector(2)) vector_cosine_ops"},
		{"half", "chunks_hvec_kb", "(embedding_vec::halfvec(2)) halfvec_cosine_ops"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := openVectorPG(t)
			ctx := context.Background()
			kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "earlier", Embedder: "hash", Dimension: 2})
			if err != nil {
				t.Fatal(err)
			}
			putVectors(t, s, kb, "earlier")
			id := fmt.Sprint(kb.ID)
			if _, err := s.SQL.ExecContext(ctx, `CREATE INDEX `+c.index+id+` ON chunks USING hnsw (`+c.expr+`)
				WITH (m = 16, ef_construction = 64) WHERE kb_id = `+id); err != nil {
				t.Fatal(err)
			}
			if err := s.EnsureVectorIndex(ctx, kb); err != nil {
				t.Fatal(err)
			}
			var n int
			if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'chunks_%vec_kb'||$1::text`, id).Scan(&n); err != nil || n != 1 {
				t.Fatalf("%d vector indexes (%v), want the one built before", n, err)
			}
			hits, err := s.ChunkVectorSearch(ctx, store.VectorQuery{KBID: kb.ID, Dimension: 2, Vector: []float32{1, 0.1}, K: 2, Filter: store.ChunkFilter{IncludeStale: true}})
			if err != nil || len(hits) != 2 || hits[0].Score < hits[1].Score {
				t.Fatalf("hits %+v (%v)", hits, err)
			}
			if plan := vectorPlan(t, s, kb.ID, 2); !strings.Contains(plan, c.index+id) {
				t.Fatalf("the nearest-neighbour query does not read the index built before:\n%s", plan)
			}
			if err := s.KBDelete(ctx, "earlier"); err != nil {
				t.Fatal(err)
			}
			if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM pg_indexes WHERE schemaname = current_schema() AND indexname LIKE 'chunks_%vec_kb'||$1::text`, id).Scan(&n); err != nil || n != 0 {
				t.Fatalf("%d vector indexes (%v) after the knowledge base was deleted", n, err)
			}
		})
	}
}

// vectorPlan is the plan of the nearest-neighbour query over a knowledge
// base, sequential scans discouraged (three rows would rather be sorted):
// an index whose expression the query does not match is then still not
// used.
func vectorPlan(t *testing.T, s *postgres.Store, kbID int64, dim int) string {
	t.Helper()
	ctx := context.Background()
	query, err := s.VectorQuery(ctx, kbID, dim) // before the transaction holds the connection
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	vec := "[" + strings.TrimSuffix(strings.Repeat("1,", dim), ",") + "]"
	rows, err := tx.QueryContext(ctx, `EXPLAIN `+query, vec, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan strings.Builder
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return plan.String()
}

// TestAfterIngestRefreshesStatistics: a large ingest leaves the tables
// analysed (the planner otherwise takes them for empty and reads the
// whole knowledge base's id index for every search term); a small one
// leaves that to autovacuum.
func TestAfterIngestRefreshesStatistics(t *testing.T) {
	s := openPG(t, "QUARRY_TEST_POSTGRES_URL", 0)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "stats", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	var puts []store.SourcePut
	for i := range 3 {
		puts = append(puts, store.SourcePut{
			Source: store.Source{URL: fmt.Sprintf("https://stats.test/%d", i), Title: "t", Content: "c", ContentHash: fmt.Sprint(i)},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 1, Embedding: []float32{1, 0}, Terms: "t"}},
		})
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, puts); err != nil {
		t.Fatal(err)
	}
	analysed := func(table string) bool {
		t.Helper()
		var ok bool
		if err := s.SQL.QueryRowContext(ctx, `SELECT last_analyze IS NOT NULL FROM pg_stat_user_tables WHERE relid = $1::regclass`, table).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if err := s.AfterIngest(ctx, kb, 3); err != nil {
		t.Fatal(err)
	}
	if analysed("chunks") {
		t.Fatal("3 chunks written: chunks analysed, every small ingest would pay for it")
	}
	if err := s.AfterIngest(ctx, kb, 1000); err != nil {
		t.Fatal(err)
	}
	if !analysed("chunks") || !analysed("sources") {
		t.Fatalf("after a large ingest: chunks analysed %v, sources %v", analysed("chunks"), analysed("sources"))
	}
}

// TestWhileIngestingAnalysesOutgrownTables: during an ingest the tables
// are analysed when they hold more than twice the chunks the planner last
// counted, and not before: with autovacuum off, a million-chunk ingest
// otherwise planned each batch for an empty table.
func TestWhileIngestingAnalysesOutgrownTables(t *testing.T) {
	s := openPG(t, "QUARRY_TEST_POSTGRES_URL", 0)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "growing", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	written := 0
	write := func(n int) {
		t.Helper()
		var puts []store.SourcePut
		for range n {
			puts = append(puts, store.SourcePut{
				Source: store.Source{URL: fmt.Sprintf("https://growing.test/%d", written), Title: "t", Content: "c", ContentHash: "h"},
				Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 1, Embedding: []float32{1, 0}, Terms: "t"}},
			})
			written++
		}
		if _, err := s.SourcePutBatch(ctx, kb.ID, puts); err != nil {
			t.Fatal(err)
		}
		if err := s.WhileIngesting(ctx, kb, written); err != nil {
			t.Fatal(err)
		}
	}
	planned := func() float64 {
		t.Helper()
		var n float64
		if err := s.SQL.QueryRowContext(ctx, `SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'chunks'::regclass`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, step := range []struct {
		write int
		want  float64 // the chunks the planner counts after it
	}{
		{900, 0},     // under refreshChunks: left alone
		{300, 1200},  // 1,200 against none counted
		{1000, 1200}, // 2,200: not yet twice 1,200
		{300, 2500},  // 2,500: more than twice
	} {
		write(step.write)
		if got := planned(); got != step.want {
			t.Fatalf("after %d chunks written the planner counts %v, want %v", written, got, step.want)
		}
	}
}

// TestAfterIngestByARoleThatDoesNotOwnTheTables: an ingest written by a
// role that may write the tables but does not own them (migrations run by
// another) is not failed by the statistics it cannot refresh; it says so.
func TestAfterIngestByARoleThatDoesNotOwnTheTables(t *testing.T) {
	base := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	ctx := context.Background()
	owner, err := postgres.Open(ctx, base, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = owner.Close() }) // after the role is dropped
	kb, err := owner.KBCreate(ctx, store.KBCreateParams{Name: "notowner", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	var schema string
	if err := owner.SQL.QueryRowContext(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		t.Fatal(err)
	}
	role := "quarry_writer_" + schema
	for _, stmt := range []string{
		`CREATE ROLE ` + role + ` LOGIN`,
		`GRANT USAGE, CREATE ON SCHEMA ` + schema + ` TO ` + role,
		`GRANT ALL ON ALL TABLES IN SCHEMA ` + schema + ` TO ` + role,
		`GRANT ALL ON ALL SEQUENCES IN SCHEMA ` + schema + ` TO ` + role,
	} {
		if _, err := owner.SQL.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range []string{`DROP OWNED BY ` + role, `DROP ROLE ` + role} {
			if _, err := owner.SQL.ExecContext(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	var logs bytes.Buffer
	writer, err := postgres.Open(ctx, u.String(), postgres.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	if err := writer.AfterIngest(ctx, kb, 1000); err != nil {
		t.Fatalf("an ingest failed for the statistics its role may not refresh: %v", err)
	}
	if !strings.Contains(logs.String(), "tables not analysed") {
		t.Fatalf("nothing said: %q", logs.String())
	}
}

// TestCentredIndexRanksAsCosine: the centred index orders chunks as
// cosine does, whatever their vectors' lengths and the mean it was built
// with: the query read through it (it must be) returns every chunk,
// cosine to the query never rising from one to the next beyond half
// precision's rounding.
func TestCentredIndexRanksAsCosine(t *testing.T) {
	s := openVectorPG(t)
	ctx := context.Background()
	const dim, n = 4, 60
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "centred", Embedder: "hash", Dimension: dim})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var puts []store.SourcePut
	vecs := map[int64][]float32{}
	for i := range n {
		v := make([]float32, dim)
		for j := range v {
			// A shared component, as the offline embedder's vectors have,
			// and lengths from 0.1 to 10.
			v[j] = float32((0.6 + rng.NormFloat64()*0.3) * math.Pow(10, rng.Float64()*2-1))
		}
		puts = append(puts, store.SourcePut{
			Source: store.Source{URL: fmt.Sprintf("https://centred.test/%d", i), Title: "t", Content: "c", ContentHash: fmt.Sprint(i)},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 1, Embedding: v, Terms: "t"}},
		})
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, puts); err != nil {
		t.Fatal(err)
	}
	if err := s.EnsureVectorIndex(ctx, kb); err != nil {
		t.Fatal(err)
	}
	if plan := vectorPlan(t, s, kb.ID, dim); !strings.Contains(plan, "chunks_cvec_kb") {
		t.Fatalf("the nearest-neighbour query does not read the centred index:\n%s", plan)
	}
	if err := s.ChunkScan(ctx, kb.ID, func(c store.IndexedChunk) error { vecs[c.ID] = c.Embedding; return nil }); err != nil {
		t.Fatal(err)
	}
	query, err := s.VectorQuery(ctx, kb.ID, dim)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range [][]float32{{1, 0, 0, 0}, {-0.5, 0.5, 0.5, -0.5}, {0.1, 0.2, 0.3, 0.927}} {
		tx, err := s.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, set := range []string{`SET LOCAL enable_seqscan = off`, `SET LOCAL hnsw.ef_search = 100`} {
			if _, err := tx.ExecContext(ctx, set); err != nil {
				t.Fatal(err)
			}
		}
		rows, err := tx.QueryContext(ctx, query, fmt.Sprintf("[%g,%g,%g,%g]", q[0], q[1], q[2], q[3]), n)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for rows.Next() {
			var id int64
			var score float64
			if err := rows.Scan(&id, &score); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		_ = tx.Rollback()
		if len(ids) != n {
			t.Fatalf("query %v: %d chunks through the index, want %d", q, len(ids), n)
		}
		for i := 1; i < len(ids); i++ {
			prev, cur := index.Cosine(q, vecs[ids[i-1]]), index.Cosine(q, vecs[ids[i]])
			if cur > prev+2e-3 {
				t.Fatalf("query %v: chunk %d (cosine %.4f) ranked after one of cosine %.4f", q, i, cur, prev)
			}
		}
	}
}

// TestVectorSearchEF: a vector search asks the index for at least
// Options.VectorSearchEF candidates and at least K, never more than
// pgvector's 1,000; a hybrid search's list (fused) for at least K and no
// more than the default unless K is more.
func TestVectorSearchEF(t *testing.T) {
	url := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	for _, tc := range []struct {
		opt, k, want int
		fused        bool
	}{
		{0, 10, 100, false}, {0, 100, 100, false}, {0, 600, 600, false}, {0, 5000, 1000, false},
		{400, 10, 400, false}, {400, 600, 600, false}, {1, 1, 1, false}, {5000, 10, 1000, false},
		{600, 100, 100, true}, {600, 300, 300, true}, {40, 10, 40, true}, {40, 100, 100, true}, {0, 5000, 1000, true},
	} {
		s, err := postgres.Open(context.Background(), url, postgres.Options{VectorSearchEF: tc.opt})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.EFSearchFor(tc.k, tc.fused); got != tc.want {
			t.Errorf("VectorSearchEF %d, K %d, fused %v: ef_search %d, want %d", tc.opt, tc.k, tc.fused, got, tc.want)
		}
		_ = s.Close()
	}
}

// Replicas that start at once on a new database each get it migrated
// once.
func TestOpenAtOnce(t *testing.T) {
	url := testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	storetest.OpenAtOnce(t, func(ctx context.Context) (store.Store, error) { return postgres.Open(ctx, url, postgres.Options{}) })
}

// TestFirstIngestDefersTermCounts: an ingest into a knowledge base with no
// chunks leaves kb_term_df alone until AfterIngest counts every chunk;
// meanwhile a search counts its terms' chunks itself and ranks as it does
// after the count; an insert that skipped the counts and commits while
// the count waits is counted; an ingest into a knowledge base that holds
// chunks counts as it inserts.
func TestFirstIngestDefersTermCounts(t *testing.T) {
	s := openPG(t, "QUARRY_TEST_POSTGRES_URL", 0)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "first", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	put := func(from, to int) {
		t.Helper()
		var puts []store.SourcePut
		for i := from; i < to; i++ {
			terms := "pear plum"
			if i%3 == 0 {
				terms = "apple pear"
			}
			puts = append(puts, store.SourcePut{
				Source: store.Source{URL: fmt.Sprintf("https://first.test/%d", i), Title: "t", Content: "c", ContentHash: fmt.Sprint(i)},
				Chunks: []store.Chunk{{ChunkIndex: 0, Text: terms, TokenCount: 2, Embedding: []float32{1, 0}, Terms: terms}},
			})
		}
		if _, err := s.SourcePutBatch(ctx, kb.ID, puts); err != nil {
			t.Fatal(err)
		}
	}
	counts := func() map[string]int64 {
		t.Helper()
		rows, err := s.SQL.QueryContext(ctx, `SELECT term, df FROM kb_term_df WHERE kb_id = $1 AND df > 0`, kb.ID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string]int64{}
		for rows.Next() {
			var term string
			var df int64
			if err := rows.Scan(&term, &df); err != nil {
				t.Fatal(err)
			}
			out[term] = df
		}
		return out
	}
	search := func() []store.VectorHit {
		t.Helper()
		hits, err := s.ChunkTermSearch(ctx, store.TermQuery{KBID: kb.ID, Terms: []string{"apple", "plum", "kiwi"}, K: 4})
		if err != nil {
			t.Fatal(err)
		}
		return hits
	}

	if _, err := s.BeforeIngest(ctx, kb); err != nil {
		t.Fatal(err)
	}
	put(0, 9)
	// A source replaced while the counts wait: its old chunk's terms are
	// not subtracted from counts that never held them.
	replace := store.SourcePut{
		Source: store.Source{URL: "https://first.test/0", Title: "t", Content: "c", ContentHash: "new"},
		Chunks: []store.Chunk{{ChunkIndex: 0, Text: "apple pear", TokenCount: 2, Embedding: []float32{1, 0}, Terms: "apple pear"}},
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, []store.SourcePut{replace}); err != nil {
		t.Fatal(err)
	}
	if got := counts(); len(got) != 0 {
		t.Fatalf("first ingest counted as it inserted: %v", got)
	}
	during := search()
	if len(during) != 4 {
		t.Fatalf("search during the first ingest: %v, want 4 hits", during)
	}

	// A writer inserts while the counts are deferred and commits only
	// after the count has begun: the count waits for it. Then the same
	// for a writer that deletes.
	settleAround := func(write func(tx *sql.Tx)) {
		t.Helper()
		tx, err := s.SQL.BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = tx.Rollback() }()
		write(tx)
		settled := make(chan error, 1)
		go func() { settled <- s.AfterIngest(ctx, kb, 10) }()
		for waiting := false; !waiting; {
			select {
			case err := <-settled:
				t.Fatalf("the count ended (%v) before a write that skipped the counts committed", err)
			case <-time.After(10 * time.Millisecond):
			}
			if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) > 0 FROM pg_stat_activity
				WHERE wait_event_type = 'Lock' AND query LIKE 'DELETE FROM kb_term_df_pending%'`).Scan(&waiting); err != nil {
				t.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if err := <-settled; err != nil {
			t.Fatal(err)
		}
	}
	var src int64
	settleAround(func(tx *sql.Tx) {
		if err := tx.QueryRowContext(ctx, `INSERT INTO sources (kb_id, url, title, content, content_hash, crawled_at) VALUES ($1, 'https://first.test/late', 't', 'c', 'late', now()) RETURNING id`, kb.ID).Scan(&src); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO chunks (source_id, kb_id, chunk_index, text, token_count, terms) VALUES ($1, $2, 0, 'kiwi', 1, 'kiwi apple')`, src, kb.ID); err != nil {
			t.Fatal(err)
		}
	})
	want := map[string]int64{"apple": 4, "pear": 9, "plum": 6, "kiwi": 1}
	if got := counts(); !maps.Equal(got, want) {
		t.Fatalf("counts after the first ingest %v, want %v", got, want)
	}
	if _, err := s.SQL.ExecContext(ctx, `INSERT INTO kb_term_df_pending (kb_id) VALUES ($1)`, kb.ID); err != nil {
		t.Fatal(err)
	}
	settleAround(func(tx *sql.Tx) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM chunks WHERE source_id = $1`, src); err != nil {
			t.Fatal(err)
		}
	})
	want = map[string]int64{"apple": 3, "pear": 9, "plum": 6}
	if got := counts(); !maps.Equal(got, want) {
		t.Fatalf("counts after a delete while they were deferred %v, want %v", got, want)
	}
	if after := search(); !slices.Equal(after, during) {
		t.Fatalf("search after the count %v, during the first ingest %v", after, during)
	}
	// The knowledge base holds chunks: the next ingest counts as it goes.
	if _, err := s.BeforeIngest(ctx, kb); err != nil {
		t.Fatal(err)
	}
	put(9, 12)
	want = map[string]int64{"apple": 4, "pear": 12, "plum": 8}
	if got := counts(); !maps.Equal(got, want) {
		t.Fatalf("counts after a later ingest %v, want %v", got, want)
	}
}

// TestOverlappingBatchesAtOnce: two transactions that write the same
// sources given in opposite orders (two processes ingesting one site) both
// succeed: the rows are locked in the order of their URLs, so the second
// waits for the first instead of deadlocking on the sources' unique index.
func TestOverlappingBatchesAtOnce(t *testing.T) {
	s := openPG(t, "QUARRY_TEST_POSTGRES_URL", 0)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "overlap", Embedder: "hash", Dimension: 2})
	if err != nil {
		t.Fatal(err)
	}
	batch := func(round int, reverse bool) []store.SourcePut {
		var puts []store.SourcePut
		for i := range 400 {
			terms := fmt.Sprintf("round%d page%d", round, i)
			puts = append(puts, store.SourcePut{
				Source: store.Source{URL: fmt.Sprintf("https://overlap.test/%03d", i), Title: "t", Content: terms, ContentHash: terms},
				Chunks: []store.Chunk{{ChunkIndex: 0, Text: terms, TokenCount: 2, Embedding: []float32{1, 0}, Terms: terms}},
			})
		}
		if reverse {
			slices.Reverse(puts)
		}
		return puts
	}
	for round := range 8 {
		start := make(chan struct{})
		errs := make(chan error, 2)
		for _, reverse := range []bool{false, true} {
			puts := batch(round, reverse)
			go func() {
				<-start
				_, err := s.SourcePutBatch(ctx, kb.ID, puts)
				errs <- err
			}()
		}
		close(start)
		for range 2 {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
	var sources, chunks int
	if err := s.SQL.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM sources WHERE kb_id = $1), (SELECT count(*) FROM chunks WHERE kb_id = $1)`, kb.ID).Scan(&sources, &chunks); err != nil {
		t.Fatal(err)
	}
	if sources != 400 || chunks != 400 {
		t.Errorf("after the rounds: %d sources, %d chunks; want 400 of each", sources, chunks)
	}
}
