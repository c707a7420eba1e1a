package server

import (
	"net/http"

	"github.com/quarryhq/quarry/qa"
)

// ask answers a question from the path's knowledge base (quarry ask).
func (s *Server) ask(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Question  string `json:"question"`
		SessionID string `json:"session_id"`
		TopK      int    `json:"top_k"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	q := qa.Request{Question: req.Question, SessionID: req.SessionID, TopK: req.TopK}
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
