package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/llm/anthropic"
	"github.com/quarryhq/quarry/llm/openai"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/search/credibility"
	"github.com/quarryhq/quarry/search/kbsource"
	"github.com/quarryhq/quarry/store"
)

// Default models when only a key is configured.
const (
	defaultOpenAIModel    = "gpt-4o-mini"
	defaultAnthropicModel = "claude-sonnet-4-5"
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

func (a *app) researchCmd() *cobra.Command {
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
	fl.StringVar(&f.format, "format", "markdown", "markdown, json or html")
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

func (a *app) runResearch(cmd *cobra.Command, f researchFlags, question string) error {
	ctx := cmd.Context()
	if err := checkFormat(f.format); err != nil {
		return err
	}
	if err := checkOut(f.out); err != nil {
		return err
	}
	opts := research.Options{Level: f.level, Breadth: f.breadth, MaxTokens: f.maxTokens, Timeout: f.timeout, Confidence: f.confidence, Thread: f.thread}
	if cmd.Flags().Changed("depth") {
		opts.Depth, opts.DepthSet = f.depth, true
		if !cmd.Flags().Changed("breadth") {
			// Seed 002: --depth N alone is the old single pass of breadth N.
			opts.Breadth, opts.Depth = f.depth, 0
			if f.depth < 1 || f.depth > research.MaxBreadth {
				return usageError{fmt.Errorf("depth: given alone it is the breadth of a single pass and must be between 1 and %d, got %d", research.MaxBreadth, f.depth)}
			}
		}
	}
	if cmd.Flags().Changed("breadth") && (f.breadth < 1 || f.breadth > research.MaxBreadth) {
		return usageError{fmt.Errorf("breadth: must be between 1 and %d, got %d", research.MaxBreadth, f.breadth)}
	}
	if opts.Level != "" && (cmd.Flags().Changed("breadth") || cmd.Flags().Changed("depth")) {
		return usageError{errors.New("level: give either --level or --breadth/--depth, not both")}
	}
	eng, err := a.engine()
	if err != nil {
		return usageError{err}
	}
	svc, err := a.service(ctx)
	if err != nil {
		return err
	}
	st := a.store
	var stored *research.Research
	if f.resume != "" {
		stored, err = research.Load(ctx, st, f.resume)
		if err != nil {
			return err
		}
		opts = stored.Options
		if stored.Engine != eng.Name() {
			return usageError{fmt.Errorf("llm: research %s was started with %s; resume it with the same model (--llm)", stored.ID, stored.Engine)}
		}
	} else {
		specs, err := researchSources(f)
		if err != nil {
			return err
		}
		opts.Sources = specs
		// Check everything before a possibly long --docs ingest.
		if _, err := research.Validate(question, &opts); err != nil {
			return err
		}
		if err := a.ingestDocs(ctx, svc, f.docs); err != nil {
			return err
		}
	}
	sources, err := a.openSources(ctx, svc, opts.Sources)
	if err != nil {
		return err
	}
	if f.detach {
		if stored != nil {
			return usageError{errors.New("detach: --resume runs here; to hand a research to the workers, it must be new")}
		}
		rn := &research.Runner{Engine: eng, Store: st, Logger: a.logger}
		r, err := rn.Create(ctx, question, opts)
		if err != nil {
			return err
		}
		fmt.Fprintln(a.stdout, r.ID)
		fmt.Fprintf(a.stderr, "quarry: research %s queued; a worker runs it (quarry worker); follow it with: quarry research watch %s\n", r.ID, r.ID)
		return nil
	}
	if eng.Name() == "offline" {
		fmt.Fprintln(a.stderr, "quarry: no language model configured: using the offline extractive engine (set ANTHROPIC_API_KEY, OPENAI_API_KEY / OPENAI_BASE_URL or QUARRY_LLM to use one)")
	}
	rn := &research.Runner{Engine: eng, Fallback: offline.Engine{}, Sources: sources, Store: st, Logger: a.logger}
	if a.isTerminal() {
		rn.OnEvent = progressPrinter(a.stderr)
	}
	var r *research.Research
	if stored != nil {
		r, err = rn.Resume(ctx, stored.ID)
	} else {
		r, err = rn.Create(ctx, question, opts)
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
	return a.printResearch(r, f.format, f.out)
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
		specs = append(specs, "kb:"+docsKBName(p))
	}
	if len(specs) == 0 {
		return nil, usageError{errors.New("source: give --source (kb:<name>, web, arxiv, wikipedia) or --docs PATH")}
	}
	return specs, nil
}

// ingestDocs ingests each --docs path into its knowledge base (unchanged
// files are skipped, files deleted from a folder leave it). A path that
// is missing or holds nothing to ingest is an error and leaves no
// knowledge base behind.
func (a *app) ingestDocs(ctx context.Context, svc *kb.Service, docs []string) error {
	for _, p := range docs {
		if _, err := os.Stat(p); err != nil {
			return usageError{fmt.Errorf("docs: %w", err)}
		}
		name := docsKBName(p)
		_, missing := svc.Get(ctx, name)
		_, emb, err := a.openKB(ctx, name, true)
		if err != nil {
			return err
		}
		rep, err := svc.AddPaths(ctx, name, []string{p}, kb.AddOptions{Embedder: emb})
		if err != nil {
			return fmt.Errorf("docs %s: %w", p, err)
		}
		for _, pr := range rep.Failed {
			fmt.Fprintf(a.stderr, "quarry: skipped %s: %s\n", textclean.Line(pr.Origin), textclean.Line(pr.Reason))
		}
		removed, err := svc.PruneMissingFiles(ctx, name, p)
		if err != nil {
			return fmt.Errorf("docs %s: %w", p, err)
		}
		if rep.Added+rep.Updated+len(removed) > 0 {
			fmt.Fprintf(a.stderr, "quarry: ingested %s into knowledge base %q: %d added, %d updated, %d unchanged, %d removed (%.1fs)\n", p, name, rep.Added, rep.Updated, rep.Unchanged, len(removed), rep.Seconds)
		}
		k, err := svc.Get(ctx, name)
		if err != nil {
			return err
		}
		stats, err := a.store.KBStats(ctx, k.ID)
		if err != nil {
			return err
		}
		if stats.Chunks == 0 {
			if missing != nil { // created by this run: leave nothing behind
				if derr := svc.Delete(ctx, name); derr != nil {
					return errors.Join(usageError{fmt.Errorf("docs: nothing could be ingested from %s", p)}, derr)
				}
			}
			return usageError{fmt.Errorf("docs: nothing could be ingested from %s", p)}
		}
	}
	return nil
}

var kbNameBad = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// docsKBName names the knowledge base of a --docs path: a readable part
// from the path's last elements and a short hash of its absolute path, so
// that two paths never share one ("notes/my notes" and "notes/my-notes",
// or names that differ only in non-ASCII letters):
// "examples/wiki/corpus.jsonl" → "docs-wiki-corpus.jsonl-1f2e3d4c".
func docsKBName(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		abs = p
	}
	abs = filepath.Clean(abs)
	sum := sha256.Sum256([]byte(abs))
	tag := hex.EncodeToString(sum[:4])
	readable := filepath.Base(abs)
	if parent := filepath.Base(filepath.Dir(abs)); parent != "/" && parent != "." {
		readable = parent + "-" + readable
	}
	readable = strings.Trim(kbNameBad.ReplaceAllString(readable, "-"), "-.")
	const room = 64 - len("docs-") - 1 - 8
	if len(readable) > room {
		readable = strings.Trim(readable[len(readable)-room:], "-.")
	}
	if readable == "" {
		return "docs-" + tag
	}
	return "docs-" + readable + "-" + tag
}

// openSources builds the search sources of the specs. A knowledge base
// must exist; sources this build cannot reach are clear errors.
func (a *app) openSources(ctx context.Context, svc *kb.Service, specs []string) ([]search.Source, error) {
	parsed, err := search.ParseSpecs(strings.Join(specs, ","))
	if err != nil {
		return nil, usageError{err}
	}
	cred, err := credibility.New(a.cfg.Credibility)
	if err != nil {
		return nil, usageError{err}
	}
	var out []search.Source
	for _, s := range parsed {
		switch s.Kind {
		case "kb":
			_, emb, err := a.openKB(ctx, s.Arg, false)
			if errors.Is(err, store.ErrNotFound) {
				return nil, usageError{fmt.Errorf("source kb:%s: knowledge base %q does not exist (create it with: quarry kb add %s PATH --create)", s.Arg, s.Arg, s.Arg)}
			}
			if err != nil {
				return nil, fmt.Errorf("source kb:%s: %w", s.Arg, err)
			}
			out = append(out, credibility.Apply(kbsource.New(svc, s.Arg, emb), cred))
		default:
			src, err := a.remoteSource(s.Kind, cred)
			if err != nil {
				return nil, err
			}
			out = append(out, credibility.Apply(src, cred))
		}
	}
	return out, nil
}

// engine returns the configured research engine.
func (a *app) engine() (research.Engine, error) {
	p, err := a.provider()
	if err != nil || p == nil {
		return offline.Engine{}, err
	}
	return &research.LLMEngine{Provider: p}, nil
}

// provider builds the configured language model, nil for offline.
func (a *app) provider() (llm.Provider, error) {
	c := a.cfg
	spec := c.LLM
	if spec == "" {
		switch {
		case c.AnthropicKey != "":
			spec = "anthropic"
		case c.OpenAIKey != "" || c.OpenAIBaseURL != "" || c.LLMBaseURL != "":
			spec = "openai"
		default:
			spec = "offline"
		}
	}
	kind, model, _ := strings.Cut(spec, ":")
	switch kind {
	case "offline":
		return nil, nil
	case "openai":
		if model == "" {
			model = defaultOpenAIModel
		}
		base := c.LLMBaseURL
		if base == "" {
			base = c.OpenAIBaseURL
		}
		key := c.LLMAPIKey
		if key == "" {
			key = c.OpenAIKey
		}
		return openai.New(openai.Config{BaseURL: base, APIKey: key, Model: model})
	case "anthropic":
		if model == "" {
			model = defaultAnthropicModel
		}
		key := c.LLMAPIKey
		if key == "" {
			key = c.AnthropicKey
		}
		if key == "" {
			return nil, errors.New("llm: anthropic needs ANTHROPIC_API_KEY (or QUARRY_LLM_API_KEY) in the environment")
		}
		return anthropic.New(anthropic.Config{BaseURL: c.LLMBaseURL, APIKey: key, Model: model})
	}
	return nil, fmt.Errorf("llm: must be offline, openai[:MODEL] or anthropic[:MODEL], got %q", spec)
}

func (a *app) printResearch(r *research.Research, format, out string) error {
	if format != "json" && r.Report == nil {
		return fmt.Errorf("research %s has no report (status %s, stage %s): resume it with quarry research --resume %s", r.ID, r.Status, r.Stage, r.ID)
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

func (a *app) researchShowCmd() *cobra.Command {
	var format string
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
			return a.printResearch(r, format, "")
		},
	}
	cmd.Flags().StringVar(&format, "format", "markdown", "markdown, json or html")
	cmd.Flags().BoolVar(&events, "events", false, "print the event log as JSON lines")
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
	case "markdown", "md", "json", "html":
		return nil
	}
	return usageError{fmt.Errorf("format: must be markdown, json or html, got %q", format)}
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

func (a *app) researchListCmd() *cobra.Command {
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

func (a *app) researchWatchCmd() *cobra.Command {
	var after int64
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "watch ID",
		Short: "Print a research's events after --after, then follow it live until it ends",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			return research.Watch(ctx, st, args[0], research.WatchOptions{After: after}, func(e store.ResearchEvent) error {
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

func (a *app) researchCancelCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "cancel ID",
		Short: "Stop a running research, wherever it runs; its state is kept and --resume continues it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, err := a.openStore(ctx)
			if err != nil {
				return err
			}
			rn := &research.Runner{Store: st, Logger: a.logger}
			if err := rn.Cancel(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "asked research %s to stop; it checkpoints and ends canceled (resume it with: quarry research --resume %s)\n", args[0], args[0])
			return nil
		},
	}
}
