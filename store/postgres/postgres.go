// Package postgres is the scale-out store backend on PostgreSQL through pgx.
// Where `CREATE EXTENSION vector` works it keeps each embedding in a
// pgvector column with a per-knowledge-base HNSW index (m=16,
// ef_construction=64 unless Options say otherwise, over the vectors at
// half precision) and answers vector queries natively; otherwise callers
// search exactly in process.
package postgres

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Options tune the connection pool.
type Options struct {
	// MaxConns caps open connections; 0 means the database/sql default.
	// PGlite serves one connection at a time.
	MaxConns int
	Logger   *slog.Logger
	// IndexMemoryMB caps the maintenance_work_mem a vector index build
	// asks for (0: 1024).
	IndexMemoryMB int
	// ExactSearch makes a BM25 search through term lists prove its top K
	// however many chunks that reads, instead of returning the best of
	// the chunks its lists rank highest once it has read 2,048 of them
	// (termlists.go).
	ExactSearch bool
	// VectorSearchEF is the least hnsw.ef_search a vector search asks
	// for (0: defaultEFSearch; above 1,000, 1,000): the candidates the
	// index keeps while it walks its graph. More finds more of the exact
	// nearest, slower; a search for K chunks asks for at least K.
	VectorSearchEF int
	// IndexEFConstruction is the ef_construction of the HNSW indexes it
	// builds (0: defaultEFConstruction; 32-1000): the candidates each
	// chunk's insertion keeps while it looks for its neighbours. More
	// builds a graph whose searches find more of the exact nearest, at
	// about proportionally more build time. An index built keeps its own.
	IndexEFConstruction int
}

// Store is the PostgreSQL backend.
type Store struct {
	*sqlstore.DB
	pgvector bool
	halfvec  bool // pgvector 0.7 or later: HNSW over half-precision vectors
	cfg      *pgx.ConnConfig
	logger   *slog.Logger
	indexMB  int64
	efSearch int      // Options.VectorSearchEF, or defaultEFSearch
	efBuild  int      // Options.IndexEFConstruction, or defaultEFConstruction
	indexes  sync.Map // knowledge base id -> vectorIndex, once one is built
	exact    bool     // Options.ExactSearch
	builds   backgroundBuilds
}

// backgroundBuilds are the vector index builds a long-lived process runs
// apart from the ingests that ask for them (SetBackgroundIndex).
type backgroundBuilds struct {
	on     atomic.Bool
	ctx    context.Context // ended by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	// running are the knowledge bases this process is building, tried
	// when each was last asked for by a search.
	running map[int64]bool
	tried   map[int64]time.Time
}

var (
	_ store.Store          = (*Store)(nil)
	_ store.VectorSearcher = (*Store)(nil)
	_ store.Tuner          = (*Store)(nil)
)

// Open connects, applies migrations and enables pgvector when it can.
func Open(ctx context.Context, url string, opts Options) (*Store, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", redactErr(err))
	}
	// Apply search_path per session too: proxies and PGlite's socket server
	// ignore startup parameters.
	searchPath := cfg.RuntimeParams["search_path"]
	db := stdlib.OpenDB(*cfg, stdlib.OptionAfterConnect(func(ctx context.Context, c *pgx.Conn) error {
		if searchPath == "" {
			return nil
		}
		_, err := c.Exec(ctx, "SELECT set_config('search_path', $1, false)", searchPath)
		return err
	}))
	if opts.MaxConns > 0 {
		db.SetMaxOpenConns(opts.MaxConns)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open postgres: %w", redactErr(err))
	}
	s := &Store{cfg: cfg, logger: opts.Logger, indexMB: hnswMaxMemoryMB, efSearch: defaultEFSearch, efBuild: defaultEFConstruction, exact: opts.ExactSearch}
	s.builds.ctx, s.builds.cancel = context.WithCancel(context.Background())
	s.builds.running, s.builds.tried = map[int64]bool{}, map[int64]time.Time{}
	if opts.VectorSearchEF > 0 {
		s.efSearch = min(maxEFSearch, opts.VectorSearchEF)
	}
	if opts.IndexEFConstruction > 0 {
		s.efBuild = min(maxEFConstruction, max(2*hnswM, opts.IndexEFConstruction))
	}
	if opts.IndexMemoryMB > 0 {
		s.indexMB = int64(opts.IndexMemoryMB)
	}
	s.DB = sqlstore.New(db, sqlstore.Dialect{
		Name:              "postgres",
		Dollar:            true,
		AtLeast:           "~>=~", // text_pattern_ops, as sources_url_bytes is
		Below:             "~<~",
		IsUniqueViolation: isUnique,
		InsertChunks:      s.insertChunks,
		// Read committed, whatever the server's default: a write of
		// chunks reads the term lists after taking their lock
		// (termlists.go), and must see a build that committed meanwhile.
		BeginWrite: func(ctx context.Context, db *sql.DB) (*sql.Tx, error) {
			return db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		},
		// One process migrates at a time (any constant: the key
		// of Quarry's migrations).
		LockMigrations:    `SELECT pg_advisory_xact_lock(7163020519)`,
		NativeVector:      s.nativeVector,
		AfterEventsInsert: notifyEvents,
	})
	if err := s.Migrate(ctx, migrations, "migrations"); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	off, err := s.vectorOff(ctx)
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	s.pgvector = !off && s.enableVector(ctx)
	if s.pgvector {
		if err := s.SQL.QueryRowContext(ctx, `SELECT to_regtype('halfvec') IS NOT NULL`).Scan(&s.halfvec); err != nil {
			_ = db.Close()
			return nil, fmt.Errorf("open postgres: %w", err)
		}
	}
	opts.Logger.Debug("postgres store open", "pgvector", s.pgvector, "halfvec", s.halfvec)
	return s, nil
}

// HasPGVector reports whether native vector search is available.
func (s *Store) HasPGVector() bool { return s.pgvector }

// VectorSetting is the setting that keeps pgvector out of a store where
// the server has it: "off" as a parameter of the connection's URL
// (postgres://…/db?quarry.pgvector=off) or as the database's or role's
// (ALTER DATABASE db SET quarry.pgvector = off); "on", or not set, uses
// it where it can. Vectors are then ranked exactly, as on a server
// without pgvector.
const VectorSetting = "quarry.pgvector"

// vectorOff reads VectorSetting: from the URL (PGlite's socket server
// and proxies drop startup parameters), else from the session. A
// database whose chunks keep their embeddings in pgvector's column
// (written with it on) cannot be opened with it off: their embeddings
// are there only.
func (s *Store) vectorOff(ctx context.Context) (bool, error) {
	v, ok := s.cfg.RuntimeParams[VectorSetting]
	if !ok {
		var set sql.NullString
		if err := s.SQL.QueryRowContext(ctx, `SELECT current_setting($1, true)`, VectorSetting).Scan(&set); err != nil {
			return false, err
		}
		v = set.String
	}
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "on":
		return false, nil
	case "off":
	default:
		return false, fmt.Errorf("%s is %q: want on or off", VectorSetting, v)
	}
	written, err := s.vectorColumn(ctx)
	if err != nil {
		return false, err
	}
	if written {
		return false, fmt.Errorf("%s is off, but this database's chunks keep their embeddings in pgvector's column (they were written with it on): open it with pgvector on", VectorSetting)
	}
	return true, nil
}

// enableVector uses pgvector where its type is visible on the search
// path, creating the extension when it is not installed yet.
func (s *Store) enableVector(ctx context.Context) bool {
	var visible bool
	if err := s.SQL.QueryRowContext(ctx, `SELECT to_regtype('vector') IS NOT NULL`).Scan(&visible); err != nil {
		return false
	}
	if !visible {
		if _, err := s.SQL.ExecContext(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
			return false
		}
	}
	// The column is looked for before it is added: ALTER TABLE takes the
	// table's strongest lock even when the column is there, and while it
	// waited (behind an index build, for as long as the build runs) every
	// query of chunks, of every process, queued behind it.
	if has, err := s.vectorColumn(ctx); err != nil || has {
		return err == nil
	}
	if _, err := s.SQL.ExecContext(ctx, `ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding_vec vector`); err != nil {
		return false
	}
	return true
}

// vectorColumn reports whether the chunks table has pgvector's column,
// embedding_vec: it is looked for before it is added (enableVector), and
// a store with pgvector off refuses a database whose embeddings it holds
// (vectorOff).
func (s *Store) vectorColumn(ctx context.Context) (bool, error) {
	var has bool
	err := s.SQL.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
		WHERE attrelid = 'chunks'::regclass AND attname = 'embedding_vec' AND NOT attisdropped)`).Scan(&has)
	return has, err
}

func isUnique(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "23505"
}

// redactErr keeps connection errors from echoing a password: the user
// information of every URL in the message, up to its last "@" (a
// password may hold one unescaped, as URL parsers read it), becomes
// "***".
func redactErr(err error) error {
	msg := err.Error()
	var b strings.Builder
	rest, redacted := msg, false
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			break
		}
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		// A URL ends at a space or a mark it cannot hold unescaped (a
		// password may hold "'").
		end := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("`\"<>", r) })
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
			b.WriteString("***")
			rest, redacted = rest[at:], true
		}
	}
	if !redacted {
		return err // as it was, its chain kept for errors.Is
	}
	b.WriteString(rest)
	return errors.New(b.String())
}

// KBCreate creates the knowledge base. Its HNSW index, with pgvector, is
// built by EnsureVectorIndex once its first chunks are written.
func (s *Store) KBCreate(ctx context.Context, p store.KBCreateParams) (*store.KB, error) {
	return s.DB.KBCreate(ctx, p)
}

// Memory for an HNSW build: what its graph needs, in bytes per chunk
// beyond the vector (384 dimensions in 64 MB: 43,364 chunks at half
// precision, 28,968 at full, about 780 bytes each beyond 768 or 1,536),
// and the most it is given unless Options.IndexMemoryMB says otherwise
// (the build goes on, slower, past it).
const (
	hnswBytesPerChunk = 800
	hnswMaxMemoryMB   = 1024
)

// defaultEFSearch is the least hnsw.ef_search of a vector search
// (pgvector's own is 40), and maxEFSearch the most pgvector allows. At
// 1,001,803 generated chunks (BenchmarkScaleSearch, 200 claims, K=10)
// 100 finds 0.48 of the exact ten against 0.37 at 40, in the same time
// within noise (p50 22-26 ms both); 400 finds 0.66 at 59 ms, 1,000 0.77
// at 150 ms. A hybrid search's list asks for 100 and goes no deeper
// (efSearchFor).
const (
	defaultEFSearch = 100
	maxEFSearch     = 1000
)

// hnswM is the links an HNSW node keeps (seed 003), and
// defaultEFConstruction the ef_construction of an index built when
// Options.IndexEFConstruction does not say. On 1,011,737 generated
// topical chunks (2 cores, 200 SciFact claims, K = 10) 64 builds in about
// 390 s and finds 0.56 of the exact ten at ef_search 100, 0.77 at 400;
// 200 builds in 1,796 s and finds 0.74 and 0.94. Links did not help:
// m = 32 at 64 found what m = 16 did, on 100,000 chunks of 90 near-copies
// a source. The default keeps the build, and so a first ingest, fast;
// pgvector takes at most maxEFConstruction and at least 2 × hnswM.
const (
	hnswM                 = 16
	defaultEFConstruction = 64
	maxEFConstruction     = 1000
)

// refreshChunks is how many chunks an ingest writes before AfterIngest
// refreshes the tables' statistics and the text index's pending list.
const refreshChunks = 1000

// AfterIngest brings a knowledge base's indexes up to date once an
// ingest has written its chunks. Two things run side by side, on their
// own connections, since neither writes what the other reads:
//   - the knowledge base's first vector index is built over the chunks
//     (EnsureVectorIndex), on every core the server gives it;
//   - document frequencies a first ingest deferred (BeforeIngest) are
//     counted, then the term lists are built when they are due
//     (termlists.go), each on one core.
//
// One after the other, they left a core idle for the count and the lists
// (1,001,803 generated chunks: about 35 s after the build). Then, when the
// ingest wrote refreshChunks or more, the chunks and sources tables are
// analysed and the pending entries of the chunks' text index merged into
// it. Without that, a knowledge base's searches after a large ingest ran
// at half speed until autovacuum came by: the planner, taking the tables
// for empty, read the whole knowledge base's id index for every term, and
// each query scanned the GIN index's pending list (100,171 chunks: BM25
// p50 92 → 42 ms).
//
// In a long-lived process (SetBackgroundIndex) the vector index is built
// in the background instead, after the rest, and AfterIngest returns
// without waiting for it: a build outlasts an ingest job's time limit
// (a million chunks: 7 to 30 minutes), and the job's retries would each
// cancel it.
func (s *Store) AfterIngest(ctx context.Context, kb *store.KB, written int) error {
	counted := make(chan error, 1)
	go func() { counted <- safe.Call(func() error { return s.countAndList(ctx, kb.ID) }) }()
	var built error
	background := s.builds.on.Load()
	if !background {
		built = s.EnsureVectorIndex(ctx, kb)
	}
	if err := <-counted; err != nil {
		return err
	}
	if built != nil {
		return built
	}
	if written >= refreshChunks {
		if err := s.refresh(ctx, kb, `SELECT gin_clean_pending_list('chunks_terms'::regclass)`); err != nil {
			return err
		}
	}
	if background {
		s.buildInBackground(*kb, true)
	}
	return nil
}

// SetBackgroundIndex makes the store build vector indexes in the
// background, for a long-lived process (quarry serve, worker): an
// ingest's AfterIngest starts its build and returns, and a vector search
// of a knowledge base whose index a build left unfinished (cancelled with
// the process that ran it) builds it again, at most once a minute. Close
// cancels the builds still running; each leaves an unfinished index.
// Only an unfinished one: a knowledge base with no index may be in its
// first ingest, whose index is built over its chunks at its end, not
// grown by them.
func (s *Store) SetBackgroundIndex(on bool) { s.builds.on.Store(on) }

// buildRetry is how often searches of a knowledge base with no vector
// index start a build of it.
const buildRetry = time.Minute

// buildInBackground builds kb's vector index on its own goroutine, unless
// this process is building it already or, when not asked by an ingest
// (by a search that found it unfinished), tried within buildRetry.
func (s *Store) buildInBackground(kb store.KB, ingested bool) {
	b := &s.builds
	b.mu.Lock()
	if b.running[kb.ID] || !ingested && time.Since(b.tried[kb.ID]) < buildRetry || b.ctx.Err() != nil {
		b.mu.Unlock()
		return
	}
	b.running[kb.ID], b.tried[kb.ID] = true, time.Now()
	b.wg.Add(1)
	b.mu.Unlock()
	go func() {
		defer b.wg.Done()
		t0 := time.Now()
		err := safe.Call(func() error { return s.EnsureVectorIndex(b.ctx, &kb) })
		b.mu.Lock()
		delete(b.running, kb.ID)
		b.mu.Unlock()
		switch {
		case err != nil && b.ctx.Err() != nil:
			s.logger.Info("postgres: vector index build stopped with the store; the next build replaces it", "kb", kb.ID)
		case err != nil:
			s.logger.Error("postgres: vector index not built; the knowledge base's vectors are ranked exactly until a build succeeds", "kb", kb.ID, "err", redactErr(err))
		default:
			s.logger.Debug("postgres: vector index ensured", "kb", kb.ID, "seconds", time.Since(t0).Seconds())
		}
	}()
}

// Close cancels the vector index builds running in the background, waits
// for them to stop, and closes the database.
func (s *Store) Close() error {
	s.builds.mu.Lock()
	s.builds.cancel()
	s.builds.mu.Unlock()
	s.builds.wg.Wait()
	return s.DB.Close()
}

// countAndList counts the document frequencies a first ingest deferred,
// then builds the knowledge base's term lists when they are due. A build
// that fails is logged: the lists built before, with the entries added
// beside them, still bound every chunk, and searches lose only speed.
func (s *Store) countAndList(ctx context.Context, kbID int64) error {
	if err := s.settleTermDF(ctx, kbID); err != nil {
		return err
	}
	if err := s.buildTermListsIfDue(ctx, kbID); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.logger.Warn("postgres: ingest: term lists not rebuilt", "kb", kbID, "err", redactErr(err))
	}
	return nil
}

// BeforeIngest defers counting a knowledge base's document frequencies
// (kb_term_df) to the end of the ingest when the knowledge base holds no
// chunk yet: its inserts then leave kb_term_df alone, and AfterIngest
// counts every chunk's terms in one statement (migration 0022). On 2
// cores, a first ingest of 100,171 generated chunks took 94-97 s instead
// of 105-117, of 1,001,803 chunks 1,197 s instead of 1,310 (the chunks
// written and counted in 623 s instead of 790). Until the count, a search
// of the knowledge base counts its query terms' chunks itself (termIDFs).
//
// While the count waits, the ingest's batches update no row of the
// counts of terms, so it may write ingestWriters of them at once: one's
// sources and chunks, with their indexes, are written while the other's
// triggers run and it commits; they queue in their statements' triggers,
// which take the knowledge base's one row of term statistics first
// (migration 0023), so they never wait for each other in a cycle.
// One batch's transaction at a time left the server's backend idle while
// Quarry encoded it and read its ids, and the machine a fifth idle
// (1,001,803 generated chunks on 2 cores: written in about 360 s instead
// of 400; three at once wrote no faster than two at 100,000). Otherwise
// one at a time: two batches would queue on the counts of the terms they
// share.
func (s *Store) BeforeIngest(ctx context.Context, kb *store.KB) (int, error) {
	// A knowledge base removed meanwhile is left to the ingest's first
	// write to report.
	_, err := s.SQL.ExecContext(ctx, `INSERT INTO kb_term_df_pending (kb_id)
		SELECT id FROM knowledge_bases k WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM chunks WHERE kb_id = $1)
		ON CONFLICT DO NOTHING`, kb.ID)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23503" {
		return 1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("defer term counts: %w", err)
	}
	// Pending now, or still from an ingest that failed before its count.
	var pending bool
	if err := s.SQL.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM kb_term_df_pending WHERE kb_id = $1)`, kb.ID).Scan(&pending); err != nil {
		return 0, fmt.Errorf("defer term counts: %w", err)
	}
	if pending {
		return ingestWriters, nil
	}
	return 1, nil
}

// ingestWriters is how many batches a first ingest writes at once.
const ingestWriters = 2

// settleTermDF counts the document frequencies of a knowledge base whose
// count was deferred (BeforeIngest), in one transaction: it removes the
// knowledge base from kb_term_df_pending first, which waits for every
// insert or delete that skipped kb_term_df to commit (each holds a share
// lock on that row), then replaces the knowledge base's counts with those
// of its chunks. A write after the removal waits for the count to commit
// and then updates the counts itself. Nothing to count, nothing is done.
func (s *Store) settleTermDF(ctx context.Context, kbID int64) error {
	// Read committed, whatever the server's default: the count must see
	// the chunks of the writers the removal waited for.
	tx, err := s.SQL.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
	if err != nil {
		return fmt.Errorf("count terms: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	// The knowledge base's row first, as a chunk's insert takes it: a
	// removal of the knowledge base then waits for the count, or the
	// count finds it gone, instead of each waiting for the other.
	var one int
	switch err := tx.QueryRowContext(ctx, `SELECT 1 FROM knowledge_bases WHERE id = $1 FOR KEY SHARE`, kbID).Scan(&one); {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return fmt.Errorf("count terms: %w", err)
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM kb_term_df_pending WHERE kb_id = $1`, kbID)
	if err != nil {
		return fmt.Errorf("count terms: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("count terms: %w", err)
	}
	if n == 0 {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `SELECT set_config('work_mem', '64MB', true)`); err != nil {
		return fmt.Errorf("count terms: %w", err)
	}
	for _, stmt := range []string{
		`DELETE FROM kb_term_df WHERE kb_id = $1`,
		`INSERT INTO kb_term_df (kb_id, term, df)
			SELECT $1, t.term, count(*) FROM chunks c, unnest(tsvector_to_array(c.terms_tsv)) AS t(term)
			WHERE c.kb_id = $1 GROUP BY t.term ORDER BY t.term
			ON CONFLICT (kb_id, term) DO UPDATE SET df = EXCLUDED.df`,
	} {
		if _, err := tx.ExecContext(ctx, stmt, kbID); err != nil {
			return fmt.Errorf("count terms: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("count terms: %w", err)
	}
	return nil
}

// WhileIngesting analyses the chunks and sources tables, as AfterIngest
// does, once an ingest has written refreshChunks or more and the tables
// hold more than twice the chunks the planner last counted; it fails
// only when ctx ends. A long ingest into a new knowledge base otherwise
// plans each batch for the near-empty table the statistics describe
// until autovacuum comes by, and to its end when autovacuum is off:
// there, past 950,000 of 1M generated chunks, each 256-document batch
// spent 0.78 s deleting the chunks of sources that had none, by a
// sequential scan planned for 4 million rows where 258 were, and the
// searches run meanwhile planned for the same empty table. The tables
// are analysed about once each time they double: ten times over a
// million chunks.
func (s *Store) WhileIngesting(ctx context.Context, kb *store.KB, written int) error {
	if written < refreshChunks {
		return nil
	}
	var planned float64
	var held int64
	err := s.SQL.QueryRowContext(ctx, `SELECT greatest(c.reltuples, 0), (SELECT coalesce(sum(chunks), 0) FROM kb_term_stats)
		FROM pg_class c WHERE c.oid = 'chunks'::regclass`).Scan(&planned, &held)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.logger.Warn("postgres: during an ingest, chunk statistics not read; tables not analysed", "kb", kb.ID, "err", redactErr(err))
		return nil
	}
	if float64(held) <= 2*planned {
		return nil
	}
	return s.refresh(ctx, kb)
}

// refresh analyses the chunks and sources tables, then runs more, for an
// ingest of knowledge base kb. Each statement waits at most 100 ms for
// its lock: an analysis cannot run beside a vector index being built
// (EnsureVectorIndex), for another knowledge base, for many minutes; it
// is left to autovacuum then. Less than the server's deadlock_timeout
// (1 s by default): a build that ends while an analysis waits for its
// lock waits for the analysis's snapshot, and the analysis must give up
// before the server ends either as a deadlock.
func (s *Store) refresh(ctx context.Context, kb *store.KB, more ...string) error {
	for _, stmt := range append([]string{`ANALYZE chunks`, `ANALYZE sources`}, more...) {
		if err := s.execBriefLock(ctx, stmt); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// What was written stays written: a role that does not own
			// the tables leaves this to autovacuum, and says so.
			s.logger.Warn("postgres: ingest: tables not analysed; autovacuum will", "kb", kb.ID, "statement", stmt, "err", redactErr(err))
		}
	}
	return nil
}

// execBriefLock runs stmt in a transaction that waits at most 100 ms for
// a lock.
func (s *Store) execBriefLock(ctx context.Context, stmt string) error {
	tx, err := s.SQL.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT set_config('lock_timeout', '100ms', true)`); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, stmt); err != nil {
		return err
	}
	return tx.Commit()
}

// A knowledge base's HNSW index is over its vectors centred: each
// normalised to unit length, less the knowledge base's mean vector as it
// was when the index was built, at half precision (halfvec, pgvector 0.7
// and later), searched by inner product. For a query q of unit length,
// q·(x/|x| − m) is cos(q, x) less q·m, the same for every chunk, so the
// index ranks chunks as cosine does, whatever the mean; but where every
// vector shares a large component (the offline embedder's: the mean of
// 100,000 generated chunks has length 0.52; many models' embeddings are
// the same), cosine tells neighbours apart by what is left after it, and
// a graph built and searched over what is left finds the nearest more
// often: over those chunks, with 100 SciFact claims as queries, it
// returned 0.46 of the exact ten nearest against 0.31 uncentred at
// ef_search 40, 0.61 against 0.42 at 100, 0.82 against 0.62 at 400, in
// the same time (see docs/benchmarks.md for a million chunks).
//
// Knowledge bases indexed before keep their index: uncentred at half
// precision (built in 50 s where the full-precision one took 65 at
// 100,171 chunks, 112 MB against 196, as good a recall), or at full
// precision where halfvec is missing. Scores are computed at full
// precision either way.
type vectorIndex struct {
	name string // the index's name, before the knowledge base's id
	typ  string // the type the index's expression casts the vectors to
	ops  string
	// mean is the vector a centred index subtracts from each normalised
	// vector (nil for an uncentred one), and meanLit its literal, written
	// once, not at each search.
	mean    []float32
	meanLit string
}

// centred is the centred index over mean.
func centred(mean []float32) vectorIndex {
	ix := centredIndex
	ix.mean, ix.meanLit = mean, vectorLiteral(mean)
	return ix
}

var (
	centredIndex = vectorIndex{name: "chunks_cvec_kb", typ: "halfvec", ops: "halfvec_ip_ops"}
	halfIndex    = vectorIndex{name: "chunks_hvec_kb", typ: "halfvec", ops: "halfvec_cosine_ops"}
	fullIndex    = vectorIndex{name: "chunks_vec_kb", typ: "vector", ops: "vector_cosine_ops"}
)

// key is the expression ix indexes over the chunks' vectors (c, of dim
// dimensions), the one a query must order by to read it.
func (ix vectorIndex) key(c string, dim int) string {
	d := strconv.Itoa(dim)
	if ix.mean != nil {
		return `((l2_normalize(` + c + `embedding_vec) - '` + ix.meanLit + `'::vector(` + d + `))::halfvec(` + d + `))`
	}
	return `(` + c + `embedding_vec::` + ix.typ + `(` + d + `))`
}

// order is the operator and operand a query orders by, after key, to
// read ix for the vector in parameter $1: negative inner product for a
// centred index, cosine distance for the others.
func (ix vectorIndex) order(dim int) string {
	d := strconv.Itoa(dim)
	if ix.mean != nil {
		return ` <#> $1::vector(` + d + `)::halfvec(` + d + `)`
	}
	arg := `$1::vector(` + d + `)`
	if ix.typ != "vector" {
		arg += `::` + ix.typ + `(` + d + `)`
	}
	return ` <=> ` + arg
}

// maxHalfDimension is the most dimensions pgvector indexes at half
// precision (4,000; maxFullDimension at full precision).
const (
	maxHalfDimension = 4000
	maxFullDimension = 2000
)

// indexable reports whether pgvector can build an HNSW index over
// vectors of dim dimensions (EnsureVectorIndex builds one at half
// precision where it can).
func (s *Store) indexable(dim int) bool {
	return dim <= maxFullDimension || s.halfvec && dim <= maxHalfDimension
}

// vectorIndexOf returns the knowledge base's HNSW index and true, or false
// while it has none ready: none built, or one still being built (or left
// unfinished by a build that ended) by CREATE INDEX CONCURRENTLY, which
// the planner would not use; unfinished says whether there is such a one.
// An index found is remembered: it is dropped only with its knowledge
// base.
func (s *Store) vectorIndexOf(ctx context.Context, kbID int64) (ix vectorIndex, ok, unfinished bool, err error) {
	if ix, ok := s.indexes.Load(kbID); ok {
		return ix.(vectorIndex), true, false, nil
	}
	ix, ok, invalid, err := vectorIndexesOf(ctx, s.SQL, kbID)
	if err != nil || !ok {
		return vectorIndex{}, false, len(invalid) > 0, err
	}
	s.indexes.Store(kbID, ix)
	return ix, true, false, nil
}

// rowQuerier is what reads a row: the pool, or one of its connections.
type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// vectorIndexesOf reads the knowledge base's vector indexes from the
// catalog: the valid one it is searched through, if any, and the names of
// those that are there but not valid — being built, or left by a build
// that ended before it finished.
func vectorIndexesOf(ctx context.Context, q rowQuerier, kbID int64) (ix vectorIndex, ok bool, invalid []string, err error) {
	id := strconv.FormatInt(kbID, 10)
	kinds := []vectorIndex{centredIndex, halfIndex, fullIndex}
	var valid [3]sql.NullBool // null: no such index
	var mean []float32
	err = q.QueryRowContext(ctx, `SELECT
		(SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($1)),
		(SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($2)),
		(SELECT indisvalid FROM pg_index WHERE indexrelid = to_regclass($3)),
		(SELECT mean FROM kb_vector_means WHERE kb_id = $4)`,
		kinds[0].name+id, kinds[1].name+id, kinds[2].name+id, kbID).Scan(&valid[0], &valid[1], &valid[2], pgtype.NewMap().SQLScanner(&mean))
	if err != nil {
		return vectorIndex{}, false, nil, fmt.Errorf("vector index of kb %d: %w", kbID, err)
	}
	for i, v := range valid {
		switch {
		case !v.Valid:
		case !v.Bool:
			invalid = append(invalid, kinds[i].name+id)
		case ok:
		case i == 0 && mean != nil:
			ix, ok = centred(mean), true
		case i > 0:
			ix, ok = kinds[i], true
		}
	}
	return ix, ok, invalid, nil
}

// buildClaim is the key of the session-level advisory lock a process
// holds while it builds a knowledge base's vector index ($1, the
// knowledge base's id, as text), in the schema its tables are in: knowledge bases
// of other schemas on the server share their ids.
const buildClaim = `hashtextextended('quarry vector index ' || current_schema() || ' ' || $1, 0)`

// tableClaim is the key of the advisory lock a build holds on the chunks
// table, of whatever knowledge base, and buildPoll how often a build
// tries it while another holds it. Two concurrent builds of one table
// cannot run together: the second waits for the first's lock, holding a
// snapshot, and the first, before it ends, waits for every older
// snapshot to go, so PostgreSQL ends one of them as a deadlock (measured:
// a 10,000-chunk knowledge base's build begun during a 100,000-chunk
// one's killed the larger). The claim is tried, never waited for in the
// server, since a wait there holds a snapshot too.
const tableClaim = `hashtextextended('quarry vector index build ' || current_schema(), 0)`

var buildPoll = time.Second

// claimTable takes tableClaim for conn's session, trying it every
// buildPoll until it has it, ctx ends or, when wait is more than 0, wait
// has passed; it reports whether it has it.
func claimTable(ctx context.Context, conn *sql.Conn, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		var claimed bool
		if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(`+tableClaim+`)`).Scan(&claimed); err != nil || claimed {
			return claimed, err
		}
		if wait > 0 && time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(buildPoll):
		}
	}
}

// sessionConn takes a connection of its own from the pool for work that
// leaves state on its session (advisory claims, settings), and the func
// that discards it after, so that no later user of the pool inherits
// that state.
func (s *Store) sessionConn(ctx context.Context) (*sql.Conn, func(), error) {
	conn, err := s.SQL.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	return conn, func() {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		_ = conn.Close()
	}, nil
}

// kbDeleteWait is how long a knowledge base's delete waits for the
// claim on the chunks table to drop the knowledge base's vector index.
const kbDeleteWait = 5 * time.Second

// EnsureVectorIndex builds the knowledge base's HNSW index (m=16,
// Options.IndexEFConstruction or 64, see vectorIndex) when it has none
// and holds chunks, with the memory its chunks need, up to
// Options.IndexMemoryMB (1 GB): a build of the chunks written is many
// times faster than inserting each into a growing index. Without
// pgvector it does nothing.
//
// The build is CREATE INDEX CONCURRENTLY: writes to the chunks table, of
// this knowledge base or another, go on while it runs, and a vector
// search of the knowledge base ranks its chunks exactly until the index
// is valid. A plain CREATE INDEX held a lock that stopped every write of
// chunks, whatever their knowledge base, for as long as the build took
// (1,011,737 chunks at ef_construction 200: 30 minutes). A build that
// ends before it finishes (cancelled, its process gone) leaves an
// invalid index, which the next call drops and builds again. One process
// builds at a time, holding an advisory lock: another finds it held and
// returns at once, leaving the build to the holder.
func (s *Store) EnsureVectorIndex(ctx context.Context, kb *store.KB) error {
	if !s.pgvector || kb.Dimension <= 0 || !s.indexable(kb.Dimension) {
		// pgvector indexes no vectors this wide: its chunks are ranked
		// exactly, as without pgvector.
		return nil
	}
	kbID := kb.ID
	id := strconv.FormatInt(kbID, 10)
	if _, ok, _, err := s.vectorIndexOf(ctx, kbID); err != nil || ok {
		return err
	}
	var n int64
	if err := s.SQL.QueryRowContext(ctx, `SELECT count(*) FROM chunks WHERE kb_id = $1`, kbID).Scan(&n); err != nil {
		return fmt.Errorf("vector index of kb %d: %w", kbID, err)
	}
	if n == 0 {
		return nil // built over the first chunks written, not grown by them
	}
	ix, width := fullIndex, 4 // bytes a component
	if s.halfvec && kb.Dimension <= maxHalfDimension {
		ix, width = centredIndex, 2
	}
	mem := min(s.indexMB, max(64, n*int64(kb.Dimension*width+hnswBytesPerChunk)>>20+1))
	// One connection for the build, out of any transaction (a concurrent
	// build cannot run in one): its session holds the claims and the
	// build's memory.
	conn, discard, err := s.sessionConn(ctx)
	if err != nil {
		return fmt.Errorf("vector index of kb %d: %w", kbID, err)
	}
	defer discard()
	var claimed bool
	if err := conn.QueryRowContext(ctx, `SELECT pg_try_advisory_lock(`+buildClaim+`)`, id).Scan(&claimed); err != nil {
		return fmt.Errorf("vector index of kb %d: claim: %w", kbID, err)
	}
	if !claimed {
		return nil // being built by another process
	}
	if _, err := claimTable(ctx, conn, 0); err != nil {
		return fmt.Errorf("vector index of kb %d: waiting for another build: %w", kbID, err)
	}
	if err := dropOrphanIndexes(ctx, conn); err != nil {
		// Left for the next build: no reason not to build this one.
		s.logger.Warn("postgres: indexes of deleted knowledge bases not dropped", "err", redactErr(err))
	}
	// Under the claim, what the holder before left: its index, or one it
	// did not finish.
	_, built, invalid, err := vectorIndexesOf(ctx, conn, kbID)
	if err != nil || built {
		return err
	}
	// A knowledge base deleted while the build waited has no chunks (one
	// deleted from here on leaves an empty index, of no use and in no
	// one's way, until the next build drops it: dropOrphanIndexes).
	var held bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM chunks WHERE kb_id = $1)`, kbID).Scan(&held); err != nil {
		return fmt.Errorf("vector index of kb %d: %w", kbID, err)
	}
	if !held {
		return nil
	}
	for _, name := range invalid {
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return fmt.Errorf("vector index of kb %d: drop unfinished %s: %w", kbID, name, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `SELECT set_config('maintenance_work_mem', $1, false)`, strconv.FormatInt(mem, 10)+"MB"); err != nil {
		return fmt.Errorf("vector index of kb %d: %w", kbID, err)
	}
	if ix.name == centredIndex.name {
		// The mean of the vectors written so far, kept with the index:
		// a query orders by the very expression the index holds. The
		// index is not there (nor valid) before the mean is written.
		d := strconv.Itoa(kb.Dimension)
		err := conn.QueryRowContext(ctx, `SELECT avg(l2_normalize(embedding_vec::vector(`+d+`)))::real[] FROM chunks
			WHERE kb_id = $1 AND embedding_vec IS NOT NULL`, kbID).Scan(pgtype.NewMap().SQLScanner(&ix.mean))
		if err != nil {
			return fmt.Errorf("vector index of kb %d: mean: %w", kbID, err)
		}
		if ix.mean == nil {
			return nil // no vectors yet
		}
		ix = centred(ix.mean)
		if _, err := conn.ExecContext(ctx, `INSERT INTO kb_vector_means (kb_id, mean) VALUES ($1, $2)
			ON CONFLICT (kb_id) DO UPDATE SET mean = EXCLUDED.mean`, kbID, ix.mean); err != nil {
			return fmt.Errorf("vector index of kb %d: mean: %w", kbID, err)
		}
	}
	stmt := `CREATE INDEX CONCURRENTLY IF NOT EXISTS ` + ix.name + id + ` ON chunks USING hnsw (` + ix.key("", kb.Dimension) + ` ` + ix.ops + `)
		WITH (m = ` + strconv.Itoa(hnswM) + `, ef_construction = ` + strconv.Itoa(s.efBuild) + `) WHERE kb_id = ` + id
	if _, err := conn.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("vector index of kb %d: %w", kbID, err)
	}
	return nil
}

// dropOrphanIndexes drops, concurrently, the vector indexes of the chunks
// table left by knowledge bases deleted while another's build held the
// table (KBDelete leaves them, empty): conn holds tableClaim, so no build
// runs beside the drops.
func dropOrphanIndexes(ctx context.Context, conn *sql.Conn) error {
	rows, err := conn.QueryContext(ctx, `SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		WHERE x.indrelid = 'chunks'::regclass AND i.relname ~ '^chunks_[ch]?vec_kb[0-9]+$'
			AND NOT EXISTS (SELECT 1 FROM knowledge_bases k WHERE k.id = substring(i.relname FROM '[0-9]+$')::bigint)`)
	if err != nil {
		return fmt.Errorf("indexes of deleted knowledge bases: %w", err)
	}
	var names []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			rows.Close()
			return fmt.Errorf("indexes of deleted knowledge bases: %w", err)
		}
		names = append(names, name)
	}
	if err := rows.Close(); err != nil {
		return fmt.Errorf("indexes of deleted knowledge bases: %w", err)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("indexes of deleted knowledge bases: %w", err)
	}
	for _, name := range names {
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+name); err != nil {
			return fmt.Errorf("drop %s, a deleted knowledge base's: %w", name, err)
		}
	}
	return nil
}

// KBDelete drops the knowledge base and its HNSW index, cancelling a
// build of that index another session runs.
func (s *Store) KBDelete(ctx context.Context, name string) error {
	kb, err := s.KBGet(ctx, name)
	if err != nil {
		return err
	}
	if err := s.DB.KBDelete(ctx, name); err != nil {
		return err
	}
	if !s.pgvector {
		return nil
	}
	s.indexes.Delete(kb.ID)
	// The build's session holds the claim: its statement is cancelled,
	// which leaves its index invalid, dropped below. Where the role may
	// not cancel it, the drop waits for the build to end.
	if _, err := s.SQL.ExecContext(ctx, `SELECT pg_cancel_backend(l.pid) FROM pg_locks l, (SELECT `+buildClaim+` AS k) c
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.classid = ((c.k >> 32) & 4294967295)::oid AND l.objid = (c.k & 4294967295)::oid
			AND l.pid <> pg_backend_pid()`, strconv.FormatInt(kb.ID, 10)); err != nil {
		s.logger.Warn("postgres: kb delete: index build not cancelled", "kb", kb.ID, "err", redactErr(err))
	}
	// Concurrently: a plain drop would stop every search of chunks while
	// it waited for its lock. Under the claim on the table builds take:
	// a drop waiting for another knowledge base's build holds a snapshot
	// the build waits for at its end, and PostgreSQL would end one of
	// them as a deadlock. While another build holds the claim, the index,
	// empty now and of no use, stays until the next build
	// (dropOrphanIndexes).
	conn, discard, err := s.sessionConn(ctx)
	if err != nil {
		return fmt.Errorf("kb delete %q: drop index: %w", name, err)
	}
	defer discard()
	claimed, err := claimTable(ctx, conn, kbDeleteWait)
	if err != nil {
		return fmt.Errorf("kb delete %q: drop index: %w", name, err)
	}
	if !claimed {
		s.logger.Info("postgres: kb delete: another knowledge base's vector index is being built; this one's, empty, is left for the next build to drop", "kb", kb.ID)
		return nil
	}
	for _, ix := range []vectorIndex{centredIndex, halfIndex, fullIndex} {
		if _, err := conn.ExecContext(ctx, `DROP INDEX CONCURRENTLY IF EXISTS `+ix.name+strconv.FormatInt(kb.ID, 10)); err != nil {
			return fmt.Errorf("kb delete %q: drop index: %w", name, err)
		}
	}
	return nil
}

// nativeVector reads a chunk's embedding from its pgvector column when
// pgvector is there: with it, each embedding is stored once, there (rows
// written before keep their BYTEA copy too, which is read first).
func (s *Store) nativeVector() (string, func([]byte) ([]float32, error)) {
	if !s.pgvector {
		return "", nil
	}
	return "vector_send(c.embedding_vec)", decodePGVector
}

// decodePGVector reads pgvector's binary form (vector_send): the
// dimension and a reserved word as big-endian 16-bit integers, then each
// component as a big-endian float32.
func decodePGVector(b []byte) ([]float32, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("pgvector: %d bytes, want at least 4", len(b))
	}
	dim := int(binary.BigEndian.Uint16(b))
	if len(b) != 4+4*dim {
		return nil, fmt.Errorf("pgvector: %d bytes for %d dimensions", len(b), dim)
	}
	v := make([]float32, dim)
	for i := range v {
		v[i] = math.Float32frombits(binary.BigEndian.Uint32(b[4+4*i:]))
	}
	return v, nil
}

func vectorLiteral(v []float32) string {
	var b strings.Builder
	b.Grow(len(v) * 10)
	b.WriteByte('[')
	for i, f := range v {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.FormatFloat(float64(f), 'g', -1, 32))
	}
	b.WriteByte(']')
	return b.String()
}

// chunkBatch is how many chunks one INSERT writes (8 or 9 parameters
// each, under PostgreSQL's 65,535): an ingest's batch of 256 one-chunk
// documents in one statement, whose trigger upserts each distinct term's
// document frequency once (20,041 generated chunks: 673,000 upserts at
// 200 chunks a statement, 530,000 at 256).
const chunkBatch = 1000

// insertChunks writes chunks of one or more sources chunkBatch rows to a
// statement: a round trip, and one run of the statement triggers, per
// batch, not per chunk or per source. With pgvector, the embedding
// goes to the vector column only, sent as a binary float4 array: a text
// literal took 3% of Quarry's ingest CPU to format, and PostgreSQL's to
// parse.
func (s *Store) insertChunks(ctx context.Context, tx *sql.Tx, kbID int64, chunks []store.Chunk) error {
	cols, width := `source_id, kb_id, chunk_index, text, token_count, language, embedding, terms`, 8
	if s.pgvector {
		cols, width = cols+`, embedding_vec`, 9
	}
	for len(chunks) > 0 {
		batch := chunks[:min(len(chunks), chunkBatch)]
		chunks = chunks[len(batch):]
		var b strings.Builder
		b.WriteString(`INSERT INTO chunks (` + cols + `) VALUES `)
		args := make([]any, 0, width*len(batch))
		for i, c := range batch {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteByte('(')
			for k := range width {
				if k > 0 {
					b.WriteString(", ")
				}
				b.WriteString("$" + strconv.Itoa(len(args)+k+1))
			}
			if width == 9 {
				b.WriteString("::real[]::vector")
			}
			b.WriteByte(')')
			var stored, vec any // the embedding, in one column or the other
			switch {
			case width == 8:
				stored = store.EncodeVector(c.Embedding)
			case c.Embedding != nil:
				vec = c.Embedding
			}
			args = append(args, c.SourceID, kbID, c.ChunkIndex, c.Text, c.TokenCount, sqlstore.OrUnd(c.Language), stored, c.Terms)
			if width == 9 {
				args = append(args, vec)
			}
		}
		b.WriteString(` RETURNING id, source_id, chunk_index`)
		ids, err := insertedIDs(ctx, tx, b.String(), args, batch)
		if err != nil {
			return fmt.Errorf("chunks of sources %d-%d: %w", batch[0].SourceID, batch[len(batch)-1].SourceID, err)
		}
		if err := s.addToTermLists(ctx, tx, kbID, batch, ids); err != nil {
			return err
		}
	}
	return nil
}

// insertedIDs runs an INSERT of chunks that returns each row's id, source
// and index, and returns the ids in the order of chunks.
func insertedIDs(ctx context.Context, tx *sql.Tx, stmt string, args []any, chunks []store.Chunk) ([]int64, error) {
	type key struct {
		source int64
		index  int
	}
	at := make(map[key]int, len(chunks))
	for i, c := range chunks {
		at[key{c.SourceID, c.ChunkIndex}] = i
	}
	rows, err := tx.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	ids := make([]int64, len(chunks))
	seen := 0
	for rows.Next() {
		var id int64
		var k key
		if err := rows.Scan(&id, &k.source, &k.index); err != nil {
			return nil, err
		}
		i, ok := at[k]
		if !ok {
			return nil, fmt.Errorf("insert returned chunk %d of source %d, not written", k.index, k.source)
		}
		ids[i] = id
		seen++
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if seen != len(chunks) {
		return nil, fmt.Errorf("insert returned %d of %d chunks", seen, len(chunks))
	}
	return ids, nil
}

// efSearchFor is the hnsw.ef_search of a search for k chunks: at least
// k and Options.VectorSearchEF, at most pgvector's 1,000. A hybrid
// search's list (fused) goes no deeper than k or defaultEFSearch: fusion
// with BM25 needs its candidates, not the exact ten, and at 1,011,737
// chunks a hybrid search at ef_search 600 took 70 ms at p50.
func (s *Store) efSearchFor(k int, fused bool) int {
	ef := s.efSearch
	if fused {
		ef = min(ef, defaultEFSearch)
	}
	return min(maxEFSearch, max(ef, k))
}

// exactVectorBudget is how long a vector search of a knowledge base with
// no vector index yet waits for all its chunks ranked exactly (at
// 1,000,000 chunks on 2 cores, beside the index's build, that took
// 10–25 s; see docs/benchmarks.md, "Building beside writes"), and
// exactRetry how long after one took longer the searches of that
// knowledge base fail at once instead of waiting again.
var (
	exactVectorBudget = 2 * time.Second
	exactRetry        = 30 * time.Second
)

// ChunkVectorSearch returns the K chunks nearest by cosine through the
// knowledge base's HNSW index, of those q.Filter keeps (chunks of an
// incomplete source, a long document still being written, are always
// left out, as the store's scans leave them out). It fails when pgvector
// is not available, and with store.ErrVectorIndexBuilding when the
// knowledge base has no index yet (and can have one), the filter keeps
// more than maxFewVectors of its chunks, and ranking them exactly takes
// more than exactVectorBudget, or took more within exactRetry.
func (s *Store) ChunkVectorSearch(ctx context.Context, q store.VectorQuery) ([]store.VectorHit, error) {
	if !s.pgvector {
		return nil, errors.New("chunk vector search: pgvector is not installed")
	}
	if q.Dimension != len(q.Vector) || q.Dimension <= 0 {
		return nil, fmt.Errorf("chunk vector search: %w", &store.ValidationError{Field: "vector", Rule: fmt.Sprintf("must have %d dimensions, got %d", q.Dimension, len(q.Vector))})
	}
	ix, _, unfinished, err := s.vectorIndexOf(ctx, q.KBID)
	if err != nil {
		return nil, fmt.Errorf("chunk vector search: %w", err)
	}
	if unfinished && s.builds.on.Load() {
		s.buildInBackground(store.KB{ID: q.KBID, Dimension: q.Dimension}, false)
	}
	narrow, err := s.narrow(ctx, q.KBID, q.Filter)
	if err != nil || narrow.none {
		return nil, err
	}
	if narrow.few(maxFewVectors) {
		// The chunks the filter passes, few, ranked exactly (the index
		// would pass over most of them).
		ix = vectorIndex{}
	}
	where, fargs := sqlstore.FilterSQL(q.Filter)
	nwhere, nargs := narrow.where()
	where, fargs = where+nwhere, append(fargs, nargs...)
	query := vectorQuery(q.KBID, q.Dimension, ix, where)
	// No index yet, and one to come (a first ingest's, being written or
	// built): every chunk the filter keeps is ranked, which at a million
	// chunks beside the build takes many seconds; a search waits
	// exactVectorBudget for it, and none waits again for exactRetry after
	// one took longer. A knowledge base pgvector cannot index is ranked
	// exactly however long it takes.
	budget := ix.name == "" && !narrow.few(maxFewVectors) && s.indexable(q.Dimension)
	if budget {
		if ago, ok := s.slowAgo(ctx, q.KBID); ok && ago < exactRetry {
			return nil, fmt.Errorf("chunk vector search of kb %d: its exact ranking took longer than %s %s ago: %w", q.KBID, exactVectorBudget, ago.Round(time.Second), store.ErrVectorIndexBuilding)
		}
	}
	// HNSW returns at most ef_search rows: raise it for this query to K,
	// so deep candidate lists for fusion are complete.
	tx, err := s.SQL.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("chunk vector search: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `SELECT set_config('hnsw.ef_search', $1, true)`, strconv.Itoa(s.efSearchFor(q.K, q.Fused))); err != nil {
		return nil, fmt.Errorf("chunk vector search: ef_search: %w", err)
	}
	if q.Filter != (store.ChunkFilter{IncludeStale: true}) {
		// Filters drop rows after the index: pgvector 0.8's iterative
		// scan keeps going until K pass them (older versions refuse the
		// setting, in a savepoint so the query goes on with ef_search).
		if _, err := tx.ExecContext(ctx, `SAVEPOINT iterative`); err == nil {
			if _, err := tx.ExecContext(ctx, `SET LOCAL hnsw.iterative_scan = relaxed_order`); err != nil {
				_, _ = tx.ExecContext(ctx, `ROLLBACK TO SAVEPOINT iterative`)
			}
		}
	}
	if budget {
		if _, err := tx.ExecContext(ctx, `SELECT set_config('statement_timeout', $1, true)`, strconv.FormatInt(exactVectorBudget.Milliseconds(), 10)); err != nil {
			return nil, fmt.Errorf("chunk vector search: %w", err)
		}
	}
	// A ranking past its budget fails with the query, or (rows streamed)
	// with the rows.
	overBudget := func(err error) error {
		var pe *pgconn.PgError
		if budget && ctx.Err() == nil && errors.As(err, &pe) && pe.Code == "57014" {
			// Its connection back first: a pool of one has no other.
			_ = tx.Rollback()
			s.markSlow(ctx, q.KBID)
			return fmt.Errorf("chunk vector search of kb %d, exact for %s: %w", q.KBID, exactVectorBudget, store.ErrVectorIndexBuilding)
		}
		return fmt.Errorf("chunk vector search: %w", err)
	}
	rows, err := tx.QueryContext(ctx, query, append(append([]any{vectorLiteral(q.Vector)}, fargs...), q.K)...)
	if err != nil {
		return nil, overBudget(err)
	}
	defer rows.Close()
	var hits []store.VectorHit
	for rows.Next() {
		var h store.VectorHit
		if err := rows.Scan(&h.ChunkID, &h.Score); err != nil {
			return nil, fmt.Errorf("chunk vector search: %w", err)
		}
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, overBudget(err)
	}
	// The index orders by its own precision, and an iterative scan only
	// roughly: the hits go by their exact scores.
	slices.SortStableFunc(hits, func(a, b store.VectorHit) int { return cmp.Compare(b.Score, a.Score) })
	return hits, nil
}

// slowAgo is how long ago a search of the knowledge base, by any process
// (this one, a one-shot command, another replica), last found its exact
// ranking slower than exactVectorBudget (kb_exact_slow, by the database's
// clock); false when none did (or it cannot be read: the search then
// waits its budget). The row goes with its knowledge base.
func (s *Store) slowAgo(ctx context.Context, kbID int64) (time.Duration, bool) {
	var secs float64
	err := s.SQL.QueryRowContext(ctx, `SELECT extract(epoch FROM now() - at)::float8 FROM kb_exact_slow WHERE kb_id = $1`, kbID).Scan(&secs)
	if err != nil {
		return 0, false
	}
	return time.Duration(secs * float64(time.Second)), true
}

// markSlow records in kb_exact_slow, for every process, that the
// knowledge base's exact ranking took longer than exactVectorBudget; a
// failure to write it is logged, not the search's.
func (s *Store) markSlow(ctx context.Context, kbID int64) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if _, err := s.SQL.ExecContext(ctx, `INSERT INTO kb_exact_slow (kb_id, at) VALUES ($1, now())
		ON CONFLICT (kb_id) DO UPDATE SET at = EXCLUDED.at`, kbID); err != nil {
		s.logger.Warn("postgres: a slow exact vector ranking not recorded for other processes", "kb", kbID, "err", redactErr(err))
	}
}

// vectorQuery is the query for the K chunks (the last argument) of a
// knowledge base nearest to a vector (the first, a vector literal) that
// the filter keeps (where, over the arguments between), ordered through
// ix, the knowledge base's HNSW index (exactly when it has none: an empty
// ix orders by cosine at full precision), and scored by cosine at full
// precision.
func vectorQuery(kbID int64, dim int, ix vectorIndex, where string) string {
	d := strconv.Itoa(dim)
	if ix.typ == "" {
		ix = fullIndex
	}
	return numberFrom(`SELECT c.id, 1 - (c.embedding_vec::vector(`+d+`) <=> $1::vector(`+d+`)) FROM chunks c JOIN sources s ON s.id = c.source_id
		WHERE c.kb_id = `+strconv.FormatInt(kbID, 10)+` AND c.embedding_vec IS NOT NULL`+where+
		` ORDER BY `+ix.key("c.", dim)+ix.order(dim)+` LIMIT ?`, 2)
}

// EventsChannel is the notification channel that names, as its payload,
// each research whose events were just stored.
const EventsChannel = "quarry_research_events"

func notifyEvents(ctx context.Context, tx *sql.Tx, researchID string) error {
	_, err := tx.ExecContext(ctx, `SELECT pg_notify($1, $2)`, EventsChannel, researchID)
	return err
}

// ListenEvents calls fn with the id of each research whose events another
// connection stored (delivered when that transaction commits), until ctx
// ends. A lost connection is dialled again after a pause; fn may then
// have missed notifications, which callers cover by reading the store.
func (s *Store) ListenEvents(ctx context.Context, fn func(researchID string)) error {
	pause := time.Second
	for ctx.Err() == nil {
		listened, err := s.listen(ctx, fn)
		if ctx.Err() != nil {
			break
		}
		if listened {
			pause = time.Second
		}
		s.logger.Warn("postgres: event notifications interrupted; listening again", "in", pause, "err", redactErr(err))
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		// A server that keeps refusing is asked less often, up to every
		// 30 s; a connection that listened starts again from 1 s.
		pause = min(2*pause, 30*time.Second)
	}
	return nil
}

// listen listens on one connection until it fails; listened reports
// whether it got as far as listening.
func (s *Store) listen(ctx context.Context, fn func(string)) (listened bool, err error) {
	conn, err := pgx.ConnectConfig(ctx, s.cfg)
	if err != nil {
		return false, err
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN "+EventsChannel); err != nil {
		return false, err
	}
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return true, err
		}
		fn(n.Payload)
	}
}

// ConnConfig is a copy of the connection's configuration, for a second
// pool on the same database (River's, which speaks pgx natively).
func (s *Store) ConnConfig() *pgx.ConnConfig { return s.cfg.Copy() }
