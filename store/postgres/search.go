package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
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
// Lucene's idf over that knowledge base, as the in-memory index does,
// reading only the chunks that can still make the top K (MaxScore); each
// chunk returned has its exact score, and the top K is exact but where a
// search through term lists returns the best of a budget of chunks read
// (unless Options.ExactSearch; see termlists.go):
//
//   - each query term's document frequency comes from kb_term_df (while
//     a first ingest defers those counts, from counting its chunks);
//   - where the knowledge base has term lists (termlists.go), the chunks
//     holding its rare terms and those the common terms' lists name that
//     can make the top K are read first, and each common term then adds
//     at most its list's floor to a chunk not read;
//   - terms are taken rarest first; for each, the chunks holding it and
//     none of the rarer ones are read through the GIN index and scored
//     exactly from their stored terms;
//   - once K chunks are scored and the K-th best beats the most a chunk
//     holding only the terms not yet taken could score (each term's
//     floor, or its idf times k1+1, BM25's ceiling), no chunk left unread
//     can enter the top K, and the common terms' chunks are never read.
//
// A query of common words only reads more; one rare word reads few.
func (s *Store) ChunkTermSearch(ctx context.Context, q store.TermQuery) ([]store.VectorHit, error) {
	terms, n, total, ok, err := s.TermStats(ctx, &q)
	if !ok || err != nil {
		return nil, err
	}
	narrow, err := s.narrow(ctx, q.KBID, q.Filter)
	if err != nil || narrow.none {
		return nil, err
	}
	held, err := s.termIDFs(ctx, q.KBID, n, terms)
	if err != nil || len(held) == 0 {
		return nil, err
	}
	idfs := make([]float64, len(held))
	for i, t := range held {
		idfs[i] = t.idf
	}
	scorer := sqlstore.NewTermScorer(q, float64(total)/float64(n), termsOf(held), idfs)
	queries, fargs, hidden, err := s.termQueries(ctx, q, narrow, `c.terms_tsv @@ to_tsquery('simple', ?)`, `c.id = ANY(?::bigint[])`)
	if err != nil {
		return nil, err
	}
	r := &termRead{s: s, q: q, scorer: scorer, byText: queries[0], byID: queries[1], args: fargs, hidden: hidden,
		top: index.NewTop(q.K), scored: map[int64]bool{}}
	if narrow.few(maxFewTerms) {
		// Every chunk the filter passes holding a term, scored.
		if err := r.read(ctx, r.byText, tsQuery(termsOf(held))); err != nil {
			return nil, err
		}
		return hitsOf(r.top), nil
	}
	// order is the terms in the order they are taken, the first from of
	// them read already; bound[i] is more than term i adds to the score
	// of any chunk not read yet that can make the top K (BM25's tf part
	// is under k1+1); ceiling[i] is the most a chunk holding none of
	// order[:i] can score.
	order, bound, from, done, err := r.fromLists(ctx, held, n, total)
	if err != nil {
		return nil, err
	}
	if done {
		return hitsOf(r.top), nil
	}
	ceiling := make([]float64, len(order)+1)
	for i := len(order) - 1; i >= 0; i-- {
		ceiling[i] = ceiling[i+1] + bound[i]
	}
	top := r.top
	for i := from; i < len(order) && top.Floor() < ceiling[i]; i++ {
		// The chunks holding this term and none of the rarer ones, which
		// were read before.
		tsq := tsQuery([]string{order[i].term})
		if i > 0 {
			tsq += " & !(" + tsQuery(termsOf(order[:i])) + ")"
		}
		// A chunk scores less than the bounds of the terms it holds add
		// up to: once the K-th best is known, only chunks holding this
		// term with enough of the later ones can enter.
		if need := top.Floor() - bound[i]; need > 0 {
			more, ok := enough(order[i+1:], bound[i+1:], need)
			if !ok {
				break // none can
			}
			tsq += " & (" + more + ")"
		}
		if err := r.read(ctx, r.byText, tsq); err != nil {
			return nil, err
		}
	}
	return hitsOf(top), nil
}

// termRead is one term search's reading and scoring of chunks.
type termRead struct {
	s            *Store
	q            store.TermQuery
	scorer       *sqlstore.TermScorer
	byText, byID string // the queries reading chunks by tsquery and by id
	args         []any  // the filter's arguments, after the match's
	hidden       map[int64]bool
	top          *index.Top
	scored       map[int64]bool // the chunks read
}

// read scores the chunks query selects with its match's argument arg,
// those read before and those of hidden sources left out, and offers
// them to the top K.
func (r *termRead) read(ctx context.Context, query string, arg any) error {
	return r.s.scoreChunks(ctx, query, append([]any{r.q.KBID, arg}, r.args...), r.hidden, r.scorer, r.top, r.scored)
}

// hitsOf is the hits top kept, best first.
func hitsOf(top *index.Top) []store.VectorHit {
	hits := top.Sorted()
	out := make([]store.VectorHit, len(hits))
	for i, h := range hits {
		out[i] = store.VectorHit{ChunkID: int64(h.Doc), Score: h.Score}
	}
	return out
}

// maxLeaves bounds the terms an enough query names, and maxEnoughTerms the
// terms it is built over.
const (
	maxLeaves      = 64
	maxEnoughTerms = 16
)

// enough returns a tsquery matching the chunks that hold a set of terms
// whose bounds add up to need or more (a chunk that reaches the K-th best
// score may still win its tie), and false when no set does. Terms come
// rarest (highest bound) first; each set is matched once, by its first
// term j: t_j alone when its bound is enough, else t_j and enough of the
// terms after it. A looser query is never wrong, as it only narrows what
// is read and scored exactly: when the sets would name more than
// maxLeaves terms, the commonest term is left out of them and what the
// others must reach lowered by its bound (a chunk holding it still needs
// the rest from the others), until they fit; when nothing is left to
// reach, any of the terms will do. Leaving the commonest terms out also
// spares the index their long posting lists.
func enough(terms []termIDF, bound []float64, need float64) (string, bool) {
	var total float64
	for _, b := range bound {
		total += b
	}
	if total < need {
		return "", false
	}
	rest := total
	for n := len(terms); n > 0 && need > 0; n-- {
		if n <= maxEnoughTerms {
			if q, leaves := enoughSets(terms[:n], bound[:n], need, rest); q != "" && leaves <= maxLeaves {
				return q, true
			}
		}
		need -= bound[n-1]
		rest -= bound[n-1]
	}
	return tsQuery(termsOf(terms)), true
}

// enoughSets is enough's query, and how many terms it names; rest is the
// sum of bound.
func enoughSets(terms []termIDF, bound []float64, need, rest float64) (string, int) {
	var parts []string
	leaves := 0
	for j := range terms {
		if rest < need || leaves > maxLeaves {
			break // neither the terms from j on nor later sets reach need
		}
		rest -= bound[j]
		leaf := tsQuery([]string{terms[j].term})
		if bound[j] >= need {
			parts = append(parts, leaf)
			leaves++
			continue
		}
		if sub, n := enoughSets(terms[j+1:], bound[j+1:], need-bound[j], rest); sub != "" {
			parts = append(parts, leaf+" & ("+sub+")")
			leaves += 1 + n
		}
	}
	if len(parts) == 0 {
		return "", 0
	}
	return "(" + strings.Join(parts, ") | (") + ")", leaves
}

// termIDF is a query term the knowledge base holds, with its document
// frequency and idf.
type termIDF struct {
	term string
	df   int64
	idf  float64
}

// termIDFs returns the terms the knowledge base holds with their idf: the
// index.MaxQueryTerms rarest, rarest first, as the in-memory index takes
// them (index.Rarest).
//
// While the knowledge base's first ingest defers its counts
// (BeforeIngest), kb_term_df holds none of its terms, and each term's
// chunks are counted through the text index instead (a row with the
// empty term, which no chunk holds, says the counts are deferred).
func (s *Store) termIDFs(ctx context.Context, kbID, n int64, terms []string) ([]termIDF, error) {
	df, err := termValues[int64](ctx, s.SQL, `SELECT term, df FROM kb_term_df WHERE kb_id = $1 AND term = ANY($2::text[]) AND df > 0
		UNION ALL SELECT '', 0 FROM kb_term_df_pending WHERE kb_id = $1`, kbID, terms)
	if _, deferred := df[""]; err == nil && deferred {
		df, err = s.chunkCounts(ctx, kbID, terms)
	}
	if err != nil {
		return nil, fmt.Errorf("chunk term search: %w", err)
	}
	held := index.Rarest(slices.Collect(maps.Keys(df)), func(t string) int64 { return df[t] })
	out := make([]termIDF, len(held))
	for i, t := range held {
		out[i] = termIDF{term: t, df: df[t], idf: index.IDF(n, df[t])}
	}
	return out, nil
}

// chunkCounts counts the chunks of a knowledge base that hold each term,
// through the text index, and returns the terms some chunk holds.
func (s *Store) chunkCounts(ctx context.Context, kbID int64, terms []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, t := range terms {
		var n int64
		err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM chunks WHERE kb_id = $1 AND terms_tsv @@ to_tsquery('simple', $2)`, kbID, tsQuery([]string{t})).Scan(&n)
		if err != nil {
			return nil, err
		}
		if n > 0 {
			out[t] = n
		}
	}
	return out, nil
}

// termValues runs query, which selects a term and a value for the
// knowledge base kbID ($1) and the terms ($2, a text array), and returns
// each term's value.
func termValues[T any](ctx context.Context, q querier, query string, kbID int64, terms []string) (map[string]T, error) {
	rows, err := q.QueryContext(ctx, query, kbID, "{"+arrayItems(terms)+"}")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]T{}
	for rows.Next() {
		var t string
		var v T
		if err := rows.Scan(&t, &v); err != nil {
			return nil, err
		}
		out[t] = v
	}
	return out, rows.Err()
}

func termsOf(ts []termIDF) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.term
	}
	return out
}

// maxHidden is the most hidden sources a term search drops itself; past
// it, its queries join each chunk to its source.
const maxHidden = 10000

// termQueries are the queries a term search reads chunks with (id,
// source id, stored terms), one where each of matches holds (its one
// placeholder the argument after the knowledge base's id; the filter's
// arguments follow), and the sources whose chunks it must drop. A chunk
// is searched when its source is written in full and, unless stale ones
// are asked for, not stale; those few sources are read through their
// partial index and their chunks dropped as they come, so the common case
// joins no chunk to its source (that join was half of a term query's
// time in the database). Past maxHidden such sources, or with a source
// prefix to match, the queries join. The queries keep to narrow's
// sources.
func (s *Store) termQueries(ctx context.Context, q store.TermQuery, narrow narrowing, matches ...string) ([]string, []any, map[int64]bool, error) {
	const read = `SELECT c.id, c.source_id, c.terms FROM chunks c `
	build := func(join, where string) []string {
		out := make([]string, len(matches))
		for i, m := range matches {
			out[i] = s.Rebind(read + join + `WHERE c.kb_id = ? AND ` + m + where)
		}
		return out
	}
	nwhere, nargs := narrow.where()
	joined := func() ([]string, []any, map[int64]bool, error) {
		where, args := sqlstore.FilterSQL(q.Filter)
		return build(`JOIN sources s ON s.id = c.source_id `, where+nwhere), append(args, nargs...), nil, nil
	}
	if q.Filter.SourcePrefix != "" {
		return joined()
	}
	cond := `content_hash = '' OR is_stale`
	if q.Filter.IncludeStale {
		cond = `content_hash = ''`
	}
	hidden, err := s.hiddenSources(ctx, q.KBID, cond)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(hidden) > maxHidden {
		return joined()
	}
	where, args := sqlstore.ChunkFilterSQL(q.Filter)
	return build("", where+nwhere), append(args, nargs...), hidden, nil
}

// hiddenSources returns the ids of the knowledge base's sources that cond
// holds for, at most maxHidden+1.
func (s *Store) hiddenSources(ctx context.Context, kbID int64, cond string) (map[int64]bool, error) {
	rows, err := s.SQL.QueryContext(ctx, `SELECT id FROM sources WHERE kb_id = $1 AND (`+cond+`) LIMIT $2`, kbID, maxHidden+1)
	if err != nil {
		return nil, fmt.Errorf("chunk term search: hidden sources: %w", err)
	}
	defer rows.Close()
	hidden := map[int64]bool{}
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("chunk term search: hidden sources: %w", err)
		}
		hidden[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunk term search: hidden sources: %w", err)
	}
	return hidden, nil
}

// scoreChunks scores the chunks query selects (id, source id and stored
// terms), but those of hidden sources and, when scored is not nil, those
// it holds, and offers them to top, noting in scored each chunk read.
func (s *Store) scoreChunks(ctx context.Context, query string, args []any, hidden map[int64]bool, scorer *sqlstore.TermScorer, top *index.Top, scored map[int64]bool) error {
	rows, err := s.SQL.QueryContext(ctx, query, args...)
	if err != nil {
		return fmt.Errorf("chunk term search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, source int64
		var text string
		if err := rows.Scan(&id, &source, &text); err != nil {
			return fmt.Errorf("chunk term search: %w", err)
		}
		if scored != nil {
			if scored[id] {
				continue
			}
			scored[id] = true
		}
		if hidden[source] {
			continue
		}
		top.Push(index.Hit{Doc: int(id), Score: scorer.Score(text)})
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("chunk term search: %w", err)
	}
	return nil
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
	narrow, err := s.narrow(ctx, q.KBID, q.Filter)
	if err != nil || narrow.none {
		return nil, err
	}
	where, fargs := sqlstore.FilterSQL(q.Filter)
	nwhere, nargs := narrow.where()
	return s.NearestExact(ctx, q, s.Rebind(`SELECT c.id, c.embedding FROM chunks c JOIN sources s ON s.id = c.source_id WHERE c.kb_id = ?`+where+nwhere), append(append([]any{q.KBID}, fargs...), nargs...)...)
}

// A filter that few chunks pass is searched by reading those chunks
// (through the index of chunks by language, or by source) instead of
// searching the whole knowledge base and dropping the rest: a term search
// reads every one of them holding a term when they are at most
// maxFewTerms, a vector search ranks them all exactly when they are at
// most maxFewVectors (an HNSW scan that keeps going until K pass the
// filter visits about K over the share passing, each with its
// neighbours' distances: at 1M chunks, 10,020 of them passing, it took
// 5 s, and their exact ranking 0.4 s); a source prefix is looked up when
// at most maxFewSources sources have it.
const (
	maxFewTerms   = 8192
	maxFewVectors = 32768
	maxFewSources = 16384
)

// narrowing is what a filter leaves a search to read.
type narrowing struct {
	none    bool    // no chunk passes the filter: read nothing
	chunks  int64   // how many do, when at most maxFewVectors; else -1
	sources []int64 // when not nil, the only sources whose chunks may pass
}

// few reports that at most limit chunks pass the filter.
func (n narrowing) few(limit int64) bool { return n.chunks >= 0 && n.chunks <= limit }

// where is the condition narrowing adds to a query over chunks c, and its
// argument.
func (n narrowing) where() (string, []any) {
	if n.sources == nil {
		return "", nil
	}
	return ` AND c.source_id = ANY(?::bigint[])`, []any{n.sources}
}

// narrow returns what f leaves a search of a knowledge base to read: a
// language no chunk is in, or a source prefix no source has, leaves
// nothing; a language few chunks are in (kb_language_stats), or a prefix
// that few sources with few chunks have (found through the index of
// sources by URL in byte order), leaves those chunks to be read and
// ranked exactly, since an index over the whole knowledge base would pass
// over most of them before it found any.
func (s *Store) narrow(ctx context.Context, kbID int64, f store.ChunkFilter) (narrowing, error) {
	n := narrowing{chunks: -1}
	inLanguage, err := s.fewInLanguage(ctx, kbID, f.Language)
	if err != nil {
		return n, err
	}
	if inLanguage == 0 {
		return narrowing{none: true}, nil
	}
	n.chunks = inLanguage
	if f.SourcePrefix == "" {
		return n, nil
	}
	ids, err := s.SourcesUnder(ctx, kbID, f.SourcePrefix, maxFewSources)
	if err != nil || ids == nil {
		return n, err // many sources: filter as the search goes
	}
	if len(ids) == 0 {
		return narrowing{none: true}, nil
	}
	n.sources = ids
	var chunks int64
	err = s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM chunks WHERE source_id = ANY($1::bigint[]) LIMIT $2) c`, ids, maxFewVectors+1).Scan(&chunks)
	if err != nil {
		return n, fmt.Errorf("chunks of sources under %q: %w", f.SourcePrefix, err)
	}
	if chunks == 0 {
		return narrowing{none: true}, nil
	}
	if chunks <= maxFewVectors && (n.chunks < 0 || chunks < n.chunks) {
		n.chunks = chunks
	}
	return n, nil
}

// fewInLanguage returns, for a filter to language (none when empty), how
// many of the knowledge base's chunks are in it when they are at most
// maxFewVectors, and -1 otherwise.
func (s *Store) fewInLanguage(ctx context.Context, kbID int64, language string) (int64, error) {
	if language == "" {
		return -1, nil
	}
	var n int64
	err := s.SQL.QueryRowContext(ctx, `SELECT coalesce((SELECT chunks FROM kb_language_stats WHERE kb_id = $1 AND language = $2), 0)`, kbID, language).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("chunks in language %q: %w", language, err)
	}
	if n > maxFewVectors {
		return -1, nil
	}
	return n, nil
}
