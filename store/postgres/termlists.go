package postgres

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/quarryhq/quarry/store"
)

// Term lists. In a large knowledge base most of a query's terms are
// common: at 1M generated chunks, "cell" is in 557,158 of them, and an
// exact BM25 search that reads each chunk holding such a term, even
// pruned by MaxScore, read some 5,700 chunks a search (p50 100-150 ms).
// A term in more than listLen chunks therefore has a list of the listLen
// chunks where it weighs most (its impact: BM25's term-frequency part,
// tf(k1+1)/(tf + k1(1-b+b·len/avg)), with the mean chunk length of the
// build) and a floor, the greatest impact of the chunks left out. A
// search then:
//
//   - reads and scores exactly every chunk holding one of its rare terms
//     (those without a list; listLen chunks at most each);
//   - bounds each chunk named by a list from above: the impacts the lists
//     give it, and each other list's floor for the terms whose lists do
//     not name it; a chunk no list names is bounded by the floors alone;
//   - reads and scores exactly the chunks named by lists, highest bound
//     first, until the next bound is under the K-th best score.
//
// The top K is proven once the next bound and the floors' sum (the bound
// of a chunk no list names) are under the K-th best score: the same as
// reading every chunk. By default a search does not go further: once it
// has read listBudget chunks the lists name, or has read every named
// chunk that could enter without proving the top K, it returns the best
// it has read, each scored exactly (at 1M generated chunks, 98.5% of the
// exact top 10's summed score; SciFact's nDCG@10 among them unchanged). A
// store opened with Options.ExactSearch goes on with MaxScore over the
// text index, each list's floor bounding its term where every named
// chunk that could enter was read, BM25's bound where not. Lists are
// read only when the query's common terms are in more than listWorth
// lists' length of chunks together: below that MaxScore alone reads less.
//
// The lists are built in one pass over the chunks at the end of an ingest
// once the knowledge base has grown by a quarter since the last build, or
// has had a quarter as many chunks written (AfterIngest). Between builds,
// a chunk written whose impact for a listed term beats the floor is added
// beside the list (kb_term_list_adds), so the floor still bounds every
// chunk left out; a deleted chunk's entries stay until the next build and
// are simply not found. The mean chunk length moves between builds: a
// chunk's impact at a mean A is at most A/A_build times its impact at the
// build's (and no more than at the build's when A is smaller), so the
// bounds are scaled by that ratio. A build and the writes of chunks
// exclude each other through an advisory lock, both reading committed
// data after taking it, so no chunk is both missing from a build and
// unrecorded beside it; a search reads the build, its lists and the
// entries beside them in one snapshot.

// listLen is how many chunks a term's list holds, and the document
// frequency past which a term has one. A var for tests.
var listLen = 1000

// listGrowth is how much a knowledge base grows before its lists are
// built again: by a quarter.
const listGrowth = 1.25

// maxUnlisted bounds, as a multiple of the build's listLen, the chunks of
// a term without a list that a search reads in full: past it (a term
// grown common since the build), the search ranks by MaxScore instead.
const maxUnlisted = 8

// listLockClass is the advisory lock class of term-list builds (the
// object is the knowledge base's id): a build takes it exclusively, a
// write of chunks shared.
const listLockClass = 0x51756172 // "Quar"

// listWorth is, as a multiple of the build's listLen, how many chunks a
// query's common terms (those with lists) must be in together, counted
// once for each term, for the search to read through the lists. A var for
// tests.
var listWorth = 50

// listBudget is how many of the chunks the lists name a search reads, at
// least (8K for a deeper top K), before it returns the best found, unless
// the store is exact. A var for tests.
var listBudget = 2048

// listRead and listApprox count the searches that read through the
// lists, and those of them that returned the best found, for tests.
var listRead, listApprox atomic.Int64

// listSlack widens every bound a little past the float32 impacts it is
// made of.
const listSlack = 1 + 1e-6

// up32 is x as the least float32 no smaller than it: impacts and floors
// are stored so, and bound what they stand for from above.
func up32(x float64) float32 {
	f := float32(x)
	if float64(f) < x {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f
}

// impact is a chunk's BM25 term-frequency part for a term said tf times
// in its length terms, in a knowledge base whose chunks hold avg terms on
// average.
func impact(tf, length int, avg, k1, b float64) float64 {
	return float64(tf) * (k1 + 1) / (float64(tf) + k1*(1-b+b*float64(length)/avg))
}

// listBuild is a knowledge base's last build of its term lists.
type listBuild struct {
	chunks  int64
	avgLen  float64
	k1, b   float64
	listLen int
}

// listBuildOf returns the knowledge base's last build, false when it has
// none.
func listBuildOf(ctx context.Context, q querier, kbID int64) (listBuild, bool, error) {
	var lb listBuild
	err := q.QueryRowContext(ctx, `SELECT chunks, avg_len, k1, b, list_len FROM kb_term_list_builds WHERE kb_id = $1`, kbID).
		Scan(&lb.chunks, &lb.avgLen, &lb.k1, &lb.b, &lb.listLen)
	if errors.Is(err, sql.ErrNoRows) {
		return listBuild{}, false, nil
	}
	if err != nil {
		return listBuild{}, false, fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	return lb, true, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// buildTermListsIfDue builds the knowledge base's term lists when it
// holds more than listLen chunks and has no lists yet, or has grown by
// listGrowth since they were built, or has had a quarter as many chunks
// written as it then held (churn: replaced pages leave entries of
// deleted chunks in the lists, and beside them).
func (s *Store) buildTermListsIfDue(ctx context.Context, kbID int64) error {
	return s.buildTermLists(ctx, kbID, true)
}

// due reports whether a knowledge base of n chunks needs its lists built,
// given its last build's chunks and the chunks written since (both NULL
// when it has none).
func due(n int64, built, written sql.NullInt64) bool {
	if n <= int64(listLen) {
		return false
	}
	return !built.Valid || float64(n) >= listGrowth*float64(built.Int64) ||
		float64(written.Int64) >= (listGrowth-1)*float64(built.Int64)
}

// BuildTermLists builds the knowledge base's term lists anew from its
// chunks, in one pass over them, replacing the lists and the entries
// added since the last build. Writes of chunks into the knowledge base
// wait meanwhile. Document frequencies a first ingest still defers are
// counted first: the lists are chosen by them.
func (s *Store) BuildTermLists(ctx context.Context, kbID int64) error {
	if err := s.settleTermDF(ctx, kbID); err != nil {
		return err
	}
	return s.buildTermLists(ctx, kbID, false)
}

func (s *Store) buildTermLists(ctx context.Context, kbID int64, ifDue bool) error {
	// Read committed, whatever the server's default: each statement after
	// the lock must see the chunks of the writers the lock waited for.
	tx, err := s.SQL.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, listLockClass, int32(kbID)); err != nil {
		return fmt.Errorf("term lists of kb %d: lock: %w", kbID, err)
	}
	// The knowledge base's row, locked as the lists' rows will lock it, so
	// a delete of the knowledge base waits for the build (or the build
	// finds it gone) instead of deadlocking with it.
	lb := listBuild{k1: 1.2, b: 0.75, listLen: listLen}
	var total int64
	var built, written sql.NullInt64
	err = tx.QueryRowContext(ctx, `SELECT coalesce((SELECT chunks FROM kb_term_stats WHERE kb_id = $1), 0),
		coalesce((SELECT terms FROM kb_term_stats WHERE kb_id = $1), 0),
		(SELECT chunks FROM kb_term_list_builds WHERE kb_id = $1), (SELECT written FROM kb_term_list_builds WHERE kb_id = $1)
		FROM knowledge_bases WHERE id = $1 FOR KEY SHARE`, kbID).Scan(&lb.chunks, &total, &built, &written)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // deleted
	}
	if err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	if ifDue && !due(lb.chunks, built, written) {
		return nil // not due, or built by another process meanwhile
	}
	lb.avgLen = 1
	if lb.chunks > 0 && total > 0 {
		lb.avgLen = float64(total) / float64(lb.chunks)
	}
	common, err := commonTerms(ctx, tx, kbID, lb.listLen)
	if err != nil {
		return err
	}
	lists := make([]impactHeap, len(common))
	floors := make([]float64, len(common))
	if len(common) > 0 {
		if err := scanImpacts(ctx, tx, kbID, lb, common, func(term int, e impactEntry) {
			h := &lists[term]
			if len(*h) < lb.listLen {
				heap.Push(h, e)
				return
			}
			if (*h)[0].less(e) {
				floors[term] = max(floors[term], float64((*h)[0].impact))
				(*h)[0] = e
				heap.Fix(h, 0)
			} else {
				floors[term] = max(floors[term], float64(e.impact))
			}
		}); err != nil {
			return err
		}
	}
	for _, stmt := range []string{`DELETE FROM kb_term_lists WHERE kb_id = $1`, `DELETE FROM kb_term_list_adds WHERE kb_id = $1`} {
		if _, err := tx.ExecContext(ctx, stmt, kbID); err != nil {
			return fmt.Errorf("term lists of kb %d: %w", kbID, err)
		}
	}
	terms := make([]string, len(common))
	for t, i := range common {
		terms[i] = t
	}
	if err := writeLists(ctx, tx, kbID, terms, lists, floors); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kb_term_list_builds (kb_id, chunks, avg_len, k1, b, list_len, written) VALUES ($1, $2, $3, $4, $5, $6, 0)
		ON CONFLICT (kb_id) DO UPDATE SET chunks = EXCLUDED.chunks, avg_len = EXCLUDED.avg_len, k1 = EXCLUDED.k1, b = EXCLUDED.b, list_len = EXCLUDED.list_len, written = 0`,
		kbID, lb.chunks, lb.avgLen, lb.k1, lb.b, lb.listLen); err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	return nil
}

// commonTerms returns the knowledge base's terms in more than listLen
// chunks, each with its index.
func commonTerms(ctx context.Context, q querier, kbID int64, listLen int) (map[string]int, error) {
	rows, err := q.QueryContext(ctx, `SELECT term FROM kb_term_df WHERE kb_id = $1 AND df > $2 ORDER BY term`, kbID, listLen)
	if err != nil {
		return nil, fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	defer rows.Close()
	common := map[string]int{}
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, fmt.Errorf("term lists of kb %d: %w", kbID, err)
		}
		common[t] = len(common)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	return common, nil
}

// scanImpacts reads every chunk of the knowledge base and calls fn with
// the impact of each common term it holds.
func scanImpacts(ctx context.Context, q querier, kbID int64, lb listBuild, common map[string]int, fn func(term int, e impactEntry)) error {
	rows, err := q.QueryContext(ctx, `SELECT id, terms FROM chunks WHERE kb_id = $1`, kbID)
	if err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	defer rows.Close()
	tf := map[int]int{}
	for rows.Next() {
		var id int64
		var stored string
		if err := rows.Scan(&id, &stored); err != nil {
			return fmt.Errorf("term lists of kb %d: %w", kbID, err)
		}
		length := countTerms(stored, common, tf)
		for t, c := range tf {
			fn(t, impactEntry{id: id, impact: up32(impact(c, length, lb.avgLen, lb.k1, lb.b))})
		}
		clear(tf)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	return nil
}

// countTerms counts into tf how often each of terms (by index) is said in
// stored (terms joined by single spaces), and returns how many terms
// stored holds, as the search's scorer counts both.
func countTerms(stored string, terms map[string]int, tf map[int]int) int {
	if stored == "" {
		return 0
	}
	length := 0
	for {
		length++
		i := strings.IndexByte(stored, ' ')
		word := stored
		if i >= 0 {
			word = stored[:i]
		}
		if t, ok := terms[word]; ok {
			tf[t]++
		}
		if i < 0 {
			return length
		}
		stored = stored[i+1:]
	}
}

// writeLists stores the lists built, a few hundred to a statement.
func writeLists(ctx context.Context, tx *sql.Tx, kbID int64, terms []string, lists []impactHeap, floors []float64) error {
	const rowsPerInsert = 200
	for from := 0; from < len(terms); from += rowsPerInsert {
		to := min(len(terms), from+rowsPerInsert)
		var b strings.Builder
		b.WriteString(`INSERT INTO kb_term_lists (kb_id, term, floor, entries) VALUES `)
		args := []any{kbID}
		for i := from; i < to; i++ {
			if i > from {
				b.WriteString(", ")
			}
			n := len(args)
			fmt.Fprintf(&b, "($1, $%d, $%d, $%d)", n+1, n+2, n+3)
			h := lists[i]
			slices.SortFunc(h, func(a, b impactEntry) int { return cmp.Compare(b.impact, a.impact) })
			args = append(args, terms[i], float32(floors[i]), packEntries(h))
		}
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("term lists of kb %d: %w", kbID, err)
		}
	}
	return nil
}

// addToTermLists records, beside the knowledge base's lists, the chunks
// just written (ids in the order of chunks) whose impact for a listed
// term beats its floor. It runs in the writing transaction, after the
// chunks are inserted, holding the build lock shared until the
// transaction ends: a build that began before it has committed its
// lists, which this reads, and one that begins after waits for this
// transaction and reads its chunks.
func (s *Store) addToTermLists(ctx context.Context, tx *sql.Tx, kbID int64, chunks []store.Chunk, ids []int64) error {
	if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock_shared($1, $2)`, listLockClass, int32(kbID)); err != nil {
		return fmt.Errorf("term lists of kb %d: lock: %w", kbID, err)
	}
	// The build this writes beside, counting the chunks written since it.
	lb := listBuild{}
	err := tx.QueryRowContext(ctx, `UPDATE kb_term_list_builds SET written = written + $2 WHERE kb_id = $1 RETURNING avg_len, k1, b`, kbID, len(chunks)).
		Scan(&lb.avgLen, &lb.k1, &lb.b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil // no lists
	}
	if err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	distinct := map[string]int{}
	for _, c := range chunks {
		for t := range strings.SplitSeq(c.Terms, " ") {
			if _, ok := distinct[t]; !ok && t != "" {
				distinct[t] = len(distinct)
			}
		}
	}
	words := make([]string, len(distinct))
	for t, i := range distinct {
		words[i] = t
	}
	floorOf, err := termValues[float64](ctx, tx, `SELECT term, floor FROM kb_term_lists WHERE kb_id = $1 AND term = ANY($2::text[])`, kbID, words)
	if err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	if len(floorOf) == 0 {
		return nil
	}
	// The listed terms by index, as countTerms counts them.
	listed := make(map[string]int, len(floorOf))
	terms := make([]string, 0, len(floorOf))
	floors := make([]float64, 0, len(floorOf))
	for t, f := range floorOf {
		listed[t] = len(terms)
		terms = append(terms, t)
		floors = append(floors, f)
	}
	var addTerms []string
	var addIDs []int64
	var addImpacts []float32
	tf := map[int]int{}
	for i, c := range chunks {
		length := countTerms(c.Terms, listed, tf)
		for t, n := range tf {
			if w := up32(impact(n, length, lb.avgLen, lb.k1, lb.b)); float64(w) > floors[t] {
				addTerms = append(addTerms, terms[t])
				addIDs = append(addIDs, ids[i])
				addImpacts = append(addImpacts, w)
			}
		}
		clear(tf)
	}
	if len(addIDs) == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO kb_term_list_adds (kb_id, term, chunk_id, impact)
		SELECT $1, unnest($2::text[]), unnest($3::bigint[]), unnest($4::real[])`,
		kbID, "{"+arrayItems(addTerms)+"}", addIDs, addImpacts); err != nil {
		return fmt.Errorf("term lists of kb %d: %w", kbID, err)
	}
	return nil
}

// fromLists reads, through the knowledge base's term lists (see the top
// of this file), the chunks holding a rare term and those the lists name
// that can make the top K, highest bound first, and returns the terms in
// the order the search takes them (the rare ones, read already, first:
// from of them), with each term's bound, or done when the top K needs
// nothing more: proven, or, unless the store is exact, as good as the
// lists' budget of reads finds it. held are the query's terms the
// knowledge base holds, rarest first, with their idf; n and total are
// its chunks and their terms. Without lists it can use (none built,
// BM25's parameters not theirs, more chunks to read in full than
// maxUnlisted lists hold), it reads nothing and returns held with the
// bounds of BM25 alone.
func (r *termRead) fromLists(ctx context.Context, held []termIDF, n, total int64) (order []termIDF, bound []float64, from int, done bool, err error) {
	q := r.q
	wide := func(ts []termIDF) []float64 {
		out := make([]float64, len(ts))
		for i, t := range ts {
			out[i] = t.idf * (q.K1 + 1)
		}
		return out
	}
	// The build, its lists and the entries beside them, as of one moment:
	// a build committed between reading the lists and reading the
	// entries would leave chunks named by neither.
	tx, err := r.s.SQL.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	if err != nil {
		return nil, nil, 0, false, fmt.Errorf("chunk term search: lists: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	lb, ok, err := listBuildOf(ctx, tx, q.KBID)
	if err != nil || !ok || lb.k1 != q.K1 || lb.b != q.B {
		return held, wide(held), 0, false, err
	}
	// Where the query's common terms are in few chunks together, MaxScore
	// over the text index reads less than the lists would.
	var common int64
	for _, t := range held {
		if t.df > int64(lb.listLen) {
			common += t.df
		}
	}
	if common <= int64(listWorth*lb.listLen) {
		return held, wide(held), 0, false, nil
	}
	lists, err := readLists(ctx, tx, q.KBID, termsOf(held))
	if err != nil || len(lists) == 0 {
		return held, wide(held), 0, false, err
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, 0, false, fmt.Errorf("chunk term search: lists: %w", err)
	}
	// The bounds scale with the mean chunk length's growth since the build.
	scale := listSlack * max(1, float64(total)/float64(n)/lb.avgLen)
	var short, long []termIDF
	var floors []float64 // of long: its bound for a chunk its list does not name
	var unlisted int64
	for _, t := range held {
		l, ok := lists[t.term]
		if !ok {
			short = append(short, t)
			unlisted += t.df
			continue
		}
		long = append(long, t)
		floors = append(floors, t.idf*min(q.K1+1, l.floor*scale))
	}
	if unlisted > int64(maxUnlisted*lb.listLen) {
		return held, wide(held), 0, false, nil
	}
	listRead.Add(1)
	order = append(short, long...)
	if len(short) > 0 {
		// Every chunk holding a rare term, scored exactly.
		if err := r.read(ctx, r.byText, tsQuery(termsOf(short))); err != nil {
			return nil, nil, 0, false, err
		}
	}
	// The other chunks the lists name, each bounded by the impacts its
	// lists give it and the floors of the others.
	outside := 0.0 // the bound of a chunk no list names
	for _, f := range floors {
		outside += f
	}
	cands := listCandidates(long, lists, floors, outside, scale, q.K1, r.scored)
	top := r.top
	budget := max(listBudget, 8*q.K)
	read, i := 0, 0
	for size := 64; i < len(cands) && cands[i].bound >= top.Floor() && (r.s.exact || read < budget); size = min(2*size, 4096) {
		if !r.s.exact {
			size = min(size, budget-read)
		}
		var ids []int64
		for ; i < len(cands) && len(ids) < size && cands[i].bound >= top.Floor(); i++ {
			ids = append(ids, cands[i].id)
		}
		read += len(ids)
		if err := r.read(ctx, r.byID, ids); err != nil {
			return nil, nil, 0, false, err
		}
	}
	full := top.Len() == q.K
	if i < len(cands) && cands[i].bound >= top.Floor() {
		// Over budget: the floors bound nothing yet. The best found
		// stand, or the search goes on with BM25's bounds.
		if full && !r.s.exact {
			listApprox.Add(1)
			return nil, nil, 0, true, nil
		}
		return order, append(make([]float64, len(short), len(order)), wide(long)...), len(short), false, nil
	}
	// A chunk not read holds no rare term, and each list naming it
	// gives it a bound under the K-th best: it can make the top K only
	// with more than the floors of the lists that do not.
	if outside == 0 || top.Floor() > outside {
		return nil, nil, 0, true, nil
	}
	if full && !r.s.exact {
		listApprox.Add(1)
		return nil, nil, 0, true, nil
	}
	return order, append(make([]float64, len(short), len(order)), floors...), len(short), false, nil
}

// candidate is a chunk the lists name, with the bound of its score.
type candidate struct {
	id    int64
	bound float64
	lists uint64 // the lists naming it, by index in long
}

// listCandidates returns the chunks the lists of long name, but those
// scored already, highest bound first: each is bounded by the impacts its
// lists give it (scaled, at most k1+1) and the floors of the others;
// outside is the floors' sum.
func listCandidates(long []termIDF, lists map[string]termList, floors []float64, outside, scale, k1 float64, scored map[int64]bool) []candidate {
	at := map[int64]int{}
	var cands []candidate
	for j, t := range long {
		for _, e := range lists[t.term].entries {
			if scored[e.id] {
				continue
			}
			i, ok := at[e.id]
			if !ok {
				i = len(cands)
				at[e.id] = i
				cands = append(cands, candidate{id: e.id, bound: outside})
			}
			c := &cands[i]
			if c.lists&(1<<j) != 0 {
				continue
			}
			c.lists |= 1 << j
			c.bound += t.idf*min(k1+1, float64(e.impact)*scale) - floors[j]
		}
	}
	slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(b.bound, a.bound) })
	return cands
}

// termList is a listed term's entries (its list and those added since)
// and its floor.
type termList struct {
	floor   float64
	entries []impactEntry
}

// readLists returns the lists of those of terms that have one, with the
// entries added since the build.
func readLists(ctx context.Context, q querier, kbID int64, terms []string) (map[string]termList, error) {
	arr := "{" + arrayItems(terms) + "}"
	rows, err := q.QueryContext(ctx, `SELECT term, floor, entries FROM kb_term_lists WHERE kb_id = $1 AND term = ANY($2::text[])`, kbID, arr)
	if err != nil {
		return nil, fmt.Errorf("chunk term search: lists: %w", err)
	}
	defer rows.Close()
	out := map[string]termList{}
	for rows.Next() {
		var t string
		var l termList
		var packed []byte
		if err := rows.Scan(&t, &l.floor, &packed); err != nil {
			return nil, fmt.Errorf("chunk term search: lists: %w", err)
		}
		if l.entries, err = unpackEntries(packed); err != nil {
			return nil, fmt.Errorf("chunk term search: list of %q: %w", t, err)
		}
		out[t] = l
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("chunk term search: lists: %w", err)
	}
	if len(out) == 0 {
		return out, nil
	}
	adds, err := q.QueryContext(ctx, `SELECT term, chunk_id, impact FROM kb_term_list_adds WHERE kb_id = $1 AND term = ANY($2::text[])`, kbID, arr)
	if err != nil {
		return nil, fmt.Errorf("chunk term search: lists: %w", err)
	}
	defer adds.Close()
	for adds.Next() {
		var t string
		var e impactEntry
		if err := adds.Scan(&t, &e.id, &e.impact); err != nil {
			return nil, fmt.Errorf("chunk term search: lists: %w", err)
		}
		if l, ok := out[t]; ok {
			l.entries = append(l.entries, e)
			out[t] = l
		}
	}
	if err := adds.Err(); err != nil {
		return nil, fmt.Errorf("chunk term search: lists: %w", err)
	}
	return out, nil
}

// entrySize is the bytes of an entry packed: the chunk's id, then its
// impact's float32 bits, both big-endian (as PostgreSQL's int8send and
// float4send write them).
const entrySize = 12

// packEntries is entries as kb_term_lists stores them.
func packEntries(entries []impactEntry) []byte {
	b := make([]byte, 0, entrySize*len(entries))
	for _, e := range entries {
		b = binary.BigEndian.AppendUint64(b, uint64(e.id))
		b = binary.BigEndian.AppendUint32(b, math.Float32bits(e.impact))
	}
	return b
}

// unpackEntries reads entries packed by packEntries.
func unpackEntries(b []byte) ([]impactEntry, error) {
	if len(b)%entrySize != 0 {
		return nil, fmt.Errorf("%d bytes of entries, not a multiple of %d", len(b), entrySize)
	}
	out := make([]impactEntry, len(b)/entrySize)
	for i := range out {
		e := b[i*entrySize:]
		out[i] = impactEntry{id: int64(binary.BigEndian.Uint64(e)), impact: math.Float32frombits(binary.BigEndian.Uint32(e[8:]))}
	}
	return out, nil
}

// impactEntry is a chunk in a term's list.
type impactEntry struct {
	id     int64
	impact float32
}

// less orders entries by impact, then the higher id first (a list keeps
// the lower ids of equal impacts).
func (e impactEntry) less(o impactEntry) bool {
	if e.impact != o.impact {
		return e.impact < o.impact
	}
	return e.id > o.id
}

// impactHeap is a min-heap of entries: the list being built.
type impactHeap []impactEntry

func (h impactHeap) Len() int           { return len(h) }
func (h impactHeap) Less(i, j int) bool { return h[i].less(h[j]) }
func (h impactHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *impactHeap) Push(x any)        { *h = append(*h, x.(impactEntry)) }
func (h *impactHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
