package postgres_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
)

// TestTermSearchExact: the search in the database, which reads only the
// chunks that can still make the top K, ranks exactly as the in-memory
// index that scores every chunk: same chunks, same order, same scores, for
// queries of rare words, common words and both, and after chunks are
// deleted (the document frequencies follow).
func TestTermSearchExact(t *testing.T) {
	s := openPG(t, "QUARRY_TEST_POSTGRES_URL", 0)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "exact", Embedder: "hash", Dimension: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Words drawn with a heavy skew: w0 is in most chunks, w299 in few.
	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string { return fmt.Sprintf("w%d", int(math.Pow(rng.Float64(), 3)*300)) }
	var puts []store.SourcePut
	for i := range 600 {
		var terms []string
		for range 5 + rng.IntN(80) {
			terms = append(terms, word())
		}
		puts = append(puts, store.SourcePut{
			Source: store.Source{URL: fmt.Sprintf("https://exact.test/%d", i), Title: "t", Content: "c", ContentHash: fmt.Sprint(i)},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: len(terms), Terms: strings.Join(terms, " ")}},
		})
	}
	// Chunks of a few words, each said many times: their scores come
	// close to the bounds the search prunes with (a term's tf part nears
	// k1+1), so a bound taken too tight loses them.
	for i := range 120 {
		var terms []string
		for range 1 + rng.IntN(3) {
			w := fmt.Sprintf("w%d", rng.IntN(300))
			for range 20 + rng.IntN(40) {
				terms = append(terms, w)
			}
		}
		puts = append(puts, store.SourcePut{
			Source: store.Source{URL: fmt.Sprintf("https://exact.test/r%d", i), Title: "t", Content: "c", ContentHash: fmt.Sprint("r", i)},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: len(terms), Terms: strings.Join(terms, " ")}},
		})
	}
	rng.Shuffle(len(puts), func(i, j int) { puts[i], puts[j] = puts[j], puts[i] })
	if _, err := s.SourcePutBatch(ctx, kb.ID, puts[:400]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, puts[400:]); err != nil {
		t.Fatal(err)
	}
	queries := [][]string{{"w299"}, {"w0"}, {"w0", "w1", "w2"}, {"w250", "w0"}, {"w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"}, {"nowhere"}, {"nowhere", "w120"}}
	for range 60 {
		var q []string
		for range 1 + rng.IntN(8) {
			q = append(q, word())
		}
		queries = append(queries, q)
	}
	// A query longer than index.MaxQueryTerms (a pasted page): both
	// sides score its rarest terms.
	var long []string
	for i := range 90 {
		long = append(long, fmt.Sprintf("w%d", (i*37)%300))
	}
	queries = append(queries, long)
	// Queries of rare and common words together, whose first terms fill
	// the top K so that later, commoner terms are read only in chunks
	// that hold enough of the others too.
	for range 60 {
		q := []string{fmt.Sprintf("w%d", 150+rng.IntN(150))}
		for range 2 + rng.IntN(6) {
			q = append(q, fmt.Sprintf("w%d", rng.IntN(40)))
		}
		queries = append(queries, q)
	}
	compare := func(stage string) {
		t.Helper()
		bm, ids := indexOf(t, s, kb.ID)
		for _, q := range queries {
			for _, k := range []int{1, 3, 10, 50} {
				want := bm.Search(q, k, nil)
				got, err := s.ChunkTermSearch(ctx, store.TermQuery{KBID: kb.ID, Terms: q, K: k, Filter: store.ChunkFilter{IncludeStale: true}})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(want) {
					t.Fatalf("%s: %v k=%d: %d hits, want %d", stage, q, k, len(got), len(want))
				}
				for i := range want {
					if got[i].ChunkID != ids[want[i].Doc] || math.Abs(got[i].Score-want[i].Score) > 1e-9 {
						t.Fatalf("%s: %v k=%d: hit %d = chunk %d (%.12f), want chunk %d (%.12f)", stage, q, k, i, got[i].ChunkID, got[i].Score, ids[want[i].Doc], want[i].Score)
					}
				}
			}
		}
	}
	compare("written")
	for i := range 150 {
		if err := s.SourceDelete(ctx, kb.ID, fmt.Sprintf("https://exact.test/%d", i*4)); err != nil {
			t.Fatal(err)
		}
	}
	compare("after deletes")

	// Term lists: terms in more than 25 chunks get one. The searches
	// that read through them must rank exactly as before; most must.
	defer postgres.SetListLen(25)()
	defer postgres.SetListWorth(0)()
	postgres.SetExact(s, true)
	if err := s.BuildTermLists(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	answered := func(stage string, compared func(string)) {
		t.Helper()
		before := postgres.ListRead()
		compared(stage)
		if got := postgres.ListRead() - before; got < int64(3*len(queries)) {
			t.Errorf("%s: %d of %d searches read through the term lists", stage, got, 4*len(queries))
		}
	}
	answered("lists built", compare)
	// Chunks written after the build, longer than the others (the mean
	// length the bounds were built with grows), some saying a common
	// word often (each added beside its list).
	var more []store.SourcePut
	for i := range 200 {
		var terms []string
		for range 60 + rng.IntN(120) {
			terms = append(terms, word())
		}
		if i%10 == 0 {
			for range 30 {
				terms = append(terms, "w1")
			}
		}
		more = append(more, store.SourcePut{
			Source: store.Source{URL: fmt.Sprintf("https://exact.test/m%d", i), Title: "t", Content: "c", ContentHash: fmt.Sprint("m", i)},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: len(terms), Terms: strings.Join(terms, " ")}},
		})
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, more); err != nil {
		t.Fatal(err)
	}
	var adds int
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM kb_term_list_adds WHERE kb_id = $1`, kb.ID).Scan(&adds); err != nil || adds == 0 {
		t.Fatalf("entries added beside the lists: %d (%v)", adds, err)
	}
	answered("written after the build", compare)
	for i := range 100 {
		if err := s.SourceDelete(ctx, kb.ID, fmt.Sprintf("https://exact.test/m%d", i*2)); err != nil {
			t.Fatal(err)
		}
	}
	answered("deleted after the build", compare)
	// Builds while chunks are written: no chunk may be missing both from
	// a build and from beside its lists.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Go(func() {
		for range 3 {
			if err := s.BuildTermLists(ctx, kb.ID); err != nil {
				errs <- err
			}
		}
	})
	wg.Go(func() {
		for b := range 4 {
			var batch []store.SourcePut
			for i := range 40 {
				var terms []string
				for range 20 + rng.IntN(60) {
					terms = append(terms, fmt.Sprintf("w%d", int(math.Pow(float64((b*40+i)%97)/97, 3)*300)))
				}
				terms = append(terms, "w1", "w1", "w2")
				batch = append(batch, store.SourcePut{
					Source: store.Source{URL: fmt.Sprintf("https://exact.test/c%d-%d", b, i), Title: "t", Content: "c", ContentHash: fmt.Sprint("c", b, i)},
					Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: len(terms), Terms: strings.Join(terms, " ")}},
				})
			}
			if _, err := s.SourcePutBatch(ctx, kb.ID, batch); err != nil {
				errs <- err
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	answered("written while built", compare)
	// Churn: a quarter as many chunks written as the build held brings a
	// build at the end of the ingest, though the count has not grown.
	var built int64
	if err := s.SQL.QueryRowContext(ctx, `SELECT chunks FROM kb_term_list_builds WHERE kb_id = $1`, kb.ID).Scan(&built); err != nil {
		t.Fatal(err)
	}
	// Each churn chunk says w1 ten times in ten terms: its impact beats
	// the floor of w1's list, whichever chunks the last build saw (a
	// chunk of "w0 w1 w2" scored about as the list's 25th did, so whether
	// it was added beside the list depended on the builds' timing).
	var churn []store.SourcePut
	for i := range int(built)/4 + 1 {
		churn = append(churn, store.SourcePut{
			Source: store.Source{URL: fmt.Sprintf("https://exact.test/churn%d", i%5), Title: "t", Content: "c", ContentHash: fmt.Sprint("churn", i)},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 10, Terms: strings.TrimSpace(strings.Repeat("w1 ", 10))}},
		})
		if len(churn) == 5 {
			if _, err := s.SourcePutBatch(ctx, kb.ID, churn); err != nil {
				t.Fatal(err)
			}
			churn = churn[:0]
		}
	}
	// The last few, or the churn falls short of a quarter whenever the
	// build held a count whose quarter is not a multiple of five (it
	// depends on when the builds above ran).
	if len(churn) > 0 {
		if _, err := s.SourcePutBatch(ctx, kb.ID, churn); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM kb_term_list_adds WHERE kb_id = $1`, kb.ID).Scan(&adds); err != nil || adds == 0 {
		t.Fatalf("entries added beside the lists by churn: %d (%v)", adds, err)
	}
	if err := s.AfterIngest(ctx, kb, 5); err != nil {
		t.Fatal(err)
	}
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM kb_term_list_adds WHERE kb_id = $1`, kb.ID).Scan(&adds); err != nil || adds != 0 {
		t.Fatalf("entries beside the lists after churn and an ingest's end: %d (%v), want a build", adds, err)
	}
	answered("built after churn", compare)
	if err := s.BuildTermLists(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM kb_term_list_adds WHERE kb_id = $1`, kb.ID).Scan(&adds); err != nil || adds != 0 {
		t.Fatalf("entries added beside the lists after a build: %d (%v)", adds, err)
	}
	answered("built again", compare)

	// Not exact, with a budget of 16 chunks from the lists: a search may
	// return the best it found, but each hit is a chunk the query's
	// terms score as much as the index says, the hits come best first,
	// the top K is full when K chunks match, and a search that did not
	// stop early ranks exactly.
	postgres.SetExact(s, false)
	defer postgres.SetListBudget(16)()
	bm, ids := indexOf(t, s, kb.ID)
	approx := 0
	for _, q := range queries {
		all := map[int64]float64{}
		for _, h := range bm.Search(q, len(ids), nil) {
			all[ids[h.Doc]] = h.Score
		}
		for _, k := range []int{1, 10, 50} {
			want := bm.Search(q, k, nil)
			before := postgres.ListApprox()
			got, err := s.ChunkTermSearch(ctx, store.TermQuery{KBID: kb.ID, Terms: q, K: k, Filter: store.ChunkFilter{IncludeStale: true}})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) {
				t.Fatalf("budget 16: %v k=%d: %d hits, want %d", q, k, len(got), len(want))
			}
			stopped := postgres.ListApprox() > before
			if stopped {
				approx++
			}
			for i, h := range got {
				if sc, ok := all[h.ChunkID]; !ok || math.Abs(sc-h.Score) > 1e-9 {
					t.Fatalf("budget 16: %v k=%d: hit %d = chunk %d (%.12f), which the index scores %.12f", q, k, i, h.ChunkID, h.Score, sc)
				}
				if i > 0 && h.Score > got[i-1].Score {
					t.Fatalf("budget 16: %v k=%d: hit %d scores more than the one before", q, k, i)
				}
				if !stopped && (h.ChunkID != ids[want[i].Doc] || math.Abs(h.Score-want[i].Score) > 1e-9) {
					t.Fatalf("budget 16: %v k=%d, not stopped early: hit %d = chunk %d, want chunk %d", q, k, i, h.ChunkID, ids[want[i].Doc])
				}
			}
		}
	}
	if approx == 0 {
		t.Error("budget 16: no search returned the best found")
	}
}

// indexOf is the in-memory BM25 index of a knowledge base's chunks, and
// each document's chunk id.
func indexOf(t *testing.T, s *postgres.Store, kbID int64) (*index.BM25, []int64) {
	t.Helper()
	bm := index.NewBM25(1.2, 0.75)
	var ids []int64
	if err := s.ChunkScan(context.Background(), kbID, func(c store.IndexedChunk) error {
		bm.Add(len(ids), strings.Fields(c.Terms))
		ids = append(ids, c.ID)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return bm, ids
}

// TestTermSearchDropsHiddenSources: the chunks of a source being written
// (no content hash yet) are never found, those of a stale source only when
// asked for, whether the search drops them itself (a few such sources) or
// joins each chunk to its source (a source prefix, or more than it drops
// itself).
func TestTermSearchDropsHiddenSources(t *testing.T) {
	s := openPG(t, "QUARRY_TEST_POSTGRES_URL", 0)
	ctx := context.Background()
	kb, err := s.KBCreate(ctx, store.KBCreateParams{Name: "hidden", Embedder: "hash", Dimension: 4})
	if err != nil {
		t.Fatal(err)
	}
	urls := []string{"https://h.test/live", "https://h.test/stale", "https://h.test/pending", "https://other.test/live"}
	var puts []store.SourcePut
	for i, u := range urls {
		hash := fmt.Sprint(i)
		if strings.HasSuffix(u, "pending") {
			hash = "" // a long document, appended in pieces, not yet whole
		}
		puts = append(puts, store.SourcePut{
			Source: store.Source{URL: u, Title: "t", Content: "c", ContentHash: hash},
			Chunks: []store.Chunk{{ChunkIndex: 0, Text: "t", TokenCount: 3, Terms: "apple pie " + fmt.Sprint("w", i)}},
		})
	}
	if _, err := s.SourcePutBatch(ctx, kb.ID, puts); err != nil {
		t.Fatal(err)
	}
	if stale, err := s.SourceMarkFailure(ctx, kb.ID, urls[1], 1); err != nil || !stale {
		t.Fatalf("mark stale: %v %v", stale, err)
	}
	found := func(f store.ChunkFilter) []string {
		t.Helper()
		hits, err := s.ChunkTermSearch(ctx, store.TermQuery{KBID: kb.ID, Terms: []string{"apple"}, K: 10, Filter: f, K1: 1.2, B: 0.75})
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]int64, len(hits))
		for i, h := range hits {
			ids[i] = h.ChunkID
		}
		chunks, err := s.ChunksGet(ctx, ids)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range chunks {
			out = append(out, c.SourceURL)
		}
		slices.Sort(out)
		return out
	}
	check := func(when string) {
		t.Helper()
		for _, c := range []struct {
			f    store.ChunkFilter
			want []string
		}{
			{store.ChunkFilter{}, []string{urls[0], urls[3]}},
			{store.ChunkFilter{IncludeStale: true}, []string{urls[0], urls[1], urls[3]}},
			{store.ChunkFilter{SourcePrefix: "https://h.test/"}, []string{urls[0]}},
			{store.ChunkFilter{SourcePrefix: "https://h.test/", IncludeStale: true}, []string{urls[0], urls[1]}},
			{store.ChunkFilter{Language: "ko"}, nil},
			{store.ChunkFilter{Language: "ko", SourcePrefix: "https://h.test/"}, nil},
			{store.ChunkFilter{SourcePrefix: "https://none.test/"}, nil},
			{store.ChunkFilter{SourcePrefix: "https://h.test/s", IncludeStale: true}, []string{urls[1]}},
		} {
			if got := found(c.f); !slices.Equal(got, c.want) {
				t.Errorf("%s, filter %+v: found %v, want %v", when, c.f, got, c.want)
			}
		}
	}
	check("two hidden sources")
	// With term lists ("apple" has one): the chunks they name are read
	// through the same filters.
	restore := postgres.SetListLen(1)
	defer postgres.SetListWorth(0)()
	if err := s.BuildTermLists(ctx, kb.ID); err != nil {
		t.Fatal(err)
	}
	check("two hidden sources, term lists")
	restore()
	// More stale sources than a search drops itself: it joins instead.
	if _, err := s.SQL.ExecContext(ctx, `INSERT INTO sources (kb_id, url, doc_id, title, content, language, crawled_at, is_stale, metadata, content_hash)
		SELECT $1, 'https://h.test/gone/' || g, 'd' || g, 't', 'c', 'en', now(), TRUE, '{}', 'h' || g FROM generate_series(1, 10001) g`, kb.ID); err != nil {
		t.Fatal(err)
	}
	check("10,003 hidden sources")
}

// TestTermListEntriesPacked: a term list's entries read back as written,
// and migration 0019's SQL packs lists written before it (two arrays) as
// Quarry packs them; a length that is not whole entries is an error.
func TestTermListEntriesPacked(t *testing.T) {
	s := openPG(t, "QUARRY_TEST_POSTGRES_URL", 0)
	ids := []int64{7, 1 << 40, 3, 9_000_000_001}
	impacts := []float32{2.2, 1.9999999, 0.5, float32(math.SmallestNonzeroFloat32)}
	packed := postgres.PackEntries(ids, impacts)
	gotIDs, gotImpacts, err := postgres.UnpackEntries(packed)
	if err != nil || !slices.Equal(gotIDs, ids) || !slices.Equal(gotImpacts, impacts) {
		t.Fatalf("read back %v %v (%v), want %v %v", gotIDs, gotImpacts, err, ids, impacts)
	}
	var bySQL []byte
	err = s.SQL.QueryRowContext(context.Background(), `SELECT string_agg(int8send(u.c) || float4send(u.i), ''::bytea ORDER BY u.o)
		FROM unnest($1::bigint[], $2::real[]) WITH ORDINALITY AS u(c, i, o)`, ids, impacts).Scan(&bySQL)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(bySQL, packed) {
		t.Fatalf("migration packs %x, Quarry %x", bySQL, packed)
	}
	if _, _, err := postgres.UnpackEntries(packed[:13]); err == nil {
		t.Fatal("13 bytes of entries read without an error")
	}
}
