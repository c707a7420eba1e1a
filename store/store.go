// Package store defines Quarry's persistent entities and the Store interface
// every backend implements. Methods are named entity-first (KBCreate,
// SourcePut, CrawlLogList) and take *Params structs where arguments grow.
// Backends live in sub-packages named after what they wrap: store/sqlite (the
// embedded default) and store/postgres (scale-out). One conformance suite,
// store/storetest, runs against both.
package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry/errcode"
)

// Sentinel errors callers branch on.
var (
	ErrNotFound = errcode.Sentinel(errcode.NotFound, "not found")
	ErrExists   = errcode.Sentinel(errcode.Conflict, "already exists")
	// ErrBusy is returned when another process holds what was asked for
	// (a research's lease).
	ErrBusy = errcode.Sentinel(errcode.Conflict, "busy")
	// ErrVectorIndexBuilding is returned by a vector search of a knowledge
	// base whose vector index is not built yet (it is built when the
	// first ingest has written its chunks) when ranking all its chunks
	// exactly takes longer than a search may wait.
	ErrVectorIndexBuilding = errcode.Sentinel(errcode.Unavailable, "the knowledge base has no vector index yet (it is built when its first ingest ends), and ranking all its chunks exactly took longer than a search waits; search by terms (mode bm25), or again once the index is built")
)

// KB is a knowledge base: a named collection of sources and their chunks,
// tied to the embedder that produced its vectors.
type KB struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Embedder    string    `json:"embedder"`
	Dimension   int       `json:"dimension"`
	CreatedAt   time.Time `json:"created_at"`
	// Version increases on every change to the KB's sources or chunks, so
	// in-memory indexes know when to reload.
	Version int64 `json:"version"`
}

// Source is one document in a knowledge base: a crawled page or an ingested
// file or corpus record.
type Source struct {
	ID           int64             `json:"id"`
	KBID         int64             `json:"kb_id"`
	URL          string            `json:"url"`
	DocID        string            `json:"doc_id,omitempty"`
	Title        string            `json:"title"`
	Content      string            `json:"content"`
	Language     string            `json:"language"`
	LastModified *time.Time        `json:"last_modified,omitempty"`
	CrawledAt    time.Time         `json:"crawled_at"`
	IsStale      bool              `json:"is_stale"`
	Metadata     map[string]string `json:"metadata,omitempty"`
	ContentHash  string            `json:"content_hash"`
	ETag         string            `json:"etag,omitempty"`
	FailCount    int               `json:"fail_count"`
}

// Chunk is a piece of a source's content, at most 512 tokens.
type Chunk struct {
	ID         int64     `json:"id"`
	SourceID   int64     `json:"source_id"`
	KBID       int64     `json:"kb_id"`
	ChunkIndex int       `json:"chunk_index"`
	Text       string    `json:"text"`
	TokenCount int       `json:"token_count"`
	Language   string    `json:"language"`
	Embedding  []float32 `json:"-"`
	// Terms is the analyzed form of the chunk (title included), space
	// separated, used to rebuild the BM25 index without re-analyzing.
	Terms string `json:"-"`
}

// IndexedChunk is a chunk with the fields of its source that search needs.
type IndexedChunk struct {
	Chunk
	SourceURL   string
	SourceTitle string
	DocID       string
	IsStale     bool
}

// ChunkState is a chunk's id and whether its source is stale.
type ChunkState struct {
	ID      int64
	IsStale bool
}

// CrawlLog records one crawl run.
type CrawlLog struct {
	ID              int64      `json:"id"`
	KBID            int64      `json:"kb_id"`
	URL             string     `json:"url"`
	Status          string     `json:"status"`
	PagesCrawled    int        `json:"pages_crawled"`
	PagesUpdated    int        `json:"pages_updated"`
	PagesFailed     int        `json:"pages_failed"`
	ErrorMessage    string     `json:"error_message,omitempty"`
	DurationSeconds float64    `json:"duration_seconds"`
	StartedAt       time.Time  `json:"started_at"`
	FinishedAt      *time.Time `json:"finished_at,omitempty"`
}

// Crawl log statuses.
const (
	CrawlRunning = "running"
	CrawlSuccess = "success"
	CrawlFailed  = "failed"
)

// KBCreateParams creates a knowledge base.
type KBCreateParams struct {
	Name        string
	Description string
	Embedder    string
	Dimension   int
}

// KBStats counts a knowledge base's contents.
type KBStats struct {
	Sources int `json:"sources"`
	Chunks  int `json:"chunks"`
	Stale   int `json:"stale"`
	Tokens  int `json:"tokens"`
}

// SourcePut writes a source and, when Chunks is non-nil, replaces all of its
// chunks. A source is matched by (KBID, URL).
type SourcePut struct {
	Source Source
	Chunks []Chunk
}

// SourceAppendChunksParams adds chunks to a source already written, for a
// document too large to write in one transaction.
type SourceAppendChunksParams struct {
	SourceID int64
	// Chunks must have chunk indexes the source does not have yet.
	Chunks []Chunk
	// Final also sets the source's ContentHash, ETag and LastModified, in
	// the same transaction as its last chunks. Until then the source keeps
	// the empty content hash and no validators it was first written with,
	// so one cut short looks changed to the next ingest (and is fetched
	// again unconditionally), which writes it again.
	Final        bool
	ContentHash  string
	ETag         string
	LastModified *time.Time
}

// SourceTouch is a successful fetch of an unchanged source: its validators
// and crawl time are updated, its failure count reset and its stale flag
// cleared, without touching content or chunks.
type SourceTouch struct {
	URL          string
	ETag         string
	LastModified *time.Time
	CrawledAt    time.Time
}

// PendingPage is a page a crawl found but could not fetch yet.
type PendingPage struct {
	URL       string
	Depth     int
	FailCount int
}

// CrawlLogUpdateParams finishes or updates a crawl log.
type CrawlLogUpdateParams struct {
	ID              int64
	Status          string
	PagesCrawled    int
	PagesUpdated    int
	PagesFailed     int
	ErrorMessage    string
	DurationSeconds float64
	FinishedAt      *time.Time
}

// VectorQuery asks a backend with native vector search for nearest chunks.
type VectorQuery struct {
	KBID      int64
	Dimension int
	Vector    []float32
	K         int
	Filter    ChunkFilter
	// Fused marks the list as one a hybrid search fuses with BM25's: an
	// approximate index searches it no deeper than its default or K,
	// whatever deeper search it is set to give vector searches.
	Fused bool
}

// ChunkFilter keeps the chunks a search may return: by default those of
// complete, fresh documents in any language.
type ChunkFilter struct {
	Language     string // "" = any
	SourcePrefix string // the source URL starts with it ("" = any)
	IncludeStale bool
}

// TermQuery asks a backend that indexes chunks' analysed terms for the K
// chunks of a knowledge base that BM25 ranks first for Terms.
type TermQuery struct {
	KBID   int64
	Terms  []string
	K      int
	Filter ChunkFilter
	// K1 and B are BM25's parameters (1.2 and 0.75 when zero).
	K1, B float64
}

// TermSearcher is implemented by backends that rank chunks by their terms
// themselves (SQLite through FTS5), so a process need not load a
// knowledge base to search it. Scores are BM25, higher first.
type TermSearcher interface {
	ChunkTermSearch(ctx context.Context, q TermQuery) ([]VectorHit, error)
	// ChunkNearest returns the K chunks q.Filter keeps nearest to
	// q.Vector (unit length) by cosine, best first.
	ChunkNearest(ctx context.Context, q VectorQuery) ([]VectorHit, error)
	// ChunksGet returns chunks by id (missing ones left out), without
	// their embeddings and terms.
	ChunksGet(ctx context.Context, ids []int64) ([]IndexedChunk, error)
}

// VectorHit is a chunk id with its cosine similarity.
type VectorHit struct {
	ChunkID int64
	Score   float64
}

// KBStore persists knowledge bases, their sources and their chunks.
type KBStore interface {
	KBCreate(ctx context.Context, p KBCreateParams) (*KB, error)
	KBGet(ctx context.Context, name string) (*KB, error)
	KBList(ctx context.Context) ([]KB, error)
	KBDelete(ctx context.Context, name string) error
	KBStats(ctx context.Context, kbID int64) (KBStats, error)
	KBVersion(ctx context.Context, kbID int64) (int64, error)

	// SourceGet returns the source with this URL in the KB, ErrNotFound if none.
	SourceGet(ctx context.Context, kbID int64, url string) (*Source, error)
	// SourceList lists a KB's sources without their content.
	SourceList(ctx context.Context, kbID int64) ([]Source, error)
	// SourceHashes returns the content hash of each of urls the KB holds
	// a source for: what an ingest compares, reading only its own sources.
	SourceHashes(ctx context.Context, kbID int64, urls []string) (map[string]string, error)
	// SourceChunks lists up to limit of a source's chunks in order from
	// offset, without embeddings, and how many it has in all; ErrNotFound
	// if the KB has no source with this URL.
	SourceChunks(ctx context.Context, kbID int64, url string, offset, limit int) ([]Chunk, int, error)
	// SourcePutBatch writes sources (and replaces their chunks) in one
	// transaction and returns their ids in order.
	SourcePutBatch(ctx context.Context, kbID int64, puts []SourcePut) ([]int64, error)
	// SourceAppendChunks adds chunks to a source in one transaction (and
	// with p.Final marks it complete); ErrNotFound if the source or the KB
	// is gone.
	SourceAppendChunks(ctx context.Context, kbID int64, p SourceAppendChunksParams) error
	SourceDelete(ctx context.Context, kbID int64, url string) error
	// SourceTouch records that sources were fetched and found unchanged.
	SourceTouch(ctx context.Context, kbID int64, touches []SourceTouch) error
	// SourceMarkFailure counts a failed fetch; at threshold failures in a row
	// the source becomes stale. It returns whether it is stale now.
	SourceMarkFailure(ctx context.Context, kbID int64, url string, threshold int) (bool, error)

	// ChunkScan calls fn for every chunk of the KB with its source fields,
	// in chunk id order. Chunks of an incomplete source (a long document
	// written in batches, whose content hash is still empty) are left out
	// of the scans and the states: it becomes searchable whole, with its
	// last batch.
	ChunkScan(ctx context.Context, kbID int64, fn func(IndexedChunk) error) error
	// ChunkScanAfter is ChunkScan of the chunks whose id is over afterID
	// (the ones written since a scan that ended there).
	ChunkScanAfter(ctx context.Context, kbID, afterID int64, fn func(IndexedChunk) error) error
	// ChunkStates lists the KB's chunk ids in order with whether their
	// source is stale: what an in-memory index needs to catch up.
	ChunkStates(ctx context.Context, kbID int64) ([]ChunkState, error)
	ChunkGet(ctx context.Context, id int64) (*IndexedChunk, error)
}

// CrawlStore persists crawl logs and the pages a crawl found but has not
// fetched yet.
type CrawlStore interface {
	CrawlLogCreate(ctx context.Context, kbID int64, url string, startedAt time.Time) (*CrawlLog, error)
	CrawlLogUpdate(ctx context.Context, p CrawlLogUpdateParams) error
	CrawlLogList(ctx context.Context, kbID int64, limit int) ([]CrawlLog, error)
	CrawlLogPurge(ctx context.Context, olderThan time.Time) (int, error)
	// CrawlPendingList returns the pages found but not fetched yet.
	CrawlPendingList(ctx context.Context, kbID int64) ([]PendingPage, error)
	// CrawlPendingFail counts one more failed run for a page not fetched
	// yet (adding it at depth); at giveUpAfter failures it is dropped and
	// dropped is true.
	CrawlPendingFail(ctx context.Context, kbID int64, url string, depth, giveUpAfter int) (dropped bool, err error)
	// CrawlPendingDone removes a page that has now been fetched.
	CrawlPendingDone(ctx context.Context, kbID int64, url string) error
}

// Store is everything Quarry persists: one interface per entity, each
// with its part of the conformance suite (storetest). Each call is
// atomic: a method that writes several rows does so in one transaction.
// A consumer declares the small interface it uses.
type Store interface {
	KBStore
	CrawlStore
	ResearchStore
	ThreadStore
	TokenStore
	ChatSessionStore
	ConsoleStore
	EvalRunStore
	IngestStore
	ScheduleStore

	Close() error
}

// Ingest is a background upload's record: its status survives the
// process that ingests it (a process that dies leaves it running, and the
// next start on its host says it failed).
type Ingest struct {
	ID    string
	KB    string
	Owner string // host:pid of the process ingesting it
	// Status is IngestRunning, "completed" or "failed".
	Status string
	// State is the upload's status resource as the API shows it (JSON).
	State     []byte
	StartedAt time.Time
	UpdatedAt time.Time
}

// IngestFile is one file of a background upload, kept in the store until
// it is ingested.
type IngestFile struct {
	IngestID  string
	Seq       int
	Name      string
	Data      []byte
	CreatedAt time.Time
}

// IngestRunning is the status of an upload being ingested.
const IngestRunning = "running"

// IngestStore keeps background uploads' records.
type IngestStore interface {
	IngestPut(ctx context.Context, in Ingest) error
	// IngestGet returns ErrNotFound for an unknown id.
	IngestGet(ctx context.Context, id string) (*Ingest, error)
	// IngestRunning lists the uploads recorded as running.
	IngestRunning(ctx context.Context) ([]Ingest, error)
	// IngestFilePut keeps one file of a background upload until
	// IngestFilesDelete.
	IngestFilePut(ctx context.Context, f IngestFile) error
	// IngestFiles returns an upload's files in order.
	IngestFiles(ctx context.Context, ingestID string) ([]IngestFile, error)
	// IngestFilesDelete drops an upload's files (ingested or given up).
	IngestFilesDelete(ctx context.Context, ingestID string) error
	// IngestFilesPurge drops files stored before before whose upload is
	// not running (a request that died before its upload was recorded).
	IngestFilesPurge(ctx context.Context, before time.Time) (int, error)
}

// VectorSearcher is implemented by backends with a native vector index
// (PostgreSQL with pgvector).
type VectorSearcher interface {
	ChunkVectorSearch(ctx context.Context, q VectorQuery) ([]VectorHit, error)
}

// Tuner is implemented by backends that bring a knowledge base's indexes
// up to date once an ingest has written its chunks rather than at each
// insert. PostgreSQL builds a knowledge base's first HNSW index over them
// at once (a build of 10,000 chunks takes a tenth of what inserting them
// into the index does; until then its vectors are searched exactly) and,
// after an ingest of many chunks, refreshes the planner's statistics and
// merges the text index's pending entries, without which the next
// searches plan for an empty table and scan the pending list;
// WhileIngesting, called after each batch an ingest writes with the
// chunks it has written so far, refreshes the statistics when the
// tables have outgrown them. BeforeIngest, called once before an ingest
// writes its first batch, lets a backend defer work to AfterIngest:
// PostgreSQL counts a new knowledge base's document frequencies once,
// over all its chunks, instead of at each insert. It returns how many
// batches the ingest may write at once, each in its own transaction.
type Tuner interface {
	BeforeIngest(ctx context.Context, kb *KB) (writers int, err error)
	AfterIngest(ctx context.Context, kb *KB, written int) error
	WhileIngesting(ctx context.Context, kb *KB, written int) error
}

// TextScanner is implemented by backends that can scan chunks without
// their embeddings (the vectors), for a process whose vector searches run
// in the store: ChunkScanAfter with Embedding left nil.
type TextScanner interface {
	ChunkScanTextAfter(ctx context.Context, kbID, afterID int64, fn func(IndexedChunk) error) error
}

// ValidationError names the field and the rule it broke.
type ValidationError struct {
	Field string
	Rule  string
}

func (e *ValidationError) Error() string { return fmt.Sprintf("%s: %s", e.Field, e.Rule) }

// ErrorCode implements errcode.Coder: invalid input.
func (e *ValidationError) ErrorCode() errcode.Code { return errcode.Invalid }

// Research is a stored research run: summary columns for listing and the
// whole state (the research engine's checkpoint) as JSON.
type Research struct {
	ID        string    `json:"id"`
	Question  string    `json:"question"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
	ThreadID  string    `json:"thread_id"`
	State     []byte    `json:"-"`
}

// Thread is a conversation: researches asked one after another, each a
// follow-up of the ones before.
type Thread struct {
	ID           string    `json:"id"`
	Title        string    `json:"title"`
	Status       string    `json:"status"` // active or closed; idle is derived from LastActivity
	CreatedAt    time.Time `json:"created_at"`
	LastActivity time.Time `json:"last_activity"`
}

// ThreadStore persists threads.
type ThreadStore interface {
	ThreadCreate(ctx context.Context, t Thread) error
	// ThreadGet returns a thread, ErrNotFound if none.
	ThreadGet(ctx context.Context, id string) (*Thread, error)
	// ThreadList returns threads, most recently active first.
	ThreadList(ctx context.Context, limit int) ([]Thread, error)
	// ThreadTouch records activity at at.
	ThreadTouch(ctx context.Context, id string, at time.Time) error
	// ThreadClose closes a thread; ErrNotFound if none.
	ThreadClose(ctx context.Context, id string) error
	// ThreadResearches returns a thread's researches, oldest first,
	// without state.
	ThreadResearches(ctx context.Context, id string) ([]Research, error)
}

// ResearchEvent is one stored event of a research, in sequence order.
type ResearchEvent struct {
	Seq  int64     `json:"seq"`
	Type string    `json:"type"`
	At   time.Time `json:"at"`
	Data []byte    `json:"data"`
}

// ResearchStore persists researches and their event logs.
type ResearchStore interface {
	// Now is the database's clock: leases are taken and judged by it, not
	// by the clocks of the processes that hold them.
	Clock
	// ResearchSave inserts or replaces a research and appends events (their
	// Seq must be new) in one transaction: a checkpoint is all or nothing.
	ResearchSave(ctx context.Context, r Research, events []ResearchEvent) error
	// ResearchGet returns a research with its state, ErrNotFound if none.
	ResearchGet(ctx context.Context, id string) (*Research, error)
	// ResearchStatus returns a research's status column alone (what a
	// watch reads every few seconds), ErrNotFound if none.
	ResearchStatus(ctx context.Context, id string) (string, error)
	// ResearchList returns the newest researches first, without state.
	ResearchList(ctx context.Context, limit int) ([]Research, error)
	// ResearchPage returns a page of researches, newest first, without
	// state.
	ResearchPage(ctx context.Context, f ResearchFilter) ([]Research, error)
	// ResearchCounts counts researches by status.
	ResearchCounts(ctx context.Context) (map[string]int, error)
	// ResearchEvents returns the events after seq, in order.
	ResearchEvents(ctx context.Context, id string, afterSeq int64) ([]ResearchEvent, error)
	// ResearchLastSeq returns the sequence number of a research's last
	// event, 0 when it has none.
	ResearchLastSeq(ctx context.Context, id string) (int64, error)
	// ResearchClaim takes or extends the lease that lets one process run a
	// research: it succeeds when the research is unleased, its lease ended
	// before now, or owner already holds it, and then holds it until
	// until. Otherwise it returns a *LeaseError (errors.Is ErrBusy).
	ResearchClaim(ctx context.Context, id, owner string, now, until time.Time) error
	// ResearchRelease gives up owner's lease (nothing when owner does not
	// hold it).
	ResearchRelease(ctx context.Context, id, owner string) error
	// ResearchAppendEvents stores events (their Seq must be new) without
	// touching the research's state.
	ResearchAppendEvents(ctx context.Context, id string, events []ResearchEvent) error
	// ResearchSetCancel records (or clears) a request to cancel a research,
	// for whichever process runs it; ErrNotFound if there is none.
	ResearchSetCancel(ctx context.Context, id string, requested bool) error
	// ResearchCancelRequested reports whether a cancel was requested.
	ResearchCancelRequested(ctx context.Context, id string) (bool, error)
	// ResearchRunnable lists, oldest first, researches that should have a
	// job: pending, or processing with no lease or one that ended before
	// now (its runner died or shut down).
	ResearchRunnable(ctx context.Context, now time.Time, limit int) ([]string, error)
	// ResearchGiveUp marks a research still pending or processing failed
	// in its status alone, its state left as it is: one whose state cannot
	// be read or written, so that no process takes it up again. Nothing
	// when it has ended or a process holds its lease at at; ErrNotFound
	// if there is none.
	ResearchGiveUp(ctx context.Context, id string, at time.Time) error
}

// LeaseError says who holds a research's lease, and until when.
type LeaseError struct {
	ID, Owner string
	Until     time.Time
}

func (e *LeaseError) Error() string {
	return fmt.Sprintf("research %s is already running (in %s; its lease runs to %s unless renewed)", e.ID, e.Owner, e.Until.UTC().Format(time.RFC3339))
}

// Is makes errors.Is(err, ErrBusy) true.
func (e *LeaseError) Is(target error) bool { return target == ErrBusy }

// ErrorCode implements errcode.Coder: the research is busy elsewhere.
func (e *LeaseError) ErrorCode() errcode.Code { return errcode.Conflict }

// storedSchemes are the URL schemes a source may have: pages, files and
// BEIR records. Anything else (javascript:, data:) would become a link in
// a report.
var storedSchemes = []string{"http://", "https://", "file://", "kb://"}

// CheckSourceURL is the rule for a source URL: an http, https, file or kb
// URL of at most 500 characters with no control characters.
func CheckSourceURL(u string) error {
	scheme := false
	for _, p := range storedSchemes {
		scheme = scheme || len(u) > len(p) && strings.EqualFold(u[:len(p)], p)
	}
	switch {
	case u == "":
		return &ValidationError{Field: "url", Rule: "must not be empty"}
	case !scheme:
		return &ValidationError{Field: "url", Rule: "must be an http, https, file or kb URL"}
	case strings.ContainsFunc(u, func(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 }):
		return &ValidationError{Field: "url", Rule: "must not contain control characters"}
	case utf8.RuneCountInString(u) > 500:
		return &ValidationError{Field: "url", Rule: "must be at most 500 characters"}
	}
	return nil
}

// Transient reports whether err is a lost or refused database connection
// (a server restarting, a proxy dropping it, an administrator terminating
// it), after which the same write on a new connection may succeed. It
// looks for a SQLSTATE of class 08 (connection exception) or 57P01–57P03
// (shutdown, crash, cannot connect now), a connection the driver gave up
// on, and network errors, without naming a driver.
func Transient(err error) bool {
	if err == nil {
		return false
	}
	var st interface{ SQLState() string }
	if errors.As(err, &st) {
		code := st.SQLState()
		return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.As(err, &ne) ||
		// pgx's error for a connection found closed (cut by a proxy or
		// the network) in the middle of a transaction has no type.
		strings.HasSuffix(err.Error(), "conn closed")
}

// Schedule is a knowledge base's re-crawl schedule (every 5
// minutes by default).
type Schedule struct {
	KBID int64 `json:"-"`
	// KB is the knowledge base's name (read only).
	KB    string        `json:"knowledge_base"`
	URL   string        `json:"url"`
	Every time.Duration `json:"-"`
	// Options are the crawl's options as JSON (crawl.Options).
	Options   []byte    `json:"-"`
	Enabled   bool      `json:"enabled"`
	NextAt    time.Time `json:"next_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// ScheduleStore keeps re-crawl schedules. Times come from the database's
// clock (Now), so processes whose clocks differ agree on what is due.
type ScheduleStore interface {
	// SchedulePut creates or replaces a knowledge base's schedule.
	SchedulePut(ctx context.Context, s Schedule) error
	// ScheduleGet returns a knowledge base's schedule (ErrNotFound if none).
	ScheduleGet(ctx context.Context, kbID int64) (*Schedule, error)
	// ScheduleDelete removes a knowledge base's schedule (nothing if none).
	ScheduleDelete(ctx context.Context, kbID int64) error
	// ScheduleDue lists the enabled schedules whose next run is at or
	// before now.
	ScheduleDue(ctx context.Context, now time.Time, limit int) ([]Schedule, error)
	// ScheduleAdvance moves a schedule's next run from from to to, only if
	// it is still from: of the processes that saw it due, one wins.
	ScheduleAdvance(ctx context.Context, kbID int64, from, to time.Time) (bool, error)
	Clock
}

// Clock is the database's clock.
type Clock interface {
	Now(ctx context.Context) (time.Time, error)
}
