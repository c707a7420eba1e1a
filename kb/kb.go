// Package kb is Quarry's knowledge-base service: it creates knowledge bases,
// ingests files, folders and BEIR corpora (extract → chunk → analyse →
// embed → store; a long document streams through in batches of chunks, so
// memory does not grow with its length), and answers BM25, vector and
// hybrid searches: in the store where it can (SQLite's FTS5 and stored
// vectors, for a one-shot process: Service.InStore), else from an
// in-process index it loads from the store and catches up when the
// store's version for that knowledge base changes.
package kb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/singleflight"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/store"
)

// Service is the knowledge-base service.
type Service struct {
	store  store.Store
	logger *slog.Logger

	// inStore: search in the store where it can (SetInStore).
	inStore atomic.Bool

	mu      sync.Mutex
	indexes map[int64]*memIndex
	loads   singleflight.Group // one load per knowledge base and version at a time
}

// SetInStore makes searches run in the store where it can
// (store.TermSearcher: SQLite's FTS5 and its stored vector codes), loading
// nothing of a knowledge base: what a one-shot process wants. Off (the
// default), each knowledge base searched is kept in memory, faster once
// loaded: what a long-lived process wants. It may change at any time.
func (s *Service) SetInStore(on bool) { s.inStore.Store(on) }

// Loaded is how many knowledge bases this service holds in memory.
func (s *Service) Loaded() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.indexes)
}

// New returns a service over st.
func New(st store.Store, logger *slog.Logger) *Service {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Service{store: st, logger: logger, indexes: map[int64]*memIndex{}}
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`)

// ValidateName checks a knowledge base name: 1–64 letters, digits, '-', '_'
// or '.', starting with a letter or digit; no path characters.
func ValidateName(name string) error {
	if !nameRE.MatchString(name) || name == "." || name == ".." {
		return &store.ValidationError{Field: "name", Rule: fmt.Sprintf("%q must be 1-64 letters, digits, '-', '_' or '.', starting with a letter or digit (no '/', '\\' or spaces)", name)}
	}
	return nil
}

// Create makes an empty knowledge base bound to emb.
func (s *Service) Create(ctx context.Context, name, description string, emb embed.Embedder) (*store.KB, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	dim := emb.Dimension()
	if dim == 0 {
		// Learn the dimension from the provider with one probe.
		v, err := emb.Embed(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, fmt.Errorf("kb create %q: probe embedder: %w", name, err)
		}
		dim = len(v[0])
	}
	return s.store.KBCreate(ctx, store.KBCreateParams{Name: name, Description: description, Embedder: emb.Name(), Dimension: dim})
}

// Get returns a knowledge base by name.
func (s *Service) Get(ctx context.Context, name string) (*store.KB, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	return s.store.KBGet(ctx, name)
}

// Chunks counts a knowledge base's chunks.
func (s *Service) Chunks(ctx context.Context, name string) (int, error) {
	k, err := s.Get(ctx, name)
	if err != nil {
		return 0, err
	}
	st, err := s.store.KBStats(ctx, k.ID)
	if err != nil {
		return 0, fmt.Errorf("kb %s: %w", name, err)
	}
	return st.Chunks, nil
}

// Delete removes a knowledge base and everything in it.
func (s *Service) Delete(ctx context.Context, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	kb, err := s.store.KBGet(ctx, name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.indexes, kb.ID)
	s.mu.Unlock()
	return s.store.KBDelete(ctx, name)
}

// EmbedderMismatchError is returned when a knowledge base is used with an
// embedder other than the one that built it.
type EmbedderMismatchError struct {
	KB, Want, Got string
}

func (e *EmbedderMismatchError) Error() string {
	return fmt.Sprintf("knowledge base %q was embedded with %s; it cannot be searched or extended with %s (configure that embedder, or create a new knowledge base)", e.KB, e.Want, e.Got)
}

func checkEmbedder(kb *store.KB, emb embed.Embedder) error {
	if emb == nil {
		return errors.New("no embedder configured")
	}
	if emb.Name() != kb.Embedder || (emb.Dimension() != 0 && emb.Dimension() != kb.Dimension) {
		return &EmbedderMismatchError{KB: kb.Name, Want: kb.Embedder, Got: emb.Name()}
	}
	return nil
}
