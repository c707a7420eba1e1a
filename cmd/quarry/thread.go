package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/research"
)

func (a *cli) threadCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "thread",
		Short: "Conversation threads: list, show, close (ask in one with quarry research --thread ID)",
	}
	cmd.AddCommand(a.threadListCmd(), a.threadShowCmd(), a.threadCloseCmd())
	return cmd
}

// threads is the research service that reads and closes threads.
func (a *cli) threads(cmd *cobra.Command) (*research.Runner, error) {
	return a.researches(cmd.Context())
}

func (a *cli) threadListCmd() *cobra.Command {
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List threads, most recently active first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rn, err := a.threads(cmd)
			if err != nil {
				return err
			}
			ts, err := rn.Threads(cmd.Context(), limit)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, ts)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tLAST ACTIVITY\tTITLE")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", t.ID, t.Status, t.LastActivity.Local().Format("2006-01-02 15:04"), textclean.Line(t.Title))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many")
	return cmd
}

func (a *cli) threadShowCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a thread's questions and answers in order",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rn, err := a.threads(cmd)
			if err != nil {
				return err
			}
			v, err := rn.Thread(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, v)
			}
			fmt.Fprintf(a.stdout, "thread %s (%s): %s\n", v.ID, v.Status, textclean.Line(v.Title))
			for i, q := range v.Queries {
				fmt.Fprintf(a.stdout, "\n%d. %s\n   research %s, %s\n", i+1, textclean.Line(q.Question), q.ResearchID, q.Status)
				if q.Answer != "" {
					fmt.Fprintf(a.stdout, "   %s\n", textclean.Line(q.Answer))
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (id, title, status, created_at, last_activity, queries)")
	return cmd
}

func (a *cli) threadCloseCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "close ID",
		Short: "Close a thread: it keeps its questions and answers and takes no new ones",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rn, err := a.threads(cmd)
			if err != nil {
				return err
			}
			if err := rn.CloseThread(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "closed thread %s\n", args[0])
			return nil
		},
	}
}
