package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/quarryhq/quarry/events"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

// run is one execution of a research (a start or a resume).
type run struct {
	rn     *Runner
	logger *slog.Logger
	tracer trace.Tracer

	saveMu  sync.Mutex // serialises checkpoints
	mu      sync.Mutex
	r       *Research
	seq     int64
	disp    *events.Dispatcher[Event]
	sources []search.Source
	started time.Time
	// finished is set by finish, which stops the dispatcher.
	finished bool
}

func (rn *Runner) newRun(r *Research, seq int64) *run {
	lg := rn.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	if r.Usage.Stages == nil {
		r.Usage.Stages = map[string]llm.Usage{}
	}
	if r.Timings.Stages == nil {
		r.Timings.Stages = map[string]float64{}
	}
	x := &run{rn: rn, logger: lg.With("research", r.ID), tracer: rn.tracer(), r: r, seq: seq, started: rn.now()}
	var publish func(store.ResearchEvent)
	if rn.Publish != nil {
		publish = func(e store.ResearchEvent) { rn.Publish(r.ID, e) }
	}
	x.disp = events.NewDispatcher(rn.Store, r.ID, record, publish, rn.OnEvent, x.logger)
	return x
}

// finish stops the run's event delivery once everything queued is stored
// and published; a store error fails the run if nothing else did.
func (x *run) finish(r *Research, err error) (*Research, error) {
	x.finished = true
	if derr := x.disp.Close(); derr != nil && err == nil {
		err = fmt.Errorf("research %s: %w", x.r.ID, derr)
	}
	return r, err
}

// abandon stops the run's event delivery when finish was not reached (a
// panic on the way to it): deferred after newRun, so the dispatcher's
// goroutine never outlives its run.
func (x *run) abandon() {
	if !x.finished {
		_ = x.disp.Close()
	}
}

// emit numbers an event and queues it for the dispatcher, which stores
// and then publishes it.
func (x *run) emit(e Event) {
	x.mu.Lock()
	x.stamp(&e)
	x.disp.Enqueue(e) // under mu: the queue is in sequence order
	x.mu.Unlock()
}

// stamp numbers an event of this research; the caller holds mu.
func (x *run) stamp(e *Event) {
	x.seq++
	e.ResearchID, e.Seq, e.At = x.r.ID, x.seq, x.rn.now()
}

func agentEvent(name, status string, progress float64, task, result string) Event {
	return Event{Type: EventAgent, Agent: &AgentState{Agent: name, Status: status, Progress: progress, Task: task, Result: result}}
}

func messageEvent(from, to, kind, content string) Event {
	return Event{Type: EventMessage, Message: &AgentMessage{From: from, To: to, Kind: kind, Content: content}}
}

func (x *run) agent(name, status string, progress float64, task, result string) {
	x.emit(agentEvent(name, status, progress, task, result))
}

func (x *run) message(from, to, kind, content string) {
	x.emit(messageEvent(from, to, kind, content))
}

func (x *run) warn(msg string) {
	x.mu.Lock()
	x.r.Warnings = append(x.r.Warnings, msg)
	x.mu.Unlock()
	x.logger.Warn("research", "warning", msg)
	x.emit(Event{Type: EventWarning, Warning: msg})
}

// setStatus records a status or stage change; subscribers have seen it
// (as far as delivery succeeded) before the stage's work starts.
func (x *run) setStatus(status, stage string) {
	x.mu.Lock()
	x.r.Status, x.r.Stage = status, stage
	x.mu.Unlock()
	x.emit(Event{Type: EventStatus, Status: &StatusChange{Status: status, Stage: stage}})
	_ = x.disp.Flush() // a store error fails the next checkpoint
}

// checkpoint stores the research's state once the events before it are
// stored, with the events that announce it (announce). It runs even when
// ctx is cancelled, so an interrupted research keeps what it found; a
// store error is returned, and fails the run.
func (x *run) checkpoint(ctx context.Context, announce ...Event) error {
	x.saveMu.Lock()
	defer x.saveMu.Unlock()
	x.mu.Lock()
	rec, err := x.record()
	if err != nil {
		x.mu.Unlock()
		return err
	}
	for i := range announce {
		x.stamp(&announce[i])
	}
	// The dispatcher writes it with the events queued before it and those
	// that announce it, in one transaction (it keeps going when ctx is
	// cancelled): a process killed in between leaves neither, so the step
	// is done and announced once. Under mu: in sequence order.
	x.disp.Put(rec, announce...)
	x.mu.Unlock()
	if err := x.disp.Flush(); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// record is the research's row as of now; the caller holds mu.
func (x *run) record() (store.Research, error) {
	x.r.UpdatedAt = x.rn.now()
	state, err := json.Marshal(x.r)
	if err != nil {
		return store.Research{}, fmt.Errorf("checkpoint: %w", err)
	}
	return store.Research{ID: x.r.ID, Question: x.r.Question, Status: x.r.Status, CreatedAt: x.r.CreatedAt, UpdatedAt: x.r.UpdatedAt, ThreadID: x.r.ThreadID, State: state}, nil
}

// budget is the token budget as spent so far.
func (x *run) budget() budget { return newBudget(x.r.Options.MaxTokens, x.r.Usage.Total()) }

// addUsage records one engine call's usage against a stage.
func (x *run) addUsage(stage string, u llm.Usage) {
	if u.Calls == 0 && u.Total() == 0 {
		return
	}
	x.mu.Lock()
	x.r.Usage.Usage = x.r.Usage.Usage.Add(u)
	x.r.Usage.Stages[stage] = x.r.Usage.Stages[stage].Add(u)
	total := x.r.Usage.Usage
	x.mu.Unlock()
	x.emit(Event{Type: EventUsage, Usage: &total})
}

func (x *run) timed(stage string, t0 time.Time) {
	x.mu.Lock()
	x.r.Timings.Stages[stage] += x.rn.now().Sub(t0).Seconds()
	x.mu.Unlock()
}

// run drives the research from wherever its state says it is.
func (x *run) run(ctx context.Context) (*Research, error) {
	r := x.r
	loopCtx, writeCtx, cancel := x.deadlines(ctx)
	defer cancel()
	x.setStatus(StatusProcessing, orDefault(r.Stage, StagePlanning))
	err := x.loop(loopCtx)
	switch {
	case errors.Is(err, ErrYield):
		return x.handBack(ctx, err)
	case err == nil:
		if cause := x.readNothing(); cause != nil {
			return x.fail(ctx, cause)
		}
	case ctx.Err() != nil:
		// Canceled, interrupted by the caller (Ctrl-C) or a lost lease:
		// keep everything, resumable.
		return x.stopped(ctx)
	case r.Plan == nil:
		// Nothing to write from, and not because nothing matched.
		if errors.Is(err, errTokenBudget) {
			return x.fail(ctx, fmt.Errorf("the token budget of %d leaves no room to plan (resume with a larger --max-tokens)", r.Options.MaxTokens))
		}
		if loopCtx.Err() != nil {
			return x.fail(ctx, fmt.Errorf("no plan within the time budget (%s): %w", r.Options.Timeout, err))
		}
		return x.fail(ctx, err)
	case len(r.Sources) == 0:
		return x.fail(ctx, fmt.Errorf("no source was read: %w", err))
	case errors.Is(err, errTimeBudget) || loopCtx.Err() != nil:
		r.StopReason = "time budget reached"
		x.warn(fmt.Sprintf("time budget of %s reached; writing the report from what was found", r.Options.Timeout))
	case errors.Is(err, errTokenBudget):
		r.StopReason = "token budget reached"
		x.warn(fmt.Sprintf("token budget reached (%d of %d tokens); writing the report from what was found", r.Usage.Total(), r.Options.MaxTokens))
	default:
		return x.fail(ctx, err)
	}
	_, endVerify := x.span(ctx, "verify")
	x.verify()
	endVerify(nil)
	if err := x.checkpoint(writeCtx); err != nil && ctx.Err() == nil {
		return x.fail(ctx, err)
	}
	if ctx.Err() != nil {
		return x.stopped(ctx)
	}
	if yieldAsked(ctx) {
		return x.handBack(ctx, ErrYield)
	}
	wctx, endWrite := x.span(writeCtx, "write")
	err = x.write(wctx)
	endWrite(err)
	if err != nil {
		if ctx.Err() != nil {
			return x.stopped(ctx)
		}
		return x.fail(ctx, err)
	}
	r.Timings.Total += x.rn.now().Sub(x.started).Seconds()
	if r.ThreadID != "" {
		if err := x.rn.Store.ThreadTouch(context.WithoutCancel(ctx), r.ThreadID, x.rn.now()); err != nil {
			return r, fmt.Errorf("thread %s: %w", r.ThreadID, err)
		}
	}
	if err := x.finalize(StatusCompleted, StageCompleted); err != nil {
		return r, err
	}
	return r, nil
}

// finalize sets a final status: its event and the state that says so are
// stored in one transaction, so a client that sees the event (and the
// stream's end) reads the research as finished.
// Nothing else checkpoints by then: the run's goroutines have ended.
func (x *run) finalize(status, stage string) error {
	x.mu.Lock()
	x.r.Status, x.r.Stage, x.r.Attempts = status, stage, 0
	x.mu.Unlock()
	return x.checkpoint(context.Background(), Event{Type: EventStatus, Status: &StatusChange{Status: status, Stage: stage}})
}

// readNothing is the cause when a loop that ended normally read no source
// because searches failed; nil when sources were read or every search ran
// and simply matched nothing.
func (x *run) readNothing() error {
	if len(x.r.Sources) > 0 {
		return nil
	}
	for _, sq := range x.r.SubQuestions {
		if sq.Status == SubFailed {
			return fmt.Errorf("no source was read: %s %q: %s", sq.ID, sq.Text, sq.Error)
		}
	}
	return nil
}

// errLostLease is the cause of a run whose lease another process took.
var errLostLease = errors.New("lost the research's lease")

// ErrShutdown is the cause a worker stops its runs with when it shuts
// down: they checkpoint and stay processing, for another worker to take.
var ErrShutdown = errors.New("worker shutting down")

// stopped ends a run whose ctx ended: canceled when Cancel asked; left
// processing (with its lease given up) when its worker shuts down; else
// failed (interrupted). All are resumable.
func (x *run) stopped(ctx context.Context) (*Research, error) {
	cause := context.Cause(ctx)
	if errors.Is(cause, errLostLease) {
		// Another process holds the research now: writing anything
		// would overwrite its state and clash with its events.
		return x.r, fmt.Errorf("research %s: %w", x.r.ID, cause)
	}
	if errors.Is(cause, ErrShutdown) {
		return x.handBack(ctx, cause)
	}
	err := fmt.Errorf("interrupted: %w (resume with the research id %s)", cause, x.r.ID)
	if errors.Is(cause, ErrCanceled) {
		return x.end(ctx, StatusCanceled, fmt.Errorf("%w (resume with the research id %s)", cause, x.r.ID))
	}
	return x.end(ctx, StatusFailed, err)
}

// handBack stores the research processing, checkpointed, for the next
// worker to continue: its worker stops, or its job yields.
func (x *run) handBack(ctx context.Context, cause error) (*Research, error) {
	x.r.Timings.Total += x.rn.now().Sub(x.started).Seconds()
	x.r.Attempts = 0 // handed over, not crashed
	if err := x.checkpoint(ctx); err != nil {
		return x.r, err
	}
	return x.r, fmt.Errorf("research %s: %w; another worker continues it", x.r.ID, cause)
}

// ErrYield is the cause of a research handed back at a checkpoint because
// its job asked it to yield (WithYield).
var ErrYield = fmt.Errorf("%w: yielded at a checkpoint", ErrShutdown)

type yieldKey struct{}

// WithYield returns a context under which a research, once yield is
// closed, stops at its next checkpoint (after its plan, a round, or its
// verification) and is handed back with ErrYield, nothing in flight lost.
// A job queue uses it to keep each attempt shorter than its rescue time.
func WithYield(ctx context.Context, yield <-chan struct{}) context.Context {
	return context.WithValue(ctx, yieldKey{}, yield)
}

func yieldAsked(ctx context.Context) bool {
	ch, _ := ctx.Value(yieldKey{}).(<-chan struct{})
	if ch == nil {
		return false
	}
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

func (x *run) fail(ctx context.Context, err error) (*Research, error) {
	return x.end(ctx, StatusFailed, err)
}

func (x *run) end(ctx context.Context, status string, err error) (*Research, error) {
	if cerr := x.recordEnd(status, err); cerr != nil {
		x.logger.Error("checkpoint after failure", "err", cerr)
	}
	return x.r, err
}

// recordEnd ends the run with status and err as its error, and returns the
// error of storing that (nil once it is stored).
func (x *run) recordEnd(status string, err error) error {
	x.r.Error = err.Error()
	x.r.FailedStage = orDefault(x.r.Stage, StagePlanning)
	x.r.Timings.Total += x.rn.now().Sub(x.started).Seconds()
	return x.finalize(status, StageFailed)
}

var (
	errTimeBudget  = errors.New("time budget reached")
	errTokenBudget = errors.New("token budget reached")
)

// deadlines splits the time budget: the loop may use 75% of what is left,
// the rest is the writer's reserve.
func (x *run) deadlines(ctx context.Context) (loopCtx, writeCtx context.Context, cancel func()) {
	t := x.r.Options.Timeout
	if t <= 0 {
		return ctx, ctx, func() {}
	}
	left := t - time.Duration(x.r.Timings.Total*float64(time.Second))
	if left < time.Second {
		left = time.Second
	}
	writeCtx, c1 := context.WithTimeout(ctx, left)
	loopCtx, c2 := context.WithTimeout(ctx, left-left/4)
	return loopCtx, writeCtx, func() { c2(); c1() }
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// normalize is the comparison key of a sub-question text.
func normalize(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(strings.Trim(s, " ?.!"))), " ")
}

func sortedIDs(m map[string]*Source) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return sourceNum(ids[i]) < sourceNum(ids[j]) })
	return ids
}

// record is the stored form of an event.
func record(e Event) (store.ResearchEvent, error) {
	data, err := json.Marshal(e)
	if err != nil {
		return store.ResearchEvent{}, fmt.Errorf("event %d: %w", e.Seq, err)
	}
	return store.ResearchEvent{Seq: e.Seq, Type: e.Type, At: e.At, Data: data}, nil
}
