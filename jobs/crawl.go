package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/store"
)

// CrawlArgs queue one crawl of a knowledge base.
type CrawlArgs struct {
	// KB is the knowledge base's name; at most one crawl of it is queued
	// or running at a time.
	KB      string        `json:"kb" river:"unique"`
	URL     string        `json:"url"`
	Options crawl.Options `json:"options"`
	// Delay is the wait between requests to one host.
	Delay time.Duration `json:"delay"`
	// Slot is the scheduled time of a scheduled crawl (zero when queued by
	// hand).
	Slot time.Time `json:"slot,omitzero"`
}

// Kind is the job kind.
func (CrawlArgs) Kind() string { return "crawl" }

// InsertOpts: one live crawl per knowledge base. A crawl retries a failed
// run itself (crawl.Options.Retries, with backoff) before its log says
// failed; River's attempts are for a process that died mid-crawl.
func (CrawlArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{
		Queue:       QueueCrawl,
		MaxAttempts: 3,
		UniqueOpts:  river.UniqueOpts{ByArgs: true, ByState: liveStates},
	}
}

type crawlWorker struct {
	river.WorkerDefaults[CrawlArgs]
	q *Queue
}

// Timeout ends a crawl before River would take it for dead, so two never
// run at once for one knowledge base.
func (w *crawlWorker) Timeout(*river.Job[CrawlArgs]) time.Duration {
	return w.q.opt.RescueAfter * 9 / 10
}

func (w *crawlWorker) Work(ctx context.Context, job *river.Job[CrawlArgs]) error {
	var log *store.CrawlLog
	err := w.q.recovered("crawl", func() (err error) {
		log, err = w.q.opt.Crawl.Crawl(ctx, job.Args)
		return err
	})
	switch {
	case log == nil && err != nil && ctx.Err() == nil:
		// It could not start: a deleted knowledge base, options that no
		// longer validate. Running it again would change nothing.
		w.q.log.Warn("crawl not run", "kb", job.Args.KB, "err", err)
		return river.JobCancel(err)
	case log == nil && err != nil:
		return err
	case err != nil:
		// Its log says failed, after the crawl's own retries.
		w.q.log.Info("crawl failed", "kb", job.Args.KB, "err", err)
	}
	return nil
}

// tickSchedules queues each due scheduled crawl once, whichever processes
// look: the schedule's next time moves by compare-and-set, and only the
// process that moved it queues the crawl.
func (q *Queue) tickSchedules(ctx context.Context) {
	defer close(q.tickDone)
	t := time.NewTicker(q.opt.ScheduleEvery)
	defer t.Stop()
	for {
		if err := q.recovered("schedule", func() error { return q.queueDue(ctx) }); err != nil && ctx.Err() == nil {
			q.log.Warn("crawl schedules", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// queueDue queues the crawls whose schedule is due now (the database's
// clock).
func (q *Queue) queueDue(ctx context.Context) error {
	now, err := q.st.Now(ctx)
	if err != nil {
		return err
	}
	due, err := q.st.ScheduleDue(ctx, now, 100)
	if err != nil {
		return err
	}
	var errs []error
	for _, sc := range due {
		next := sc.NextAt.Add(sc.Every)
		if !next.After(now) {
			// Behind (no process ran for a while): one run now, then on
			// the interval from now; missed slots are not made up.
			next = now.Add(sc.Every)
		}
		won, err := q.st.ScheduleAdvance(ctx, sc.KBID, sc.NextAt, next)
		if err != nil || !won {
			errs = append(errs, err)
			continue
		}
		a := CrawlArgs{KB: sc.KB, URL: sc.URL, Slot: sc.NextAt}
		if err := decodeScheduleOptions(sc.Options, &a); err != nil {
			errs = append(errs, fmt.Errorf("schedule of %s: %w", sc.KB, err))
			continue
		}
		queued, err := q.EnqueueCrawl(ctx, a)
		switch {
		case err != nil:
			errs = append(errs, err)
		case !queued:
			q.log.Info("scheduled crawl skipped: the previous one is still running", "kb", sc.KB, "slot", sc.NextAt)
		default:
			q.log.Debug("scheduled crawl queued", "kb", sc.KB, "slot", sc.NextAt)
		}
	}
	return errors.Join(errs...)
}

// ScheduleOptions are a schedule's crawl options as stored.
type ScheduleOptions struct {
	Options crawl.Options `json:"options"`
	Delay   time.Duration `json:"delay"`
}

func decodeScheduleOptions(b []byte, a *CrawlArgs) error {
	if len(b) == 0 {
		return nil
	}
	var o ScheduleOptions
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	a.Options, a.Delay = o.Options, o.Delay
	return nil
}

// PurgeArgs purge crawl logs older than crawl.LogRetention (90
// days), chat sessions past remembering, and the files of uploads whose
// request died before the upload was recorded.
type PurgeArgs struct{}

// Kind is the job kind.
func (PurgeArgs) Kind() string { return "purge" }

// InsertOpts: one at a time.
func (PurgeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: QueueHouse, UniqueOpts: river.UniqueOpts{ByState: liveStates}}
}

type purgeWorker struct {
	river.WorkerDefaults[PurgeArgs]
	q *Queue
}

func (w *purgeWorker) Work(ctx context.Context, _ *river.Job[PurgeArgs]) error {
	now, err := w.q.st.Now(ctx)
	if err != nil {
		return err
	}
	logs, err := w.q.st.CrawlLogPurge(ctx, now.Add(-crawl.LogRetention))
	if err != nil {
		return err
	}
	sessions, err := w.q.st.ChatSessionPurge(ctx, now.Add(-session.TTL-session.Remember))
	if err != nil {
		return err
	}
	files, err := w.q.st.IngestFilesPurge(ctx, now.Add(-time.Hour))
	if err != nil {
		return err
	}
	w.q.log.Info("purged", "crawl_logs", logs, "chat_sessions", sessions, "upload_files", files)
	return nil
}
