package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
)

func (s *Server) searchKB(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	k, err := intParam(r, "k", 5, 1, 1000)
	if err != nil {
		return err
	}
	query := kb.Query{Text: q.Get("q"), K: k, Mode: q.Get("mode"), Language: q.Get("lang"), Source: q.Get("source"), Fusion: q.Get("fusion")}
	for name, dst := range map[string]*float64{"bm25_weight": &query.BM25Weight, "vector_weight": &query.VectorWeight} {
		if v := q.Get(name); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return badRequest(name, fmt.Sprintf("must be a number, got %q", v))
			}
			// Its range (and Inf, NaN) is the query's rule: 422 naming it.
			*dst = f
		}
	}
	if v := q.Get("include_stale"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return badRequest("include_stale", fmt.Sprintf("must be true or false, got %q", v))
		}
		query.IncludeStale = b
	}
	if err := query.Validate(); err != nil {
		var ve *store.ValidationError
		if errors.As(err, &ve) && ve.Field == "query" {
			err = invalid("q", ve.Rule)
		}
		return err
	}
	svc, kbase, emb, err := s.kbEmbedder(r)
	if err != nil {
		return err
	}
	found, err := svc.SearchNoted(r.Context(), kbase.Name, emb, query)
	if err != nil {
		return err
	}
	if found.Results == nil {
		found.Results = []kb.Result{}
	}
	s.writeJSON(w, http.StatusOK, searchPage{Items: found.Results, Notes: found.Notes})
	return nil
}

// searchPage is a search's results and, when they were found otherwise
// than asked (a hybrid search ranked by terms alone while the vector
// index is built), notes saying how.
type searchPage struct {
	Items []kb.Result `json:"items"`
	Notes []string    `json:"notes,omitempty"`
}
