package server

import (
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
)

// ingest is a large upload being ingested in the background.
type ingest struct {
	ID         string            `json:"id"`
	KB         string            `json:"knowledge_base"`
	Status     string            `json:"status"` // running, completed or failed
	Files      int               `json:"files"`
	Bytes      int64             `json:"bytes"`
	Report     *kb.Report        `json:"report,omitempty"`
	Error      *apiError         `json:"error,omitempty"`
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
	Links      map[string]string `json:"links"`
}

// ingests remembers the server's background uploads, the most recent
// maxIngests of them.
type ingests struct {
	mu    sync.Mutex
	byID  map[string]*ingest
	order []string
}

const maxIngests = 200

func (g *ingests) add(kbName string, files int, size int64, now time.Time) ingest {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.byID == nil {
		g.byID = map[string]*ingest{}
	}
	in := &ingest{ID: uuid.NewString(), KB: kbName, Status: "running", Files: files, Bytes: size, StartedAt: now}
	in.Links = map[string]string{"self": "/v1/knowledge-bases/" + kbName + "/ingests/" + in.ID}
	g.byID[in.ID] = in
	g.order = append(g.order, in.ID)
	for len(g.order) > maxIngests {
		if old := g.byID[g.order[0]]; old != nil && old.Status == "running" {
			break // never forget one still running
		}
		delete(g.byID, g.order[0])
		g.order = g.order[1:]
	}
	return *in
}

func (g *ingests) finish(id string, rep *kb.Report, err error, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	in := g.byID[id]
	if in == nil {
		return
	}
	in.Report, in.FinishedAt, in.Status = rep, &now, "completed"
	if err != nil {
		in.Status = "failed"
		var he *httpError
		code := errcode.Of(err)
		e := apiError{Code: string(code), Message: err.Error(), Field: apiField(fieldOf(err))}
		switch {
		case errors.As(err, &he):
			e = apiError{Code: string(he.code), Message: he.msg, Field: he.field}
		case code == errcode.Internal || code == errcode.Unavailable:
			e.Message = "the upload failed; the server log has the details"
		}
		in.Error = &e
	}
}

func (g *ingests) get(id string) (ingest, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	in := g.byID[id]
	if in == nil {
		return ingest{}, false
	}
	return *in, true
}
