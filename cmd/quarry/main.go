// Command quarry researches questions and answers them from evidence, with
// citations that point at text it read. This is its CLI: knowledge bases,
// search and retrieval evaluation.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/embed/openai"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
)

// version is set by -ldflags "-X main.version=..." in releases.
var version = "dev"

// Exit codes.
const (
	exitError = 1
	exitUsage = 2
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	app := &app{stdout: os.Stdout, stderr: os.Stderr, env: os.LookupEnv}
	root := app.rootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "quarry:", err)
		os.Exit(exitCode(err))
	}
}

// exitCode is 2 for invalid input (a flag, an argument, a value breaking a
// rule: errcode.Invalid) and 1 for any other failure.
func exitCode(err error) int {
	var usage usageError
	if errcode.Of(err) == errcode.Invalid || errors.As(err, &usage) || strings.HasPrefix(err.Error(), "unknown ") || strings.Contains(err.Error(), "arg(s)") {
		return exitUsage
	}
	return exitError
}

type usageError struct{ error }

type app struct {
	cfg Config
	// env looks up environment variables: os.LookupEnv in main, a map in
	// tests, so no test reads the real environment.
	env    func(string) (string, bool)
	stdout *os.File
	stderr *os.File
	logger *slog.Logger
	// researchFetcher is shared by the remote sources of a research.
	researchFetcher *fetch.Fetcher
	store           store.Store
	kb              *kb.Service // one per process, so its loaded indexes are shared
}

func (a *app) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "quarry",
		Short:         "Research questions and answer them from evidence, with citations",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.cfg.load(cmd.Flags(), a.env); err != nil {
				return usageError{err}
			}
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(a.cfg.LogLevel)); err != nil {
				return usageError{fmt.Errorf("log-level: %w", err)}
			}
			a.logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lvl}))
			return nil
		},
		PersistentPostRun: func(*cobra.Command, []string) {
			if a.store != nil {
				_ = a.store.Close()
			}
		},
	}
	a.cfg.registerFlags(root.PersistentFlags())
	root.AddCommand(a.versionCmd(), a.kbCmd(), a.evalCmd(), a.researchCmd(), a.threadCmd(), a.workerCmd())
	return root
}

func (a *app) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			v := version
			if info, ok := debug.ReadBuildInfo(); ok && v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
				v = info.Main.Version
			}
			fmt.Fprintf(a.stdout, "quarry %s\n", v)
			return nil
		},
	}
}

// openStore opens the configured backend once.
func (a *app) openStore(ctx context.Context) (store.Store, error) {
	if a.store != nil {
		return a.store, nil
	}
	var err error
	if u := a.cfg.DatabaseURL; strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		a.store, err = postgres.Open(ctx, u, postgres.Options{Logger: a.logger})
	} else if u != "" {
		return nil, usageError{fmt.Errorf("database-url: must start with postgres:// or postgresql://")}
	} else {
		a.store, err = sqlite.Open(ctx, filepath.Join(a.cfg.DataDir, "quarry.db"))
	}
	return a.store, err
}

func (a *app) service(ctx context.Context) (*kb.Service, error) {
	if a.kb != nil {
		return a.kb, nil
	}
	st, err := a.openStore(ctx)
	if err != nil {
		return nil, err
	}
	a.kb = kb.New(st, a.logger)
	return a.kb, nil
}

// openKB opens the service and a knowledge base with its embedder. With
// create, a missing knowledge base is created with the configured embedder.
func (a *app) openKB(ctx context.Context, name string, create bool) (*kb.Service, embed.Embedder, error) {
	svc, err := a.service(ctx)
	if err != nil {
		return nil, nil, err
	}
	k, err := svc.Get(ctx, name)
	if create && errors.Is(err, store.ErrNotFound) {
		emb, eerr := a.configuredEmbedder()
		if eerr != nil {
			return nil, nil, usageError{eerr}
		}
		k, err = svc.Create(ctx, name, "", emb)
	}
	if err != nil {
		return nil, nil, err
	}
	emb, err := a.embedderFor(k)
	if err != nil {
		return nil, nil, err
	}
	return svc, emb, nil
}

// configuredEmbedder builds the embedder the configuration names.
func (a *app) configuredEmbedder() (embed.Embedder, error) {
	switch a.cfg.Embedder {
	case "openai":
		return openai.New(openai.Config{BaseURL: a.cfg.EmbedBaseURL, APIKey: a.cfg.EmbedAPIKey, Model: a.cfg.EmbedModel, Dim: a.cfg.EmbedDim})
	default:
		return embed.Hash{Dim: a.cfg.EmbedDim}, nil
	}
}

// embedderFor returns the embedder for an existing knowledge base: the
// configured one when the user chose one (a mismatch is then an error),
// else the one the knowledge base was built with.
func (a *app) embedderFor(k *store.KB) (embed.Embedder, error) {
	if a.cfg.embedderSet {
		return a.configuredEmbedder()
	}
	switch {
	case strings.HasPrefix(k.Embedder, "hash-v1/"):
		return embed.Hash{Dim: k.Dimension}, nil
	case strings.HasPrefix(k.Embedder, "openai:"):
		return openai.New(openai.Config{BaseURL: a.cfg.EmbedBaseURL, APIKey: a.cfg.EmbedAPIKey, Model: strings.TrimPrefix(k.Embedder, "openai:"), Dim: k.Dimension})
	}
	return nil, fmt.Errorf("knowledge base %q uses unknown embedder %q", k.Name, k.Embedder)
}

func (a *app) isTerminal() bool { return term.IsTerminal(int(a.stderr.Fd())) }
