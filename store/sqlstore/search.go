package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store"
)

// FilterSQL is the WHERE clause (after a first condition, with '?'
// placeholders) of the chunks f keeps, over chunks c and their sources s;
// incomplete documents (no content hash yet) are never kept.
func FilterSQL(f store.ChunkFilter) (string, []any) {
	where := ` AND s.content_hash <> ''`
	if !f.IncludeStale {
		where += ` AND NOT s.is_stale`
	}
	own, args := ChunkFilterSQL(f)
	where += own
	if f.SourcePrefix != "" {
		where += ` AND substr(s.url, 1, ?) = ?`
		args = append(args, utf8.RuneCountInString(f.SourcePrefix), f.SourcePrefix) // substr counts characters
	}
	return where, args
}

// PrefixUpper returns the least string greater, byte by byte, than every
// string that starts with prefix: prefix with its last character replaced
// by the next one (UTF-8 keeps code point order and no encoding is the
// prefix of another), past any last characters that have no next one;
// false when none do.
func PrefixUpper(prefix string) (string, bool) {
	r := []rune(prefix)
	for i := len(r) - 1; i >= 0; i-- {
		next := r[i] + 1
		if next == 0xD800 {
			next = 0xE000 // past the surrogates, which UTF-8 cannot hold
		}
		if next <= unicode.MaxRune && utf8.ValidRune(next) {
			return string(append(r[:i:i], next)), true
		}
	}
	return "", false
}

// SourcesUnder returns the ids of the knowledge base's sources whose URL
// starts with prefix (an empty slice when none does), or nil when more
// than most do. The URLs are compared byte by byte through the index of
// sources by URL (Dialect.AtLeast and Below), so a search filtered to a
// prefix can find its sources before it reads any chunk.
func (s *DB) SourcesUnder(ctx context.Context, kbID int64, prefix string, most int) ([]int64, error) {
	query := `SELECT id FROM sources WHERE kb_id = ? AND url ` + s.dialect.AtLeast + ` ? AND substr(url, 1, ?) = ?`
	args := []any{kbID, prefix, utf8.RuneCountInString(prefix), prefix}
	if upper, ok := PrefixUpper(prefix); ok {
		query += ` AND url ` + s.dialect.Below + ` ?`
		args = append(args, upper)
	}
	ids, err := ids(ctx, s.SQL, s.q(query+` LIMIT ?`), append(args, most+1)...)
	if err != nil {
		return nil, fmt.Errorf("sources under %q: %w", prefix, err)
	}
	if len(ids) > most {
		return nil, nil
	}
	return ids, nil
}

// ids runs query, which selects one integer column, and returns its
// values in order (an empty slice, not nil, when there are none).
func ids(ctx context.Context, db *sql.DB, query string, args ...any) ([]int64, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := []int64{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ChunkFilterSQL is the part of FilterSQL over the chunks' own columns
// (their language), for a query that leaves out the chunks of hidden
// sources by other means.
func ChunkFilterSQL(f store.ChunkFilter) (string, []any) {
	if f.Language == "" {
		return "", nil
	}
	return ` AND c.language = ?`, []any{f.Language}
}

// Rebind turns a query's '?' placeholders into the dialect's.
func (s *DB) Rebind(query string) string { return s.q(query) }

// ChunksGet returns chunks by id, with their sources' fields, in the
// order asked, without their embeddings and terms; missing ones are left
// out.
func (s *DB) ChunksGet(ctx context.Context, ids []int64) ([]store.IndexedChunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.SQL.QueryContext(ctx, s.q(`SELECT c.id, c.source_id, c.kb_id, c.chunk_index, c.text, c.token_count, c.language, s.url, s.title, s.doc_id, s.is_stale
		FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.id IN (`+marks(len(ids))+`)`), args...)
	if err != nil {
		return nil, fmt.Errorf("chunks get: %w", err)
	}
	defer rows.Close()
	byID := map[int64]store.IndexedChunk{}
	for rows.Next() {
		var c store.IndexedChunk
		if err := rows.Scan(&c.ID, &c.SourceID, &c.KBID, &c.ChunkIndex, &c.Text, &c.TokenCount, &c.Language, &c.SourceURL, &c.SourceTitle, &c.DocID, &c.IsStale); err != nil {
			return nil, fmt.Errorf("chunks get: %w", err)
		}
		byID[c.ID] = c
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunks get: %w", err)
	}
	out := make([]store.IndexedChunk, 0, len(ids))
	for _, id := range ids {
		if c, ok := byID[id]; ok {
			out = append(out, c)
		}
	}
	return out, nil
}

// TermStats prepares a term query: its terms each once, BM25's parameters
// defaulted (k1 1.2, b 0.75), and the knowledge base's chunk and term
// counts (kb_term_stats). ok is false when there is nothing to search.
func (s *DB) TermStats(ctx context.Context, q *store.TermQuery) (terms []string, n, total int64, ok bool, err error) {
	terms = UniqueTerms(q.Terms)
	if len(terms) == 0 || q.K < 1 {
		return nil, 0, 0, false, nil
	}
	if q.K1 == 0 {
		q.K1 = 1.2
	}
	if q.B == 0 {
		q.B = 0.75
	}
	err = s.SQL.QueryRowContext(ctx, s.q(`SELECT chunks, terms FROM kb_term_stats WHERE kb_id = ?`), q.KBID).Scan(&n, &total)
	if errors.Is(err, sql.ErrNoRows) || err == nil && n == 0 {
		return nil, 0, 0, false, nil
	}
	if err != nil {
		return nil, 0, 0, false, fmt.Errorf("chunk term search: %w", err)
	}
	return terms, n, total, true, nil
}

// UniqueTerms is ts without empty or repeated terms, in order.
func UniqueTerms(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// NearestExact compares the embeddings query selects (rows of chunk id
// and embedding, its placeholders already the dialect's) with q.Vector
// and returns the q.K nearest by cosine, best first.
func (s *DB) NearestExact(ctx context.Context, q store.VectorQuery, query string, args ...any) ([]store.VectorHit, error) {
	rows, err := s.SQL.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("chunk nearest: %w", err)
	}
	defer rows.Close()
	top := index.NewTop(q.K)
	for rows.Next() {
		var id int64
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return nil, fmt.Errorf("chunk nearest: %w", err)
		}
		v, err := store.DecodeVector(b)
		if err != nil {
			return nil, fmt.Errorf("chunk nearest: chunk %d: %w", id, err)
		}
		if len(v) != len(q.Vector) {
			return nil, fmt.Errorf("chunk nearest: chunk %d has %d dimensions, the query %d", id, len(v), len(q.Vector))
		}
		top.Push(index.Hit{Doc: int(id), Score: index.Dot(q.Vector, v)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunk nearest: %w", err)
	}
	hits := top.Sorted()
	out := make([]store.VectorHit, len(hits))
	for i, h := range hits {
		out[i] = store.VectorHit{ChunkID: int64(h.Doc), Score: h.Score}
	}
	return out, nil
}

// TermScorer scores a chunk's stored terms by Okapi BM25 over a query's
// terms, with the formula of the in-memory index (index.BM25), so a store
// that ranks chunks itself gives the same scores. It keeps a buffer: one
// per query, not shared.
type TermScorer struct {
	k1, b, avg float64
	idf        []float64 // of each query term held
	at         map[string]int
	tf         []int
	// first and lengths pass the stored terms that can be a query term:
	// their first byte and their length (lengths past 63 all pass).
	first   [256]bool
	lengths uint64
}

// NewTermScorer scores over terms, distinct, each with its idf, in the
// knowledge base that q searches, whose chunks have avgLen terms on
// average; the terms are summed in the order given.
func NewTermScorer(q store.TermQuery, avgLen float64, terms []string, idf []float64) *TermScorer {
	s := &TermScorer{k1: q.K1, b: q.B, avg: avgLen, idf: idf, at: make(map[string]int, len(terms)), tf: make([]int, len(terms))}
	for i, t := range terms {
		if _, ok := s.at[t]; ok || t == "" {
			continue
		}
		s.at[t] = i
		s.first[t[0]] = true
		s.lengths |= 1 << min(len(t), 63)
	}
	return s
}

// Score is the BM25 score of a chunk whose stored terms are stored (terms
// joined by single spaces, as ingest writes them). The chunk's terms are
// read once, each looked up only when its first byte and length are a
// query term's: a chunk holds some 100 terms, a query a few (at 1M
// chunks, a search through term lists scores some 2,000 chunks; a
// substring search per query term took a quarter of its client's CPU).
func (s *TermScorer) Score(stored string) float64 {
	clear(s.tf)
	length := 0
	for stored != "" {
		length++
		i := strings.IndexByte(stored, ' ')
		t := stored
		if i >= 0 {
			t, stored = stored[:i], stored[i+1:]
			if stored == "" {
				length++ // a trailing space ends an empty term
			}
		} else {
			stored = ""
		}
		if t != "" && s.first[t[0]] && s.lengths&(1<<min(len(t), 63)) != 0 {
			if j, ok := s.at[t]; ok {
				s.tf[j]++
			}
		}
	}
	norm := s.k1 * (1 - s.b + s.b*float64(length)/s.avg)
	var score float64
	for i, c := range s.tf {
		if c > 0 {
			score += s.idf[i] * float64(c) * (s.k1 + 1) / (float64(c) + norm)
		}
	}
	return score
}
