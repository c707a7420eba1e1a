package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/research"
)

func (a *cli) workerCmd() *cobra.Command {
	var concurrency int
	var rescue time.Duration
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run queued background work (researches, crawls, scheduled crawls, purges) until Ctrl-C; any number may share a store",
		Long: `Runs the store's River jobs: researches queued with quarry research --detach
or the API, crawls, knowledge bases' scheduled re-crawls and the purges of old
crawl logs and expired chat sessions. Every job runs on one process at a time;
a worker that stops hands its researches back, checkpointed, for another to
continue, and the job of a worker that died runs again elsewhere after
--rescue-after. Works on the embedded SQLite store (workers on one machine)
and on PostgreSQL (--database-url; workers anywhere).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if concurrency < 1 || concurrency > 64 {
				return usageError{fmt.Errorf("concurrency: must be between 1 and 64, got %d", concurrency)}
			}
			if rescue != 0 && rescue < time.Second {
				return usageError{fmt.Errorf("rescue-after: must be at least 1s, got %s", rescue)}
			}
			a.q().SetLongLived(true)       // long-lived: searches where --search says
			a.q().SetBackgroundIndex(true) // runs ingest jobs, which a build would outlast
			rn, err := a.q().Runner(ctx)
			if err != nil {
				return err
			}
			q, err := a.q().Jobs(ctx, app.JobOptions{Workers: concurrency, RescueAfter: rescue, Runner: rn, Logger: a.logger,
				OnResearchDone: func(id string, r *research.Research, err error) {
					switch {
					case r != nil && r.Status != research.StatusProcessing:
						fmt.Fprintf(a.stderr, "quarry worker: research %s %s\n", id, r.Status)
					case err != nil:
						fmt.Fprintf(a.stderr, "quarry worker: research %s: %v\n", id, err)
					}
				}})
			if err != nil {
				return err
			}
			if err := q.Start(ctx); err != nil {
				_ = q.Close()
				return err
			}
			fmt.Fprintf(a.stderr, "quarry worker: running up to %d researches at once with %s; Ctrl-C stops (running researches are handed back)\n", concurrency, rn.Engine.Name())
			<-ctx.Done()
			return q.Close()
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 2, "researches run at once")
	cmd.Flags().DurationVar(&rescue, "rescue-after", jobs.DefaultRescueAfter, "how long a job whose process died waits before it runs again")
	return cmd
}
