package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/kb/chunk"
)

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

func (a *cli) kbCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "kb", Short: "Manage knowledge bases: create, add, crawl, logs, list, search, stats, rm"}
	cmd.AddCommand(a.kbCreateCmd(), a.kbAddCmd(), a.kbCrawlCmd(), a.kbScheduleCmd(), a.kbLogsCmd(), a.kbListCmd(), a.kbSearchCmd(), a.kbStatsCmd(), a.kbRmCmd())
	return cmd
}

func (a *cli) kbCreateCmd() *cobra.Command {
	var desc string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an empty knowledge base bound to the configured embedder",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := a.service(cmd.Context())
			if err != nil {
				return err
			}
			emb, err := a.q().Embedder()
			if err != nil {
				return usageError{err}
			}
			k, err := svc.Create(cmd.Context(), args[0], desc, emb)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, k)
			}
			fmt.Fprintf(a.stdout, "created knowledge base %q (embedder %s, %d dimensions)\n", k.Name, k.Embedder, k.Dimension)
			return nil
		},
	}
	cmd.Flags().StringVar(&desc, "description", "", "what the knowledge base holds")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *cli) kbAddCmd() *cobra.Command {
	var asJSON, create bool
	var chunkTokens int
	cmd := &cobra.Command{
		Use:   "add NAME PATH...",
		Short: "Ingest files, folders and BEIR JSON Lines corpora (Markdown, text, HTML, PDF, .jsonl)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if chunkTokens < minChunkTokens || chunkTokens > maxChunkTokens {
				return usageError{fmt.Errorf("chunk-tokens: must be between %d and %d, got %d", minChunkTokens, maxChunkTokens, chunkTokens)}
			}
			ctx := cmd.Context()
			svc, emb, undo, err := a.openForWrite(ctx, args[0], create)
			if err != nil {
				return err
			}
			opt := kb.AddOptions{Embedder: emb, Chunking: chunk.Options{MaxTokens: chunkTokens}}
			progressed := false
			if a.isTerminal() {
				// A corpus is read as it is written: the documents
				// known so far, not all of them.
				opt.Progress = func(p kb.Progress) {
					fmt.Fprintf(a.stderr, "\ringested %d of %d documents read", p.Done, p.Total)
					progressed = true
				}
			}
			rep, err := svc.AddPaths(ctx, args[0], args[1:], opt)
			if progressed {
				fmt.Fprintln(a.stderr)
			}
			if rep == nil || rep.Added+rep.Updated+rep.Unchanged == 0 {
				defer undo()
			}
			if rep != nil {
				if asJSON {
					if jerr := writeJSON(a.stdout, rep); jerr != nil {
						return jerr
					}
				} else {
					after := ""
					if rep.Seconds-rep.WrittenSeconds >= 1 {
						after = fmt.Sprintf(" (written in %.1fs, then indexed)", rep.WrittenSeconds)
					}
					fmt.Fprintf(a.stdout, "added %d, updated %d, unchanged %d documents; %d chunks, %d tokens in %.1fs%s\n",
						rep.Added, rep.Updated, rep.Unchanged, rep.Chunks, rep.Tokens, rep.Seconds, after)
					for _, p := range rep.Failed {
						fmt.Fprintf(a.stderr, "skipped %s: %s\n", p.Origin, p.Reason)
					}
				}
			}
			if err != nil {
				return err
			}
			if rep.Added+rep.Updated+rep.Unchanged == 0 && len(rep.Failed) > 0 {
				return fmt.Errorf("nothing ingested: all %d inputs failed", len(rep.Failed))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&create, "create", false, "create the knowledge base first if it does not exist")
	cmd.Flags().IntVar(&chunkTokens, "chunk-tokens", chunk.DefaultMaxTokens, fmt.Sprintf("the most cl100k tokens a chunk holds, %d-%d; a document added again at another size is cut again", minChunkTokens, maxChunkTokens))
	return cmd
}

// The chunk sizes kb add takes: a chunk says something, and fits an
// embedding model's input (8,191 tokens for OpenAI's; many other models
// take 512, and a longer chunk is cut or refused by them).
const (
	minChunkTokens = 64
	maxChunkTokens = 8000
)

func (a *cli) kbListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List knowledge bases",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			kbs, err := st.KBList(cmd.Context())
			if err != nil {
				return err
			}
			type row struct {
				Name      string `json:"name"`
				Embedder  string `json:"embedder"`
				Dimension int    `json:"dimension"`
				Sources   int    `json:"sources"`
				Chunks    int    `json:"chunks"`
				CreatedAt string `json:"created_at"`
			}
			rows := []row{}
			for _, k := range kbs {
				s, err := st.KBStats(cmd.Context(), k.ID)
				if err != nil {
					return err
				}
				rows = append(rows, row{k.Name, k.Embedder, k.Dimension, s.Sources, s.Chunks, k.CreatedAt.Format("2006-01-02T15:04:05Z")})
			}
			if asJSON {
				return writeJSON(a.stdout, rows)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSOURCES\tCHUNKS\tEMBEDDER\tCREATED")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", r.Name, r.Sources, r.Chunks, r.Embedder, r.CreatedAt)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *cli) kbStatsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "stats NAME",
		Short: "Count a knowledge base's sources, chunks, stale sources and tokens",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := a.service(cmd.Context())
			if err != nil {
				return err
			}
			k, err := svc.Get(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			s, err := a.q().CurrentStore().KBStats(cmd.Context(), k.ID)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a.stdout, map[string]any{"name": k.Name, "embedder": k.Embedder, "dimension": k.Dimension,
					"sources": s.Sources, "chunks": s.Chunks, "stale": s.Stale, "tokens": s.Tokens})
			}
			fmt.Fprintf(a.stdout, "%s: %d sources, %d chunks, %d stale, %d tokens (embedder %s)\n", k.Name, s.Sources, s.Chunks, s.Stale, s.Tokens, k.Embedder)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *cli) kbRmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "rm NAME",
		Short: "Delete a knowledge base and everything in it",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			svc, err := a.service(cmd.Context())
			if err != nil {
				return err
			}
			if err := svc.Delete(cmd.Context(), args[0]); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "deleted knowledge base %q\n", args[0])
			return nil
		},
	}
}

type searchFlags struct {
	k            int
	mode         string
	lang         string
	source       string
	includeStale bool
	fusion       string
	bm25W, vecW  float64
}

func (f *searchFlags) register(cmd *cobra.Command, defaultK int) {
	cmd.Flags().IntVar(&f.k, "k", defaultK, "number of results (1-1000)")
	cmd.Flags().StringVar(&f.mode, "mode", kb.ModeHybrid, "bm25, vector or hybrid")
	cmd.Flags().StringVar(&f.lang, "lang", "", "only chunks in this language (e.g. en, ko)")
	cmd.Flags().StringVar(&f.source, "source", "", "only chunks whose source URL starts with this")
	cmd.Flags().BoolVar(&f.includeStale, "include-stale", false, "include chunks of stale sources")
	cmd.Flags().StringVar(&f.fusion, "fusion", "", "hybrid fusion: rrf or weighted (default rrf; weighted for the offline embedder)")
	cmd.Flags().Float64Var(&f.bm25W, "bm25-weight", 0, "BM25 list weight in hybrid fusion (default 1)")
	cmd.Flags().Float64Var(&f.vecW, "vector-weight", 0, "vector list weight in hybrid fusion (default 1; 0.2 for the offline embedder)")
}

func (f *searchFlags) query(text string) kb.Query {
	return kb.Query{Text: text, K: f.k, Mode: f.mode, Language: f.lang, Source: f.source, IncludeStale: f.includeStale,
		Fusion: f.fusion, BM25Weight: f.bm25W, VectorWeight: f.vecW}
}

func (a *cli) kbSearchCmd() *cobra.Command {
	var f searchFlags
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "search NAME QUERY",
		Short: "Search a knowledge base (BM25, vector or hybrid)",
		Args:  cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			svc, emb, err := a.openKB(ctx, args[0], false)
			if err != nil {
				return err
			}
			found, err := svc.SearchNoted(ctx, args[0], emb, f.query(strings.Join(args[1:], " ")))
			if err != nil {
				return err
			}
			for _, n := range found.Notes {
				fmt.Fprintf(a.stderr, "quarry: %s\n", n)
			}
			res := found.Results
			if asJSON {
				if res == nil {
					res = []kb.Result{}
				}
				return writeJSON(a.stdout, res)
			}
			if len(res) == 0 {
				fmt.Fprintln(a.stdout, "no results")
			}
			for i, r := range res {
				text := strings.Join(strings.Fields(r.Text), " ")
				if rs := []rune(text); len(rs) > 240 {
					text = string(rs[:240]) + "…"
				}
				fmt.Fprintf(a.stdout, "%d. %s  (score %.4f, chunk %d)\n   %s\n   %s\n\n", i+1, r.Title, r.Score, r.ChunkID, r.SourceURL, text)
			}
			return nil
		},
	}
	f.register(cmd, 5)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
