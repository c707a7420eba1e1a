// Package server is Quarry's HTTP API: researches, their live event
// streams (WebSocket and Server-Sent Events), threads and knowledge bases
// as JSON under /v1, health, Prometheus metrics and the OpenAPI document.
// It is built on the same App as the CLI, so everything it does the CLI
// does too, and it is safe to expose: bearer tokens with scopes (stored as
// hashes), loopback-only access without one, body and connection limits,
// rate limits per token and per IP, and a graceful shutdown that
// checkpoints running researches for the next start.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/net/netutil"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// Options tune the server. The zero value of each field means its
// default.
type Options struct {
	// Insecure lets a non-loopback address serve without any token.
	Insecure bool
	// Workers is how many researches this process runs at once (default
	// 2); negative runs none here (quarry worker processes run them).
	// With workers the server also runs crawls, scheduled crawls and
	// purges: all are River jobs in the store.
	Workers int
	// RescueAfter is how long a job whose process died waits before it
	// runs again (jobs.DefaultRescueAfter when zero).
	RescueAfter time.Duration
	// MaxBodyBytes bounds a JSON request body (default 1 MiB);
	// MaxUploadBytes an upload (default 64 MiB).
	MaxBodyBytes   int64
	MaxUploadBytes int64
	// SyncUploadBytes is the largest upload ingested while the request
	// waits (default 8 MiB); a larger one is answered 202 and ingested in
	// the background.
	SyncUploadBytes int64
	// Rate and Burst limit requests per token (or, without one, per
	// client address) per second; IPRate and IPBurst per IP address
	// whatever the token. Defaults 20/s burst 40 and 50/s burst 100;
	// negative turns a limit off.
	Rate, IPRate   float64
	Burst, IPBurst int
	// MaxResearches bounds the researches one token (or client address)
	// has pending or running at once (default 4).
	MaxResearches int
	// MaxConns bounds open connections (default 1024); more wait in the
	// listen queue. MaxConnsPerIP bounds one address's (default
	// MaxConns/16, 64), more are closed at once: it takes 16 addresses
	// holding all they may to fill the server, not 4.
	MaxConns, MaxConnsPerIP int
	// WriteTimeout bounds one event write to a stream client (default
	// 10 s): a client that stops reading is disconnected.
	WriteTimeout time.Duration
	// CORSOrigins are the origins allowed to call the API from a browser
	// (none by default).
	CORSOrigins []string
	// Heartbeat is how often an idle event stream gets a keep-alive
	// (default 15 s).
	Heartbeat time.Duration
}

func (o Options) withDefaults() Options {
	if o.Workers == 0 {
		o.Workers = 2
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.MaxUploadBytes <= 0 {
		o.MaxUploadBytes = 64 << 20
	}
	if o.SyncUploadBytes <= 0 {
		o.SyncUploadBytes = 8 << 20
	}
	if o.Rate == 0 {
		o.Rate, o.Burst = 20, max(o.Burst, 40)
	}
	if o.IPRate == 0 {
		o.IPRate, o.IPBurst = 50, max(o.IPBurst, 100)
	}
	if o.Burst <= 0 {
		o.Burst = max(1, int(o.Rate*2))
	}
	if o.IPBurst <= 0 {
		o.IPBurst = max(1, int(o.IPRate*2))
	}
	if o.MaxResearches <= 0 {
		o.MaxResearches = 4
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 1024
	}
	if o.MaxConnsPerIP <= 0 {
		o.MaxConnsPerIP = max(1, o.MaxConns/16)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = 10 * time.Second
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = 15 * time.Second
	}
	return o
}

// Server serves Quarry's HTTP API over one App.
type Server struct {
	app     *app.App
	mcp     *mcp.Server // the MCP tools at /mcp
	opt     Options
	log     *slog.Logger
	store   store.Store
	runner  *research.Runner
	jobs    *jobs.Queue
	metrics *metrics
	limits  *limiter
	handler http.Handler

	// closing is closed when the server begins to shut down: streams end
	// with a "reconnect" close.
	closing   chan struct{}
	closeOnce sync.Once
	// hijacked counts WebSocket handlers, which Shutdown does not wait
	// for.
	hijacked tracker

	mu      sync.Mutex
	owners  map[string]*owned // principal → researches it started that may still run
	ingests ingests           // background uploads
}

// New builds a server over a; nothing runs until Serve.
func New(ctx context.Context, a *app.App, opt Options, logger *slog.Logger) (*Server, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// A server lives long: it searches where --search says (memory on
	// SQLite, the database on PostgreSQL, by default).
	a.SetLongLived(true)
	// It runs uploads: their vector index builds outlast the jobs.
	a.SetBackgroundIndex(true)
	st, err := a.Store(ctx)
	if err != nil {
		return nil, err
	}
	rn, err := a.Runner(ctx)
	if err != nil {
		return nil, err
	}
	s := &Server{app: a, opt: opt.withDefaults(), log: logger, store: st, runner: rn,
		closing: make(chan struct{}), owners: map[string]*owned{}}
	s.metrics = newMetrics(s)
	s.limits = newLimiter(s.opt)
	s.jobs, err = a.Jobs(ctx, app.JobOptions{Workers: max(0, s.opt.Workers), RescueAfter: s.opt.RescueAfter, Runner: rn, Logger: logger,
		OnResearchDone: func(id string, r *research.Research, err error) {
			if r != nil && r.Status != research.StatusProcessing {
				s.metrics.researchDone(r)
			}
		}})
	if err != nil {
		return nil, err
	}
	s.ingests = ingests{st: st, owner: processOwner(), log: logger}
	if err := s.ingests.recover(ctx, s.now()); err != nil {
		return nil, fmt.Errorf("uploads interrupted by a restart: %w", err)
	}
	removeStaleUploads(logger)
	s.handler = s.routes()
	return s, nil
}

// Handler is the API's HTTP handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Loopback reports whether addr (host:port) listens only on a loopback
// address.
func Loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckExposure refuses to serve a non-loopback address when no token
// exists, unless insecure is set.
func (s *Server) CheckExposure(ctx context.Context, addr string) error {
	if Loopback(addr) || s.opt.Insecure {
		return nil
	}
	n, err := s.store.TokenLive(ctx)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("addr: %s is reachable from other machines and no API token exists; create one with `quarry token create NAME --scope research,kb`, listen on 127.0.0.1, or pass --insecure to serve without authentication", addr)
	}
	return nil
}

// Serve serves ln until ctx ends, then shuts down gracefully: it stops
// accepting, closes event streams with a "reconnect" close, lets running
// requests finish (up to grace), and stops its researches, which
// checkpoint and stay queued for the next start.
func (s *Server) Serve(ctx context.Context, ln net.Listener, grace time.Duration) error {
	hs := &http.Server{
		Handler: s.handler,
		// No server-wide ReadTimeout: it would cut event streams. Bodies
		// get their own read deadline (decode, uploads).
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	ln = netutil.LimitListener(newPerIPListener(ln, s.opt.MaxConnsPerIP, s.metrics.rejected.WithLabelValues("connections").Inc), s.opt.MaxConns)
	if err := s.jobs.Start(ctx); err != nil {
		return err
	}
	var wg sync.WaitGroup
	followCtx, stopFollow := context.WithCancel(context.WithoutCancel(ctx))
	wg.Go(func() {
		// A panic is logged with its stack by FollowEvents itself.
		if err := s.app.FollowEvents(followCtx); err != nil && followCtx.Err() == nil && safe.Stack(err) == nil {
			s.log.Warn("follow events", "err", err)
		}
	})
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var err error
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	s.beginClose()
	s.closeMCP()
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if serr := hs.Shutdown(sctx); serr != nil {
		_ = hs.Close()
	}
	if err == nil {
		err = <-served
	}
	if !s.hijacked.closeAndWait(grace) {
		s.log.Warn("shutdown: WebSocket streams still open after the grace period")
	}
	if jerr := s.jobs.Close(); jerr != nil {
		s.log.Warn("shutdown: stop jobs", "err", jerr)
	}
	stopFollow()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// beginClose tells the streams to end.
func (s *Server) beginClose() {
	s.closeOnce.Do(func() { close(s.closing) })
}

// Close stops background work started by requests (tests that use
// Handler without Serve).
func (s *Server) Close() {
	s.beginClose()
	s.closeMCP()
	s.hijacked.closeAndWait(10 * time.Second)
	_ = s.jobs.Close()
}

// tracker counts running work that shutdown waits for; once closed it
// takes no more.
type tracker struct {
	mu     sync.Mutex
	n      int
	closed bool
	zero   chan struct{}
}

func (t *tracker) add() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.n++
	return true
}

func (t *tracker) done() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.n--; t.n == 0 && t.zero != nil {
		close(t.zero)
		t.zero = nil
	}
}

// closeAndWait takes no more work and waits for what runs, at most d
// (d <= 0: for as long as it takes); it reports whether all ended.
func (t *tracker) closeAndWait(d time.Duration) bool {
	t.mu.Lock()
	t.closed = true
	if t.n == 0 {
		t.mu.Unlock()
		return true
	}
	if t.zero == nil {
		t.zero = make(chan struct{})
	}
	ch := t.zero
	t.mu.Unlock()
	if d <= 0 {
		<-ch
		return true
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ch:
		return true
	case <-timer.C:
		return false
	}
}

func (s *Server) now() time.Time {
	if s.runner.Now != nil {
		return s.runner.Now()
	}
	return time.Now().UTC()
}
