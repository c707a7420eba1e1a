package sqlite

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlstore"
)

var _ store.TermSearcher = (*Store)(nil)

// matchExpr is an FTS5 query for a knowledge base's chunks holding any of
// the terms: its token, and the terms each quoted.
func matchExpr(kbID int64, terms []string) string {
	var b strings.Builder
	b.WriteString("_kb" + strconv.FormatInt(kbID, 10) + " AND (")
	for i, t := range sqlstore.UniqueTerms(terms) {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteString(`"` + strings.ReplaceAll(t, `"`, `""`) + `"`)
	}
	b.WriteString(")")
	return b.String()
}

// candidates is how many chunks FTS5's own ranking hands on to be scored
// exactly, at least: its bm25 takes its statistics over the whole
// database and gives no weight to a term in half the rows or more (in a
// small knowledge base, most of its words), so it only preselects.
const candidates = 400

// ChunkTermSearch ranks a knowledge base's chunks by Okapi BM25 with
// Lucene's idf over that knowledge base's statistics, as the in-memory
// index does: FTS5 finds the chunks holding a term and preselects the
// best of them; their stored terms are then scored exactly.
func (s *Store) ChunkTermSearch(ctx context.Context, q store.TermQuery) ([]store.VectorHit, error) {
	terms, n, total, ok, err := s.TermStats(ctx, &q)
	if !ok || err != nil {
		return nil, err
	}
	under, err := s.sourcesUnder(ctx, q.KBID, q.Filter.SourcePrefix)
	if err != nil || under != nil && len(under) == 0 {
		return nil, err // no source under the prefix
	}
	var held []string
	dfs := map[string]int64{}
	for _, t := range terms {
		var df int64
		if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM chunk_fts WHERE chunk_fts MATCH ?`, matchExpr(q.KBID, []string{t})).Scan(&df); err != nil {
			return nil, fmt.Errorf("chunk term search: %w", err)
		}
		if df > 0 {
			held, dfs[t] = append(held, t), df
		}
	}
	held = index.Rarest(held, func(t string) int64 { return dfs[t] })
	if len(held) == 0 {
		return nil, nil
	}
	idf := make([]float64, len(held))
	for i, t := range held {
		idf[i] = index.IDF(n, dfs[t])
	}
	scorer := sqlstore.NewTermScorer(q, float64(total)/float64(n), held, idf)
	where, args := sqlstore.FilterSQL(q.Filter)
	if in, few, err := s.fewUnder(ctx, under); err != nil {
		return nil, fmt.Errorf("chunk term search: %w", err)
	} else if few {
		// The few chunks under the prefix, each scored: FTS5 would rank
		// the whole database's chunks holding a term first.
		return s.scoreAll(ctx, `SELECT c.id, c.terms FROM chunks c JOIN sources s ON s.id = c.source_id WHERE +c.kb_id = ?`+where+in, append([]any{q.KBID}, args...), scorer, q.K)
	}
	query := `SELECT c.id, c.terms FROM chunk_fts
		JOIN chunks c ON c.id = chunk_fts.rowid JOIN sources s ON s.id = c.source_id
		WHERE chunk_fts MATCH ? AND c.kb_id = ?` + where + ` ORDER BY bm25(chunk_fts) LIMIT ?`
	args = append(append([]any{matchExpr(q.KBID, held), q.KBID}, args...), max(candidates, 4*q.K))
	return s.scoreAll(ctx, query, args, scorer, q.K)
}

// maxUnder is the most sources a source prefix may have for a search to
// look them up first, and maxUnderChunks the most chunks they may hold
// for a vector search to compare them all.
const (
	maxUnder       = 4096
	maxUnderChunks = 8192
)

// sourcesUnder is SourcesUnder, at most maxUnder, and nil without a
// prefix. A prefix no source had was searched like any other: at 100,171
// generated chunks, a one-shot hybrid search with one took 1.0-1.3 s,
// against 0.8-0.9 s without a filter.
func (s *Store) sourcesUnder(ctx context.Context, kbID int64, prefix string) ([]int64, error) {
	if prefix == "" {
		return nil, nil
	}
	return s.SourcesUnder(ctx, kbID, prefix, maxUnder)
}

// fewUnder returns, for the sources under a prefix (sourcesUnder), the
// condition that keeps a query over chunks c to them, and whether they
// hold maxUnderChunks chunks or fewer. The condition is to follow a
// "+c.kb_id = ?" (the unary plus keeps SQLite from reading the knowledge
// base's every chunk through its index of chunks by knowledge base).
func (s *Store) fewUnder(ctx context.Context, under []int64) (string, bool, error) {
	if len(under) == 0 {
		return "", false, nil
	}
	var b strings.Builder
	for i, id := range under {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatInt(id, 10))
	}
	in := ` AND c.source_id IN (` + b.String() + `)`
	var chunks int
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM chunks c WHERE 1`+in+` LIMIT ?)`, maxUnderChunks+1).Scan(&chunks); err != nil {
		return "", false, err
	}
	return in, chunks <= maxUnderChunks, nil
}

// scoreAll scores every chunk query selects (id, stored terms) and
// returns the k best that hold a term, best first, ties by id.
func (s *Store) scoreAll(ctx context.Context, query string, args []any, scorer *sqlstore.TermScorer, k int) ([]store.VectorHit, error) {
	rows, err := s.SQL.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("chunk term search: %w", err)
	}
	defer rows.Close()
	var out []store.VectorHit
	for rows.Next() {
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, fmt.Errorf("chunk term search: %w", err)
		}
		if score := scorer.Score(text); score > 0 {
			out = append(out, store.VectorHit{ChunkID: id, Score: score})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunk term search: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ChunkID < out[j].ChunkID
	})
	return out[:min(len(out), k)], nil
}

// rerank is how many candidates per result the code scan hands on to be
// compared exactly: a knowledge base of up to rerank×K chunks is compared
// exactly whole.
const rerank = 4

// ChunkNearest finds the chunks nearest a query vector: the codes of the
// knowledge base's chunks (store.Code) are scanned for the rerank×K
// nearest, whose embeddings are then compared exactly under the filter.
// When the filter leaves fewer than K of them, the embeddings it keeps are
// all compared.
func (s *Store) ChunkNearest(ctx context.Context, q store.VectorQuery) ([]store.VectorHit, error) {
	if q.K < 1 || len(q.Vector) == 0 {
		return nil, nil
	}
	where, args := sqlstore.FilterSQL(q.Filter)
	args = append([]any{q.KBID}, args...)
	kept := `SELECT c.id, c.embedding FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.kb_id = ?` + where
	under, err := s.sourcesUnder(ctx, q.KBID, q.Filter.SourcePrefix)
	switch {
	case err != nil:
		return nil, err
	case under != nil && len(under) == 0:
		return nil, nil // no source under the prefix
	}
	if in, few, err := s.fewUnder(ctx, under); err != nil {
		return nil, fmt.Errorf("chunk nearest: %w", err)
	} else if few {
		// The few chunks under the prefix, compared whole: the codes of
		// the whole knowledge base would be scanned for candidates the
		// filter mostly drops.
		return s.NearestExact(ctx, q, `SELECT c.id, c.embedding FROM chunks c JOIN sources s ON s.id = c.source_id WHERE +c.kb_id = ?`+where+in, args...)
	}
	limit := rerank * q.K
	var n int
	if err := s.SQL.QueryRowContext(ctx, `SELECT chunks FROM kb_term_stats WHERE kb_id = ?`, q.KBID).Scan(&n); err == nil && n <= limit {
		return s.NearestExact(ctx, q, kept, args...) // small enough to compare whole
	}
	top := index.NewTop(limit)
	rows, err := s.SQL.QueryContext(ctx, `SELECT chunk_id, code FROM chunk_codes WHERE kb_id = ?`, q.KBID)
	if err != nil {
		return nil, fmt.Errorf("chunk nearest: %w", err)
	}
	for rows.Next() {
		var id int64
		var code []byte
		if err := rows.Scan(&id, &code); err != nil {
			rows.Close()
			return nil, fmt.Errorf("chunk nearest: %w", err)
		}
		dot, ok := store.CodeDot(q.Vector, code)
		if !ok {
			rows.Close()
			return nil, fmt.Errorf("chunk nearest: chunk %d has a code of %d bytes, not of a %d-dimension vector", id, len(code), len(q.Vector))
		}
		top.Push(index.Hit{Doc: int(id), Score: dot})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunk nearest: %w", err)
	}
	cands := top.Sorted()
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = strconv.Itoa(c.Doc)
	}
	hits, err := s.NearestExact(ctx, q, kept+` AND c.id IN (`+strings.Join(ids, ",")+`)`, args...)
	if err != nil || len(hits) >= q.K {
		return hits, err
	}
	// The filter keeps few of the nearest: compare all it keeps.
	return s.NearestExact(ctx, q, kept, args...)
}
