package kb_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/kb/chunk"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
)

// overlapStore counts the batches PostgreSQL is writing at once. Its
// first write of an ingest waits, up to a few seconds, for a second to
// begin, so an ingest that writes one batch at a time shows as such.
type overlapStore struct {
	*postgres.Store
	mu       sync.Mutex
	inFlight int
	most     int
	second   chan struct{}
	wait     time.Duration
	waited   bool
}

// reset starts counting anew; an ingest's first write waits up to wait
// for a second.
func (s *overlapStore) reset(wait time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.most, s.second, s.wait, s.waited = 0, make(chan struct{}), wait, false
}

func (s *overlapStore) SourcePutBatch(ctx context.Context, kbID int64, puts []store.SourcePut) ([]int64, error) {
	s.mu.Lock()
	s.inFlight++
	s.most = max(s.most, s.inFlight)
	first := !s.waited
	s.waited = true
	if s.inFlight == 2 {
		select {
		case <-s.second:
		default:
			close(s.second)
		}
	}
	second, wait := s.second, s.wait
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	if first {
		select {
		case <-second:
		case <-time.After(wait):
		}
	}
	return s.Store.SourcePutBatch(ctx, kbID, puts)
}

// overlapKB opens a schema of the test PostgreSQL with its writes counted
// (overlapStore) and creates a knowledge base there.
func overlapKB(t *testing.T, name string) (*overlapStore, *kb.Service, *store.KB) {
	t.Helper()
	pg, err := postgres.Open(context.Background(), testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL"), postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pg.Close() })
	st := &overlapStore{Store: pg}
	svc := kb.New(st, nil)
	base, err := svc.Create(context.Background(), name, "", embed.Hash{})
	if err != nil {
		t.Fatal(err)
	}
	return st, svc, base
}

// TestFirstIngestWritesBatchesAtOnce: on PostgreSQL a new knowledge
// base's batches are written two at a time, each in its own transaction,
// and neither fails for the other: each locks the knowledge base's row
// for key share and bumps its version (with a plain share lock, two
// batches each waited for the other's, and the server broke the deadlock
// by failing one). Every document is written, once. The next ingest into
// it, whose inserts update the term counts, writes one batch at a time.
func TestFirstIngestWritesBatchesAtOnce(t *testing.T) {
	ctx := context.Background()
	st, svc, base := overlapKB(t, "writers")
	docs := func(from, to int) []kb.Document {
		var out []kb.Document
		for i := from; i < to; i++ {
			out = append(out, kb.Document{URL: fmt.Sprintf("kb://writers/%d", i), Title: "d", Text: fmt.Sprintf("Document %d says something about topic %d.", i, i%7)})
		}
		return out
	}
	var seen []kb.Progress
	st.reset(10 * time.Second)
	rep, err := svc.AddDocuments(ctx, base, docs(0, 60), kb.AddOptions{Embedder: embed.Hash{}, BatchSize: 3, Progress: func(p kb.Progress) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if st.most != 2 {
		t.Fatalf("a first ingest wrote at most %d batches at once, want 2", st.most)
	}
	if rep.Added != 60 || rep.Chunks != 60 {
		t.Fatalf("report %+v, want 60 documents added in 60 chunks", rep)
	}
	if len(seen) != 20 || seen[19] != (kb.Progress{Done: 60, Total: 60}) {
		t.Fatalf("progress %v, want 20 reports ending at 60 of 60", seen)
	}
	if s, err := st.KBStats(ctx, base.ID); err != nil || s.Sources != 60 || s.Chunks != 60 {
		t.Fatalf("stored %+v (%v), want 60 sources and chunks", s, err)
	}

	st.reset(time.Second) // one writer: the wait runs out
	rep, err = svc.AddDocuments(ctx, base, docs(60, 72), kb.AddOptions{Embedder: embed.Hash{}, BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	if st.most != 1 || rep.Added != 12 {
		t.Fatalf("a later ingest wrote %d batches at once and added %d, want 1 and 12", st.most, rep.Added)
	}
}

// TestFirstIngestWritersTakeLocksInOrder: two batches written at once,
// each of more chunks than one INSERT writes (chunkBatch, 1,000), the one
// English then Korean, the other Korean then English. Each INSERT's
// triggers lock the knowledge base's counts per language and its term
// statistics row; had they taken the language rows first, each batch's
// second INSERT would wait for a language row the other batch's first
// holds, and PostgreSQL would fail one with a deadlock. Every chunk is
// written and counted once.
func TestFirstIngestWritersTakeLocksInOrder(t *testing.T) {
	ctx := context.Background()
	st, svc, base := overlapKB(t, "languages")
	doc := func(n int, korean bool) kb.Document {
		var b strings.Builder
		for i := range 200 {
			if korean {
				fmt.Fprintf(&b, "문서 %d의 %d번째 문단은 한국어로 쓴 설명입니다.\n\n", n, i)
			} else {
				fmt.Fprintf(&b, "Paragraph %d of document %d explains, at some length and in plain English words, how the thing it describes works.\n\n", i, n)
			}
		}
		return kb.Document{URL: fmt.Sprintf("kb://languages/%d", n), Title: "d", Text: b.String()}
	}
	var docs []kb.Document
	for batch := range 4 {
		for i := range 10 {
			// Batches 0 and 2: seven English documents, then three
			// Korean; 1 and 3 the other way round.
			docs = append(docs, doc(batch*10+i, (i < 7) == (batch%2 == 1)))
		}
	}
	st.reset(10 * time.Second)
	rep, err := svc.AddDocuments(ctx, base, docs, kb.AddOptions{Embedder: embed.Hash{}, BatchSize: 10, ChunkBatch: 512, Chunking: chunk.Options{MaxTokens: 32}})
	if err != nil {
		t.Fatal(err)
	}
	if st.most != 2 {
		t.Fatalf("wrote at most %d batches at once, want 2", st.most)
	}
	if rep.Added != 40 {
		t.Fatalf("report %+v, want 40 documents added", rep)
	}
	// Each batch's first INSERT (1,000 chunks) is of one language: five
	// documents of 143 chunks or more.
	var fewest, english, korean, counted, byLanguage int
	err = st.SQL.QueryRowContext(ctx, `SELECT (SELECT min(n) FROM (SELECT count(*) AS n FROM chunks WHERE kb_id = $1 GROUP BY source_id) c),
		(SELECT count(*) FROM chunks WHERE kb_id = $1 AND language = 'en'), (SELECT count(*) FROM chunks WHERE kb_id = $1 AND language = 'ko'),
		(SELECT chunks FROM kb_term_stats WHERE kb_id = $1), (SELECT sum(chunks) FROM kb_language_stats WHERE kb_id = $1)`, base.ID).
		Scan(&fewest, &english, &korean, &counted, &byLanguage)
	if err != nil {
		t.Fatal(err)
	}
	if fewest < 143 || english+korean != rep.Chunks || english == 0 || korean == 0 {
		t.Fatalf("%d chunks: the fewest a document has %d, English %d, Korean %d; want 143 or more, all in the two languages", rep.Chunks, fewest, english, korean)
	}
	if counted != rep.Chunks || byLanguage != rep.Chunks {
		t.Fatalf("%d chunks written, %d in the term statistics, %d in the counts per language", rep.Chunks, counted, byLanguage)
	}
}
