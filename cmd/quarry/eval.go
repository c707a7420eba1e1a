package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/eval"
	"github.com/quarryhq/quarry/kb"
)

func (a *cli) evalCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "eval", Short: "Evaluate retrieval (BEIR files, console pipelines) and answers (research, ask) on datasets"}
	// The evaluations that search a knowledge base once per question keep
	// it in memory, as a long-lived process does: thousands of searches
	// are faster from memory once it is loaded.
	batch := []*cobra.Command{a.evalRetrievalCmd(), a.evalPipelineCmd(), a.evalResearchCmd(), a.evalAskCmd()}
	for _, c := range batch {
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			a.q().SetLongLived(true)
			return run(cmd, args)
		}
	}
	cmd.AddCommand(batch...)
	cmd.AddCommand(a.evalRunsCmd(), a.evalShowCmd(), a.evalCompareCmd(), a.evalTableCmd())
	return cmd
}

func (a *cli) evalRetrievalCmd() *cobra.Command {
	var f searchFlags
	var kbName, queriesPath, qrelsPath string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "retrieval --kb NAME --queries Q.jsonl --qrels QRELS.tsv",
		Short: "nDCG, recall and MRR at k over BEIR queries and qrels (document level)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if kbName == "" || queriesPath == "" || qrelsPath == "" {
				return usageError{fmt.Errorf("--kb, --queries and --qrels are required")}
			}
			if f.k < 1 || f.k > 100 {
				return usageError{fmt.Errorf("k: must be between 1 and 100, got %d", f.k)}
			}
			queries, err := readFile("queries", queriesPath, corpus.ReadQueries)
			if err != nil {
				return err
			}
			qrels, err := readFile("qrels", qrelsPath, corpus.ReadQrels)
			if err != nil {
				return err
			}
			svc, emb, err := a.openKB(ctx, kbName, false)
			if err != nil {
				return err
			}
			q := f.query("")
			q.K = 300 // enough chunks for 100 distinct documents
			search := func(ctx context.Context, text string) ([]string, error) {
				q.Text = text
				found, err := svc.SearchNoted(ctx, kbName, emb, q)
				if err != nil {
					return nil, err
				}
				res, err := found.AsAsked()
				if err != nil {
					return nil, fmt.Errorf("%q: %w", text, err)
				}
				return kb.DocRanking(res), nil
			}
			// Warm the index so load time is not counted as query latency.
			if _, err := search(ctx, "warm up"); err != nil {
				return err
			}
			r, err := eval.Retrieval(ctx, search, queries, qrels, f.k)
			if err != nil {
				return err
			}
			r.Mode = f.mode
			if asJSON {
				return writeJSON(a.stdout, r)
			}
			fmt.Fprintf(a.stdout, "%s on %s, %d queries: nDCG@%d %.4f  recall@%d %.4f  MRR@%d %.4f  recall@100 %.4f  p50 %.2f ms  p99 %.2f ms\n",
				r.Mode, kbName, r.Queries, r.K, r.NDCG, r.K, r.Recall, r.K, r.MRR, r.RecallAt100, r.P50ms, r.P99ms)
			return nil
		},
	}
	f.register(cmd, 10)
	cmd.Flags().StringVar(&kbName, "kb", "", "knowledge base to search")
	cmd.Flags().StringVar(&queriesPath, "queries", "", "BEIR queries JSON Lines (_id, text)")
	cmd.Flags().StringVar(&qrelsPath, "qrels", "", "BEIR qrels TSV (query-id corpus-id score, with header)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	return cmd
}

// readFile parses the file a flag (field) names; a file that cannot be
// opened or parsed is invalid input naming the flag.
func readFile[T any](field, path string, parse func(io.Reader) (T, error)) (T, error) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, usageError{fmt.Errorf("%s: %w", field, err)}
	}
	defer f.Close()
	v, err := parse(f)
	if err != nil {
		return zero, usageError{fmt.Errorf("%s: %s: %w", field, path, err)}
	}
	return v, nil
}
