package research

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/llm"
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
	Store    store.ResearchStore
	Logger   *slog.Logger
	// OnEvent, when set, receives every event as it happens.
	OnEvent func(Event)
	// Concurrency bounds simultaneous searches (default 4).
	Concurrency int
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Owner names this process in a research's lease (default host:pid).
	Owner string
}

// Lease timings: a running research renews its lease every leaseRenew; a
// process that died holds it at most leaseTTL.
const (
	leaseTTL   = 30 * time.Second
	leaseRenew = 10 * time.Second
)

// hold takes the research's lease, so that no other process runs it at
// the same time, and renews it until release is called. The returned
// context ends when the lease is lost.
func (rn *Runner) hold(ctx context.Context, id string) (context.Context, func(), error) {
	owner := rn.Owner
	if owner == "" {
		owner = defaultOwner()
	}
	owner += "/" + uuid.NewString()[:8] // two runs in one process are two holders
	now := rn.now()
	err := rn.Store.ResearchClaim(ctx, id, owner, now, now.Add(leaseTTL))
	var le *store.LeaseError
	if errors.As(err, &le) && deadHolder(le.Owner) {
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
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(leaseRenew)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				now := rn.now()
				if err := rn.Store.ResearchClaim(ctx, id, owner, now, now.Add(leaseTTL)); err != nil && ctx.Err() == nil {
					cancel(fmt.Errorf("lost the research's lease: %w", err))
					return
				}
			}
		}
	}()
	release := func() {
		close(done)
		wg.Wait()
		cancel(nil)
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

// deadHolder reports whether a lease owner ("host:pid/…") names a process
// on this host that no longer exists.
func deadHolder(owner string) bool {
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

func defaultOwner() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("%s:%d", host, os.Getpid())
}

// Start validates the question and options, creates a research and runs it
// to the end. The research is returned (and stored) also when it failed.
func (rn *Runner) Start(ctx context.Context, question string, opts Options) (*Research, error) {
	q, err := Validate(question, &opts)
	if err != nil {
		return nil, err
	}
	now := rn.now()
	r := &Research{ID: uuid.NewString(), Question: q, Status: StatusPending, Options: opts, Engine: rn.Engine.Name(), CreatedAt: now, UpdatedAt: now}
	x := rn.newRun(r, 0)
	x.emit(Event{Type: EventStatus, Status: &StatusChange{Status: StatusPending}})
	if err := x.checkpoint(ctx); err != nil {
		return nil, err
	}
	ctx, release, err := rn.hold(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	defer release()
	return x.run(ctx)
}

// Resume continues a stored research from its last checkpoint. Finished
// steps are not redone. A completed research is returned as it is.
// A research another process is running is refused with a *store.LeaseError
// before anything is spent.
func (rn *Runner) Resume(ctx context.Context, id string) (*Research, error) {
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
	if r.Status == StatusCompleted {
		return r, nil
	}
	evs, err := rn.Store.ResearchEvents(ctx, id, 0)
	if err != nil {
		return nil, err
	}
	var seq int64
	if len(evs) > 0 {
		seq = evs[len(evs)-1].Seq
	}
	stage := orDefault(r.FailedStage, orDefault(r.Stage, StagePlanning))
	r.Error, r.FailedStage, r.Stage = "", "", stage
	x := rn.newRun(r, seq)
	x.warn(fmt.Sprintf("resumed at stage %s", stage))
	return x.run(ctx)
}

// Load reads a stored research.
func Load(ctx context.Context, st store.ResearchStore, id string) (*Research, error) {
	rec, err := st.ResearchGet(ctx, id)
	if err != nil {
		return nil, err
	}
	var r Research
	if err := json.Unmarshal(rec.State, &r); err != nil {
		return nil, fmt.Errorf("research %s: stored state: %w", id, err)
	}
	return &r, nil
}

func (rn *Runner) now() time.Time {
	if rn.Now != nil {
		return rn.Now().UTC()
	}
	return time.Now().UTC()
}

// run is one execution of a research (a start or a resume).
type run struct {
	rn     *Runner
	logger *slog.Logger

	saveMu  sync.Mutex // serialises checkpoints
	mu      sync.Mutex
	r       *Research
	seq     int64
	pending []Event
	started time.Time
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
	return &run{rn: rn, logger: lg.With("research", r.ID), r: r, seq: seq, started: rn.now()}
}

// emit records an event for the next checkpoint and streams it now.
func (x *run) emit(e Event) {
	x.mu.Lock()
	x.seq++
	e.ResearchID, e.Seq, e.At = x.r.ID, x.seq, x.rn.now()
	x.pending = append(x.pending, e)
	x.mu.Unlock()
	if x.rn.OnEvent != nil {
		x.rn.OnEvent(e)
	}
}

func (x *run) agent(name, status string, progress float64, task, result string) {
	x.emit(Event{Type: EventAgent, Agent: &AgentState{Agent: name, Status: status, Progress: progress, Task: task, Result: result}})
}

func (x *run) message(from, to, kind, content string) {
	x.emit(Event{Type: EventMessage, Message: &AgentMessage{From: from, To: to, Kind: kind, Content: content}})
}

func (x *run) warn(msg string) {
	x.mu.Lock()
	x.r.Warnings = append(x.r.Warnings, msg)
	x.mu.Unlock()
	x.logger.Warn("research", "warning", msg)
	x.emit(Event{Type: EventWarning, Warning: msg})
}

func (x *run) setStatus(status, stage string) {
	x.mu.Lock()
	x.r.Status, x.r.Stage = status, stage
	x.mu.Unlock()
	x.emit(Event{Type: EventStatus, Status: &StatusChange{Status: status, Stage: stage}})
}

// checkpoint stores the research and the events since the last one, in one
// transaction. It runs even when ctx is cancelled, so an interrupted
// research keeps what it found.
func (x *run) checkpoint(ctx context.Context) error {
	x.saveMu.Lock()
	defer x.saveMu.Unlock()
	x.mu.Lock()
	x.r.UpdatedAt = x.rn.now()
	state, err := json.Marshal(x.r)
	if err != nil {
		x.mu.Unlock()
		return fmt.Errorf("checkpoint: %w", err)
	}
	rec := store.Research{ID: x.r.ID, Question: x.r.Question, Status: x.r.Status, CreatedAt: x.r.CreatedAt, UpdatedAt: x.r.UpdatedAt, State: state}
	evs := make([]store.ResearchEvent, 0, len(x.pending))
	for _, e := range x.pending {
		data, err := json.Marshal(e)
		if err != nil {
			x.mu.Unlock()
			return fmt.Errorf("checkpoint: %w", err)
		}
		evs = append(evs, store.ResearchEvent{Seq: e.Seq, Type: e.Type, At: e.At, Data: data})
	}
	x.pending = nil
	x.mu.Unlock()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := x.rn.Store.ResearchSave(sctx, rec, evs); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
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
	case err == nil:
		if cause := x.readNothing(); cause != nil {
			return x.fail(ctx, cause)
		}
	case ctx.Err() != nil:
		// Interrupted by the caller (Ctrl-C) or a lost lease: keep
		// everything, resumable.
		return x.fail(ctx, fmt.Errorf("interrupted: %w (resume with the research id %s)", context.Cause(ctx), r.ID))
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
	x.verify()
	if err := x.checkpoint(writeCtx); err != nil && ctx.Err() == nil {
		return x.fail(ctx, err)
	}
	if ctx.Err() != nil {
		return x.fail(ctx, fmt.Errorf("interrupted: %w (resume with the research id %s)", context.Cause(ctx), r.ID))
	}
	if err := x.write(writeCtx); err != nil {
		if ctx.Err() != nil {
			return x.fail(ctx, fmt.Errorf("interrupted: %w (resume with the research id %s)", context.Cause(ctx), r.ID))
		}
		return x.fail(ctx, err)
	}
	r.Timings.Total += x.rn.now().Sub(x.started).Seconds()
	x.setStatus(StatusCompleted, StageCompleted)
	if err := x.checkpoint(ctx); err != nil {
		return r, err
	}
	return r, nil
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

func (x *run) fail(ctx context.Context, err error) (*Research, error) {
	x.r.Error = err.Error()
	x.r.FailedStage = orDefault(x.r.Stage, StagePlanning)
	x.r.Timings.Total += x.rn.now().Sub(x.started).Seconds()
	x.setStatus(StatusFailed, StageFailed)
	if cerr := x.checkpoint(ctx); cerr != nil {
		x.logger.Error("checkpoint after failure", "err", cerr)
	}
	return x.r, err
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
	loopCtx, c2 := context.WithTimeout(ctx, left*3/4)
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
