// Package jobs runs queued researches. Local is the embedded queue: the
// researches table is the queue (pending, or processing with no live
// lease), a bounded pool of goroutines runs them, and a research left
// pending or processing by a crash is picked up again once its lease ends.
// Any number of Local workers, in any processes sharing the store, can run
// side by side: a research's lease lets one run it at a time.
package jobs

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// Queue takes researches to run.
type Queue interface {
	// Enqueue asks for a stored, pending research to be run.
	Enqueue(ctx context.Context, researchID string) error
}

// Runner is what runs one research (research.Runner's Work).
type Runner interface {
	Work(ctx context.Context, id string) (*research.Research, error)
}

// Finder lists the researches waiting for a worker.
type Finder interface {
	ResearchRunnable(ctx context.Context, now time.Time, limit int) ([]string, error)
	ResearchHeld(ctx context.Context, now time.Time) ([]store.Lease, error)
}

// Local runs researches in this process.
type Local struct {
	Runner Runner
	Store  Finder
	// Concurrency bounds researches run at once (default 2).
	Concurrency int
	// Poll is how often the store is asked for work besides Enqueue's
	// wake-ups (default 1s).
	Poll   time.Duration
	Logger *slog.Logger
	// OnDone, when set, sees each run's end.
	OnDone func(id string, r *research.Research, err error)

	wake chan struct{}
	mu   sync.Mutex
	busy map[string]bool
}

var _ Queue = (*Local)(nil)

// Enqueue wakes the pool; the research is already stored as pending.
func (l *Local) Enqueue(_ context.Context, _ string) error {
	l.init()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return nil
}

func (l *Local) init() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wake == nil {
		l.wake = make(chan struct{}, 1)
		l.busy = map[string]bool{}
	}
}

// Run works until ctx ends, then stops its researches (each checkpoints
// and stays processing, for another worker) and returns once they have.
func (l *Local) Run(ctx context.Context) error {
	l.init()
	conc := l.Concurrency
	if conc <= 0 {
		conc = 2
	}
	poll := l.Poll
	if poll <= 0 {
		poll = time.Second
	}
	logger := l.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	runCtx, stop := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stop(nil)
	var wg sync.WaitGroup
	slots := make(chan struct{}, conc)
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		free := conc - len(slots)
		if free > 0 {
			ids, err := l.runnable(ctx, free+len(slots))
			if err != nil && ctx.Err() == nil {
				logger.Warn("jobs: list runnable researches", "err", err)
			}
			for _, id := range ids {
				if len(slots) == conc {
					break
				}
				l.mu.Lock()
				taken := l.busy[id]
				l.busy[id] = true
				l.mu.Unlock()
				if taken {
					continue
				}
				slots <- struct{}{}
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-slots }()
					var r *research.Research
					err := safe.Call(func() (err error) {
						r, err = l.Runner.Work(runCtx, id)
						return err
					})
					if stack := safe.Stack(err); stack != nil {
						// Work recovers a research's own panics; this is one
						// before or after it ran. The research keeps its
						// attempt count, so it is not retried forever.
						logger.Error("jobs: research panicked", "research", id, "err", err, "stack", string(stack))
					}
					l.mu.Lock()
					delete(l.busy, id)
					l.mu.Unlock()
					switch {
					case errors.Is(err, store.ErrBusy):
						logger.Debug("jobs: research taken by another worker", "research", id)
					case err != nil:
						logger.Info("jobs: research ended", "research", id, "err", err)
					}
					if l.OnDone != nil {
						l.OnDone(id, r, err)
					}
					if r == nil {
						return // it never started (busy elsewhere, unreadable): the next poll, not a spin
					}
					select {
					case l.wake <- struct{}{}: // a slot is free
					default:
					}
				}()
			}
		}
		select {
		case <-ctx.Done():
			stop(research.ErrShutdown)
			wg.Wait()
			return nil
		case <-l.wake:
		case <-tick.C:
		}
	}
}

// runnable is what the store lists as waiting, and the researches whose
// lease is held by a process on this host that died (a crash): those are
// taken over at once rather than when the lease runs out.
func (l *Local) runnable(ctx context.Context, limit int) ([]string, error) {
	now := time.Now()
	ids, err := l.Store.ResearchRunnable(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	held, err := l.Store.ResearchHeld(ctx, now)
	if err != nil {
		return ids, err
	}
	for _, h := range held {
		if research.DeadHolder(h.Owner) {
			ids = append(ids, h.ID)
		}
	}
	return ids, nil
}
