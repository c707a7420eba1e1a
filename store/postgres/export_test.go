package postgres

import (
	"context"
	"time"
)

// VectorQuery exposes vectorQuery to the tests: the nearest-neighbour
// query of a knowledge base through the HNSW index it has (exact when it
// has none).
func (s *Store) VectorQuery(ctx context.Context, kbID int64, dim int) (string, error) {
	ix, _, _, err := s.vectorIndexOf(ctx, kbID)
	if err != nil {
		return "", err
	}
	return vectorQuery(kbID, dim, ix, ""), nil
}

// SetListLen sets the length of term lists (and the document frequency
// past which a term has one) until the returned func restores it.
func SetListLen(n int) func() {
	old := listLen
	listLen = n
	return func() { listLen = old }
}

// ListRead is how many term searches have read through term lists, and
// ListApprox how many of them returned the best found.
func ListRead() int64   { return listRead.Load() }
func ListApprox() int64 { return listApprox.Load() }

// SetExact makes the store's term searches exact, or not.
func SetExact(s *Store, exact bool) { s.exact = exact }

// SetListWorth sets how many chunks, as a multiple of the list length, a
// query's common terms must be in for a search to read through the
// lists, until the returned func restores it.
func SetListWorth(n int) func() {
	old := listWorth
	listWorth = n
	return func() { listWorth = old }
}

// SetListBudget sets the chunks a term search reads through the lists
// before it returns the best found, until the returned func restores it.
func SetListBudget(n int) func() {
	old := listBudget
	listBudget = n
	return func() { listBudget = old }
}

// EFSearchFor exposes the hnsw.ef_search a search for k chunks sets.
func (s *Store) EFSearchFor(k int, fused bool) int { return s.efSearchFor(k, fused) }

// PackEntries packs a term list's entries (chunk ids and impacts, in
// order) as kb_term_lists stores them, and UnpackEntries reads them back.
func PackEntries(ids []int64, impacts []float32) []byte {
	entries := make([]impactEntry, len(ids))
	for i := range ids {
		entries[i] = impactEntry{id: ids[i], impact: impacts[i]}
	}
	return packEntries(entries)
}

func UnpackEntries(b []byte) ([]int64, []float32, error) {
	entries, err := unpackEntries(b)
	ids := make([]int64, len(entries))
	impacts := make([]float32, len(entries))
	for i, e := range entries {
		ids[i], impacts[i] = e.id, e.impact
	}
	return ids, impacts, err
}

// RedactErr exposes redactErr to the tests.
func RedactErr(err error) error { return redactErr(err) }

// DefaultEFConstruction is the ef_construction of an index built when
// Options.IndexEFConstruction does not say.
const DefaultEFConstruction = defaultEFConstruction

// ForgetIndexes empties the store's memory of the vector indexes it found.
func ForgetIndexes(s *Store) { s.indexes.Clear() }

// SetExactVectorBudget sets how long a vector search of a knowledge base
// with no vector index waits for its exact ranking, and for how long
// after one took longer the next fail at once, until the returned func
// restores them.
func SetExactVectorBudget(d, retry time.Duration) func() {
	old, oldRetry := exactVectorBudget, exactRetry
	exactVectorBudget, exactRetry = d, retry
	return func() { exactVectorBudget, exactRetry = old, oldRetry }
}

// ConnString is the URL the store was opened with, for a second store
// over the same schema (another process).
func ConnString(s *Store) string { return s.cfg.ConnString() }
