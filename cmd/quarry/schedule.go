package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/store"
)

func (a *cli) kbScheduleCmd() *cobra.Command {
	var spec jobs.ScheduleSpec
	var off, asJSON bool
	cmd := &cobra.Command{
		Use:   "schedule NAME [URL]",
		Short: "Show, set (with URL) or remove (--off) a knowledge base's scheduled re-crawl",
		Long: `A knowledge base's re-crawl schedule is stored with it: every --every
(default 5m) one crawl of URL is queued as a job, run by
whichever quarry serve or quarry worker on this store takes it — once per
interval however many run, never two crawls of one knowledge base at once.
A failed run is retried 3 times with backoff before its log says failed.
Without URL it shows the schedule; --off removes it. Deleting the knowledge
base deletes its schedule.`,
		Example: `  quarry kb schedule docs https://docs.example.com/ --every 5m
  quarry kb schedule docs
  quarry kb schedule docs --off`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			svc, err := a.service(ctx)
			if err != nil {
				return err
			}
			k, err := svc.Get(ctx, args[0])
			if err != nil {
				return err
			}
			st := a.q().CurrentStore()
			switch {
			case off && len(args) == 2:
				return usageError{errors.New("off: removes the schedule; give no URL with it")}
			case off:
				if err := st.ScheduleDelete(ctx, k.ID); err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "%s: no scheduled re-crawl\n", k.Name)
				return nil
			case len(args) == 2:
				spec.URL = args[1]
				sc, err := jobs.SetSchedule(ctx, st, k.ID, spec)
				var ve *store.ValidationError
				if errors.As(err, &ve) {
					return usageError{err}
				}
				if err != nil {
					return err
				}
				return a.printSchedule(sc, asJSON)
			}
			sc, err := st.ScheduleGet(ctx, k.ID)
			if errors.Is(err, store.ErrNotFound) {
				fmt.Fprintf(a.stdout, "%s: no scheduled re-crawl (set one with: quarry kb schedule %s URL --every 5m)\n", k.Name, k.Name)
				return nil
			}
			if err != nil {
				return err
			}
			return a.printSchedule(sc, asJSON)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&spec.Every, "every", jobs.DefaultEvery, "time between crawls (at least 1s)")
	fl.BoolVar(&off, "off", false, "remove the schedule")
	fl.BoolVar(&asJSON, "json", false, "print JSON")
	crawlFlags(fl, &spec.Options, &spec.Delay)
	return cmd
}

func (a *cli) printSchedule(sc *store.Schedule, asJSON bool) error {
	if asJSON {
		return writeJSON(a.stdout, jobs.View(sc))
	}
	fmt.Fprintf(a.stdout, "%s: crawl %s every %s; next run due %s (a quarry serve or quarry worker on this store runs it)\n",
		sc.KB, sc.URL, sc.Every, sc.NextAt.Local().Format("2006-01-02 15:04:05"))
	return nil
}
