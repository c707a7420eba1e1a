package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// JobOptions configure Jobs.
type JobOptions struct {
	// Workers is how many researches run at once here; 0 queues only.
	Workers int
	// RescueAfter is how long before a job whose process died runs again
	// (jobs.DefaultRescueAfter when zero).
	RescueAfter time.Duration
	// Runner runs researches (a.Runner's when nil).
	Runner *research.Runner
	Logger *slog.Logger
	// OnResearchDone sees each research attempt's end.
	OnResearchDone func(id string, r *research.Research, err error)
}

// Jobs opens the background-work queue on the store: with workers it runs
// researches, crawls, scheduled crawls and purges once Started.
func (a *App) Jobs(ctx context.Context, o JobOptions) (*jobs.Queue, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	opt := jobs.Options{Workers: o.Workers, RescueAfter: o.RescueAfter, Logger: o.Logger, OnResearchDone: o.OnResearchDone}
	if opt.Logger == nil {
		opt.Logger = a.Logger
	}
	if o.Workers > 0 {
		rn := o.Runner
		if rn == nil {
			if rn, err = a.Runner(ctx); err != nil {
				return nil, err
			}
		}
		opt.Research = rn
		opt.Crawl = crawler{a: a, log: opt.Logger}
		opt.Ingest = a
	}
	return jobs.Open(ctx, st, opt)
}

// crawler runs queued crawls with the app's fetcher, knowledge bases and
// embedders.
type crawler struct {
	a   *App
	log *slog.Logger
}

func (c crawler) Crawl(ctx context.Context, args jobs.CrawlArgs) (*store.CrawlLog, error) {
	svc, err := c.a.KB(ctx)
	if err != nil {
		return nil, err
	}
	k, err := svc.Get(ctx, args.KB)
	if err != nil {
		return nil, err
	}
	emb, err := c.a.EmbedderFor(k)
	if err != nil {
		return nil, err
	}
	opt := args.Options
	cr := &crawl.Crawler{Fetcher: c.a.Fetcher(fetch.Options{Delay: args.Delay, PerHost: max(1, opt.Concurrency)}), KB: svc, Store: c.a.CurrentStore(), Embedder: emb, Logger: c.log}
	return cr.Run(ctx, args.KB, args.URL, opt)
}
