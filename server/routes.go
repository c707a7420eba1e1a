package server

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/web"
)

// routes registers every route of the API. A path asked with a method it
// does not have is a 405 and an unknown path a 404, both in the one error
// shape. It is the API's route table, read top to bottom against the
// OpenAPI document, so it stays one function.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	methods := map[string][]string{}
	var order []string
	// route registers a plain handler; handle one that returns its error
	// (written by s.errs).
	route := func(method, path, scope string, h http.HandlerFunc) {
		if _, ok := methods[path]; !ok {
			order = append(order, path)
		}
		methods[path] = append(methods[path], method)
		// A NUL in the path or query is refused after the token is
		// checked: a caller without one learns nothing of the request.
		hh := s.noNUL(h)
		if scope != "-" {
			hh = s.guard(scope, hh.ServeHTTP)
		}
		mux.Handle(method+" "+path, s.metrics.instrument(method+" "+path, hh))
	}
	handle := func(method, path, scope string, h func(http.ResponseWriter, *http.Request) error) {
		route(method, path, scope, s.errs(h))
	}

	handle("GET", "/healthz", "-", s.healthz)
	handle("GET", "/readyz", "-", s.readyz)
	handle("GET", "/openapi.json", "-", s.openapi)
	route("GET", "/metrics", "", s.metrics.handler.ServeHTTP)
	ui := web.Handler().ServeHTTP // static files: no data, no token
	route("GET", "/{$}", "-", ui)
	route("GET", "/ui/", "-", ui)

	// The Model Context Protocol (streamable HTTP): any valid token gets
	// in; each tool checks the scope it takes.
	mcpH := s.mcpHandler()
	for _, m := range []string{"POST", "GET", "DELETE"} {
		route(m, "/mcp", "", mcpH)
	}

	handle("POST", "/v1/researches", ScopeResearch, s.createResearch)
	handle("GET", "/v1/researches", ScopeResearch, s.listResearches)
	handle("GET", "/v1/researches/{id}", ScopeResearch, s.getResearch)
	handle("POST", "/v1/researches/{id}/cancel", ScopeResearch, s.cancelResearch)
	handle("POST", "/v1/researches/{id}/resume", ScopeResearch, s.resumeResearch)
	handle("GET", "/v1/researches/{id}/report", ScopeResearch, s.getReport)
	handle("GET", "/v1/researches/{id}/check", ScopeResearch, s.getCheck)
	handle("GET", "/v1/researches/{id}/events", ScopeResearch, s.events)

	handle("POST", "/v1/threads", ScopeResearch, s.createThread)
	handle("GET", "/v1/threads", ScopeResearch, s.listThreads)
	handle("GET", "/v1/threads/{id}", ScopeResearch, s.getThread)
	handle("POST", "/v1/threads/{id}/researches", ScopeResearch, s.askThread)
	handle("POST", "/v1/threads/{id}/close", ScopeResearch, s.closeThread)

	handle("POST", "/v1/knowledge-bases", ScopeKB, s.createKB)
	handle("GET", "/v1/knowledge-bases", ScopeKB, s.listKBs)
	handle("GET", "/v1/knowledge-bases/{name}", ScopeKB, s.getKB)
	handle("DELETE", "/v1/knowledge-bases/{name}", ScopeKB, s.deleteKB)
	handle("POST", "/v1/knowledge-bases/{name}/documents", ScopeKB, s.uploadDocuments)
	handle("GET", "/v1/knowledge-bases/{name}/ingests/{id}", ScopeKB, s.getIngest)
	handle("GET", "/v1/knowledge-bases/{name}/search", ScopeKB, s.searchKB)
	handle("GET", "/v1/knowledge-bases/{name}/sources", ScopeKB, s.listSources)
	handle("GET", "/v1/knowledge-bases/{name}/chunks", ScopeKB, s.sourceChunks)
	handle("POST", "/v1/knowledge-bases/{name}/crawls", ScopeKB, s.startCrawl)
	handle("GET", "/v1/knowledge-bases/{name}/crawls", ScopeKB, s.crawlLogs)
	handle("PUT", "/v1/knowledge-bases/{name}/schedule", ScopeKB, s.putSchedule)
	handle("GET", "/v1/knowledge-bases/{name}/schedule", ScopeKB, s.getSchedule)
	handle("DELETE", "/v1/knowledge-bases/{name}/schedule", ScopeKB, s.deleteSchedule)
	handle("POST", "/v1/knowledge-bases/{name}/ask", ScopeKB, s.ask)
	handle("POST", "/v1/sessions", ScopeKB, s.createSession)
	handle("GET", "/v1/sessions/{id}", ScopeKB, s.getSession)
	handle("DELETE", "/v1/sessions/{id}", ScopeKB, s.deleteSession)

	handle("POST", "/v1/pipelines", ScopeKB, s.createPipeline)
	handle("GET", "/v1/pipelines", ScopeKB, s.listPipelines)
	handle("GET", "/v1/pipelines/{id}", ScopeKB, s.getPipeline)
	handle("PATCH", "/v1/pipelines/{id}", ScopeKB, s.updatePipeline)
	handle("DELETE", "/v1/pipelines/{id}", ScopeKB, s.deletePipeline)
	handle("POST", "/v1/pipelines/{id}/retrieve", ScopeKB, s.retrieve)
	handle("POST", "/v1/pipelines/{id}/generate", ScopeKB, s.generate)
	handle("POST", "/v1/datasets", ScopeKB, s.createDataset)
	handle("GET", "/v1/datasets", ScopeKB, s.listDatasets)
	handle("GET", "/v1/datasets/{id}", ScopeKB, s.getDataset)
	handle("DELETE", "/v1/datasets/{id}", ScopeKB, s.deleteDataset)
	handle("POST", "/v1/evaluations", ScopeKB, s.createEvaluation)
	handle("GET", "/v1/evaluations", ScopeKB, s.listEvaluations)
	handle("GET", "/v1/evaluations/{id}", ScopeKB, s.getEvaluation)

	for _, path := range order {
		allowed := methods[path]
		if slices.Contains(allowed, "GET") {
			allowed = append(allowed, "HEAD")
		}
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			s.writeError(w, r, &httpError{status: http.StatusMethodNotAllowed, code: errcode.Invalid, field: "method",
				msg: r.Method + " is not allowed here; use " + strings.Join(allowed, " or ")})
		})
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, &httpError{status: http.StatusNotFound, code: errcode.NotFound, field: "path", msg: "no such route: " + r.URL.Path + " (see /openapi.json)"})
	})
	return s.recoverPanics(s.cors(mux))
}

// noNUL refuses a request whose path or query holds a NUL character, which
// no id, name or filter holds and PostgreSQL cannot store or compare,
// naming the part of the request that does. It wraps each route's handler
// inside its token check; a path no route has is a 404 however it is
// written.
func (s *Server) noNUL(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.ContainsRune(r.URL.Path, 0) {
			s.writeError(w, r, badRequest("path", "must not contain a NUL character"))
			return
		}
		if strings.Contains(r.URL.RawQuery, "%00") || strings.ContainsRune(r.URL.RawQuery, 0) {
			for name, values := range r.URL.Query() {
				for _, v := range values {
					if strings.ContainsRune(name+v, 0) {
						s.writeError(w, r, badRequest(name, "must not contain a NUL character"))
						return
					}
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// recoverPanics turns a handler's panic into that request's 500, with the
// stack in the log: one request never takes the server down.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := safe.Do(func() { next.ServeHTTP(w, r) })
		if err == nil {
			return
		}
		if errors.Is(err, http.ErrAbortHandler) {
			panic(http.ErrAbortHandler) // net/http's own way to abort a response
		}
		s.log.Error("request panicked", "method", r.Method, "path", r.URL.Path, "err", err, "stack", string(safe.Stack(err)))
		s.writeError(w, r, errcode.Wrap(errcode.Internal, err))
	})
}

// cors answers browsers from the configured origins only; with none
// configured no CORS header is ever sent.
func (s *Server) cors(next http.Handler) http.Handler {
	if len(s.opt.CORSOrigins) == 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin != "" && slices.Contains(s.opt.CORSOrigins, origin) {
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			h.Add("Vary", "Origin")
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Set("Access-Control-Allow-Methods", "GET, POST, PATCH, DELETE")
				h.Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Last-Event-ID")
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz checks that the store answers.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) error {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if _, err := s.store.TokenLive(ctx); err != nil {
		s.log.Warn("readyz: store", "err", err)
		s.writeJSON(w, http.StatusServiceUnavailable, map[string]apiError{"error": {Code: string(errcode.Unavailable), Message: "the store does not answer"}})
		return nil
	}
	if err := s.app.PingRedis(ctx); err != nil {
		s.log.Warn("readyz: redis", "err", err)
		s.writeJSON(w, http.StatusServiceUnavailable, map[string]apiError{"error": {Code: string(errcode.Unavailable), Message: "redis (Q&A sessions) does not answer"}})
		return nil
	}
	s.writeJSON(w, http.StatusOK, map[string]string{"status": "ready"})
	return nil
}
