package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/errcode"
)

// modelFlags pick the model generate and eval use.
type modelFlags struct {
	spec, endpoint    string
	temperature, topP float64
	maxTokens         int
}

func (m *modelFlags) register(cmd *cobra.Command, required bool) {
	usage := "model TYPE[:NAME]: claude, vllm, openai or ollama (keys from ANTHROPIC_API_KEY, OPENAI_API_KEY or QUARRY_LLM_API_KEY)"
	if !required {
		usage += "; also score answers against reference answers"
	}
	fl := cmd.Flags()
	fl.StringVar(&m.spec, "model", "", usage)
	fl.StringVar(&m.endpoint, "endpoint", "", "model endpoint (vllm, ollama and OpenAI-compatible servers: up to /v1)")
	fl.Float64Var(&m.temperature, "temperature", console.DefaultTemperature, "0.0-1.0")
	fl.Float64Var(&m.topP, "top-p", console.DefaultTopP, "0.0-1.0")
	fl.IntVar(&m.maxTokens, "max-tokens", console.DefaultMaxTokens, "100-4000")
}

// config builds the model config, nil when no model was asked for.
func (m *modelFlags) config(a *cli, cmd *cobra.Command) *console.ModelConfig {
	if m.spec == "" {
		return nil
	}
	mc := a.q().ModelConfig(m.spec, m.endpoint)
	fl := cmd.Flags()
	if fl.Changed("temperature") {
		mc.Parameters.Temperature = &m.temperature
	}
	if fl.Changed("top-p") {
		mc.Parameters.TopP = &m.topP
	}
	if fl.Changed("max-tokens") {
		mc.Parameters.MaxTokens = m.maxTokens
	}
	return &mc
}

func (a *cli) generateCmd() *cobra.Command {
	var req console.GenerateRequest
	var mf modelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "generate --pipeline P --model TYPE[:NAME] QUERY",
		Short: "Retrieve through a pipeline and have a model answer from the chunks, with citations checked",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if req.Pipeline == "" {
				return usageError{errors.New("pipeline: --pipeline is required (quarry pipeline list)")}
			}
			m := mf.config(a, cmd)
			if m == nil {
				return usageError{errors.New("model: --model is required: claude[:NAME], vllm:NAME --endpoint URL, openai[:NAME] or ollama:NAME")}
			}
			req.Model, req.Query = *m, strings.Join(args, " ")
			svc, err := a.q().Console(ctx)
			if err != nil {
				return err
			}
			if req.ChatID != "" {
				if svc.Chats, err = a.q().Sessions(ctx); err != nil {
					return err
				}
				if req.ChatID == "new" {
					chat, err := svc.NewChat(ctx, req.Query)
					if err != nil {
						return err
					}
					req.ChatID = chat.ID
				}
			}
			var onDelta func(string)
			if !asJSON {
				onDelta = func(s string) { fmt.Fprint(a.stdout, s) }
			}
			g, err := svc.Generate(ctx, req, onDelta)
			var ge *console.GenerateError
			if errors.As(err, &ge) {
				fmt.Fprintf(a.stderr, "retrieval_time %.3f s  llm_time %.3f s  generation_time %.3f s\n", ge.RetrievalTime, ge.LLMTime, ge.GenerationTime)
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, g)
			}
			fmt.Fprintln(a.stdout)
			if g.Unsupported > 0 {
				fmt.Fprintf(a.stderr, "warning: %d citation markers named no retrieved chunk; they are removed from the answer (--json shows it)\n", g.Unsupported)
			}
			fmt.Fprintln(a.stdout, "\nSources:")
			for i, c := range g.Sources {
				fmt.Fprintf(a.stdout, "[S%d] %.3f %s\n", i+1, c.Score, c.DatasourceID)
			}
			fmt.Fprintf(a.stdout, "\n%s  tokens_used %d  retrieval_time %.3f s  llm_time %.3f s  generation_time %.3f s\n", g.Model, g.TokensUsed, g.RetrievalTime, g.LLMTime, g.GenerationTime)
			if g.ChatID != "" {
				fmt.Fprintf(a.stdout, "chat %s (%d of %d messages)\n", g.ChatID, g.Messages, console.MaxChatMessages)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.Pipeline, "pipeline", "", "pipeline (name or id)")
	fl.IntVar(&req.TopK, "top-k", 0, "chunks (1-20; default the pipeline's)")
	fl.StringVar(&req.ChatID, "chat", "", "continue a console chat (its id), or 'new' to start one")
	fl.BoolVar(&asJSON, "json", false, "print JSON (answer, sources, tokens_used, generation_time, retrieval_time, llm_time)")
	mf.register(cmd, true)
	return cmd
}

func (a *cli) chatCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "chat", Short: "RAG console chats kept by quarry generate --chat (show, clear)"}
	show := &cobra.Command{
		Use: "show ID", Short: "Print a chat's messages as JSON", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sessions, err := a.q().Sessions(cmd.Context())
			if err != nil {
				return err
			}
			s, err := sessions.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			return writeJSON(a.stdout, s)
		},
	}
	clear := &cobra.Command{
		Use: "clear ID", Short: "Clear a chat", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			if svc.Chats, err = a.q().Sessions(cmd.Context()); err != nil {
				return err
			}
			if err := svc.ClearChat(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "cleared chat %s\n", args[0])
			return nil
		},
	}
	cmd.AddCommand(show, clear)
	return cmd
}

func (a *cli) evalPipelineCmd() *cobra.Command {
	var req console.EvalRequest
	var mf modelFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "pipeline P [P2 ...] [--dataset D] [--k 10]",
		Short: "Evaluate pipelines on a dataset side by side: recall, precision, hit rate, MRR and nDCG at k, per question with --json; runs are stored",
		Args:  cobra.RangeArgs(1, 10),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			req.Pipelines, req.Model = args, mf.config(a, cmd)
			svc, err := a.q().Console(ctx)
			if err != nil {
				return err
			}
			cmp, err := svc.Evaluate(ctx, req)
			if err != nil {
				return err
			}
			if asJSON {
				if len(cmp.Runs) == 1 {
					return writeJSON(a.stdout, cmp.Runs[0])
				}
				return writeJSON(a.stdout, cmp)
			}
			return printComparison(a, cmp)
		},
	}
	cmd.Flags().StringVar(&req.Dataset, "dataset", "", "dataset (name or id; default the first pipeline's)")
	cmd.Flags().IntVar(&req.K, "k", 10, "cut-off of the metrics (1-100)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: a run's overall and questions, or every run and the differences")
	mf.register(cmd, false)
	return cmd
}

func printComparison(a *cli, cmp *console.Comparison) error {
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	first := cmp.Runs[0]
	fmt.Fprintf(a.stdout, "dataset %s, %d questions, k=%d\n", cmp.Dataset, first.Overall.Queries, cmp.K)
	head := "metric\t"
	for _, r := range cmp.Runs {
		head += r.Pipeline + "\t"
	}
	for _, d := range cmp.Differences {
		head += "Δ " + d.Pipeline + "\t"
	}
	fmt.Fprintln(tw, head)
	row := func(name string, get func(console.Overall) float64, delta func(console.Difference) float64) {
		line := name + "\t"
		for _, r := range cmp.Runs {
			line += fmt.Sprintf("%.4f\t", get(r.Overall))
		}
		for _, d := range cmp.Differences {
			if delta == nil {
				line += "\t"
				continue
			}
			line += fmt.Sprintf("%+.4f\t", delta(d))
		}
		fmt.Fprintln(tw, line)
	}
	k := strconv.Itoa(cmp.K)
	row("nDCG@"+k, func(o console.Overall) float64 { return o.NDCG }, func(d console.Difference) float64 { return d.NDCG })
	row("recall@"+k, func(o console.Overall) float64 { return o.Recall }, func(d console.Difference) float64 { return d.Recall })
	row("precision@"+k, func(o console.Overall) float64 { return o.Precision }, func(d console.Difference) float64 { return d.Precision })
	row("MRR@"+k, func(o console.Overall) float64 { return o.MRR }, func(d console.Difference) float64 { return d.MRR })
	row("hit rate@"+k, func(o console.Overall) float64 { return o.HitRate }, func(d console.Difference) float64 { return d.HitRate })
	row("p50 ms", func(o console.Overall) float64 { return o.P50ms }, nil)
	row("p99 ms", func(o console.Overall) float64 { return o.P99ms }, nil)
	if first.Overall.AnswerF1 != nil {
		row("answer F1", func(o console.Overall) float64 { return deref(o.AnswerF1) }, func(d console.Difference) float64 { return deref(d.AnswerF1) })
		row("exact match", func(o console.Overall) float64 { return deref(o.ExactMatch) }, nil)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, d := range cmp.Differences {
		fmt.Fprintf(a.stdout, "%s vs %s: nDCG higher on %d questions, lower on %d\n", d.Pipeline, d.Baseline, d.Better, d.Worse)
	}
	var ids []string
	for _, r := range cmp.Runs {
		ids = append(ids, strconv.FormatInt(r.ID, 10))
	}
	fmt.Fprintf(a.stdout, "stored as runs %s (quarry eval show ID)\n", strings.Join(ids, ", "))
	return nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func (a *cli) evalRunsCmd() *cobra.Command {
	var pipeline string
	var limit int
	runs := &cobra.Command{
		Use: "runs [--pipeline P]", Short: "List stored evaluation runs, newest first", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			svc, err := a.q().Console(cmd.Context())
			if err != nil {
				return err
			}
			rs, err := svc.EvalRuns(cmd.Context(), pipeline, limit)
			if err != nil {
				return err
			}
			return writeJSON(a.stdout, rs)
		},
	}
	runs.Flags().StringVar(&pipeline, "pipeline", "", "only this pipeline's runs")
	runs.Flags().IntVar(&limit, "limit", 20, "at most this many")
	return runs
}

func (a *cli) evalShowCmd() *cobra.Command {
	return a.consoleShowCmd("show ID", "Print a stored evaluation run with its questions", func(ctx context.Context, svc *console.Service, arg string) (any, error) {
		id, err := strconv.ParseInt(arg, 10, 64)
		if err != nil {
			return nil, errcode.New(errcode.Invalid, "id", "must be a run id (a number)")
		}
		return svc.EvalRun(ctx, id)
	})
}
