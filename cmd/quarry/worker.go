package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
)

func (a *app) workerCmd() *cobra.Command {
	var concurrency int
	var poll time.Duration
	cmd := &cobra.Command{
		Use:   "worker",
		Short: "Run queued researches (quarry research --detach) until Ctrl-C; any number may share a store",
		Long: `Runs researches queued with quarry research --detach, and takes over those a
crashed or stopped worker left: every research is run by one worker at a time
(a lease in the store), and a worker that stops hands its researches back,
checkpointed, for another to continue. Works on the embedded SQLite store
(workers on one machine) and on PostgreSQL (--database-url; workers anywhere).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if concurrency < 1 || concurrency > 64 {
				return usageError{fmt.Errorf("concurrency: must be between 1 and 64, got %d", concurrency)}
			}
			eng, err := a.engine()
			if err != nil {
				return usageError{err}
			}
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			rn := &research.Runner{Engine: eng, Fallback: offline.Engine{}, Store: a.store, Logger: a.logger,
				OpenSources: func(ctx context.Context, specs []string) ([]search.Source, error) {
					return a.openSources(ctx, svc, specs)
				}}
			w := &jobs.Local{Runner: rn, Store: a.store, Concurrency: concurrency, Poll: poll, Logger: a.logger,
				OnDone: func(id string, r *research.Research, err error) {
					switch {
					case err != nil:
						fmt.Fprintf(a.stderr, "quarry worker: research %s: %v\n", id, err)
					case r != nil:
						fmt.Fprintf(a.stderr, "quarry worker: research %s %s\n", id, r.Status)
					}
				}}
			fmt.Fprintf(a.stderr, "quarry worker: running up to %d researches at once with %s; Ctrl-C stops (running researches are handed back)\n", concurrency, eng.Name())
			return w.Run(ctx)
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 2, "researches run at once")
	cmd.Flags().DurationVar(&poll, "poll", time.Second, "how often the store is asked for queued researches")
	return cmd
}
