// Command quarry researches questions and answers them from evidence, with
// citations that point at text it read. This is its CLI: knowledge bases,
// search and retrieval evaluation.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/internal/telemetry"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
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
	c := &cli{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, env: os.LookupEnv}
	root := c.rootCmd()
	// Work recovers its own panics into its failure; this keeps any other
	// from ending the CLI without a word of what happened.
	err := safe.Call(func() error { return root.ExecuteContext(ctx) })
	if stack := safe.Stack(err); stack != nil {
		fmt.Fprintf(os.Stderr, "%s\n", stack)
	}
	c.close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "quarry:", err)
		stop()
		os.Exit(exitCode(err))
	}
}

// exitCode is 2 for invalid input (a flag, an argument, a value breaking a
// rule: errcode.Invalid) and 1 for any other failure.
func exitCode(err error) int {
	if errcode.Of(err) == errcode.Invalid || strings.HasPrefix(err.Error(), "unknown ") || strings.Contains(err.Error(), "arg(s)") {
		return exitUsage
	}
	return exitError
}

// usageError is invalid input found by the CLI itself.
type usageError struct{ error }

// ErrorCode implements errcode.Coder.
func (usageError) ErrorCode() errcode.Code { return errcode.Invalid }

func (u usageError) Unwrap() error { return u.error }

type cli struct {
	cfg app.Config
	app *app.App
	// env looks up environment variables: os.LookupEnv in main, a map in
	// tests, so no test reads the real environment.
	env    func(string) (string, bool)
	stdin  io.Reader // quarry mcp's stdio transport
	stdout *os.File
	stderr *os.File
	logger *slog.Logger
	// traceStop flushes and stops tracing (telemetry.Setup).
	traceStop func(context.Context) error
}

func (a *cli) rootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "quarry",
		Short:         "Research questions and answer them from evidence, with citations",
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.cfg.Load(cmd.Flags(), a.env); err != nil {
				return usageError{err}
			}
			var lvl slog.Level
			if err := lvl.UnmarshalText([]byte(a.cfg.LogLevel)); err != nil {
				return usageError{fmt.Errorf("log-level: %w", err)}
			}
			a.logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: lvl}))
			shutdown, err := telemetry.Setup(cmd.Context(), a.env, a.stderr, version, a.logger)
			if err != nil {
				return usageError{err}
			}
			a.traceStop = shutdown
			return nil
		},
	}
	a.cfg.RegisterFlags(root.PersistentFlags())
	root.AddCommand(a.versionCmd(), a.kbCmd(), a.evalCmd(), a.researchCmd(), a.threadCmd(), a.workerCmd(), a.serveCmd(), a.tokenCmd(), a.askCmd(), a.pipelineCmd(), a.datasetCmd(), a.retrieveCmd(), a.generateCmd(), a.chatCmd(), a.mcpCmd())
	return root
}

func (a *cli) versionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(a.stdout, versionLine())
			return nil
		},
	}
}

// close closes what the command opened, whether it succeeded or not.
func (a *cli) close() {
	if a.traceStop != nil {
		// Spans still buffered are sent before the process ends.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.traceStop(ctx)
		cancel()
		a.traceStop = nil
	}
	if a.app != nil {
		_ = a.app.Close()
		a.app = nil
	}
}

// q is the assembled program, made once the configuration is loaded.
func (a *cli) q() *app.App {
	if a.app == nil {
		a.app = app.New(a.cfg, a.logger)
	}
	return a.app
}

func (a *cli) openStore(ctx context.Context) (store.Store, error) { return a.q().Store(ctx) }

// researches is the research service for what runs nothing: cancel and
// threads.
func (a *cli) researches(ctx context.Context) (*research.Runner, error) {
	return a.q().Researches(ctx)
}

func (a *cli) service(ctx context.Context) (*kb.Service, error) { return a.q().KB(ctx) }

func (a *cli) openKB(ctx context.Context, name string, create bool) (*kb.Service, embed.Embedder, error) {
	return a.q().OpenKB(ctx, name, create)
}

// openForWrite opens a knowledge base to add to, creating it with create;
// undo removes it again when this command created it and then added
// nothing (a failed "kb add --create" leaves no empty knowledge base).
func (a *cli) openForWrite(ctx context.Context, name string, create bool) (svc *kb.Service, emb embed.Embedder, undo func(), err error) {
	existed := true
	if create {
		all, err := a.q().KB(ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		_, gerr := all.Get(ctx, name)
		existed = gerr == nil
	}
	svc, emb, err = a.q().OpenKB(ctx, name, create)
	if err != nil {
		return nil, nil, nil, err
	}
	undo = func() {
		if existed {
			return
		}
		if derr := svc.Delete(context.WithoutCancel(ctx), name); derr != nil {
			fmt.Fprintf(a.stderr, "quarry: could not remove the knowledge base %q this command created: %v\n", name, derr)
			return
		}
		fmt.Fprintf(a.stderr, "quarry: removed the knowledge base %q this command created, since nothing was added to it\n", name)
	}
	return svc, emb, undo, nil
}

func (a *cli) isTerminal() bool { return term.IsTerminal(int(a.stderr.Fd())) }

// versionLine is the version (a release's, or the module's), the commit
// and time it was built from (with "+dirty" for uncommitted changes) and
// the Go toolchain: "quarry dev (fe3c132d9a1b+dirty, 2026-11-25T13:58:51Z;
// go1.26.8 linux/amd64)".
func versionLine() string {
	v := version
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "quarry " + v
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var build []string
	if rev := settings["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if settings["vcs.modified"] == "true" {
			rev += "+dirty"
		}
		build = append(build, rev)
	}
	if t := settings["vcs.time"]; t != "" {
		build = append(build, t)
	}
	goVersion := info.GoVersion + " " + settings["GOOS"] + "/" + settings["GOARCH"]
	if len(build) == 0 {
		return fmt.Sprintf("quarry %s (%s)", v, goVersion)
	}
	return fmt.Sprintf("quarry %s (%s; %s)", v, strings.Join(build, ", "), goVersion)
}
