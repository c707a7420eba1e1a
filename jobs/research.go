package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// ResearchArgs queue one stored research.
type ResearchArgs struct {
	ID string `json:"id" river:"unique"`
}

// Kind is the job kind.
func (ResearchArgs) Kind() string { return "research" }

// InsertOpts: one live job per research; attempts beyond the research's
// own bound (research.MaxAttempts runs that never ended fail it with the
// reason) so that it, not River, says why it stopped.
func (ResearchArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueResearch,
		MaxAttempts: research.MaxAttempts + 2,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: liveStates},
	}
}

type researchWorker struct {
	river.WorkerDefaults[ResearchArgs]
	q *Queue
}

// errSlice is the cause of an attempt stopped mid-step because it ran for
// most of the rescue time (River is about to take it for dead). It fails
// the research, resumable, rather than handing it back: a step that
// always outlasts the slice would otherwise be handed on forever.
var errSlice = errors.New("one step ran for most of --rescue-after without reaching a checkpoint; resume the research, or give the workers a longer --rescue-after")

// Timeout bounds an attempt below the rescue time (River rescues only a job
// past its timeout). The attempt yields at its first checkpoint after half
// of it; one step that runs past 0.8 of it stops the research (errSlice).
func (w *researchWorker) Timeout(*river.Job[ResearchArgs]) time.Duration {
	return w.q.opt.RescueAfter * 9 / 10
}

// NextRetry: an attempt that failed (the store away, a panic outside the
// research) is tried again soon, then less often.
func (w *researchWorker) NextRetry(job *river.Job[ResearchArgs]) time.Time {
	return time.Now().Add(w.q.opt.Backoff << min(job.Attempt, 6))
}

func (w *researchWorker) Work(ctx context.Context, job *river.Job[ResearchArgs]) error {
	q := w.q
	id := job.Args.ID
	// The research's context: River's cancel of the job is the research's
	// cancel; the client stopping is a hand-back; the slice's end too.
	rctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() {
		cause := context.Cause(ctx)
		switch {
		case errors.Is(cause, rivertype.ErrJobCancelledRemotely):
			cancel(fmt.Errorf("%w (its job was cancelled)", research.ErrCanceled))
		case q.stopping.Load():
			cancel(research.ErrShutdown)
		default:
			cancel(cause)
		}
	})
	defer stop()
	yield := make(chan struct{})
	soft := time.AfterFunc(q.opt.RescueAfter/2, func() { close(yield) })
	defer soft.Stop()
	hard := time.AfterFunc(q.opt.RescueAfter*8/10, func() { cancel(errSlice) })
	defer hard.Stop()
	rctx = research.WithYield(rctx, yield)

	var r *research.Research
	err := q.recovered("research", func() (err error) {
		r, err = q.opt.Research.Work(rctx, id)
		return err
	})
	if q.opt.OnResearchDone != nil {
		q.opt.OnResearchDone(id, r, err)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return river.JobCancel(fmt.Errorf("research %s: %w", id, err))
	case errors.Is(err, research.ErrShutdown):
		q.log.Info("research handed back", "research", id, "why", err)
		return river.JobSnooze(0)
	case errors.Is(err, store.ErrBusy):
		// Run elsewhere (quarry research --resume in a shell, or an
		// attempt River took for dead that is still going): look again
		// when its lease would end if not renewed.
		wait := 2 * time.Second
		if le := (*store.LeaseError)(nil); errors.As(err, &le) {
			wait = min(max(time.Until(le.Until), 500*time.Millisecond), 30*time.Second)
		}
		return river.JobSnooze(wait)
	case r != nil && r.Status == research.StatusCanceled:
		return river.JobCancel(fmt.Errorf("research %s canceled: %s", id, r.Error))
	case r != nil && (r.Status == research.StatusCompleted || r.Status == research.StatusFailed):
		return nil // the research says how it ended
	case err != nil && job.Attempt >= job.MaxAttempts:
		// The last attempt: the research says why it stopped.
		cause := fmt.Errorf("gave up after %d attempts; the last: %w", job.Attempt, err)
		fctx := context.WithoutCancel(ctx)
		if _, ferr := q.opt.Research.Fail(fctx, id, cause); ferr != nil && !errors.Is(ferr, store.ErrBusy) && !store.Transient(ferr) {
			// Its state cannot be read or written: marked failed in its
			// status alone, or the requeue would queue it again, and
			// again, for ever. (Not while the database is away: the
			// requeue brings it back, and its next last attempt records
			// its failure.)
			q.log.Error("research: record the last attempt's failure; marking it failed", "research", id, "err", ferr)
			if gerr := q.giveUp(fctx, id); gerr != nil {
				q.log.Error("research: mark it failed", "research", id, "err", gerr)
			}
		}
		return err
	case err != nil:
		q.log.Warn("research attempt failed; River retries it", "research", id, "attempt", job.Attempt, "of", job.MaxAttempts, "err", err)
		return err
	}
	return nil
}

// giveUp marks a research failed in its status alone (store.ResearchGiveUp).
func (q *Queue) giveUp(ctx context.Context, id string) error {
	now, err := q.st.Now(ctx)
	if err != nil {
		return err
	}
	return q.st.ResearchGiveUp(ctx, id, now)
}

// RequeueArgs queue every research that should have a job and has none: one
// stored before its job was inserted (a process that died in between, a
// database away at that moment) or queued before River ran Quarry's work.
// Queuing is unique per research, so one with a job is left alone.
type RequeueArgs struct{}

// Kind is the job kind.
func (RequeueArgs) Kind() string { return "requeue" }

// InsertOpts: one at a time.
func (RequeueArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueHouse, UniqueOpts: river.UniqueOpts{ByState: liveStates}}
}

type requeueWorker struct {
	river.WorkerDefaults[RequeueArgs]
	q *Queue
}

func (w *requeueWorker) Work(ctx context.Context, _ *river.Job[RequeueArgs]) error {
	now, err := w.q.st.Now(ctx)
	if err != nil {
		return err
	}
	ids, err := w.q.st.ResearchRunnable(ctx, now, 1000)
	if err != nil {
		return err
	}
	n := 0
	for _, id := range ids {
		res, err := w.q.client.Insert(ctx, ResearchArgs{ID: id}, nil)
		if err != nil {
			return fmt.Errorf("requeue research %s: %w", id, err)
		}
		if !res.UniqueSkippedAsDuplicate {
			n++
		}
	}
	if n > 0 {
		w.q.log.Info("queued researches that had no job", "count", n)
	}
	return nil
}
