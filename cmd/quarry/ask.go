package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/qa"
)

func (a *cli) askCmd() *cobra.Command {
	var req qa.Request
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ask KB QUESTION",
		Short: "Ask a knowledge base: an answer in the question's language, its sources, a confidence and suggested questions",
		Long: `Answers a question from a knowledge base's chunks in the question's language
(Korean or English), citing the sources it quotes, with a confidence (0-1) and
up to 3 suggested questions about what the knowledge base holds. When the
evidence is too weak it says it does not know instead of guessing.

Every answer belongs to a session (printed on stderr); --session continues it,
so a follow-up is asked with the turns before it. Sessions last 30 minutes
after their last question, in the database (or in Redis with --redis-url).
Without a language model the answer quotes the sentences that answer, and
says so.`,
		Example: `  quarry ask notes "요금은 언제 납부하나요?"
  quarry ask notes "and for businesses?" --session 4f1c…
  quarry ask notes "When was Verdi born?" --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageError{fmt.Errorf(`give the knowledge base and the question: quarry ask KB "QUESTION"`)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			req.Question = args[1]
			if err := req.Validate(); err != nil {
				return err
			}
			asker, err := a.q().Asker(ctx, args[0])
			if err != nil {
				return err
			}
			ans, err := asker.Ask(ctx, req)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, ans)
			}
			fmt.Fprintln(a.stdout, ans.Answer)
			if len(ans.Quotes) > 0 {
				fmt.Fprintln(a.stdout)
				seen := map[int]bool{}
				for _, q := range ans.Quotes {
					if !seen[q.Number] {
						seen[q.Number] = true
						fmt.Fprintf(a.stdout, "[%d] %s — %s\n", q.Number, textclean.Line(q.Title), q.URL)
					}
				}
			}
			fmt.Fprintf(a.stdout, "\nconfidence: %.2f\n", ans.Confidence)
			if len(ans.Suggestions) > 0 {
				fmt.Fprintf(a.stdout, "you could ask:\n  %s\n", strings.Join(ans.Suggestions, "\n  "))
			}
			fmt.Fprintf(a.stderr, "quarry: %s\nquarry: session %s (follow up with --session %s)\n", ans.Note, ans.SessionID, ans.SessionID)
			return nil
		},
	}
	cmd.Flags().StringVar(&req.SessionID, "session", "", "continue this session")
	cmd.Flags().IntVar(&req.TopK, "top-k", qa.DefaultTopK, "chunks read (1-20)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print answer, sources, confidence, suggestions, unknown, session_id, quotes as JSON")
	return cmd
}
