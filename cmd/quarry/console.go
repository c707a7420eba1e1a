package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/corpus"
)

func (a *cli) pipelineCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "pipeline", Short: "RAG console pipelines: retrieval settings over a knowledge base (create, list, show, update, rm)"}
	var spec console.PipelineSpec
	create := &cobra.Command{
		Use:   "create NAME --kb KB [--mode hybrid] [--top-k 5] [--type normal|test] [--dataset D]",
		Short: "Create a pipeline (a test pipeline marks its dataset's golden chunks)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec.Name = args[0]
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			p, err := svc.CreatePipeline(cmd.Context(), spec)
			if err != nil {
				return err
			}
			return writeJSON(a.stdout, p)
		},
	}
	fl := create.Flags()
	fl.StringVar(&spec.KB, "kb", "", "knowledge base")
	fl.StringVar(&spec.Type, "type", console.TypeNormal, "normal or test")
	fl.StringVar(&spec.Dataset, "dataset", "", "evaluation dataset (name or id)")
	fl.StringVar(&spec.Settings.Mode, "mode", "hybrid", "bm25, vector or hybrid")
	fl.IntVar(&spec.Settings.TopK, "top-k", 5, "chunks retrieved (1-20)")
	fl.StringVar(&spec.Settings.Fusion, "fusion", "", "hybrid fusion: rrf or weighted")
	fl.Float64Var(&spec.Settings.BM25Weight, "bm25-weight", 0, "BM25 list weight in hybrid fusion")
	fl.Float64Var(&spec.Settings.VectorWeight, "vector-weight", 0, "vector list weight in hybrid fusion")

	var dataset, typ string
	var asJSON bool
	list := &cobra.Command{
		Use:   "list [--type normal|test] [--dataset D]",
		Short: "List pipelines",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			ps, err := svc.Pipelines(cmd.Context(), dataset, typ)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, ps)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tTYPE\tKB\tDATASET\tMODE\tTOP-K")
			for _, p := range ps {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\n", p.ID, p.Name, p.Type, p.KB, p.Dataset, p.Settings.Mode, p.Settings.TopK)
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&typ, "type", "", "only this type (normal or test)")
	list.Flags().StringVar(&dataset, "dataset", "", "only pipelines of this dataset (name or id)")
	list.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	show := a.consoleShowCmd("show NAME|ID", "Print a pipeline as JSON", func(ctx context.Context, svc *console.Service, arg string) (any, error) {
		return svc.Pipeline(ctx, arg)
	})
	rm := a.consoleRmCmd("rm NAME|ID", "Delete a pipeline", "pipeline", func(ctx context.Context, svc *console.Service, arg string) error {
		return svc.DeletePipeline(ctx, arg)
	})
	cmd.AddCommand(create, list, show, rm, a.pipelineUpdateCmd())
	return cmd
}

func (a *cli) pipelineUpdateCmd() *cobra.Command {
	var name, typ, dataset string
	var noDataset bool
	var set console.Settings
	cmd := &cobra.Command{
		Use:   "update NAME|ID [--name N] [--type T] [--dataset D | --no-dataset] [--mode M] [--top-k K] [--fusion F] [--bm25-weight W] [--vector-weight W]",
		Short: "Change a pipeline; settings not given keep their values",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, fl := cmd.Context(), cmd.Flags()
			svc, err := a.q().Console(ctx)
			if err != nil {
				return err
			}
			p, err := svc.Pipeline(ctx, args[0])
			if err != nil {
				return err
			}
			var u console.PipelineUpdate
			if fl.Changed("name") {
				u.Name = &name
			}
			if fl.Changed("type") {
				u.Type = &typ
			}
			switch {
			case noDataset && fl.Changed("dataset"):
				return usageError{fmt.Errorf("dataset: give --dataset or --no-dataset, not both")}
			case noDataset:
				u.Dataset = new(string)
			case fl.Changed("dataset"):
				u.Dataset = &dataset
			}
			s, changed := p.Settings, false
			for flag, apply := range map[string]func(){
				"mode": func() { s.Mode = set.Mode }, "top-k": func() { s.TopK = set.TopK }, "fusion": func() { s.Fusion = set.Fusion },
				"bm25-weight": func() { s.BM25Weight = set.BM25Weight }, "vector-weight": func() { s.VectorWeight = set.VectorWeight },
			} {
				if fl.Changed(flag) {
					apply()
					changed = true
				}
			}
			if fl.Changed("top-k") {
				if err := console.CheckTopK(set.TopK); err != nil {
					return err
				}
			}
			if changed {
				u.Settings = &s
			}
			p, err = svc.UpdatePipeline(ctx, strconv.FormatInt(p.ID, 10), u)
			if err != nil {
				return err
			}
			return writeJSON(a.stdout, p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "new name")
	fl.StringVar(&typ, "type", "", "normal or test")
	fl.StringVar(&dataset, "dataset", "", "evaluation dataset (name or id)")
	fl.BoolVar(&noDataset, "no-dataset", false, "remove the dataset")
	fl.StringVar(&set.Mode, "mode", "", "bm25, vector or hybrid")
	fl.IntVar(&set.TopK, "top-k", 0, "chunks retrieved (1-20)")
	fl.StringVar(&set.Fusion, "fusion", "", "hybrid fusion: rrf or weighted")
	fl.Float64Var(&set.BM25Weight, "bm25-weight", 0, "BM25 list weight in hybrid fusion")
	fl.Float64Var(&set.VectorWeight, "vector-weight", 0, "vector list weight in hybrid fusion")
	return cmd
}

// datasetCmd is quarry dataset and its four subcommands, each a few lines
// over the console service.
func (a *cli) datasetCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "dataset", Short: "RAG console evaluation datasets: questions with golden chunks (create, list, show, rm)"}
	var kbName, jsonl string
	var beir []string
	create := &cobra.Command{
		Use:   "create NAME (--from-beir QUERIES.jsonl QRELS.tsv | --from-jsonl FILE) --kb KB",
		Short: "Create a dataset over a knowledge base that holds the corpus, from BEIR queries and qrels or the JSON Lines format",
		Args:  cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonl != "" {
				if len(beir) > 0 || len(args) > 1 {
					return usageError{fmt.Errorf("give --from-jsonl FILE or --from-beir, not both")}
				}
				qs, err := readFile("from-jsonl", jsonl, console.ReadJSONL)
				if err != nil {
					return err
				}
				svc, err := a.q().Console(cmd.Context())
				if err != nil {
					return err
				}
				d, err := svc.ImportJSONL(cmd.Context(), args[0], kbName, qs)
				if err != nil {
					return err
				}
				fmt.Fprintf(a.stdout, "created dataset %q (id %d): %d questions over %s\n", d.Name, d.ID, d.Questions, kbName)
				return nil
			}
			if len(args) == 2 && len(beir) == 1 { // --from-beir Q.jsonl QRELS.tsv
				beir = append(beir, args[1])
			} else if len(args) == 2 {
				return usageError{fmt.Errorf("give one dataset name, got %q and %q", args[0], args[1])}
			}
			if len(beir) != 2 {
				return usageError{fmt.Errorf("from-beir: give the queries file and the qrels file (--from-beir Q.jsonl --from-beir QRELS.tsv, or Q.jsonl,QRELS.tsv)")}
			}
			queries, err := readFile("queries", beir[0], corpus.ReadQueries)
			if err != nil {
				return err
			}
			qrels, err := readFile("qrels", beir[1], corpus.ReadQrels)
			if err != nil {
				return err
			}
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			d, err := svc.ImportBEIR(cmd.Context(), args[0], kbName, queries, qrels)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "created dataset %q (id %d): %d questions over %s\n", d.Name, d.ID, d.Questions, kbName)
			return nil
		},
	}
	create.Flags().StringVar(&kbName, "kb", "", "the knowledge base holding the corpus")
	create.Flags().StringSliceVar(&beir, "from-beir", nil, "BEIR queries JSON Lines and qrels TSV")
	create.Flags().StringVar(&jsonl, "from-jsonl", "", `JSON Lines: {"id", "question", "answer"?, "doc_ids"?, "chunks"?: [{"doc_id", "chunk_index"}], "chunk_ids"?}`)
	list := &cobra.Command{
		Use: "list", Short: "List datasets", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			ds, err := st.DatasetList(cmd.Context())
			if err != nil {
				return err
			}
			return writeJSON(a.stdout, ds)
		},
	}
	show := a.consoleShowCmd("show NAME|ID", "Print a dataset and its questions as JSON", func(ctx context.Context, svc *console.Service, arg string) (any, error) {
		d, err := svc.Dataset(ctx, arg)
		if err != nil {
			return nil, err
		}
		qs, err := svc.Store.DatasetQuestions(ctx, d.ID)
		return map[string]any{"dataset": d, "questions": qs}, err
	})
	rm := a.consoleRmCmd("rm NAME|ID", "Delete a dataset (its pipelines keep going without one)", "dataset", func(ctx context.Context, svc *console.Service, arg string) error {
		return svc.DeleteDataset(ctx, arg)
	})
	cmd.AddCommand(create, list, show, rm)
	return cmd
}

func (a *cli) retrieveCmd() *cobra.Command {
	var pipeline string
	var topK int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "retrieve --pipeline P QUERY",
		Short: "Retrieve chunks through a pipeline (score relative to the best, is_golden in a test pipeline, retrieval_time)",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pipeline == "" {
				return usageError{fmt.Errorf("pipeline: --pipeline is required (quarry pipeline list)")}
			}
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			r, err := svc.Retrieve(cmd.Context(), pipeline, strings.Join(args, " "), topK)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, r)
			}
			for i, c := range r.Chunks {
				mark := ""
				if c.IsGolden != nil && *c.IsGolden {
					mark = "  [golden]"
				}
				text := strings.Join(strings.Fields(c.Content), " ")
				if rs := []rune(text); len(rs) > 200 {
					text = string(rs[:200]) + "…"
				}
				fmt.Fprintf(a.stdout, "%d. %.3f %s%s\n   %s\n", i+1, c.Score, c.DatasourceID, mark, text)
			}
			fmt.Fprintf(a.stdout, "retrieval_time %.4f s\n", r.RetrievalTime)
			return nil
		},
	}
	cmd.Flags().StringVar(&pipeline, "pipeline", "", "pipeline (name or id)")
	cmd.Flags().IntVar(&topK, "top-k", 0, "chunks (1-20; default the pipeline's)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// consoleShowCmd is a command that prints, as JSON, what get returns for
// its one argument.
func (a *cli) consoleShowCmd(use, short string, get func(ctx context.Context, svc *console.Service, arg string) (any, error)) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			v, err := get(cmd.Context(), svc, args[0])
			if err != nil {
				return err
			}
			return writeJSON(a.stdout, v)
		},
	}
}

// consoleRmCmd is a command that deletes the thing its one argument names.
func (a *cli) consoleRmCmd(use, short, what string, del func(ctx context.Context, svc *console.Service, arg string) error) *cobra.Command {
	return &cobra.Command{
		Use: use, Short: short, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			if err := del(cmd.Context(), svc, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "deleted %s %s\n", what, args[0])
			return nil
		},
	}
}
