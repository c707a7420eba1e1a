package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlstore"
)

var _ store.TermSearcher = (*Store)(nil)

// tsQuery is a tsquery of any of the terms, each a quoted lexeme.
func tsQuery(terms []string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = "'" + strings.ReplaceAll(t, "'", "''") + "'"
	}
	return strings.Join(parts, " | ")
}

// ChunkTermSearch ranks a knowledge base's chunks by Okapi BM25 with
// Lucene's idf over that knowledge base, computed in SQL: the GIN index
// finds the chunks holding a term, each term's frequency is its positions
// in the chunk's tsvector and its length the chunk's term count.
func (s *Store) ChunkTermSearch(ctx context.Context, q store.TermQuery) ([]store.VectorHit, error) {
	terms, n, total, ok, err := s.TermStats(ctx, &q)
	if !ok || err != nil {
		return nil, err
	}
	// Each term's document frequency in the knowledge base, and its idf.
	rows, err := s.SQL.QueryContext(ctx, `SELECT t, (SELECT count(*) FROM chunks WHERE kb_id = $1 AND terms_tsv @@ to_tsquery('simple', quote_literal(t)))
		FROM unnest($2::text[]) AS t`, q.KBID, "{"+arrayItems(terms)+"}")
	if err != nil {
		return nil, fmt.Errorf("chunk term search: %w", err)
	}
	var held []string
	var idfs []string
	for rows.Next() {
		var t string
		var df int64
		if err := rows.Scan(&t, &df); err != nil {
			rows.Close()
			return nil, fmt.Errorf("chunk term search: %w", err)
		}
		if df > 0 {
			held = append(held, t)
			idfs = append(idfs, strconv.FormatFloat(index.IDF(n, df), 'g', -1, 64))
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunk term search: %w", err)
	}
	if len(held) == 0 {
		return nil, nil
	}
	where, fargs := sqlstore.FilterSQL(q.Filter)
	args := append([]any{q.KBID, tsQuery(held), "{" + arrayItems(held) + "}", "{" + strings.Join(idfs, ",") + "}", q.K1, q.B, float64(total) / float64(n)}, fargs...)
	args = append(args, q.K)
	query := `SELECT c.id, sum(w.idf * cardinality(u.positions) * ($5::float8 + 1) / (cardinality(u.positions) + $5::float8 * (1 - $6::float8 + $6::float8 * c.term_count / $7::float8))) AS score
		FROM chunks c JOIN sources s ON s.id = c.source_id
		CROSS JOIN LATERAL unnest(c.terms_tsv) AS u
		JOIN unnest($3::text[], $4::float8[]) AS w(term, idf) ON w.term = u.lexeme
		WHERE c.kb_id = $1 AND c.terms_tsv @@ to_tsquery('simple', $2)` + where + `
		GROUP BY c.id ORDER BY score DESC, c.id LIMIT ?`
	rows, err = s.SQL.QueryContext(ctx, numberFrom(query, 8), args...)
	if err != nil {
		return nil, fmt.Errorf("chunk term search: %w", err)
	}
	defer rows.Close()
	var out []store.VectorHit
	for rows.Next() {
		var h store.VectorHit
		if err := rows.Scan(&h.ChunkID, &h.Score); err != nil {
			return nil, fmt.Errorf("chunk term search: %w", err)
		}
		out = append(out, h)
	}
	return out, rows.Err()
}

// arrayItems writes terms as the items of a PostgreSQL array literal.
func arrayItems(terms []string) string {
	items := make([]string, len(terms))
	for i, t := range terms {
		items[i] = `"` + strings.ReplaceAll(strings.ReplaceAll(t, `\`, `\\`), `"`, `\"`) + `"`
	}
	return strings.Join(items, ",")
}

// numberFrom numbers a query's '?' placeholders $from, $from+1, ….
func numberFrom(query string, from int) string {
	var b strings.Builder
	for _, r := range query {
		if r == '?' {
			b.WriteString("$" + strconv.Itoa(from))
			from++
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ChunkNearest finds the chunks q.Filter keeps nearest a query vector:
// through the knowledge base's HNSW index with pgvector (the filters in
// the scan), else by comparing every embedding they keep.
func (s *Store) ChunkNearest(ctx context.Context, q store.VectorQuery) ([]store.VectorHit, error) {
	if q.K < 1 || len(q.Vector) == 0 {
		return nil, nil
	}
	if s.pgvector {
		return s.ChunkVectorSearch(ctx, q)
	}
	where, fargs := sqlstore.FilterSQL(q.Filter)
	return s.NearestExact(ctx, q, numberFrom(`SELECT c.id, c.embedding FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.kb_id = ?`+where, 1), append([]any{q.KBID}, fargs...)...)
}
