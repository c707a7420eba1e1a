package server

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"
)

// sourceView is a source without its text.
type sourceView struct {
	URL          string     `json:"url"`
	Title        string     `json:"title"`
	DocID        string     `json:"doc_id,omitempty"`
	Language     string     `json:"language"`
	IsStale      bool       `json:"is_stale"`
	FailCount    int        `json:"fail_count"`
	CrawledAt    time.Time  `json:"crawled_at"`
	LastModified *time.Time `json:"last_modified,omitempty"`
}

// listSources lists a knowledge base's sources (stale ones first with
// stale=true only), up to limit, with the total.
func (s *Server) listSources(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	staleOnly := false
	if v := r.URL.Query().Get("stale"); v != "" {
		if staleOnly, err = strconv.ParseBool(v); err != nil {
			return badRequest("stale", fmt.Sprintf("must be true or false, got %q", v))
		}
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	srcs, err := s.store.SourceList(r.Context(), k.ID)
	if err != nil {
		return err
	}
	out := struct {
		Items []sourceView `json:"items"`
		Total int          `json:"total"`
	}{Items: []sourceView{}}
	for _, src := range srcs {
		if staleOnly && !src.IsStale {
			continue
		}
		out.Total++
		if len(out.Items) < limit {
			out.Items = append(out.Items, sourceView{URL: src.URL, Title: src.Title, DocID: src.DocID, Language: src.Language, IsStale: src.IsStale, FailCount: src.FailCount, CrawledAt: src.CrawledAt, LastModified: src.LastModified})
		}
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}

// sourceChunks lists a page of one source's chunks (limit, offset), as
// the index holds them, with the source's chunk count.
func (s *Server) sourceChunks(w http.ResponseWriter, r *http.Request) error {
	u := r.URL.Query().Get("source")
	if u == "" {
		return badRequest("source", "is required: the URL of a source of this knowledge base")
	}
	limit, err := intParam(r, "limit", 100, 1, 1000)
	if err != nil {
		return err
	}
	offset, err := intParam(r, "offset", 0, 0, math.MaxInt32)
	if err != nil {
		return err
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	cs, total, err := s.store.SourceChunks(r.Context(), k.ID, u, offset, limit)
	if err != nil {
		return err
	}
	type chunkView struct {
		ID         int64  `json:"id"`
		ChunkIndex int    `json:"chunk_index"`
		Text       string `json:"text"`
		Tokens     int    `json:"tokens"`
		Language   string `json:"language"`
	}
	out := struct {
		Source string      `json:"source"`
		Items  []chunkView `json:"items"`
		Total  int         `json:"total"`
		Offset int         `json:"offset"`
	}{Source: u, Items: []chunkView{}, Total: total, Offset: offset}
	for _, c := range cs {
		out.Items = append(out.Items, chunkView{ID: c.ID, ChunkIndex: c.ChunkIndex, Text: c.Text, Tokens: c.TokenCount, Language: c.Language})
	}
	s.writeJSON(w, http.StatusOK, out)
	return nil
}
