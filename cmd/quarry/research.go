package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/pdf"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

type researchFlags struct {
	sources    []string
	docs       []string
	level      string
	breadth    int
	depth      int
	format     string
	out        string
	maxTokens  int
	timeout    time.Duration
	confidence float64
	resume     string
	thread     string
	detach     bool
}

func (a *cli) researchCmd() *cobra.Command {
	var f researchFlags
	cmd := &cobra.Command{
		Use:   "research QUESTION",
		Short: "Research a question and write a cited report",
		Long: `Research a question over the given sources and write a report whose
citations point only at sources read in this run.

With no language model configured this runs on the offline extractive engine
and says so. Set ANTHROPIC_API_KEY, or OPENAI_API_KEY / OPENAI_BASE_URL, or
QUARRY_LLM (or --llm) to use a model.`,
		Example: `  quarry research "Which university's fight song is the Kansas Song?" --docs examples/wiki/corpus.jsonl
  quarry research "State of solid-state batteries" --docs ./papers --level comprehensive --out report.md
  quarry research "topic" --source kb:notes --breadth 4 --depth 3 --format json --max-tokens 150000
  quarry research --resume 4f1c…`,
		Args: func(cmd *cobra.Command, args []string) error {
			if f.resume != "" {
				return cobra.NoArgs(cmd, args)
			}
			if len(args) != 1 {
				return usageError{errors.New(`question: give the question as one argument, in quotes ("…")`)}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.resume != "" {
				return a.runResearch(cmd, f, "")
			}
			return a.runResearch(cmd, f, args[0])
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&f.sources, "source", nil, "sources: kb:<name>, web (google), arxiv, wikipedia; comma-separated or repeated")
	fl.StringSliceVar(&f.docs, "docs", nil, "ingest these files or folders into a knowledge base named after the path and research it")
	fl.StringVar(&f.level, "level", "", "quick, standard (default) or comprehensive")
	fl.IntVar(&f.breadth, "breadth", 0, "sub-questions per round (1-20; default 5 when --depth is set)")
	fl.IntVar(&f.depth, "depth", 0, "follow-up levels below the first round (0-5; default 2 with --breadth); alone, the legacy single pass of breadth N")
	fl.StringVar(&f.format, "format", "markdown", "markdown, json, html or pdf (pdf needs --out and Chromium)")
	fl.StringVarP(&f.out, "out", "o", "", "write the report to this file instead of stdout")
	fl.IntVar(&f.maxTokens, "max-tokens", 0, "token budget for all LLM calls, a reserve kept for the report (0 = none)")
	fl.DurationVar(&f.timeout, "timeout", 0, "wall-time budget, a reserve kept for the report (e.g. 5m; 0 = none)")
	fl.Float64Var(&f.confidence, "confidence", 0, "stop early when complete with at least this confidence (default 0.7)")
	fl.StringVar(&f.resume, "resume", "", "continue a stored research from its last checkpoint")
	fl.StringVar(&f.thread, "thread", "", "ask in this thread: the question is researched with the thread's earlier answers as context")
	fl.BoolVar(&f.detach, "detach", false, "queue the research and print its id; a quarry worker on the same store runs it")
	cmd.AddCommand(a.researchShowCmd(), a.researchListCmd(), a.researchWatchCmd(), a.researchCancelCmd())
	return cmd
}

// researchOptions reads a research's options from its flags: a level,
// or breadth and depth (--depth N alone being the old single pass of
// breadth N), budgets and a thread.
func researchOptions(cmd *cobra.Command, f researchFlags) (research.Options, error) {
	opts := research.Options{Level: f.level, Breadth: f.breadth, MaxTokens: f.maxTokens, Timeout: f.timeout, Confidence: f.confidence, Thread: f.thread}
	if cmd.Flags().Changed("depth") {
		opts.Depth, opts.DepthSet = f.depth, true
		if !cmd.Flags().Changed("breadth") {
			// --depth N alone is the old single pass of breadth N.
			opts.Breadth, opts.Depth = f.depth, 0
			if f.depth < 1 || f.depth > research.MaxBreadth {
				return research.Options{}, usageError{fmt.Errorf("depth: given alone it is the breadth of a single pass and must be between 1 and %d, got %d", research.MaxBreadth, f.depth)}
			}
		}
	}
	if cmd.Flags().Changed("breadth") && (f.breadth < 1 || f.breadth > research.MaxBreadth) {
		return research.Options{}, usageError{fmt.Errorf("breadth: must be between 1 and %d, got %d", research.MaxBreadth, f.breadth)}
	}
	if opts.Level != "" && (cmd.Flags().Changed("breadth") || cmd.Flags().Changed("depth")) {
		return research.Options{}, usageError{errors.New("level: give either --level or --breadth/--depth, not both")}
	}
	return opts, nil
}

func (a *cli) runResearch(cmd *cobra.Command, f researchFlags, question string) error {
	ctx := cmd.Context()
	if err := checkFormat(f.format); err != nil {
		return err
	}
	if err := checkPDF(f.format, f.out); err != nil {
		return err
	}
	if err := checkOut(f.out); err != nil {
		return err
	}
	opts, err := researchOptions(cmd, f)
	if err != nil {
		return err
	}
	eng, err := a.q().Engine()
	if err != nil {
		return usageError{err}
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	var stored *research.Research
	var req research.Request
	if f.resume != "" {
		stored, err = research.Load(ctx, st, f.resume)
		if err != nil {
			return err
		}
		opts = stored.Options
		if stored.Engine != eng.Name() {
			return usageError{fmt.Errorf("llm: research %s was started with %s; resume it with the same model (--llm)", stored.ID, stored.Engine)}
		}
		if f.detach {
			return usageError{errors.New("detach: --resume runs here; to hand a research to the workers, it must be new")}
		}
	} else {
		specs, err := researchSources(f)
		if err != nil {
			return err
		}
		opts.Sources = specs
		// The request is validated here, once, before a possibly long
		// --docs ingest.
		if req, err = research.NewRequest(question, opts); err != nil {
			return err
		}
		if err := a.q().IngestDocs(ctx, f.docs, a.stderr); err != nil {
			return err
		}
	}
	sources, err := a.q().OpenSources(ctx, opts.Sources)
	if err != nil {
		return err
	}
	if f.detach {
		return a.detachResearch(ctx, req)
	}
	return a.researchHere(ctx, f, eng, stored, req, sources)
}

// researchHere runs a research in this process — the stored one resumed,
// or the request created — with progress lines on a terminal, and prints
// its report.
func (a *cli) researchHere(ctx context.Context, f researchFlags, eng research.Engine, stored *research.Research, req research.Request, sources []search.Source) error {
	if eng.Name() == "offline" {
		fmt.Fprintln(a.stderr, "quarry: no language model configured: using the offline extractive engine (set ANTHROPIC_API_KEY, OPENAI_API_KEY / OPENAI_BASE_URL or QUARRY_LLM to use one)")
	}
	ropts := []app.RunnerOption{app.WithSources(sources)}
	if a.isTerminal() {
		ropts = append(ropts, app.WithEvents(progressPrinter(a.stderr)))
	}
	rn, err := a.q().RunnerWith(ctx, ropts...)
	if err != nil {
		return err
	}
	var r *research.Research
	if stored != nil {
		r, err = rn.Resume(ctx, stored.ID)
	} else {
		r, err = rn.CreateRequest(ctx, req)
		if err == nil {
			fmt.Fprintf(a.stderr, "quarry: research %s started (watch it with: quarry research watch %s; stop it with: quarry research cancel %s)\n", r.ID, r.ID, r.ID)
			r, err = rn.Run(ctx, r.ID)
		}
	}
	if err != nil {
		if r != nil {
			fmt.Fprintf(a.stderr, "quarry: research %s %s at stage %s; everything found so far is saved: quarry research --resume %s\n", r.ID, r.Status, orStage(r), r.ID)
		}
		return err
	}
	fmt.Fprintf(a.stderr, "quarry: research %s %s in %.2fs (%s; %d sources, %d references, %d LLM calls, %d tokens)\n",
		r.ID, r.Status, r.Timings.Total, r.Engine, len(r.Sources), len(r.Report.References), r.Usage.Calls, r.Usage.Total())
	if r.ThreadID != "" {
		fmt.Fprintf(a.stderr, "quarry: thread %s; ask a follow-up in it with: quarry research \"…\" --thread %s\n", r.ThreadID, r.ThreadID)
	}
	return a.printResearch(ctx, r, f.format, f.out)
}

// detachResearch stores a new research and queues it for the workers,
// printing its id.
func (a *cli) detachResearch(ctx context.Context, req research.Request) error {
	rn, err := a.q().Runner(ctx)
	if err != nil {
		return err
	}
	r, err := rn.CreateRequest(ctx, req)
	if err != nil {
		return err
	}
	q, err := a.q().Jobs(ctx, app.JobOptions{})
	if err != nil {
		return err
	}
	defer q.Close()
	if err := q.EnqueueResearch(ctx, r.ID); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout, r.ID)
	fmt.Fprintf(a.stderr, "quarry: research %s queued; a worker runs it (quarry worker); follow it with: quarry research watch %s\n", r.ID, r.ID)
	return nil
}

// researchSources turns --source and --docs into source specs; a --docs
// path becomes the knowledge base ingestDocs fills.
func researchSources(f researchFlags) ([]string, error) {
	var specs []string
	if len(f.sources) > 0 {
		parsed, err := search.ParseSpecs(strings.Join(f.sources, ","))
		if err != nil {
			return nil, usageError{err}
		}
		for _, s := range parsed {
			specs = append(specs, s.String())
		}
	}
	for _, p := range f.docs {
		specs = append(specs, "kb:"+app.DocsKBName(p))
	}
	if len(specs) == 0 {
		return nil, usageError{errors.New("source: give --source (kb:<name>, web, arxiv, wikipedia) or --docs PATH")}
	}
	return specs, nil
}

func (a *cli) printResearch(ctx context.Context, r *research.Research, format, out string) error {
	if format != "json" && r.Report == nil {
		return fmt.Errorf("research %s has no report (status %s, stage %s): resume it with quarry research --resume %s", r.ID, r.Status, r.Stage, r.ID)
	}
	if format == "pdf" {
		path, err := pdf.Chromium("")
		if err != nil {
			return err
		}
		data, err := pdf.Render(ctx, path, r.Report, r.Sources)
		if err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	}
	w := io.Writer(a.stdout)
	if out != "" {
		fh, err := os.Create(out)
		if err != nil {
			return fmt.Errorf("out: %w", err)
		}
		defer fh.Close()
		w = fh
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(research.Public(r))
	case "html":
		_, err := io.WriteString(w, research.HTML(r.Report, r.Sources))
		return err
	default:
		_, err := io.WriteString(w, r.Report.Markdown)
		return err
	}
}

func (a *cli) researchShowCmd() *cobra.Command {
	var format, field, out string
	var events, check bool
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Print a stored research (its report, or all of it with --format json)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := checkFormat(format); err != nil {
				return err
			}
			if err := checkPDF(format, out); err != nil {
				return err
			}
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			if events {
				evs, err := st.ResearchEvents(ctx, args[0], 0)
				if err != nil {
					return err
				}
				if len(evs) == 0 {
					if _, err := st.ResearchGet(ctx, args[0]); err != nil {
						return err
					}
				}
				for _, e := range evs {
					fmt.Fprintln(a.stdout, string(e.Data))
				}
				return nil
			}
			r, err := research.Load(ctx, st, args[0])
			if err != nil {
				return err
			}
			switch field {
			case "":
			case "status":
				fmt.Fprintln(a.stdout, r.Status)
				return nil
			case "thread_id":
				fmt.Fprintln(a.stdout, r.ThreadID)
				return nil
			default:
				return usageError{&store.ValidationError{Field: "field", Rule: fmt.Sprintf("must be status or thread_id, got %q", field)}}
			}
			if (format != "json" || check) && r.Report == nil {
				return fmt.Errorf("research %s has no report yet (status %s, stage %s%s); resume it with: quarry research --resume %s", r.ID, r.Status, orStage(r), errSuffix(r.Error), r.ID)
			}
			if check {
				var ck research.Checks
				if r.Checks != nil {
					ck = *r.Checks // stored when the report was written
				} else {
					ck = research.Check(r.Report, r.Sources)
				}
				if format == "json" {
					return writeJSON(a.stdout, ck)
				}
				fmt.Fprintf(a.stdout, "citation support: %d of %d cited passages (%.2f)\nmethod: %s\n", ck.Supported, ck.CitedPassages, ck.CitationSupportRate, ck.Method)
				for _, u := range ck.Unsupported {
					fmt.Fprintf(a.stdout, "\nunsupported %v: %s\n  %s\n", u.Citations, u.Text, u.Reason)
				}
				return nil
			}
			return a.printResearch(cmd.Context(), r, format, out)
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown, json, html or pdf (pdf needs --out and Chromium)")
	cmd.Flags().StringVar(&out, "out", "", "write the report to this file (required for pdf)")
	cmd.Flags().BoolVar(&events, "events", false, "print the event log as JSON lines")
	cmd.Flags().StringVar(&field, "field", "", "print only this field: status or thread_id (for scripts)")
	cmd.Flags().BoolVar(&check, "check", false, "check that every cited passage is supported by its sources (with --format json: the checks as JSON)")
	return cmd
}

// orStage is the stage a research stopped in.
func orStage(r *research.Research) string {
	if r.FailedStage != "" {
		return r.FailedStage
	}
	return r.Stage
}

// checkFormat accepts the report formats.
func checkFormat(format string) error {
	switch format {
	case "markdown", "md", "json", "html", "pdf":
		return nil
	}
	return usageError{fmt.Errorf("format: must be markdown, json, html or pdf, got %q", format)}
}

// checkPDF refuses --format pdf without a file to write, or without
// Chromium to print with, before any work.
func checkPDF(format, out string) error {
	if format != "pdf" {
		return nil
	}
	if out == "" {
		return usageError{errors.New("out: --format pdf writes a file: give --out FILE")}
	}
	_, err := pdf.Chromium("")
	return err
}

// checkOut refuses an --out path that cannot be written, before any work:
// a directory, or a file in a folder that does not exist.
func checkOut(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return usageError{fmt.Errorf("out: %s is a directory; give a file path", path)}
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return usageError{fmt.Errorf("out: folder %s does not exist", dir)}
	}
	return nil
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + e
}

func (a *cli) researchListCmd() *cobra.Command {
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List stored researches, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			rs, err := st.ResearchList(cmd.Context(), limit)
			if err != nil {
				return err
			}
			if asJSON {
				if rs == nil {
					rs = []store.Research{}
				}
				return json.NewEncoder(a.stdout).Encode(rs)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tCREATED\tQUESTION")
			for _, r := range rs {
				q := textclean.Line(r.Question) // stored before questions were cleaned
				if len([]rune(q)) > 60 {
					q = string([]rune(q)[:59]) + "…"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.ID, r.Status, r.CreatedAt.Local().Format("2006-01-02 15:04"), q)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many")
	return cmd
}

// progressPrinter shows agent states and warnings as lines on a terminal.
func progressPrinter(w io.Writer) func(research.Event) {
	return func(e research.Event) {
		switch e.Type {
		case research.EventStatus, research.EventAgent, research.EventWarning:
			fmt.Fprintln(w, eventLine(e))
		}
	}
}

// eventLine renders one event as a line of text, cleaned for a terminal.
func eventLine(e research.Event) string {
	var line string
	switch {
	case e.Status != nil:
		line = fmt.Sprintf("· %s: %s", e.Status.Status, e.Status.Stage)
	case e.Agent != nil:
		s := e.Agent
		msg := s.Task
		if s.Result != "" {
			msg = s.Result
		}
		if s.Error != "" {
			msg = s.Error
		}
		line = fmt.Sprintf("  [%s] %s %3.0f%% %s", s.Agent, s.Status, s.Progress*100, msg)
	case e.Message != nil:
		to := e.Message.To
		if to == "" {
			to = "all"
		}
		line = fmt.Sprintf("  %s → %s (%s): %s", e.Message.From, to, e.Message.Kind, e.Message.Content)
	case e.Source != nil:
		line = fmt.Sprintf("  + %s %s — %s", e.Source.ID, e.Source.Title, e.Source.URL)
	case e.Learning != nil:
		line = fmt.Sprintf("  learned: %s", e.Learning.Text)
	case e.Usage != nil:
		line = fmt.Sprintf("  tokens: %d in, %d out, %d calls", e.Usage.InputTokens, e.Usage.OutputTokens, e.Usage.Calls)
	case e.Report != nil:
		line = fmt.Sprintf("  report: %q, %d sections, %d references", e.Report.Title, e.Report.Sections, e.Report.References)
	case e.Warning != "":
		line = "  ! " + e.Warning
	default:
		line = "  " + e.Type
	}
	indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
	return indent + textclean.Line(line)
}

func (a *cli) researchWatchCmd() *cobra.Command {
	var after int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Print a research's events after --after, then follow it live until it ends",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return a.q().Watch(ctx, args[0], after, func(e store.ResearchEvent) error {
				if asJSON {
					_, err := fmt.Fprintf(a.stdout, "%s\n", e.Data)
					return err
				}
				var ev research.Event
				if err := json.Unmarshal(e.Data, &ev); err != nil {
					return fmt.Errorf("event %d: %w", e.Seq, err)
				}
				_, err := fmt.Fprintf(a.stdout, "%4d %s\n", e.Seq, eventLine(ev))
				return err
			})
		},
	}
	cmd.Flags().Int64Var(&after, "after", 0, "print only the events after this sequence number")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print each event as one JSON line (with its seq)")
	return cmd
}

func (a *cli) researchCancelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a running research, wherever it runs; its state is kept and --resume continues it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rn, err := a.researches(ctx)
			if err != nil {
				return err
			}
			if err := rn.Cancel(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "asked research %s to stop; it checkpoints and ends canceled (resume it with: quarry research --resume %s)\n", args[0], args[0])
			return nil
		},
	}
}
