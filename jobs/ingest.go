package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/quarryhq/quarry/store"
)

// IngestRunner ingests a background upload whose files the store keeps
// (app.App).
type IngestRunner interface {
	// Ingest ingests the upload and records how it went; an error asks
	// for another attempt.
	Ingest(ctx context.Context, id string) error
	// FailIngest records the upload failed with cause: its last attempt
	// failed.
	FailIngest(ctx context.Context, id string, cause error) error
}

// IngestArgs queue one background upload.
type IngestArgs struct {
	ID string `json:"id" river:"unique"`
	KB string `json:"kb"`
}

// Kind is the job kind.
func (IngestArgs) Kind() string { return "ingest" }

// InsertOpts: one live job per upload.
func (IngestArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueIngest, MaxAttempts: 5, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: liveStates}}
}

type ingestWorker struct {
	river.WorkerDefaults[IngestArgs]
	q *Queue
}

// Timeout ends an attempt before River would take it for dead; the next
// attempt starts over (documents already written are found unchanged).
func (w *ingestWorker) Timeout(*river.Job[IngestArgs]) time.Duration {
	return w.q.opt.RescueAfter * 9 / 10
}

func (w *ingestWorker) NextRetry(job *river.Job[IngestArgs]) time.Time {
	return time.Now().Add(w.q.opt.Backoff << min(job.Attempt, 6))
}

func (w *ingestWorker) Work(ctx context.Context, job *river.Job[IngestArgs]) error {
	err := w.q.recovered("ingest", func() error { return w.q.opt.Ingest.Ingest(ctx, job.Args.ID) })
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return river.JobCancel(fmt.Errorf("upload %s: %w", job.Args.ID, err))
	case job.Attempt >= job.MaxAttempts:
		cause := fmt.Errorf("gave up after %d attempts; the last: %w", job.Attempt, err)
		if ferr := w.q.opt.Ingest.FailIngest(context.WithoutCancel(ctx), job.Args.ID, cause); ferr != nil {
			w.q.log.Error("upload: record the last attempt's failure", "ingest", job.Args.ID, "err", ferr)
		}
		return err
	}
	w.q.log.Warn("upload attempt failed; River retries it", "ingest", job.Args.ID, "attempt", job.Attempt, "err", err)
	return err
}

// EnqueueIngest queues a stored upload.
func (q *Queue) EnqueueIngest(ctx context.Context, a IngestArgs) error {
	if _, err := q.client.Insert(ctx, a, nil); err != nil {
		return fmt.Errorf("queue upload %s: %w", a.ID, err)
	}
	return nil
}
