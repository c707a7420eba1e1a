package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/store"
)

func (a *cli) kbCrawlCmd() *cobra.Command {
	var opt crawl.Options
	var every, delay time.Duration
	var asJSON, create bool
	cmd := &cobra.Command{
		Use:   "crawl NAME URL",
		Short: "Crawl a website into a knowledge base (same site, sitemap.xml, robots.txt; re-crawls only fetch what changed)",
		Long: `Crawl a website into a knowledge base: pages on the start URL's host, found
by following links (up to --max-depth) and through sitemap.xml, within
robots.txt, at most --max-pages per run. A re-crawl sends conditional requests
(ETag / Last-Modified), so unchanged pages are neither re-chunked nor
re-embedded; a page that fails 3 runs in a row is marked stale and kept.
Every run writes a crawl log (see 'quarry kb logs'); a failed run is retried
3 times. With --every the crawl repeats on that schedule until interrupted.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := opt.Validate(); err != nil {
				return usageError{err}
			}
			if delay < 0 || delay > fetch.MaxDelay {
				return usageError{&store.ValidationError{Field: "delay", Rule: fmt.Sprintf("must be from 0 to %s, got %s", fetch.MaxDelay, delay)}}
			}
			if every != 0 && every < time.Second {
				return usageError{&store.ValidationError{Field: "every", Rule: fmt.Sprintf("must be at least 1s, got %s", every)}}
			}
			if _, err := fetch.ParseURL(args[1]); err != nil {
				return usageError{err}
			}
			svc, emb, undo, err := a.openForWrite(ctx, args[0], create)
			if err != nil {
				return err
			}
			c := &crawl.Crawler{
				Fetcher:  a.q().Fetcher(fetch.Options{Delay: delay, PerHost: max(1, opt.Concurrency)}),
				KB:       svc,
				Store:    a.q().CurrentStore(),
				Embedder: emb,
				Logger:   a.logger,
			}
			report := func(l *store.CrawlLog, err error) {
				if l == nil {
					return
				}
				if asJSON {
					_ = writeJSON(a.stdout, l)
					return
				}
				fmt.Fprintf(a.stdout, "%s %s: %s, %d pages crawled, %d updated, %d failed in %.1fs%s\n",
					l.StartedAt.Local().Format("15:04:05"), l.URL, l.Status, l.PagesCrawled, l.PagesUpdated, l.PagesFailed, l.DurationSeconds, errSuffix(l.ErrorMessage))
			}
			if every > 0 {
				if a.isTerminal() {
					fmt.Fprintf(a.stderr, "crawling %s every %s; Ctrl-C stops\n", args[1], every)
				}
				return c.Every(ctx, args[0], args[1], opt, every, report)
			}
			l, err := c.Run(ctx, args[0], args[1], opt)
			report(l, err)
			if err != nil && (l == nil || l.PagesUpdated == 0) {
				undo() // a refused or failed first crawl leaves nothing behind
			}
			return err
		},
	}
	crawlFlags(cmd.Flags(), &opt, &delay)
	cmd.Flags().DurationVar(&every, "every", 0, "re-crawl on this schedule (e.g. 5m) until interrupted")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each run's crawl log as JSON")
	cmd.Flags().BoolVar(&create, "create", false, "create the knowledge base first if it does not exist")
	return cmd
}

// crawlFlags are a crawl's options, for kb crawl and kb schedule.
func crawlFlags(fl *pflag.FlagSet, opt *crawl.Options, delay *time.Duration) {
	fl.IntVar(&opt.MaxPages, "max-pages", 500, "most pages fetched per run (1-1000000)")
	fl.IntVar(&opt.MaxDepth, "max-depth", 5, "most links followed from the start page (0-100)")
	fl.IntVar(&opt.Concurrency, "concurrency", 4, "pages fetched at once (1-64)")
	fl.BoolVar(&opt.NoSitemap, "no-sitemap", false, "do not read sitemap.xml")
	fl.BoolVar(&opt.WholeHost, "whole-host", false, "crawl the whole host, not only the pages under the start URL's path")
	fl.DurationVar(delay, "delay", 250*time.Millisecond, "least time between requests to the site (a larger robots.txt Crawl-delay wins; 0 turns politeness off)")
}

func (a *cli) kbLogsCmd() *cobra.Command {
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Show a knowledge base's crawl logs, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if limit < 1 || limit > 10000 {
				return usageError{&store.ValidationError{Field: "limit", Rule: fmt.Sprintf("must be 1-10000, got %d", limit)}}
			}
			logs, err := a.crawlLogs(cmd.Context(), args[0], limit)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, logs)
			}
			if len(logs) == 0 {
				fmt.Fprintf(a.stdout, "no crawls of %s yet (start one with: quarry kb crawl %s URL)\n", args[0], args[0])
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STARTED\tSTATUS\tCRAWLED\tUPDATED\tFAILED\tSECONDS\tURL\tERROR")
			for _, l := range logs {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f\t%s\t%s\n", l.StartedAt.Local().Format("2006-01-02 15:04:05"), l.Status,
					l.PagesCrawled, l.PagesUpdated, l.PagesFailed, l.DurationSeconds, l.URL, l.ErrorMessage)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&limit, "limit", 20, "most logs shown (1-10000)")
	return cmd
}

func (a *cli) crawlLogs(ctx context.Context, name string, limit int) ([]store.CrawlLog, error) {
	svc, err := a.service(ctx)
	if err != nil {
		return nil, err
	}
	k, err := svc.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	logs, err := a.q().CurrentStore().CrawlLogList(ctx, k.ID, limit)
	if err != nil {
		return nil, err
	}
	if logs == nil {
		logs = []store.CrawlLog{}
	}
	return logs, nil
}
