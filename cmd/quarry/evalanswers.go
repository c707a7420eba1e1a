package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/eval"
	"github.com/quarryhq/quarry/internal/passage"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/qa"
	"github.com/quarryhq/quarry/research"
)

// answerFlags are what both answer evaluations take.
type answerFlags struct {
	kb, dataset string
	limit       int
	asJSON      bool
	out         string
	ablate      []string
}

// emit stores the run in --out when asked, and prints it as JSON when
// --json asks; it reports whether it printed.
func (f *answerFlags) emit(w io.Writer, run map[string]any) (bool, error) {
	if f.out != "" {
		file, err := os.Create(f.out)
		if err != nil {
			return false, fmt.Errorf("out: %w", err)
		}
		if err := writeJSON(file, run); err != nil {
			file.Close()
			return false, fmt.Errorf("out: %w", err)
		}
		if err := file.Close(); err != nil {
			return false, fmt.Errorf("out: %w", err)
		}
	}
	if f.asJSON {
		return true, writeJSON(w, run)
	}
	return false, nil
}

func (f *answerFlags) bind(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kb, "kb", "", "knowledge base the questions are asked over (required)")
	cmd.Flags().StringVar(&f.dataset, "dataset", "", "JSON Lines: id, question, pages, answers, unanswerable, lang (required)")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "ask only the first N questions (0: all)")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the figures and every question's outcome as JSON")
	cmd.Flags().StringVar(&f.out, "out", "", "also store the run, as --json prints it, in this file (for quarry eval compare)")
	cmd.Flags().StringSliceVar(&f.ablate, "ablate", nil, "switch off rules of the offline answer finder, to measure what each is worth: "+strings.Join(passage.Rules, ", "))
}

func (f *answerFlags) questions() ([]eval.AnswerQuestion, error) {
	if err := passage.SetAblated(f.ablate); err != nil {
		return nil, usageError{err}
	}
	if f.kb == "" || f.dataset == "" {
		return nil, usageError{fmt.Errorf("--kb and --dataset are required")}
	}
	if f.limit < 0 {
		return nil, usageError{fmt.Errorf("limit: must not be negative, got %d", f.limit)}
	}
	qs, err := eval.ReadAnswerSet(f.dataset)
	if err != nil {
		return nil, usageError{fmt.Errorf("dataset %s: %w", f.dataset, err)}
	}
	if f.limit > 0 && f.limit < len(qs) {
		qs = qs[:f.limit]
	}
	return qs, nil
}

func (a *cli) evalResearchCmd() *cobra.Command {
	var f answerFlags
	var level string
	cmd := &cobra.Command{
		Use:   "research --kb NAME --dataset FILE",
		Short: "Research every question of a dataset over a knowledge base: answering page among the references, answer in the summary and its first two sentences, refusals, citation support, calls, tokens, time",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			qs, err := f.questions()
			if err != nil {
				return err
			}
			if _, _, err := a.openKB(ctx, f.kb, false); err != nil {
				return err
			}
			rn, err := a.q().Runner(ctx)
			if err != nil {
				return err
			}
			// With a model, what it is shown is recorded: was the answer
			// string in front of it?
			var rec *promptRecorder
			if le, ok := rn.Engine.(*research.LLMEngine); ok {
				rec = &promptRecorder{Provider: le.Provider}
				le.Provider = rec
			}
			outs := make([]eval.ResearchOutcome, 0, len(qs))
			for _, q := range qs {
				t0 := time.Now()
				rec.reset()
				r, err := rn.Start(ctx, q.Question, research.Options{Sources: []string{"kb:" + f.kb}, Level: level})
				o := researchOutcome(q, r, err, rec)
				if ctx.Err() != nil {
					return ctx.Err()
				}
				o.Seconds = time.Since(t0).Seconds()
				outs = append(outs, o)
				if !f.asJSON {
					fmt.Fprintf(a.stderr, "%-14s page %-3s summary %-5v first two %-5v refused %-5v %s\n", o.ID, rankText(o.PageRank), o.InSummary, o.InOpening, o.Refused, o.Error)
				}
			}
			s := eval.SummarizeResearch(outs)
			engine := rn.Engine.Name()
			if printed, err := f.emit(a.stdout, map[string]any{"kb": f.kb, "dataset": f.dataset, "engine": engine, "level": level, "ablated": f.ablate, "scores": s, "questions": outs}); printed || err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s over %s, %s engine, level %s: %d questions (%d answerable)\n", f.dataset, f.kb, engine, level, s.Questions, s.Answerable)
			rows := [][2]string{
				{"answering page among the references", fmt.Sprintf("%.3f (first 3: %.3f; %.1f references)", s.PageAmongRefs, s.PageInFirst3, s.MeanReferences)},
				{"answer in the executive summary", fmt.Sprintf("%.3f", s.InSummary)},
				{"answer in its first two sentences", fmt.Sprintf("%.3f", s.InOpening)},
				{"summary sentences that are not prose", fmt.Sprintf("%d of %d", s.NonProse, s.Sentences)},
				{"answerable refused", fmt.Sprintf("%.3f", s.FalseRefusals)},
				{"unanswerable refused", fmt.Sprintf("%.3f", s.RefusedUnanswered)},
				{"citation support", fmt.Sprintf("%.3f", s.CitationSupport)},
				{"failed", fmt.Sprintf("%d", s.Failed)},
				{"model calls, tokens, time", fmt.Sprintf("%d, %d, %.1f s", s.Calls, s.Tokens, s.Seconds)},
			}
			if rec != nil {
				rows = append(rows, [2]string{"answer in the model's context (page read)", fmt.Sprintf("%.3f", s.InContext)})
			}
			for _, r := range rows {
				fmt.Fprintf(a.stdout, "  %-42s %s\n", r[0], r[1])
			}
			return nil
		},
	}
	f.bind(cmd)
	cmd.Flags().StringVar(&level, "level", "quick", "quick, standard or comprehensive")
	return cmd
}

// researchOutcome scores one research of an answer dataset; with a
// model (rec), whether the answer string was in what it was shown.
func researchOutcome(q eval.AnswerQuestion, r *research.Research, err error, rec *promptRecorder) eval.ResearchOutcome {
	var o eval.ResearchOutcome
	switch {
	case err != nil && r == nil:
		o = eval.ResearchOutcome{ID: q.ID, Unanswerable: q.Unanswerable, Error: err.Error()}
	case r.Report == nil:
		o = eval.ResearchOutcome{ID: q.ID, Unanswerable: q.Unanswerable, Status: r.Status, Error: r.Error}
	default:
		refs := make([]string, len(r.Report.References))
		for i, ref := range r.Report.References {
			refs[i] = ref.URL
		}
		o = eval.ScoreResearch(q, r.Report.Summary, refs)
		o.Status = r.Status
		if r.Checks != nil {
			o.Support = r.Checks.CitationSupportRate
		}
		o.Calls, o.Tokens = r.Usage.Calls, r.Usage.Total()
	}
	if r != nil {
		read := make([]string, len(r.Sources))
		for i, src := range r.Sources {
			read[i] = src.URL
		}
		o.PageRead = q.PageRank(read) > 0
		if rec != nil {
			in := q.Holds(rec.text())
			o.InContext = &in
		}
	}
	return o
}

func (a *cli) evalAskCmd() *cobra.Command {
	var f answerFlags
	cmd := &cobra.Command{
		Use:   "ask --kb NAME --dataset FILE",
		Short: "Ask every question of a dataset: right answers, refusals, confident-and-wrong answers, how well confidence separates right from wrong (ROC AUC)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			qs, err := f.questions()
			if err != nil {
				return err
			}
			asker, err := a.q().Asker(ctx, f.kb)
			if err != nil {
				return err
			}
			rec := &readRecorder{Searcher: asker.Search}
			asker.Search = rec
			outs := make([]eval.AskOutcome, 0, len(qs))
			for _, q := range qs {
				t0 := time.Now()
				var o eval.AskOutcome
				rec.reset()
				ans, err := asker.Ask(ctx, qa.Request{Question: q.Question})
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if err != nil {
					o = eval.AskOutcome{ID: q.ID, Unanswerable: q.Unanswerable, Refused: true, Error: err.Error()}
				} else {
					o = eval.ScoreAsk(q, ans.Answer, ans.Unknown, ans.Confidence)
				}
				if !q.Unanswerable {
					in := q.Holds(rec.text())
					o.InRead = &in
				}
				o.Seconds = time.Since(t0).Seconds()
				outs = append(outs, o)
				if !f.asJSON {
					fmt.Fprintf(a.stderr, "%-14s right %-5v refused %-5v confidence %.2f %s\n", o.ID, o.Right, o.Refused, o.Confidence, o.Error)
				}
			}
			s := eval.SummarizeAsk(outs)
			if printed, err := f.emit(a.stdout, map[string]any{"kb": f.kb, "dataset": f.dataset, "engine": askEngine(asker), "ablated": f.ablate, "scores": s, "questions": outs}); printed || err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "%s over %s: %d questions (%d answerable)\n", f.dataset, f.kb, s.Questions, s.Answerable)
			fmt.Fprintf(a.stdout, "  %-42s %.3f\n  %-42s %.3f\n  %-42s %.3f\n  %-42s %.3f\n  %-42s %.3f\n  %-42s %.3f\n  %-42s %.3f\n  %-42s %d of %d\n",
				"right", s.Right, "answer in the chunks read", s.InRead, "right, of those", s.RightOfRead,
				"answerable refused", s.FalseRefusals, "unanswerable refused", s.RefusedUnanswered,
				"confident (≥ 0.5) and wrong, of answered", s.ConfidentWrong, "confidence ROC AUC", s.AUC,
				"quoted sentences that are not prose", s.NonProse, s.Sentences)
			return nil
		},
	}
	f.bind(cmd)
	return cmd
}

func rankText(r int) string {
	if r == 0 {
		return "-"
	}
	return strconv.Itoa(r)
}

// textLog is text written by one goroutine or several and read back
// whole: what a recorder saw for one question.
type textLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *textLog) add(text, sep string) {
	l.mu.Lock()
	l.b.WriteString(text)
	l.b.WriteString(sep)
	l.mu.Unlock()
}

func (l *textLog) reset() {
	l.mu.Lock()
	l.b.Reset()
	l.mu.Unlock()
}

func (l *textLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// readRecorder keeps the text of the chunks ask reads for one question:
// the hits of its hybrid searches (a name's BM25 lookup for how much of
// the knowledge base writes it reads no chunk for the answer).
type readRecorder struct {
	qa.Searcher
	textLog
}

// Search implements qa.Searcher.
func (r *readRecorder) Search(ctx context.Context, q kb.Query) ([]kb.Result, error) {
	hits, err := r.Searcher.Search(ctx, q)
	if err == nil && q.Mode == kb.ModeHybrid {
		for _, h := range hits {
			r.add(h.Text, "\n\n")
		}
	}
	return hits, err
}

// promptRecorder keeps the prompts a provider is sent.
type promptRecorder struct {
	llm.Provider
	log textLog
}

// Chat implements llm.Provider.
func (p *promptRecorder) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	for _, m := range req.Messages {
		p.log.add(m.Content, "\n")
	}
	return p.Provider.Chat(ctx, req, onDelta)
}

func (p *promptRecorder) reset() {
	if p != nil {
		p.log.reset()
	}
}

func (p *promptRecorder) text() string { return p.log.text() }

func (a *cli) evalCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare A.json B.json",
		Short: "Two stored runs of eval research or eval ask (--out or --json) side by side: each figure, its change, and the questions whose outcome changed",
		Example: `  quarry eval ask --kb git --dataset eval/testdata/research/git.jsonl --out before.json
  quarry eval ask --kb git --dataset eval/testdata/research/git.jsonl --ablate heading --out after.json
  quarry eval compare before.json after.json`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var runs [2]*eval.Run
			for i, path := range args {
				run, err := readFile("run", path, eval.ReadRun)
				if err != nil {
					return err
				}
				runs[i] = run
			}
			rows, flips, err := eval.Compare(runs[0], runs[1])
			if err != nil {
				return usageError{err}
			}
			describe := func(r *eval.Run) string {
				d := r.Engine
				if r.Level != "" {
					d += " " + r.Level
				}
				if len(r.Ablated) > 0 {
					d += " without " + strings.Join(r.Ablated, ",")
				}
				return strings.TrimSpace(d)
			}
			fmt.Fprintf(a.stdout, "%s over %s\n  A: %s (%s)\n  B: %s (%s)\n", runs[0].Dataset, runs[0].KB, args[0], describe(runs[0]), args[1], describe(runs[1]))
			fmt.Fprintf(a.stdout, "  %-34s %10s %10s %10s\n", "figure", "A", "B", "B - A")
			for _, r := range rows {
				fmt.Fprintf(a.stdout, "  %-34s %10.3f %10.3f %+10.3f\n", r.Name, r.A, r.B, r.B-r.A)
			}
			if len(flips) > 0 {
				fmt.Fprintln(a.stdout, "questions whose outcome changed:")
			}
			for _, f := range flips {
				fmt.Fprintf(a.stdout, "  %-14s %-11s %v → %v\n", f.ID, f.What, f.A, f.B)
			}
			return nil
		},
	}
}

func (a *cli) evalTableCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "table [BEFORE_DIR] DIR",
		Short: "Stored runs of eval research and eval ask (--json files in a directory) averaged per dataset: each figure per dataset and the mean over datasets, as Markdown; with a directory before it, each cell before → now",
		Example: `  for n in 480 512 544; do
    quarry kb add git /usr/share/doc/git-doc --create --chunk-tokens $n --data-dir data$n
    quarry eval ask --kb git --dataset eval/testdata/research/git.jsonl --data-dir data$n --json > runs/git.ask.$n.json
  done
  quarry eval table runs`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			var tables [][]eval.Table
			for _, dir := range args {
				t, err := readTable(dir)
				if err != nil {
					return err
				}
				tables = append(tables, t)
			}
			now, before := tables[len(tables)-1], []eval.Table(nil)
			if len(tables) == 2 {
				before = tables[0]
			}
			if asJSON {
				return writeJSON(a.stdout, map[string]any{"tables": now, "before": before})
			}
			_, err := io.WriteString(a.stdout, eval.Markdown(now, before))
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the tables as JSON")
	return cmd
}

// readTable reads every .json file in dir as a stored run and
// tabulates them.
func readTable(dir string) ([]eval.Table, error) {
	entries, err := os.ReadDir(dir)
	var paths []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			paths = append(paths, filepath.Join(dir, e.Name()))
		}
	}
	if err == nil && len(paths) == 0 {
		err = errors.New("holds no .json file (runs of eval research or eval ask written with --json)")
	}
	if err != nil {
		return nil, usageError{fmt.Errorf("dir: %s: %w", dir, err)}
	}
	runs := make([]*eval.Run, 0, len(paths))
	for _, p := range paths {
		run, err := readFile("run", p, eval.ReadRun)
		if err != nil {
			return nil, err
		}
		runs = append(runs, run)
	}
	t, err := eval.Tabulate(runs, paths)
	if err != nil {
		return nil, usageError{fmt.Errorf("dir: %s: %w", dir, err)}
	}
	return t, nil
}

// askEngine names what answers: the model, or the offline extractive engine.
func askEngine(a *qa.Asker) string {
	if a.Model != nil {
		return a.Model.Name()
	}
	return "offline-extractive"
}
