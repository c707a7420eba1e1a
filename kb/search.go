package kb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/store"
)

// Search modes.
const (
	ModeBM25   = "bm25"
	ModeVector = "vector"
	ModeHybrid = "hybrid"
)

// Fusion methods for hybrid search.
const (
	FusionRRF      = "rrf"
	FusionWeighted = "weighted"
)

// MaxQueryChars bounds a query (1–10,000 characters).
const MaxQueryChars = 10000

// Query is a search request.
type Query struct {
	Text string
	K    int
	Mode string
	// Language keeps only chunks in this language ("" = any).
	Language string
	// IncludeStale keeps chunks of stale sources (excluded by default).
	IncludeStale bool
	// Source keeps only chunks whose source URL starts with this prefix.
	Source string
	// Fusion is rrf (default) or weighted; the weights scale each list.
	Fusion       string
	BM25Weight   float64
	VectorWeight float64
	// RRFK is the reciprocal-rank constant (default 60).
	RRFK float64
}

// Result is one retrieved chunk.
type Result struct {
	ChunkID    int64   `json:"chunk_id"`
	SourceURL  string  `json:"source_url"`
	Title      string  `json:"title"`
	DocID      string  `json:"doc_id,omitempty"`
	ChunkIndex int     `json:"chunk_index"`
	Language   string  `json:"language"`
	Score      float64 `json:"score"`
	Text       string  `json:"text"`
}

// MaxWeight bounds a fusion weight: a larger one only overflows the
// scores (1e308 × a score is infinite).
const MaxWeight = 1000

// Validate checks a query and fills defaults.
func (q *Query) Validate() error {
	q.Text = strings.TrimSpace(q.Text)
	n := utf8.RuneCountInString(q.Text)
	switch {
	case n == 0:
		return &store.ValidationError{Field: "query", Rule: "must not be empty"}
	case n > MaxQueryChars:
		return &store.ValidationError{Field: "query", Rule: fmt.Sprintf("must be at most %d characters, got %d", MaxQueryChars, n)}
	case q.K < 1 || q.K > 1000:
		return &store.ValidationError{Field: "k", Rule: fmt.Sprintf("must be between 1 and 1000, got %d", q.K)}
	}
	if q.Mode == "" {
		q.Mode = ModeHybrid
	}
	switch q.Mode {
	case ModeBM25, ModeVector, ModeHybrid:
	default:
		return &store.ValidationError{Field: "mode", Rule: fmt.Sprintf("must be bm25, vector or hybrid, got %q", q.Mode)}
	}
	if q.Fusion != "" && q.Fusion != FusionRRF && q.Fusion != FusionWeighted {
		return &store.ValidationError{Field: "fusion", Rule: fmt.Sprintf("must be rrf or weighted, got %q", q.Fusion)}
	}
	for _, w := range []struct {
		field string
		v     float64
	}{{"bm25_weight", q.BM25Weight}, {"vector_weight", q.VectorWeight}} {
		if math.IsNaN(w.v) || w.v < 0 || w.v > MaxWeight {
			return &store.ValidationError{Field: w.field, Rule: fmt.Sprintf("must be a number between 0 and %g, got %g", float64(MaxWeight), w.v)}
		}
	}
	if q.RRFK <= 0 {
		q.RRFK = 60
	}
	return nil
}

// defaultFusion fills the fusion method and weights a query left unset.
// With a neural embedder it is reciprocal-rank fusion with equal weights.
// The offline hashing embedder is a lexical signal that mostly repeats
// BM25's: equal-weight RRF lets its noise demote BM25's best hits (SciFact
// train nDCG@10 0.643 vs BM25's 0.702), so there the default is a weighted
// sum of min-max normalised scores with the vector list at 0.2 (0.706).
func defaultFusion(q *Query, embedder string) {
	offline := strings.HasPrefix(embedder, "hash-")
	if q.Fusion == "" {
		q.Fusion = FusionRRF
		if offline {
			q.Fusion = FusionWeighted
		}
	}
	// A zero weight means unset; use --mode to drop a list entirely.
	if q.BM25Weight == 0 {
		q.BM25Weight = 1
	}
	if q.VectorWeight == 0 {
		q.VectorWeight = 1
		if offline && q.Fusion == FusionWeighted {
			q.VectorWeight = 0.2
		}
	}
}

// memIndex is a knowledge base loaded for search. Searches hold mu for
// reading; a catch-up after a write (a crawl batch, an upload) holds it
// for writing while it applies what changed.
type memIndex struct {
	version atomic.Int64
	mu      sync.RWMutex
	// upd serialises catch-ups; maxID is the last chunk id read.
	upd    sync.Mutex
	maxID  int64
	native bool
	chunks []store.IndexedChunk // Embedding cleared; vectors live in vec
	bm25   *index.BM25
	vec    *index.Vectors
	// pos maps a live chunk id to its position, for native vector hits;
	// dead marks the positions of chunks deleted since the load.
	pos  map[int64]int
	dead map[int]bool
}

func (s *Service) load(ctx context.Context, kb *store.KB) (*memIndex, error) {
	v, err := s.store.KBVersion(ctx, kb.ID)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	m, ok := s.indexes[kb.ID]
	s.mu.Unlock()
	if ok && m.version.Load() >= v {
		return m, nil
	}
	// No lock is held while loading: searches on other knowledge bases go
	// on, and concurrent loads of this one at this version are one load,
	// which no single caller's cancellation cuts short. A loaded index
	// catches up with what was written since instead of loading again.
	res, err, _ := s.loads.Do(fmt.Sprintf("%d@%d", kb.ID, v), func() (any, error) {
		if ok {
			return s.catchUp(context.WithoutCancel(ctx), kb, m, v)
		}
		return s.loadIndex(context.WithoutCancel(ctx), kb, v)
	})
	if err != nil {
		return nil, err
	}
	return res.(*memIndex), nil
}

func (s *Service) loadIndex(ctx context.Context, kb *store.KB, v int64) (*memIndex, error) {
	m := &memIndex{bm25: index.NewBM25(BM25K1, BM25B), vec: index.NewVectors(kb.Dimension), pos: map[int64]int{}, dead: map[int]bool{}}
	m.version.Store(v)
	// Where the store searches vectors itself (pgvector), none are kept
	// in memory.
	vs, ok := s.store.(store.VectorSearcher)
	m.native = ok && s.nativeVectors(vs)
	if err := s.scanAfter(ctx, kb.ID, 0, m.native, m.add); err != nil {
		return nil, fmt.Errorf("load index for %q: %w", kb.Name, err)
	}
	s.mu.Lock()
	if cur, ok := s.indexes[kb.ID]; !ok || cur.version.Load() < v {
		s.indexes[kb.ID] = m
	}
	s.mu.Unlock()
	s.logger.Debug("kb index loaded", "kb", kb.Name, "chunks", len(m.chunks), "version", v)
	return m, nil
}

// scanAfter scans a knowledge base's chunks whose id is over afterID,
// without their embeddings when the store searches vectors itself
// (native) and can leave them out.
func (s *Service) scanAfter(ctx context.Context, kbID, afterID int64, native bool, fn func(store.IndexedChunk) error) error {
	if ts, ok := s.store.(store.TextScanner); ok && native {
		return ts.ChunkScanTextAfter(ctx, kbID, afterID, fn)
	}
	if afterID == 0 {
		return s.store.ChunkScan(ctx, kbID, fn)
	}
	return s.store.ChunkScanAfter(ctx, kbID, afterID, fn)
}

// add appends a chunk to the index (the caller holds mu for writing, or
// owns m alone).
func (m *memIndex) add(c store.IndexedChunk) error {
	id := len(m.chunks)
	m.bm25.Add(id, strings.Fields(c.Terms))
	if !m.native {
		if err := m.vec.Add(c.Embedding); err != nil {
			return fmt.Errorf("chunk %d: %w", c.ID, err)
		}
	}
	c.Embedding, c.Terms = nil, ""
	m.pos[c.ID] = id
	m.chunks = append(m.chunks, c)
	m.maxID = max(m.maxID, c.ID)
	return nil
}

// maxDeadShare is the share of deleted chunks past which a catch-up
// loads the index again (deleted chunks still weigh in BM25's statistics).
const maxDeadShare = 0.25

// catchUp brings a loaded index to version v: the chunks written since it
// was read are added, deleted ones are marked dead and staleness is
// refreshed, so a crawl batch costs what it wrote, not a reload.
func (s *Service) catchUp(ctx context.Context, kb *store.KB, m *memIndex, v int64) (*memIndex, error) {
	m.upd.Lock()
	defer m.upd.Unlock()
	if m.version.Load() >= v {
		return m, nil
	}
	states, err := s.store.ChunkStates(ctx, kb.ID)
	if err != nil {
		return nil, err
	}
	// What to add is every live chunk the index lacks: those written
	// since it was read, and those of a long document written in batches
	// before, which became searchable only with its last batch.
	after := m.maxID
	for _, c := range states {
		if _, ok := m.pos[c.ID]; !ok && c.ID <= after {
			after = c.ID - 1
		}
	}
	var fresh []store.IndexedChunk
	if err := s.scanAfter(ctx, kb.ID, after, m.native, func(c store.IndexedChunk) error {
		if _, ok := m.pos[c.ID]; !ok {
			fresh = append(fresh, c)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	live := make(map[int64]bool, len(states))
	for _, c := range states {
		live[c.ID] = true
	}
	// pos and dead change only under upd, which is held: reading them
	// needs no more.
	gone := 0
	for id := range m.pos {
		if !live[id] {
			gone++
		}
	}
	if float64(len(m.dead)+gone) > maxDeadShare*float64(len(m.chunks)+len(fresh)) {
		return s.loadIndex(ctx, kb, v)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, i := range m.pos {
		if !live[id] {
			m.dead[i] = true
			delete(m.pos, id)
		}
	}
	for _, c := range states {
		if i, ok := m.pos[c.ID]; ok {
			m.chunks[i].IsStale = c.IsStale
		}
	}
	for _, c := range fresh {
		if err := m.add(c); err != nil {
			return nil, err
		}
	}
	m.version.Store(v)
	s.logger.Debug("kb index caught up", "kb", kb.Name, "added", len(fresh), "deleted", gone, "version", v)
	return m, nil
}

// BM25 parameters, tuned on SciFact's train split.
const (
	BM25K1 = 1.2
	BM25B  = 0.75
)

// Search runs a query against a knowledge base. emb may be nil for bm25.
// What SearchNoted would note is logged, as a warning: its caller (ask, a
// research's search) has no one to tell.
func (s *Service) Search(ctx context.Context, kbName string, emb embed.Embedder, q Query) ([]Result, error) {
	f, err := s.SearchNoted(ctx, kbName, emb, q)
	for _, n := range f.Notes {
		s.logger.Warn("kb search: "+n, "kb", kbName)
	}
	return f.Results, err
}

// Found is a search's results and what its caller should know of how
// they were found.
type Found struct {
	Results []Result
	// Notes: a hybrid search of a knowledge base whose vector index is
	// not built yet (its first ingest's) ranks by terms alone when
	// ranking all its chunks by vector takes too long
	// (store.ErrVectorIndexBuilding), and says so.
	Notes []string
}

// AsAsked returns the results when they were ranked as the query asked,
// and store.ErrVectorIndexBuilding when a note says otherwise: for a
// measurement, whose figures would be another ranking's under the mode's
// name.
func (f Found) AsAsked() ([]Result, error) {
	if len(f.Notes) > 0 {
		return nil, fmt.Errorf("%s: %w", f.Notes[0], store.ErrVectorIndexBuilding)
	}
	return f.Results, nil
}

// TermsAlone is the note of a hybrid search ranked by terms alone.
const TermsAlone = "ranked by terms alone: the knowledge base has no vector index yet (it is built when its first ingest ends), and ranking all its chunks by vector took longer than a search waits"

// SearchNoted is Search with its notes.
func (s *Service) SearchNoted(ctx context.Context, kbName string, emb embed.Embedder, q Query) (Found, error) {
	if err := q.Validate(); err != nil {
		return Found{}, err
	}
	kb, err := s.Get(ctx, kbName)
	if err != nil {
		return Found{}, err
	}
	if q.Mode != ModeBM25 {
		if err := checkEmbedder(kb, emb); err != nil {
			return Found{}, err
		}
	}
	defaultFusion(&q, kb.Embedder)
	if ts, ok := s.store.(store.TermSearcher); ok && s.inStore.Load() {
		return s.searchInStore(ctx, ts, kb, emb, q)
	}
	m, err := s.load(ctx, kb)
	if err != nil {
		return Found{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	keep := func(i int) bool {
		c := &m.chunks[i]
		return !m.dead[i] && (q.IncludeStale || !c.IsStale) &&
			(q.Language == "" || c.Language == q.Language) &&
			(q.Source == "" || strings.HasPrefix(c.SourceURL, q.Source))
	}
	depth := listDepth(q)
	var bm, vec []index.Hit
	var notes []string
	if q.Mode != ModeVector {
		bm = m.bm25.Search(analyze.Terms(q.Text), depth, keep)
	}
	if q.Mode != ModeBM25 {
		qv, err := embedQuery(ctx, emb, q.Text)
		if err != nil {
			return Found{}, err
		}
		vec, err = s.vectorSearch(ctx, kb, m, qv, depth, q.Mode != ModeVector, keep)
		if err != nil {
			if notes = s.termsAlone(kb, q, err); notes == nil {
				return Found{}, err
			}
		}
	}
	hits := combine(bm, vec, q)
	out := make([]Result, len(hits))
	for i, h := range hits {
		c := m.chunks[h.Doc]
		out[i] = Result{ChunkID: c.ID, SourceURL: c.SourceURL, Title: c.SourceTitle, DocID: c.DocID, ChunkIndex: c.ChunkIndex, Language: c.Language, Score: h.Score, Text: c.Text}
	}
	return Found{Results: out, Notes: notes}, nil
}

// termsAlone is the note of a hybrid search whose vector side failed
// with store.ErrVectorIndexBuilding, which it goes on without (logged at
// debug level: the note tells the caller); nil for any other failure, or
// another mode, which fails the search.
func (s *Service) termsAlone(kb *store.KB, q Query, err error) []string {
	if q.Mode != ModeHybrid || !errors.Is(err, store.ErrVectorIndexBuilding) {
		return nil
	}
	s.logger.Debug("kb search: "+TermsAlone, "kb", kb.Name, "err", err)
	return []string{TermsAlone}
}

// searchInStore ranks in the store: BM25 through its term index, vectors
// by a scan of the embeddings the filters keep (or its native index),
// fused as in memory. Hits are numbered by chunk id.
func (s *Service) searchInStore(ctx context.Context, ts store.TermSearcher, kb *store.KB, emb embed.Embedder, q Query) (Found, error) {
	f := store.ChunkFilter{Language: q.Language, SourcePrefix: q.Source, IncludeStale: q.IncludeStale}
	depth := listDepth(q)
	var bm, vec []index.Hit
	terms := func() error {
		hits, err := ts.ChunkTermSearch(ctx, store.TermQuery{KBID: kb.ID, Terms: analyze.Terms(q.Text), K: depth, Filter: f, K1: BM25K1, B: BM25B})
		for _, h := range hits {
			bm = append(bm, index.Hit{Doc: int(h.ChunkID), Score: h.Score})
		}
		return err
	}
	vectors := func() error {
		qv, err := embedQuery(ctx, emb, q.Text)
		if err != nil {
			return err
		}
		embed.Normalize(qv)
		hits, err := ts.ChunkNearest(ctx, store.VectorQuery{KBID: kb.ID, Dimension: kb.Dimension, Vector: qv, K: depth, Filter: f, Fused: q.Mode != ModeVector})
		for _, h := range hits {
			vec = append(vec, index.Hit{Doc: int(h.ChunkID), Score: h.Score})
		}
		return err
	}
	var err error
	var notes []string
	switch q.Mode {
	case ModeBM25:
		err = terms()
	case ModeVector:
		err = vectors()
	default:
		// Both lists at once: each is a query the database works on
		// while the other waits for its rows.
		done := make(chan error, 1)
		go func() { done <- safe.Call(vectors) }()
		terr, verr := safe.Call(terms), <-done
		if verr != nil && terr == nil {
			if notes = s.termsAlone(kb, q, verr); notes != nil {
				vec, verr = nil, nil
			}
		}
		err = errors.Join(terr, verr)
	}
	if err != nil {
		return Found{}, err
	}
	hits := combine(bm, vec, q)
	ids := make([]int64, len(hits))
	for i, h := range hits {
		ids[i] = int64(h.Doc)
	}
	chunks, err := ts.ChunksGet(ctx, ids)
	if err != nil {
		return Found{}, err
	}
	byID := make(map[int64]store.IndexedChunk, len(chunks))
	for _, c := range chunks {
		byID[c.ID] = c
	}
	out := make([]Result, 0, len(hits))
	for _, h := range hits {
		c, ok := byID[int64(h.Doc)]
		if !ok {
			continue // removed since it was ranked
		}
		out = append(out, Result{ChunkID: c.ID, SourceURL: c.SourceURL, Title: c.SourceTitle, DocID: c.DocID, ChunkIndex: c.ChunkIndex, Language: c.Language, Score: h.Score, Text: c.Text})
	}
	return Found{Results: out, Notes: notes}, nil
}

// listDepth is how many hits each ranked list holds: at least 100 for a
// fusion (a chunk ranked low in both lists can still make the top K) and
// for vectors (the approximate index searches as wide as it is asked:
// fewer would lower its recall), the K asked for when BM25, which is
// exact, is the answer (its pruning then stops at the K-th best score).
func listDepth(q Query) int {
	if q.Mode == ModeBM25 {
		return q.K
	}
	return max(q.K, 100)
}

// vectorSearch uses the store's native index when it has one (pgvector),
// else the in-process index; fused says the list is a hybrid search's.
func (s *Service) vectorSearch(ctx context.Context, kb *store.KB, m *memIndex, q []float32, k int, fused bool, keep func(int) bool) ([]index.Hit, error) {
	embed.Normalize(q)
	if vs, ok := s.store.(store.VectorSearcher); ok && s.nativeVectors(vs) {
		hits, err := vs.ChunkVectorSearch(ctx, store.VectorQuery{KBID: kb.ID, Dimension: kb.Dimension, Vector: q, K: k * 2, Filter: store.ChunkFilter{IncludeStale: true}, Fused: fused})
		if err != nil {
			return nil, err
		}
		var out []index.Hit
		for _, h := range hits {
			if i, ok := m.pos[h.ChunkID]; ok && keep(i) {
				out = append(out, index.Hit{Doc: i, Score: h.Score})
			}
		}
		return out[:min(len(out), k)], nil
	}
	return m.vec.Search(q, k, keep)
}

func (s *Service) nativeVectors(vs store.VectorSearcher) bool {
	if p, ok := vs.(interface{ HasPGVector() bool }); ok {
		return p.HasPGVector()
	}
	return true
}

// embedQuery is the query text's vector.
func embedQuery(ctx context.Context, emb embed.Embedder, text string) ([]float32, error) {
	vs, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, errors.New("embed query: no vector returned")
	}
	return vs[0], nil
}

// combine is the query's mode's list, fused for hybrid, cut to K.
func combine(bm, vec []index.Hit, q Query) []index.Hit {
	var hits []index.Hit
	switch q.Mode {
	case ModeBM25:
		hits = bm
	case ModeVector:
		hits = vec
	default:
		hits = fuse(bm, vec, q)
	}
	return hits[:min(len(hits), q.K)]
}

// fuse merges ranked lists by reciprocal rank (default) or by weighted,
// min-max normalised scores.
func fuse(bm, vec []index.Hit, q Query) []index.Hit {
	scores := map[int]float64{}
	add := func(list []index.Hit, w float64) {
		if len(list) == 0 || w == 0 {
			return
		}
		hi, lo := list[0].Score, list[len(list)-1].Score
		for r, h := range list {
			switch q.Fusion {
			case FusionWeighted:
				norm := 1.0
				if hi > lo {
					norm = (h.Score - lo) / (hi - lo)
				}
				scores[h.Doc] += w * norm
			default:
				scores[h.Doc] += w / (q.RRFK + float64(r+1))
			}
		}
	}
	add(bm, q.BM25Weight)
	add(vec, q.VectorWeight)
	out := make([]index.Hit, 0, len(scores))
	for d, s := range scores {
		out = append(out, index.Hit{Doc: d, Score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].Doc < out[j].Doc
	})
	return out
}

// Doc names a result's document: its corpus id, or its URL for a
// document without one.
func (r Result) Doc() string {
	if r.DocID != "" {
		return r.DocID
	}
	return r.SourceURL
}

// DocRanking turns ranked chunks into ranked documents: a document's score
// is its best chunk's, so its first appearance fixes its rank.
func DocRanking(res []Result) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range res {
		if id := r.Doc(); !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
