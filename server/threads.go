package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

const maxThreadTitle = 120

func (s *Server) createThread(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Title string `json:"title"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	title := textclean.Line(req.Title)
	if n := utf8.RuneCountInString(title); n == 0 || n > maxThreadTitle {
		return invalid("title", fmt.Sprintf("must be 1-%d characters, got %d", maxThreadTitle, n))
	}
	now := s.now()
	t := store.Thread{ID: uuid.NewString(), Title: title, Status: research.ThreadActive, CreatedAt: now, LastActivity: now}
	if err := s.store.ThreadCreate(r.Context(), t); err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/threads/"+t.ID)
	s.writeJSON(w, http.StatusCreated, research.ThreadView{Thread: t, Queries: []research.ThreadQuery{}})
	return nil
}

func (s *Server) listThreads(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", 50, 1, 500)
	if err != nil {
		return err
	}
	ts, err := s.runner.Threads(r.Context(), limit)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, page[store.Thread]{Items: ts})
	return nil
}

func threadNotFound(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errcode.New(errcode.NotFound, "id", fmt.Sprintf("thread %s does not exist", id))
	}
	return err
}

func (s *Server) getThread(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	v, err := s.runner.Thread(r.Context(), id)
	if err != nil {
		return threadNotFound(id, err)
	}
	if err := s.mayReadThread(r.Context(), v); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, v)
	return nil
}

// mayReadThread refuses a token without the kb scope a thread holding a
// research over a knowledge base: its answers are those researches'
// summaries, which quote the knowledge base.
func (s *Server) mayReadThread(ctx context.Context, v *research.ThreadView) error {
	if principalOf(ctx).can(ScopeKB) {
		return nil
	}
	for _, q := range v.Queries {
		if _, err := s.load(ctx, q.ResearchID); err != nil {
			return err
		}
	}
	return nil
}

// askThread researches a follow-up in the thread: the body is a research
// request; without sources the thread's last research's are used.
func (s *Server) askThread(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id := r.PathValue("id")
	var req researchRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.ThreadID != "" && req.ThreadID != id {
		return invalid("thread_id", "must be empty or the thread of the path")
	}
	req.ThreadID = id
	if _, err := s.store.ThreadGet(ctx, id); err != nil {
		return threadNotFound(id, err)
	}
	if len(req.Sources) == 0 {
		rs, err := s.store.ThreadResearches(ctx, id)
		if err != nil {
			return err
		}
		if len(rs) > 0 {
			prev, err := research.Load(ctx, s.store, rs[len(rs)-1].ID)
			if err != nil {
				return err
			}
			req.Sources = prev.Options.Sources
		}
	}
	return s.startResearch(w, r, req)
}

func (s *Server) closeThread(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	before, err := s.runner.Thread(r.Context(), id)
	if err != nil {
		return threadNotFound(id, err)
	}
	if err := s.mayReadThread(r.Context(), before); err != nil {
		return err
	}
	if err := s.runner.CloseThread(r.Context(), id); err != nil {
		return threadNotFound(id, err)
	}
	v, err := s.runner.Thread(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, v)
	return nil
}
