package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/research"
)

func (a *cli) workerCmd() *cobra.Command {
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
			a.q().SetResident(true) // long-lived: knowledge bases stay loaded
			rn, err := a.q().Runner(ctx)
			if err != nil {
				return err
			}
			w := &jobs.Local{Runner: rn, Store: a.q().CurrentStore(), Concurrency: concurrency, Poll: poll, Logger: a.logger,
				OnDone: func(id string, r *research.Research, err error) {
					switch {
					case err != nil:
						fmt.Fprintf(a.stderr, "quarry worker: research %s: %v\n", id, err)
					case r != nil:
						fmt.Fprintf(a.stderr, "quarry worker: research %s %s\n", id, r.Status)
					}
				}}
			fmt.Fprintf(a.stderr, "quarry worker: running up to %d researches at once with %s; Ctrl-C stops (running researches are handed back)\n", concurrency, rn.Engine.Name())
			return w.Run(ctx)
		},
	}
	cmd.Flags().IntVar(&concurrency, "concurrency", 2, "researches run at once")
	cmd.Flags().DurationVar(&poll, "poll", time.Second, "how often the store is asked for queued researches")
	return cmd
}
