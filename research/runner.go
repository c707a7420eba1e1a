package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/followup"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

// Runner runs researches. Engine thinks; Sources are searched; every step
// is checkpointed to Store with the events it produced.
type Runner struct {
	Engine Engine
	// Fallback writes the report when Engine's writer fails or the budget
	// leaves it no room (the offline engine); the report says so.
	Fallback Engine
	Sources  []search.Source
	// OpenSources, when set, opens each research's sources from its
	// options instead of Sources, so one long-lived runner serves
	// researches over different sources.
	OpenSources func(ctx context.Context, specs []string) ([]search.Source, error)
	Store       Store
	Logger      *slog.Logger
	// OnEvent, when set, receives every event once it is stored, in
	// sequence order, from one goroutine.
	OnEvent func(Event)
	// Publish, when set, receives every stored event (a broker's Publish,
	// bound to the research's topic by the caller).
	Publish func(researchID string, e store.ResearchEvent)
	// Concurrency bounds simultaneous searches (default 4).
	Concurrency int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Owner names this process in a research's lease (default host:pid).
	Owner string
	// IdleAfter is how long a thread stays active without activity
	// (default DefaultIdleAfter).
	IdleAfter time.Duration
	// Ranker chooses the sources a report cites (WriteInput.Evidence);
	// nil shows the writer every source read.
	Ranker Ranker
	// Tracing receives a span per research, stage and round and per
	// search (nil: the global provider, a no-op unless set up).
	Tracing trace.TracerProvider

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // researches running here
}

// Lease timings: a running research renews its lease every leaseRenew; a
// process that died holds it at most leaseTTL.
const (
	leaseTTL   = 30 * time.Second
	leaseRenew = 10 * time.Second
	cancelPoll = time.Second
)

// hold takes the research's lease, so that no other process runs it at
// the same time, and renews it until release is called. The returned
// context ends when the lease is lost. The claim, the takeover of a dead
// holder's lease and the renewing goroutine share the owner and the
// cancel, so they stay one function.
func (rn *Runner) hold(ctx context.Context, id string) (context.Context, func(), error) {
	owner := rn.Owner
	if owner == "" {
		owner = ProcessOwner()
	}
	owner += "/" + uuid.NewString()[:8] // two runs in one process are two holders
	now, err := rn.Store.Now(ctx)
	if err != nil {
		return nil, nil, err
	}
	err = rn.Store.ResearchClaim(ctx, id, owner, now, now.Add(leaseTTL))
	var le *store.LeaseError
	if errors.As(err, &le) && DeadHolder(le.Owner) {
		// The holder was a process on this host that is gone (a crash):
		// take its lease over now instead of waiting for it to end. The
		// claim only succeeds if the lease was not renewed meanwhile.
		rn.logger().Info("taking over the lease of a process that is gone", "research", id, "holder", le.Owner)
		err = rn.Store.ResearchClaim(ctx, id, owner, le.Until.Add(time.Nanosecond), now.Add(leaseTTL))
	}
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	rn.mu.Lock()
	if rn.running == nil {
		rn.running = map[string]context.CancelCauseFunc{}
	}
	rn.running[id] = cancel
	rn.mu.Unlock()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// A panic here is the research's failure, not the process's end.
		if err := safe.Do(func() { rn.watchLease(ctx, id, owner, done, cancel) }); err != nil {
			cancel(err)
		}
	}()
	release := func() {
		close(done)
		wg.Wait()
		cancel(nil)
		rn.mu.Lock()
		delete(rn.running, id)
		rn.mu.Unlock()
		rctx, c := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer c()
		if err := rn.Store.ResearchRelease(rctx, id, owner); err != nil {
			rn.logger().Warn("release research lease", "research", id, "err", err)
		}
	}
	return ctx, release, nil
}

func (rn *Runner) logger() *slog.Logger {
	if rn.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return rn.Logger
}

// DeadHolder reports whether a lease owner ("host:pid/…") names a process
// on this host that no longer exists: its research can be taken over at
// once instead of when the lease runs out.
func DeadHolder(owner string) bool {
	hostPID, _, _ := strings.Cut(owner, "/")
	i := strings.LastIndexByte(hostPID, ':')
	if i < 0 {
		return false
	}
	host, err := os.Hostname()
	if err != nil || hostPID[:i] != host {
		return false
	}
	pid, err := strconv.Atoi(hostPID[i+1:])
	if err != nil || pid <= 0 {
		return false
	}
	return !processAlive(pid)
}

// ProcessOwner names this process as leases do ("host:pid"): DeadHolder
// tells, on the same host, when it is gone.
func ProcessOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

// Store is what a Runner keeps researches, their events and their threads
// in.
type Store interface {
	store.ResearchStore
	store.ThreadStore
}

// ErrCanceled is the cause of a run stopped by Cancel.
var ErrCanceled = errors.New("canceled on request")

// Request is a question with its options, validated by NewRequest: what
// CreateRequest stores. A caller that must check a request before other
// work (the CLI before a long --docs ingest) validates it once, there.
type Request struct {
	question string
	opts     Options
	valid    bool
}

// NewRequest validates a question and its options (Validate) and fills
// their defaults.
func NewRequest(question string, opts Options) (Request, error) {
	q, err := Validate(question, &opts)
	if err != nil {
		return Request{}, err
	}
	return Request{question: q, opts: opts, valid: true}, nil
}

// Question is the request's question, cleaned.
func (r Request) Question() string { return r.question }

// Options are the request's options with their defaults.
func (r Request) Options() Options { return r.opts }

// Create validates the question and options and stores a pending research,
// returning it at once; Run runs it.
func (rn *Runner) Create(ctx context.Context, question string, opts Options) (*Research, error) {
	req, err := NewRequest(question, opts)
	if err != nil {
		return nil, err
	}
	return rn.CreateRequest(ctx, req)
}

// CreateRequest stores a pending research for a request NewRequest
// validated, returning it at once; Run runs it.
func (rn *Runner) CreateRequest(ctx context.Context, req Request) (*Research, error) {
	if !req.valid {
		return nil, errors.New("create research: the request was not made by NewRequest")
	}
	q, opts := req.question, req.opts
	var err error
	now := rn.now()
	r := &Research{ID: uuid.NewString(), Question: q, Status: StatusPending, Options: opts, Engine: rn.Engine.Name(), CreatedAt: now, UpdatedAt: now}
	if r.ThreadID, r.History, err = rn.joinThread(ctx, opts.Thread, q, now); err != nil {
		return nil, err
	}
	if len(r.History) > 0 {
		// A follow-up that names nothing and points back with a pronoun
		// is researched about the thread's subject, and says so.
		earlier := make([]string, len(r.History))
		for i, t := range r.History {
			earlier[i] = t.Question
		}
		if resolved := followup.Resolve(q, earlier); resolved != q {
			r.Question = resolved
			r.Warnings = append(r.Warnings, fmt.Sprintf("asked as %q; read as %q from the thread's earlier questions", q, resolved))
		}
	}
	// The row and its first event are written together: events refer to
	// a stored research, and nobody can watch it before its id is known.
	e := Event{ResearchID: r.ID, Seq: 1, Type: EventStatus, At: now, Status: &StatusChange{Status: StatusPending}}
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	state, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	rec := store.Research{ID: r.ID, Question: r.Question, Status: r.Status, CreatedAt: now, UpdatedAt: now, ThreadID: r.ThreadID, State: state}
	if err := rn.Store.ResearchSave(ctx, rec, []store.ResearchEvent{{Seq: 1, Type: e.Type, At: now, Data: data}}); err != nil {
		return nil, fmt.Errorf("create research: %w", err)
	}
	if rn.OnEvent != nil {
		rn.OnEvent(e)
	}
	return r, nil
}

// Start creates a research and runs it to the end. The research is
// returned (and stored) also when it failed.
func (rn *Runner) Start(ctx context.Context, question string, opts Options) (*Research, error) {
	r, err := rn.Create(ctx, question, opts)
	if err != nil {
		return nil, err
	}
	return rn.Run(ctx, r.ID)
}

// Resume is Run: it continues a stored research from its last checkpoint.
func (rn *Runner) Resume(ctx context.Context, id string) (*Research, error) { return rn.Run(ctx, id) }

// Run runs a stored research: a pending one from the start; a processing,
// failed or canceled one from its last checkpoint, redoing no finished
// step; a completed one is returned as it is. A research another process
// is running is refused with a *store.LeaseError before anything is spent.
func (rn *Runner) Run(ctx context.Context, id string) (*Research, error) {
	return rn.run(ctx, id, false)
}

// Work is Run for a job queue: a research whose cancel was asked while it
// waited (or whose runner died while it was being canceled) ends canceled
// instead of running, and one that is finished or canceled is left alone.
func (rn *Runner) Work(ctx context.Context, id string) (*Research, error) {
	return rn.run(ctx, id, true)
}

// run loads a research, takes its lease and runs it from its checkpoint
// (Run and Work): each step of starting depends on the one before it, so
// it stays one function.
func (rn *Runner) run(ctx context.Context, id string, queued bool) (*Research, error) {
	r, err := Load(ctx, rn.Store, id)
	if err != nil {
		return nil, err
	}
	if r.Status == StatusCompleted {
		return r, nil
	}
	ctx, release, err := rn.hold(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	// Read again under the lease: the last holder may have saved since.
	if r, err = Load(ctx, rn.Store, id); err != nil {
		return nil, err
	}
	if r.Status == StatusCompleted || queued && (r.Status == StatusCanceled || r.Status == StatusFailed) {
		return r, nil
	}
	cancelAsked, err := rn.Store.ResearchCancelRequested(ctx, id)
	if err != nil {
		return nil, err
	}
	// Running it again by hand is the answer to an earlier cancel; a
	// flag nobody set is left alone (a cancel asked right now is kept).
	if cancelAsked && !queued {
		if err := rn.Store.ResearchSetCancel(ctx, id, false); err != nil {
			return nil, err
		}
	}
	seq, err := rn.Store.ResearchLastSeq(ctx, id)
	if err != nil {
		return nil, err
	}
	resumed := r.Status != StatusPending
	stage := orDefault(r.FailedStage, orDefault(r.Stage, StagePlanning))
	if resumed {
		r.Error, r.FailedStage, r.Stage = "", "", stage
	}
	x := rn.newRun(r, seq)
	defer x.abandon()
	if queued && cancelAsked {
		return x.finish(x.end(ctx, StatusCanceled, fmt.Errorf("%w before it ran (resume with the research id %s)", ErrCanceled, id)))
	}
	if queued && r.Attempts >= MaxAttempts {
		return x.finish(x.fail(ctx, fmt.Errorf("gave up after %d runs that did not end (the process running it stopped each time, last in stage %s); resume it by hand with the research id %s", r.Attempts, stage, id)))
	}
	r.Attempts++
	if err := x.checkpoint(ctx); err != nil {
		return x.finish(r, err)
	}
	x.sources = rn.Sources
	if rn.OpenSources != nil {
		if x.sources, err = rn.OpenSources(ctx, r.Options.Sources); err != nil {
			return x.finish(x.fail(ctx, fmt.Errorf("sources: %w", err)))
		}
	}
	if resumed {
		x.warn(fmt.Sprintf("resumed at stage %s", stage))
	}
	ctx, sp := x.tracer.Start(ctx, "research", trace.WithAttributes(attrResearchID.String(r.ID), attrLevel.String(r.Options.Level), attrEngine.String(r.Engine)))
	defer sp.End()
	if sc := sp.SpanContext(); sc.IsValid() {
		// The research's log lines carry its trace.
		x.logger = x.logger.With("trace_id", sc.TraceID().String())
	}
	var out *Research
	err = safe.Call(func() (err error) {
		out, err = x.run(ctx)
		return err
	})
	defer func() {
		sp.SetAttributes(attrStatus.String(r.Status))
		if r.Status == StatusFailed {
			sp.SetStatus(codes.Error, "research failed")
		}
	}()
	if stack := safe.Stack(err); stack != nil {
		// The panic ends this research, not the process: it fails with
		// the panic's message, and its stack goes to the log.
		x.logger.Error("research panicked", "err", err, "stage", r.Stage, "stack", string(stack))
		out, err = x.fail(ctx, fmt.Errorf("stage %s: %w", orDefault(r.Stage, StagePlanning), err))
	}
	return x.finish(out, err)
}

// MaxAttempts bounds the runs of a queued research that start and never
// end (their process died): the next worker fails it instead.
const MaxAttempts = 3

// Cancel asks a pending or processing research to stop, wherever it runs:
// it checkpoints and ends canceled, and Run may continue it later.
func (rn *Runner) Cancel(ctx context.Context, id string) error {
	r, err := Load(ctx, rn.Store, id)
	if err != nil {
		return err
	}
	switch r.Status {
	case StatusCompleted, StatusFailed, StatusCanceled:
		return errcode.New(errcode.Conflict, "id", fmt.Sprintf("research %s is %s, not running; nothing to cancel", id, r.Status))
	}
	if err := rn.Store.ResearchSetCancel(ctx, id, true); err != nil {
		return err
	}
	if r.Status == StatusPending {
		// Nobody may be running it yet: end it canceled here unless a
		// runner holds it, which then sees the request within a poll.
		_, err := rn.Work(ctx, id)
		if err == nil || errors.Is(err, ErrCanceled) || errors.Is(err, store.ErrBusy) {
			return nil
		}
		return err
	}
	rn.mu.Lock()
	stop := rn.running[id]
	rn.mu.Unlock()
	if stop != nil {
		stop(ErrCanceled)
	}
	return nil
}

// Requeue hands a failed or canceled research back to the queue: under
// its lease it is stored processing at the stage it stopped in, with no
// cancel asked, and released, so the next worker (Work) continues it
// from its checkpoint, redoing nothing finished.
func (rn *Runner) Requeue(ctx context.Context, id string) (*Research, error) {
	r, err := Load(ctx, rn.Store, id)
	if err != nil {
		return nil, err
	}
	if r.Status != StatusFailed && r.Status != StatusCanceled {
		return nil, errcode.New(errcode.Conflict, "id", fmt.Sprintf("research %s is %s; only a failed or canceled research is resumed", id, r.Status))
	}
	hctx, release, err := rn.hold(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	if r, err = Load(hctx, rn.Store, id); err != nil {
		return nil, err
	}
	if r.Status != StatusFailed && r.Status != StatusCanceled {
		return nil, errcode.New(errcode.Conflict, "id", fmt.Sprintf("research %s is %s; only a failed or canceled research is resumed", id, r.Status))
	}
	if err := rn.Store.ResearchSetCancel(hctx, id, false); err != nil {
		return nil, err
	}
	seq, err := rn.Store.ResearchLastSeq(hctx, id)
	if err != nil {
		return nil, err
	}
	x := rn.newRun(r, seq)
	defer x.abandon()
	x.setStatus(StatusProcessing, orDefault(r.FailedStage, orDefault(r.Stage, StagePlanning)))
	return x.finish(r, x.checkpoint(hctx))
}

// watchLease polls a held research until done closes: a cancel asked from
// another process cancels it within a poll, and its lease is renewed
// every leaseRenew (a lease lost cancels it too).
func (rn *Runner) watchLease(ctx context.Context, id, owner string, done <-chan struct{}, cancel context.CancelCauseFunc) {
	t := time.NewTicker(cancelPoll)
	defer t.Stop()
	renewed := time.Now()
	for {
		select {
		case <-done:
			return
		case <-t.C:
		}
		if c, err := rn.Store.ResearchCancelRequested(ctx, id); err == nil && c {
			cancel(ErrCanceled)
			return
		}
		if time.Since(renewed) < leaseRenew {
			continue
		}
		now, err := rn.Store.Now(ctx)
		if err == nil {
			err = rn.Store.ResearchClaim(ctx, id, owner, now, now.Add(leaseTTL))
		}
		switch {
		case err == nil:
			renewed = time.Now()
		case store.Transient(err):
			// The database is away (a restart): try again at the next
			// poll, well inside the lease's time.
			rn.logger().Warn("renew research lease: the store is unreachable", "research", id, "err", err)
		case ctx.Err() == nil:
			cancel(fmt.Errorf("%w: %w", errLostLease, err))
			return
		}
	}
}

// Fail ends a research failed with cause unless it has ended already: its
// job queue gave up on it (every attempt failed outside the research, so
// the research could not say so itself).
func (rn *Runner) Fail(ctx context.Context, id string, cause error) (*Research, error) {
	hctx, release, err := rn.hold(ctx, id)
	if err != nil {
		return nil, err
	}
	defer release()
	r, err := Load(hctx, rn.Store, id)
	if err != nil {
		return nil, err
	}
	switch r.Status {
	case StatusCompleted, StatusFailed, StatusCanceled:
		return r, nil
	}
	seq, err := rn.Store.ResearchLastSeq(hctx, id)
	if err != nil {
		return nil, err
	}
	x := rn.newRun(r, seq)
	defer x.abandon()
	// The error is that of recording the failure, not the failure.
	return x.finish(x.r, x.recordEnd(StatusFailed, cause))
}

// Load reads a stored research.
func Load(ctx context.Context, st store.ResearchStore, id string) (*Research, error) {
	rec, err := st.ResearchGet(ctx, id)
	if err != nil {
		return nil, err
	}
	var r Research
	if err := json.Unmarshal(rec.State, &r); err != nil {
		if rec.Status == StatusFailed {
			// Given up because its state could not be read: what the
			// record says of it.
			return &Research{ID: rec.ID, Question: rec.Question, Status: StatusFailed, Stage: StageFailed, CreatedAt: rec.CreatedAt, UpdatedAt: rec.UpdatedAt,
				Error: fmt.Sprintf("given up: its stored state cannot be read (%v)", err)}, nil
		}
		return nil, fmt.Errorf("research %s: stored state: %w", id, err)
	}
	if rec.Status == StatusFailed && (r.Status == StatusPending || r.Status == StatusProcessing) {
		// Given up by its job queue (store.ResearchGiveUp): its state
		// could not record the failure, its status did.
		r.Status = StatusFailed
		if r.Error == "" {
			r.Error = "given up: every attempt failed, and recording why failed too (the server's log has the details)"
		}
	}
	return &r, nil
}

func (rn *Runner) now() time.Time {
	if rn.Now != nil {
		return rn.Now().UTC()
	}
	return time.Now().UTC()
}
