// Package jobs runs Quarry's background work as River jobs
// (github.com/riverqueue/river): researches, crawls (queued by hand or by a
// knowledge base's schedule) and the purges of old crawl logs and expired
// chat sessions. The jobs live in the store's own database — SQLite
// through riversqlite, PostgreSQL through riverpgxv5 — so any number of
// processes sharing it share the work: each job runs once at a time, on
// whichever process takes it, and a job whose process died is rescued by
// River after Options.RescueAfter and run again from its checkpoint.
//
// A research is one job whose attempts continue the research from its last
// checkpoint (research.Runner.Work); every stage and round is checkpointed
// with its events, so a rescued attempt redoes at most the step in flight.
// An attempt that runs longer than a slice of the rescue time hands the
// research back at that point (checkpointed, snoozed for the next free
// worker) rather than being taken for dead.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
)

// Queue names.
const (
	QueueResearch = "research"
	QueueCrawl    = "crawl"
	QueueIngest   = "ingest"
	QueueHouse    = river.QueueDefault // purges
)

// DefaultRescueAfter is how long a job may run before River takes it for
// dead and runs it again elsewhere. River's rescuer looks every 30 s, so a
// killed worker's job runs again within five minutes.
const DefaultRescueAfter = 4*time.Minute + 30*time.Second

// ResearchRunner runs one research from its checkpoint (research.Runner).
type ResearchRunner interface {
	Work(ctx context.Context, id string) (*research.Research, error)
	// Fail ends a research failed with cause: its last attempt failed.
	Fail(ctx context.Context, id string, cause error) (*research.Research, error)
}

// CrawlRunner runs one crawl (the app's crawler); it returns the run's log,
// or nil and an error when the crawl could not start (bad input, a deleted
// knowledge base).
type CrawlRunner interface {
	Crawl(ctx context.Context, a CrawlArgs) (*store.CrawlLog, error)
}

// Options configure a Queue.
type Options struct {
	// Workers is how many researches this process runs at once; 0 makes
	// the queue insert-only (quarry serve --workers 0, the CLI's
	// --detach): it queues work and runs none.
	Workers int
	// CrawlWorkers is how many crawls this process runs at once (default 2
	// when Workers > 0).
	CrawlWorkers int
	Research     ResearchRunner
	// Crawl runs crawls; nil leaves them to other processes.
	Crawl CrawlRunner
	// Ingest ingests background uploads; nil leaves them to others.
	Ingest IngestRunner
	// RescueAfter is DefaultRescueAfter when zero.
	RescueAfter time.Duration
	// Poll is how often River looks for new jobs besides its
	// notifications (default 1s; 100ms on SQLite, where notifications
	// reach only this process).
	Poll time.Duration
	// ScheduleEvery is how often this process looks for due crawl
	// schedules (default 1s).
	ScheduleEvery time.Duration
	// Backoff is the wait before a failed research attempt's retry,
	// doubling with each attempt (default 1s: 2, 4, 8, 16 s).
	Backoff time.Duration
	Logger  *slog.Logger
	// OnResearchDone, when set, sees each research attempt's end.
	OnResearchDone func(id string, r *research.Research, err error)
}

// client is what Queue uses of a river.Client, whichever its driver.
type client interface {
	Insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	Start(ctx context.Context) error
	StopAndCancel(ctx context.Context) error
}

// Queue is this process's River client over the store's database.
type Queue struct {
	st     store.Store
	db     *sql.DB
	pool   *pgxpool.Pool // PostgreSQL: River's own pgx pool
	client client
	opt    Options
	log    *slog.Logger

	// stopping is set before the client stops: jobs cancelled then are
	// handed back, not failed.
	stopping atomic.Bool
	tickStop context.CancelFunc
	tickDone chan struct{}
	started  bool
	mu       sync.Mutex
}

// Open migrates River's tables into the store's database and builds its
// client; nothing runs until Start.
func Open(ctx context.Context, st store.Store, opt Options) (*Queue, error) {
	if opt.Workers < 0 || opt.Workers > 64 {
		return nil, &store.ValidationError{Field: "workers", Rule: fmt.Sprintf("must be between 0 and 64, got %d", opt.Workers)}
	}
	if opt.Workers > 0 && opt.Research == nil {
		return nil, errors.New("jobs: workers need a research runner")
	}
	if opt.RescueAfter == 0 {
		opt.RescueAfter = DefaultRescueAfter
	}
	if opt.RescueAfter < time.Second {
		return nil, &store.ValidationError{Field: "rescue-after", Rule: fmt.Sprintf("must be at least 1s, got %s", opt.RescueAfter)}
	}
	if opt.CrawlWorkers <= 0 {
		opt.CrawlWorkers = 2
	}
	if opt.Backoff <= 0 {
		opt.Backoff = time.Second
	}
	if opt.ScheduleEvery <= 0 {
		opt.ScheduleEvery = time.Second
	}
	if opt.Logger == nil {
		opt.Logger = slog.New(slog.DiscardHandler)
	}
	if opt.Poll <= 0 {
		opt.Poll = time.Second
		if _, ok := st.(*sqlite.Store); ok {
			opt.Poll = 100 * time.Millisecond
		}
	}
	q := &Queue{st: st, opt: opt, log: opt.Logger}
	cfg := q.config()
	var err error
	switch s := st.(type) {
	case *sqlite.Store:
		q.db = s.SQL
		q.client, err = build(ctx, riversqlite.New(s.SQL), cfg)
	case *postgres.Store:
		q.db = s.SQL
		if q.pool, err = pgxpool.NewWithConfig(ctx, poolConfig(s)); err != nil {
			return nil, fmt.Errorf("jobs: connect: %w", err)
		}
		if err = migrateLocked(ctx, s.SQL, riverpgxv5.New(q.pool)); err == nil {
			q.client, err = river.NewClient(riverpgxv5.New(q.pool), cfg)
		}
		if err != nil {
			q.pool.Close()
		}
	default:
		return nil, fmt.Errorf("jobs: a %T store cannot hold jobs", st)
	}
	if err != nil {
		return nil, fmt.Errorf("jobs: %w", err)
	}
	return q, nil
}

func poolConfig(s *postgres.Store) *pgxpool.Config {
	pc, _ := pgxpool.ParseConfig("")
	pc.ConnConfig = s.ConnConfig()
	pc.MaxConns = 8
	return pc
}

// build migrates River's tables and makes the client (SQLite: one
// writer at a time, which the migration's own transaction takes).
func build[TTx any](ctx context.Context, d riverdriver.Driver[TTx], cfg *river.Config) (client, error) {
	m, err := rivermigrate.New(d, nil)
	if err != nil {
		return nil, err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return nil, fmt.Errorf("migrate river: %w", err)
	}
	return river.NewClient(d, cfg)
}

// migrateLocked migrates River's tables on PostgreSQL under an advisory
// lock, so processes starting together do not race.
func migrateLocked[TTx any](ctx context.Context, db *sql.DB, d riverdriver.Driver[TTx]) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	const key = 0x71756172 // "quar"
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, key); err != nil {
		return fmt.Errorf("migrate river: lock: %w", err)
	}
	defer func() { _, _ = conn.ExecContext(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, key) }()
	m, err := rivermigrate.New(d, nil)
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("migrate river: %w", err)
	}
	return nil
}

func (q *Queue) config() *river.Config {
	cfg := &river.Config{
		Logger: q.log.With("component", "river"),
		// Jobs set their own time limits (Timeout); the rescue time is
		// the bound on a job whose process died.
		JobTimeout:           -1,
		RescueStuckJobsAfter: q.opt.RescueAfter,
		FetchPollInterval:    q.opt.Poll,
		RetryPolicy:          retryPolicy{q.opt.Backoff},
		// A freed slot fetches again after at most this: a research takes
		// tens of milliseconds offline, so River's 100 ms would idle it.
		FetchCooldown: min(q.opt.Poll, 5*time.Millisecond),
		MaxAttempts:   5,
	}
	if q.opt.Workers == 0 {
		return cfg // insert only
	}
	workers := river.NewWorkers()
	river.AddWorker(workers, &researchWorker{q: q})
	river.AddWorker(workers, &crawlWorker{q: q})
	river.AddWorker(workers, &purgeWorker{q: q})
	river.AddWorker(workers, &requeueWorker{q: q})
	river.AddWorker(workers, &ingestWorker{q: q})
	cfg.Workers = workers
	cfg.Queues = map[string]river.QueueConfig{
		QueueResearch: {MaxWorkers: q.opt.Workers},
		QueueHouse:    {MaxWorkers: 1},
	}
	if q.opt.Crawl != nil {
		cfg.Queues[QueueCrawl] = river.QueueConfig{MaxWorkers: q.opt.CrawlWorkers}
	}
	if q.opt.Ingest != nil {
		cfg.Queues[QueueIngest] = river.QueueConfig{MaxWorkers: 1}
	}
	cfg.PeriodicJobs = []*river.PeriodicJob{
		river.NewPeriodicJob(river.PeriodicInterval(time.Hour), func() (river.JobArgs, *river.InsertOpts) {
			return PurgeArgs{}, nil
		}, &river.PeriodicJobOpts{ID: "purge", RunOnStart: true}),
		river.NewPeriodicJob(river.PeriodicInterval(time.Minute), func() (river.JobArgs, *river.InsertOpts) {
			return RequeueArgs{}, nil
		}, &river.PeriodicJobOpts{ID: "requeue", RunOnStart: true}),
	}
	return cfg
}

// Start starts working jobs (when Workers > 0) and looking for due crawl
// schedules (when Crawl is set).
func (q *Queue) Start(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.opt.Workers == 0 || q.started {
		return nil
	}
	// Not ctx itself: its end would be a hard stop, failing running
	// jobs; Stop hands them back.
	if err := q.client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("jobs: start: %w", err)
	}
	q.started = true
	if q.opt.Crawl != nil {
		tctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		q.tickStop, q.tickDone = stop, make(chan struct{})
		go q.tickSchedules(tctx)
	}
	return nil
}

// Stop stops taking jobs and cancels the running ones, which hand their
// work back checkpointed (a research is snoozed, available at once to the
// next worker), and waits for them.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.started {
		return nil
	}
	q.started = false
	if q.tickStop != nil {
		q.tickStop()
		<-q.tickDone
		q.tickStop = nil
	}
	q.stopping.Store(true)
	defer q.stopping.Store(false)
	return q.client.StopAndCancel(ctx)
}

// Close stops the queue and releases its connections.
func (q *Queue) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := q.Stop(ctx)
	if q.pool != nil {
		q.pool.Close()
	}
	return err
}

// EnqueueResearch queues a stored research (pending, or handed back by
// Requeue); queuing one already queued or running does nothing.
func (q *Queue) EnqueueResearch(ctx context.Context, id string) error {
	if _, err := q.client.Insert(ctx, ResearchArgs{ID: id}, nil); err != nil {
		return fmt.Errorf("queue research %s: %w", id, err)
	}
	return nil
}

// EnqueueCrawl queues a crawl; queued is false when a crawl of that
// knowledge base is already queued or running (at most one at a time,
// across every process).
func (q *Queue) EnqueueCrawl(ctx context.Context, a CrawlArgs) (queued bool, err error) {
	res, err := q.client.Insert(ctx, a, nil)
	if err != nil {
		return false, fmt.Errorf("queue crawl of %s: %w", a.KB, err)
	}
	return !res.UniqueSkippedAsDuplicate, nil
}

// Count is how many jobs of a kind are in a state.
type Count struct {
	Kind  string
	State string
	N     int
}

// Counts are the queue's jobs by kind and state.
func (q *Queue) Counts(ctx context.Context) ([]Count, error) {
	rows, err := q.db.QueryContext(ctx, `SELECT kind, state, count(*) FROM river_job GROUP BY kind, state ORDER BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("job counts: %w", err)
	}
	defer rows.Close()
	var out []Count
	for rows.Next() {
		var c Count
		if err := rows.Scan(&c.Kind, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("job counts: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// retryPolicy is River's wait before a failed job's next attempt where its
// worker has none of its own (a job whose arguments do not decode): the
// queue's backoff, doubling.
type retryPolicy struct{ base time.Duration }

func (p retryPolicy) NextRetry(job *rivertype.JobRow) time.Time {
	return time.Now().Add(p.base << min(job.Attempt, 6))
}

// liveStates are the states in which a unique job blocks another like it:
// queued or running, not finished.
var liveStates = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// recovered runs f, turning a panic into that attempt's error (its stack
// logged), never the process's end.
func (q *Queue) recovered(kind string, f func() error) error {
	err := safe.Call(f)
	if stack := safe.Stack(err); stack != nil {
		q.log.Error("job panicked", "kind", kind, "err", err, "stack", string(stack))
	}
	return err
}
