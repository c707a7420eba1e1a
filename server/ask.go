package server

import (
	"fmt"
	"net/http"

	"github.com/quarryhq/quarry/qa"
)

// ask answers a question from the path's knowledge base (quarry ask).
func (s *Server) ask(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Question  string `json:"question"`
		SessionID string `json:"session_id"`
		TopK      *int   `json:"top_k"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	topK, err := topKOf(req.TopK)
	if err != nil {
		return err
	}
	q := qa.Request{Question: req.Question, SessionID: req.SessionID, TopK: topK}
	if err := q.Validate(); err != nil {
		return err
	}
	asker, err := s.app.Asker(r.Context(), r.PathValue("name")) // an unknown one is a 404
	if err != nil {
		return err
	}
	ans, err := asker.Ask(r.Context(), q)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, ans)
	return nil
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) error {
	st, err := s.app.Sessions(r.Context())
	if err != nil {
		return err
	}
	ss, err := st.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, ss)
	return nil
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) error {
	st, err := s.app.Sessions(r.Context())
	if err == nil {
		err = st.Delete(r.Context(), r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// topKOf is a request's top_k: 0 (the default, 5) when it is not given;
// one given must be between 1 and 20, 0 included, rather than read as
// the default.
func topKOf(v *int) (int, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 1 || *v > qa.MaxTopK {
		return 0, invalid("top_k", fmt.Sprintf("must be between 1 and %d, got %d", qa.MaxTopK, *v))
	}
	return *v, nil
}
