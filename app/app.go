package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/embed/openai"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/events"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/offline"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
)

// App is Quarry's running parts for one Config. Parts are opened when
// first asked for, once, and closed by Close.
type App struct {
	Config Config
	Logger *slog.Logger
	// Broker hands the events of researches run by this App's runners to
	// their watchers in this process.
	Broker *events.Broker

	mu              sync.Mutex
	longLived       bool // SetLongLived
	backgroundIndex bool // SetBackgroundIndex
	store           store.Store
	kb              *kb.Service // one per process, so loaded indexes are shared
	researchFetcher *fetch.Fetcher
	following       int // FollowEvents calls running
	sessions        session.Store
	redis           *redis.Client
	model           *builtModel // Provider, built once
}

// builtModel is the configured model client, or why it could not be
// built; a nil provider is the offline engine.
type builtModel struct {
	provider llm.Provider
	err      error
}

// New returns an App; nothing is opened yet.
func New(cfg Config, logger *slog.Logger) *App {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &App{Config: cfg, Logger: logger, Broker: events.NewBroker(0)}
}

// Close closes what was opened.
func (a *App) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Broker.Close()
	if a.redis != nil {
		_ = a.redis.Close()
		a.redis = nil
	}
	a.sessions = nil
	if a.store != nil {
		err := a.store.Close()
		a.store = nil
		return err
	}
	return nil
}

// Store opens the configured store once: PostgreSQL for a postgres://
// database URL, else the SQLite file in the data directory.
func (a *App) Store(ctx context.Context) (store.Store, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.store != nil {
		return a.store, nil
	}
	var err error
	if u := a.Config.DatabaseURL; strings.HasPrefix(u, "postgres://") || strings.HasPrefix(u, "postgresql://") {
		a.store, err = postgres.Open(ctx, u, postgres.Options{Logger: a.Logger, IndexMemoryMB: a.Config.IndexMemory, ExactSearch: a.Config.ExactSearch, VectorSearchEF: a.Config.VectorEF, IndexEFConstruction: a.Config.IndexEFConstruction})
	} else if u != "" {
		return nil, errcode.New(errcode.Invalid, "database-url", "must start with postgres:// or postgresql://")
	} else {
		a.store, err = sqlite.Open(ctx, filepath.Join(a.Config.DataDir, "quarry.db"))
	}
	if err != nil {
		a.store = nil
		return nil, err
	}
	a.setBackgroundIndex()
	return a.store, nil
}

// setBackgroundIndex applies SetBackgroundIndex to the store, if open;
// the caller holds a.mu.
func (a *App) setBackgroundIndex() {
	if b, ok := a.store.(interface{ SetBackgroundIndex(bool) }); ok {
		b.SetBackgroundIndex(a.backgroundIndex)
	}
}

// SetLongLived marks a long-lived process (quarry serve, worker, mcp, a
// batch evaluation): it searches where Config.Search says, keeping each
// knowledge base in memory after its first search when that is "memory"
// (the default on SQLite, where warm searches are faster) and searching
// in the database when it is "database" (the default on PostgreSQL: a
// replica then holds no per-chunk state and sees every write at once).
// Off (the default), a store that can search itself (SQLite, PostgreSQL)
// is searched where it is, loading nothing: a one-shot command answers
// without reading a whole knowledge base. It applies to a service already
// made, too.
func (a *App) SetLongLived(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.longLived = on
	if a.kb != nil {
		a.kb.SetInStore(!a.resident())
	}
}

// SetBackgroundIndex marks a long-lived process that runs ingest jobs
// (quarry serve, worker): on PostgreSQL it builds a knowledge base's
// vector index in the background (postgres.Store.SetBackgroundIndex),
// apart from the job that asks for it, which a build would outlast. Off
// (the default), an ingest waits for its build: a one-shot command's
// process would end it.
func (a *App) SetBackgroundIndex(on bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.backgroundIndex = on
	a.setBackgroundIndex()
}

// Resident reports whether this process keeps knowledge bases it searches
// in memory.
func (a *App) Resident() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.resident()
}

func (a *App) resident() bool {
	switch a.Config.Search {
	case SearchMemory:
		return a.longLived
	case SearchDatabase:
		return false
	}
	return a.longLived && a.Config.DatabaseURL == ""
}

// KB returns the knowledge-base service.
func (a *App) KB(ctx context.Context) (*kb.Service, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.kb == nil {
		a.kb = kb.New(st, a.Logger)
		a.kb.SetInStore(!a.resident())
	}
	return a.kb, nil
}

// OpenKB opens a knowledge base with its embedder. With create, a missing
// knowledge base is created with the configured embedder.
func (a *App) OpenKB(ctx context.Context, name string, create bool) (*kb.Service, embed.Embedder, error) {
	svc, err := a.KB(ctx)
	if err != nil {
		return nil, nil, err
	}
	k, err := svc.Get(ctx, name)
	if create && errors.Is(err, store.ErrNotFound) {
		emb, eerr := a.Embedder()
		if eerr != nil {
			return nil, nil, errcode.Wrap(errcode.Invalid, eerr)
		}
		k, err = svc.Create(ctx, name, "", emb)
	}
	if err != nil {
		return nil, nil, err
	}
	emb, err := a.EmbedderFor(k)
	if err != nil {
		return nil, nil, err
	}
	return svc, emb, nil
}

// Embedder builds the embedder the configuration names.
func (a *App) Embedder() (embed.Embedder, error) {
	c := a.Config
	switch c.Embedder {
	case "openai":
		return openai.New(openai.Config{BaseURL: c.EmbedBaseURL, APIKey: c.EmbedAPIKey, Model: c.EmbedModel, Dim: c.EmbedDim})
	default:
		return embed.Hash{Dim: c.EmbedDim}, nil
	}
}

// EmbedderFor returns the embedder for an existing knowledge base: the
// configured one when the user chose one (a mismatch is then an error),
// else the one the knowledge base was built with.
func (a *App) EmbedderFor(k *store.KB) (embed.Embedder, error) {
	c := a.Config
	if c.embedderSet {
		return a.Embedder()
	}
	switch {
	case strings.HasPrefix(k.Embedder, "hash-v1/"):
		return embed.Hash{Dim: k.Dimension}, nil
	case strings.HasPrefix(k.Embedder, "openai:"):
		return openai.New(openai.Config{BaseURL: c.EmbedBaseURL, APIKey: c.EmbedAPIKey, Model: strings.TrimPrefix(k.Embedder, "openai:"), Dim: k.Dimension})
	}
	return nil, fmt.Errorf("knowledge base %q uses unknown embedder %q", k.Name, k.Embedder)
}

// RunnerOption sets what one client of the research runner adds to it.
type RunnerOption func(*research.Runner)

// WithSources runs researches over sources the caller opened (the CLI
// opens them before it creates a research, so that a missing knowledge
// base stops it before anything is stored), instead of opening each
// research's own.
func WithSources(sources []search.Source) RunnerOption {
	return func(rn *research.Runner) { rn.Sources, rn.OpenSources = sources, nil }
}

// WithEvents hands every stored event to fn as well, in order (the CLI's
// progress lines).
func WithEvents(fn func(research.Event)) RunnerOption {
	return func(rn *research.Runner) { rn.OnEvent = fn }
}

// Runner returns the research runner, assembled here once for every
// client (the CLI, the server, the workers, the MCP server): the
// configured engine with the offline engine standing in for a failing
// writer and choosing the evidence, the store, the broker, and each
// research's own sources.
func (a *App) Runner(ctx context.Context) (*research.Runner, error) { return a.RunnerWith(ctx) }

// RunnerWith is Runner with what one client adds to it.
func (a *App) RunnerWith(ctx context.Context, opts ...RunnerOption) (*research.Runner, error) {
	eng, err := a.Engine()
	if err != nil {
		return nil, errcode.Wrap(errcode.Invalid, err)
	}
	rn, err := a.Researches(ctx)
	if err != nil {
		return nil, err
	}
	rn.Engine, rn.Fallback, rn.Ranker = eng, offline.Engine{}, offline.Engine{}
	rn.OpenSources = func(ctx context.Context, specs []string) ([]search.Source, error) {
		return a.OpenSources(ctx, specs)
	}
	for _, o := range opts {
		o(rn)
	}
	return rn, nil
}

// Researches returns the research service for what needs no engine:
// cancelling a research (one still pending is ended canceled without
// running), listing, reading and closing threads; Runner runs researches.
// A broken model configuration does not stop a cancel.
func (a *App) Researches(ctx context.Context) (*research.Runner, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	idle, err := a.Config.ThreadIdleAfter()
	if err != nil {
		return nil, err
	}
	return &research.Runner{Store: st, Logger: a.Logger, IdleAfter: idle, Publish: a.Broker.Publish}, nil
}

// CurrentStore is the store Store opened (nil before it did).
func (a *App) CurrentStore() store.Store {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.store
}
