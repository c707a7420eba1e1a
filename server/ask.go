package server

import (
	"net/http"

	"github.com/quarryhq/quarry/qa"
)

// ask answers a question from the path's knowledge base (quarry ask).
func (s *Server) ask(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Question  string `json:"question"`
		SessionID string `json:"session_id"`
		TopK      int    `json:"top_k"`
	}
	if err := s.decode(w, r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	q := qa.Request{Question: req.Question, SessionID: req.SessionID, TopK: req.TopK}
	if err := q.Validate(); err != nil {
		s.writeError(w, r, err)
		return
	}
	asker, err := s.app.Asker(r.Context(), r.PathValue("name")) // an unknown one is a 404
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ans, err := asker.Ask(r.Context(), q)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, ans)
}

func (s *Server) getSession(w http.ResponseWriter, r *http.Request) {
	st, err := s.app.Sessions(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ss, err := st.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, http.StatusOK, ss)
}

func (s *Server) deleteSession(w http.ResponseWriter, r *http.Request) {
	st, err := s.app.Sessions(r.Context())
	if err == nil {
		err = st.Delete(r.Context(), r.PathValue("id"))
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
