package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
)

// kbView is a knowledge base with its counts.
type kbView struct {
	store.KB
	store.KBStats
}

func kbNotFound(name string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return errcode.New(errcode.NotFound, "name", fmt.Sprintf("knowledge base %q does not exist", name))
	}
	return err
}

func (s *Server) view(ctx context.Context, k *store.KB) (kbView, error) {
	st, err := s.store.KBStats(ctx, k.ID)
	return kbView{KB: *k, KBStats: st}, err
}

func (s *Server) createKB(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	svc, err := s.app.KB(r.Context())
	if err != nil {
		return err
	}
	emb, err := s.app.Embedder()
	if err != nil {
		return errcode.Wrap(errcode.Unavailable, err)
	}
	k, err := svc.Create(r.Context(), req.Name, textclean.Line(req.Description), emb)
	if errors.Is(err, store.ErrExists) {
		err = errcode.New(errcode.Conflict, "name", fmt.Sprintf("knowledge base %q exists", req.Name))
	}
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/knowledge-bases/"+k.Name)
	s.writeJSON(w, http.StatusCreated, kbView{KB: *k})
	return nil
}

func (s *Server) listKBs(w http.ResponseWriter, r *http.Request) error {
	ks, err := s.store.KBList(r.Context())
	if err != nil {
		return err
	}
	out := page[kbView]{Items: []kbView{}}
	for i := range ks {
		v, err := s.view(r.Context(), &ks[i])
		if err != nil {
			return err
		}
		out.Items = append(out.Items, v)
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// kbOf finds the path's knowledge base.
func (s *Server) kbOf(r *http.Request) (*kb.Service, *store.KB, error) {
	name := r.PathValue("name")
	svc, err := s.app.KB(r.Context())
	if err != nil {
		return nil, nil, err
	}
	k, err := svc.Get(r.Context(), name)
	if err != nil {
		return nil, nil, kbNotFound(name, err)
	}
	return svc, k, nil
}

// kbEmbedder finds the path's knowledge base and the embedder it was
// built with.
func (s *Server) kbEmbedder(r *http.Request) (*kb.Service, *store.KB, embed.Embedder, error) {
	svc, k, err := s.kbOf(r)
	if err != nil {
		return nil, nil, nil, err
	}
	emb, err := s.app.EmbedderFor(k)
	return svc, k, emb, err
}

func (s *Server) getKB(w http.ResponseWriter, r *http.Request) error {
	_, k, err := s.kbOf(r)
	if err == nil {
		var v kbView
		if v, err = s.view(r.Context(), k); err == nil {
			s.writeJSON(w, http.StatusOK, v)
			return nil
		}
	}
	return err
}

func (s *Server) deleteKB(w http.ResponseWriter, r *http.Request) error {
	svc, k, err := s.kbOf(r)
	if err == nil {
		err = svc.Delete(r.Context(), k.Name)
	}
	if err != nil {
		return kbNotFound(r.PathValue("name"), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
