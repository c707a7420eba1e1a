package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// errServerClosing ends streams when the server shuts down.
var errServerClosing = errors.New("server shutting down")

// events streams a research's events after a sequence number — the query's
// after, else the Last-Event-ID header — over a WebSocket when the request
// asks for one, else as Server-Sent Events. Each event is sent once, in
// order; the stream ends when the research ends. A client that reconnects
// with the last sequence number it saw misses nothing and gets nothing
// twice.
func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	after, err := afterParam(r)
	if err != nil {
		return err
	}
	rec, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	last, err := s.store.ResearchLastSeq(ctx, id)
	if err != nil {
		return err
	}
	if after > last {
		return invalid("after", fmt.Sprintf("research %s has %d events so far; after must be at most that", id, last))
	}
	if strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		s.websocketEvents(w, r, id, after)
		return nil
	}
	switch rec.Status {
	case research.StatusCompleted, research.StatusFailed, research.StatusCanceled:
		if after == last {
			// Nothing more will come: 204 tells an EventSource to stop
			// reconnecting.
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
	s.sseEvents(w, r, id, after)
	return nil
}

func afterParam(r *http.Request) (int64, error) {
	v, field := r.URL.Query().Get("after"), "after"
	if v == "" {
		v, field = r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, badRequest(field, fmt.Sprintf("must be a sequence number (an integer, 0 or more), got %q", v))
	}
	return n, nil
}

// streamContext ends when the request does or the server begins to shut
// down (cause errServerClosing).
func (s *Server) streamContext(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-s.closing:
			cancel(errServerClosing)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

func (s *Server) streamOpened(transport string) func() {
	g := s.metrics.streams.WithLabelValues(transport)
	g.Inc()
	return g.Dec
}

// sseEvents writes the events as Server-Sent Events: "id:" is the
// sequence number, "event:" the type, "data:" the event as JSON. The
// stream closes with an "end" event when the research ends, and with a
// "reconnect" event when the server shuts down (browsers reconnect with
// Last-Event-ID by themselves).
func (s *Server) sseEvents(w http.ResponseWriter, r *http.Request, id string, after int64) {
	defer s.streamOpened("sse")()
	sctx, done := s.streamContext(r.Context())
	defer done()
	// A failed write (the client is gone or stopped reading) ends the
	// stream, also between events.
	ctx, broken := context.WithCancelCause(sctx)
	defer broken(nil)
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }() // the connection may serve another request
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	var mu sync.Mutex
	write := func(text string) error {
		mu.Lock()
		defer mu.Unlock()
		_ = rc.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
		_, err := io.WriteString(w, text)
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			broken(err)
		}
		return err
	}
	if write("retry: 2000\n\n") != nil {
		return
	}
	defer heartbeat(ctx, s.opt.Heartbeat, s.log, func(context.Context) { _ = write(": keep-alive\n\n") })()
	last := after
	err := s.app.Watch(ctx, id, after, func(e store.ResearchEvent) error {
		if err := write(fmt.Sprintf("id: %d\nevent: %s\ndata: %s\n\n", e.Seq, e.Type, e.Data)); err != nil {
			return err
		}
		last = e.Seq
		return nil
	})
	switch {
	case err == nil:
		_ = write(fmt.Sprintf("event: end\ndata: {\"last_seq\":%d}\n\n", last))
	case errors.Is(context.Cause(sctx), errServerClosing):
		_ = write(fmt.Sprintf("event: reconnect\ndata: {\"after\":%d,\"reason\":\"server restarting\"}\n\n", last))
	default:
		s.log.Debug("sse stream ended", "research", id, "err", err)
	}
	broken(nil)
	done()
}

// websocketEvents sends each event as one text message (the event's JSON,
// with its seq). It closes with 1000 when the research ends, 1012 (service
// restart: reconnect with after=the last seq) when the server shuts down,
// and drops a client that does not read within the write timeout. Clients
// send nothing; a message from one closes the connection.
func (s *Server) websocketEvents(w http.ResponseWriter, r *http.Request, id string, after int64) {
	if !s.hijacked.add() {
		s.writeError(w, r, errcode.New(errcode.Unavailable, "", "the server is shutting down; reconnect"))
		return
	}
	defer s.hijacked.done()
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: originHosts(s.opt.CORSOrigins)})
	if err != nil {
		s.log.Debug("websocket accept", "err", err)
		return
	}
	defer c.CloseNow()
	defer s.streamOpened("websocket")()
	c.SetReadLimit(4096)
	ctx, done := s.streamContext(c.CloseRead(r.Context()))
	defer done()
	defer heartbeat(ctx, s.opt.Heartbeat, s.log, func(ctx context.Context) {
		pctx, cancel := context.WithTimeout(ctx, s.opt.WriteTimeout)
		defer cancel()
		_ = c.Ping(pctx)
	})()
	last := after
	err = s.app.Watch(ctx, id, after, func(e store.ResearchEvent) error {
		wctx, cancel := context.WithTimeout(ctx, s.opt.WriteTimeout)
		defer cancel()
		if err := c.Write(wctx, websocket.MessageText, e.Data); err != nil {
			return err
		}
		last = e.Seq
		return nil
	})
	done()
	switch {
	case err == nil:
		_ = c.Close(websocket.StatusNormalClosure, "research ended")
	case errors.Is(context.Cause(ctx), errServerClosing):
		_ = c.Close(websocket.StatusServiceRestart, fmt.Sprintf("server restarting; reconnect with after=%d", last))
	default:
		s.log.Debug("websocket stream ended", "research", id, "err", err)
	}
}

// heartbeat calls beat every interval until ctx ends or the returned stop
// is called; stop returns once beat is no longer running. A stream defers
// stop: the heartbeat ends with the handler however it ends (a panic
// included), not only when the stream's context does — a deferred wait
// alone would wait for ever on a beat nothing had stopped.
func heartbeat(ctx context.Context, every time.Duration, log *slog.Logger, beat func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := safe.Do(func() { beat(ctx) }); err != nil {
					// A beat that panics beats no more; the stream goes on.
					log.Error("stream heartbeat panicked", "err", err, "stack", string(safe.Stack(err)))
					return
				}
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// originHosts turns allowed origins (https://app.example.com) into the
// host patterns the WebSocket origin check takes.
func originHosts(origins []string) []string {
	var out []string
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			out = append(out, u.Host)
		}
	}
	return out
}
