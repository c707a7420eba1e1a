package server

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/jsonx"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/research/pdf"
	"github.com/quarryhq/quarry/search"
	"github.com/quarryhq/quarry/store"
)

// researchRequest is the body that starts a research; its fields are
// named like the CLI's flags.
type researchRequest struct {
	Question   string   `json:"question"`
	Sources    []string `json:"sources"`
	Level      string   `json:"level"`
	Breadth    *int     `json:"breadth"`
	Depth      *int     `json:"depth"`
	MaxTokens  int      `json:"max_tokens"`
	Timeout    string   `json:"timeout"`
	Confidence float64  `json:"confidence"`
	ThreadID   string   `json:"thread_id"`
}

// created is the answer to a research started: its id and where to
// follow it.
type created struct {
	ID       string            `json:"id"`
	ThreadID string            `json:"thread_id"`
	Status   string            `json:"status"`
	Links    map[string]string `json:"links"`
}

func researchLinks(id string) map[string]string {
	base := "/v1/researches/" + id
	return map[string]string{"self": base, "events": base + "/events", "report": base + "/report", "cancel": base + "/cancel", "check": base + "/check"}
}

// options turns a request into validated research options.
func (s *Server) options(ctx context.Context, req researchRequest) (research.Request, error) {
	opts := research.Options{Level: req.Level, MaxTokens: req.MaxTokens, Confidence: req.Confidence, Thread: req.ThreadID}
	if req.Breadth != nil {
		if *req.Breadth < 1 || *req.Breadth > research.MaxBreadth {
			return research.Request{}, invalid("breadth", fmt.Sprintf("must be between 1 and %d, got %d", research.MaxBreadth, *req.Breadth))
		}
		opts.Breadth = *req.Breadth
	}
	if req.Depth != nil {
		opts.Depth, opts.DepthSet = *req.Depth, true
	}
	if opts.Level != "" && (req.Breadth != nil || req.Depth != nil) {
		return research.Request{}, invalid("level", "give either level or breadth/depth, not both")
	}
	if req.Timeout != "" {
		d, err := time.ParseDuration(req.Timeout)
		if err != nil {
			return research.Request{}, invalid("timeout", fmt.Sprintf("must be a duration such as \"90s\" or \"5m\", got %q", req.Timeout))
		}
		opts.Timeout = d
	}
	parsed, err := search.ParseSpecs(strings.Join(req.Sources, ","))
	if err != nil {
		return research.Request{}, invalid("sources", strings.TrimPrefix(err.Error(), "source: "))
	}
	for _, p := range parsed {
		opts.Sources = append(opts.Sources, p.String())
	}
	rq, err := research.NewRequest(req.Question, opts)
	if err != nil {
		return research.Request{}, err
	}
	// Open the sources now, so a missing knowledge base or an
	// unconfigured search API is this request's error, not the run's.
	if _, err := s.app.OpenSources(ctx, rq.Options().Sources); err != nil {
		if errcode.Of(err) == errcode.Invalid {
			return research.Request{}, invalid("sources", err.Error())
		}
		return research.Request{}, err
	}
	return rq, nil
}

func (s *Server) createResearch(w http.ResponseWriter, r *http.Request) error {
	var req researchRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	return s.startResearch(w, r, req)
}

// startResearch creates a research for the caller and queues it.
func (s *Server) startResearch(w http.ResponseWriter, r *http.Request, req researchRequest) error {
	ctx := r.Context()
	rq, err := s.options(ctx, req)
	if err != nil {
		return err
	}
	opts := rq.Options()
	p := principalOf(ctx)
	if opts.Thread != "" {
		// A follow-up is given the thread's earlier answers: asking in a
		// thread takes what reading it does.
		v, err := s.runner.Thread(ctx, opts.Thread)
		if err != nil {
			return threadNotFound(opts.Thread, err)
		}
		if err := s.mayReadThread(ctx, v); err != nil {
			return err
		}
	}
	for _, src := range opts.Sources {
		// A research quotes its knowledge bases: reading them takes the
		// kb scope too.
		if strings.HasPrefix(src, "kb:") && !p.can(ScopeKB) {
			return &httpError{status: http.StatusForbidden, code: errcode.Forbidden, field: "sources", msg: fmt.Sprintf("%s: the token lacks the \"kb\" scope that reading a knowledge base takes", src)}
		}
	}
	if err := s.admit(ctx, p); err != nil {
		return err
	}
	tracked := false
	defer func() {
		if !tracked {
			s.unreserve(p) // a failure or a recovered panic gives the place back
		}
	}()
	res, err := s.runner.CreateRequest(ctx, rq)
	if err != nil {
		return err
	}
	s.track(p, res.ID)
	tracked = true
	if err := s.jobs.EnqueueResearch(ctx, res.ID); err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/researches/"+res.ID)
	s.writeJSON(w, http.StatusAccepted, created{ID: res.ID, ThreadID: res.ThreadID, Status: res.Status, Links: researchLinks(res.ID)})
	return nil
}

// owned is what one principal has started: researches that may still run,
// and places held by requests creating one right now.
type owned struct {
	ids      map[string]bool
	reserved int
}

// ownedBy returns p's record, made when missing. s.mu is held.
func (s *Server) ownedBy(key string) *owned {
	o := s.owners[key]
	if o == nil {
		o = &owned{ids: map[string]bool{}}
		s.owners[key] = o
	}
	return o
}

// tidy forgets an empty record. s.mu is held.
func (s *Server) tidy(key string) {
	if o := s.owners[key]; o != nil && len(o.ids) == 0 && o.reserved <= 0 {
		delete(s.owners, key)
	}
}

// admit holds a place for one more research of p, or refuses when p has
// MaxResearches pending or running (or being created). Researches that
// have ended since are forgotten first. A held place is given back by
// track (it became that research) or unreserve.
func (s *Server) admit(ctx context.Context, p principal) error {
	s.mu.Lock()
	var ids []string
	if o := s.owners[p.key]; o != nil {
		for id := range o.ids {
			ids = append(ids, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ids {
		rec, err := s.store.ResearchGet(ctx, id)
		if err != nil || rec.Status != research.StatusPending && rec.Status != research.StatusProcessing {
			s.forget(p, id)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.ownedBy(p.key)
	if n := len(o.ids) + o.reserved; n >= s.opt.MaxResearches {
		s.tidy(p.key)
		return &httpError{status: http.StatusTooManyRequests, code: errcode.RateLimited, field: "question",
			msg: fmt.Sprintf("%d researches of this token are pending or running (the limit); wait for one to end or cancel one", n)}
	}
	o.reserved++
	return nil
}

// track turns a held place into research id.
func (s *Server) track(p principal, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.ownedBy(p.key)
	o.reserved = max(0, o.reserved-1)
	o.ids[id] = true
}

// unreserve gives a held place back.
func (s *Server) unreserve(p principal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.ownedBy(p.key)
	o.reserved = max(0, o.reserved-1)
	s.tidy(p.key)
}

// forget drops a research that has ended.
func (s *Server) forget(p principal, id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o := s.owners[p.key]; o != nil {
		delete(o.ids, id)
	}
	s.tidy(p.key)
}

// load reads a research for the caller. A research over a knowledge base
// quotes it in its report and events, so reading, cancelling or resuming
// one takes the kb scope as starting it did.
func (s *Server) load(ctx context.Context, id string) (*research.Research, error) {
	r, err := research.Load(ctx, s.store, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "id", fmt.Sprintf("research %s does not exist", id))
	}
	if err != nil {
		return nil, err
	}
	if p := principalOf(ctx); !p.can(ScopeKB) {
		for _, src := range r.Options.Sources {
			if strings.HasPrefix(src, "kb:") {
				return nil, &httpError{status: http.StatusForbidden, code: errcode.Forbidden, field: "id",
					msg: fmt.Sprintf("research %s reads knowledge base %s: the token lacks the \"kb\" scope that takes", id, strings.TrimPrefix(src, "kb:"))}
			}
		}
	}
	return r, nil
}

func (s *Server) getResearch(w http.ResponseWriter, r *http.Request) error {
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
	case "pdf":
		res, err := s.withReport(r)
		if err != nil {
			return err
		}
		return s.writePDF(w, r, res)
	default:
		return badRequest("format", fmt.Sprintf("must be json or pdf, got %q", f))
	}
	res, err := s.load(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, research.Public(res))
	return nil
}

// page is a list with the cursor of the next page ("" on the last).
type page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"next_cursor,omitempty"`
}

func encodeCursor(c store.ResearchCursor) string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + c.ID))
}

func decodeCursor(v string) (*store.ResearchCursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err == nil {
		at, id, ok := strings.Cut(string(raw), "|")
		if t, terr := time.Parse(time.RFC3339Nano, at); ok && terr == nil && id != "" {
			return &store.ResearchCursor{CreatedAt: t, ID: id}, nil
		}
	}
	return nil, badRequest("cursor", "is not a cursor this API returned")
}

// intParam reads an integer query parameter within [lo, hi].
func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, badRequest(name, fmt.Sprintf("must be an integer between %d and %d, got %q", lo, hi, v))
	}
	return n, nil
}

var researchStatuses = []string{research.StatusPending, research.StatusProcessing, research.StatusCompleted, research.StatusFailed, research.StatusCanceled}

func (s *Server) listResearches(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := intParam(r, "limit", 20, 1, 200)
	if err != nil {
		return err
	}
	f := store.ResearchFilter{Limit: limit + 1, Status: q.Get("status"), ThreadID: q.Get("thread_id")}
	if f.Status != "" && !slices.Contains(researchStatuses, f.Status) {
		return badRequest("status", "must be one of "+strings.Join(researchStatuses, ", "))
	}
	if c := q.Get("cursor"); c != "" {
		if f.Before, err = decodeCursor(c); err != nil {
			return err
		}
	}
	rs, err := s.store.ResearchPage(r.Context(), f)
	if err != nil {
		return err
	}
	out := page[store.Research]{Items: rs}
	if len(rs) > limit {
		out.Items = rs[:limit]
		last := rs[limit-1]
		out.NextCursor = encodeCursor(store.ResearchCursor{CreatedAt: last.CreatedAt, ID: last.ID})
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *Server) cancelResearch(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	if _, err := s.load(r.Context(), id); err != nil {
		return err
	}
	if err := s.runner.Cancel(r.Context(), id); err != nil {
		return err
	}
	res, err := s.load(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusAccepted, created{ID: id, ThreadID: res.ThreadID, Status: res.Status, Links: researchLinks(id)})
	return nil
}

// resumeResearch continues a failed or canceled research from its last
// checkpoint, in the background.
func (s *Server) resumeResearch(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	res, err := s.load(ctx, id)
	if err != nil {
		return err
	}
	switch res.Status {
	case research.StatusCompleted:
		return errcode.New(errcode.Conflict, "id", fmt.Sprintf("research %s is completed; there is nothing to resume", id))
	case research.StatusPending, research.StatusProcessing:
		return errcode.New(errcode.Conflict, "id", fmt.Sprintf("research %s is %s; it runs without a resume", id, res.Status))
	}
	if name := s.runner.Engine.Name(); res.Engine != name {
		return errcode.New(errcode.Conflict, "id", fmt.Sprintf("research %s was started with %s and this server runs %s; resume it where that model is configured", id, res.Engine, name))
	}
	p := principalOf(ctx)
	if err := s.admit(ctx, p); err != nil {
		return err
	}
	tracked := false
	defer func() {
		if !tracked {
			s.unreserve(p) // a failure or a recovered panic gives the place back
		}
	}()
	// Back to the queue, for this server's workers or any quarry worker.
	if _, err := s.runner.Requeue(ctx, id); err != nil {
		return err
	}
	s.track(p, id)
	tracked = true
	if err := s.jobs.EnqueueResearch(ctx, id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusAccepted, created{ID: id, ThreadID: res.ThreadID, Status: research.StatusProcessing, Links: researchLinks(id)})
	return nil
}

// withReport is the path's research, which must have its report.
func (s *Server) withReport(r *http.Request) (*research.Research, error) {
	res, err := s.load(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if res.Report == nil {
		return nil, errcode.New(errcode.Conflict, "id", fmt.Sprintf("research %s has no report yet (status %s, stage %s)", res.ID, res.Status, res.Stage))
	}
	return res, nil
}

func (s *Server) getReport(w http.ResponseWriter, r *http.Request) error {
	format := r.URL.Query().Get("format")
	switch format {
	case "", "markdown", "md", "json", "html", "pdf":
	default:
		return badRequest("format", fmt.Sprintf("must be markdown, json, html or pdf, got %q", format))
	}
	res, err := s.withReport(r)
	if err != nil {
		return err
	}
	switch format {
	case "pdf":
		return s.writePDF(w, r, res)
	case "json":
		rep := *res.Report
		jsonx.EmptySlices(&rep)
		s.writeJSON(w, http.StatusOK, rep)
	case "html":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
		_, _ = io.WriteString(w, research.HTML(res.Report, res.Sources))
	default:
		w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
		_, _ = io.WriteString(w, res.Report.Markdown)
	}
	return nil
}

// writePDF prints a research's report with Chromium (research/pdf).
func (s *Server) writePDF(w http.ResponseWriter, r *http.Request, res *research.Research) error {
	path, err := pdf.Chromium("")
	if err != nil {
		return err
	}
	data, err := pdf.Render(r.Context(), path, res.Report, res.Sources)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fmt.Sprintf("inline; filename=\"research-%s.pdf\"", res.ID))
	_, _ = w.Write(data)
	return nil
}

func (s *Server) getCheck(w http.ResponseWriter, r *http.Request) error {
	res, err := s.withReport(r)
	if err != nil {
		return err
	}
	var ck research.Checks
	if res.Checks != nil {
		ck = *res.Checks // stored when the report was written
	} else {
		ck = research.Check(res.Report, res.Sources)
	}
	jsonx.EmptySlices(&ck)
	s.writeJSON(w, http.StatusOK, ck)
	return nil
}
