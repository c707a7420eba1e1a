package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
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

// ingests keeps background uploads' status in the store, so it survives
// a restart: an upload its process did not finish (killed, crashed) is
// reported failed by the next start on that host. A document is
// searchable whole or not at all (kb), so a failed upload left nothing
// half-searchable.
type ingests struct {
	st    store.IngestStore
	owner string // host:pid, as research leases name a process
	log   *slog.Logger
}

func (g *ingests) put(ctx context.Context, in *ingest, now time.Time) error {
	state, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return g.st.IngestPut(ctx, store.Ingest{ID: in.ID, KB: in.KB, Owner: g.owner, Status: in.Status, State: state, StartedAt: in.StartedAt, UpdatedAt: now})
}

func (g *ingests) add(ctx context.Context, kbName string, files int, size int64, now time.Time) (*ingest, error) {
	in := &ingest{ID: uuid.NewString(), KB: kbName, Status: store.IngestRunning, Files: files, Bytes: size, StartedAt: now}
	in.Links = map[string]string{"self": "/v1/knowledge-bases/" + kbName + "/ingests/" + in.ID}
	if err := g.put(ctx, in, now); err != nil {
		return nil, err
	}
	return in, nil
}

func (g *ingests) finish(ctx context.Context, in *ingest, rep *kb.Report, err error, now time.Time) {
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
	if perr := g.put(context.WithoutCancel(ctx), in, now); perr != nil {
		g.log.Error("record the end of an upload", "ingest", in.ID, "err", perr)
	}
}

func (g *ingests) get(ctx context.Context, id string) (*ingest, error) {
	rec, err := g.st.IngestGet(ctx, id)
	if err != nil {
		return nil, err
	}
	var in ingest
	if err := json.Unmarshal(rec.State, &in); err != nil {
		return nil, fmt.Errorf("ingest %s: stored state: %w", id, err)
	}
	return &in, nil
}

// recover fails the uploads whose process on this host is gone (the
// server was killed or crashed while ingesting them); their documents
// were never searchable in part.
func (g *ingests) recover(ctx context.Context, now time.Time) error {
	running, err := g.st.IngestRunning(ctx)
	if err != nil {
		return err
	}
	for _, rec := range running {
		if !research.DeadHolder(rec.Owner) {
			continue // still running here or on another host
		}
		in, err := g.get(ctx, rec.ID)
		if err != nil {
			return err
		}
		g.finish(ctx, in, nil, &httpError{status: http.StatusServiceUnavailable, code: errcode.Unavailable,
			msg: "the server stopped while this upload was being ingested; the documents it had not finished are not searchable; upload the files again"}, now)
		g.log.Warn("upload interrupted by a restart", "ingest", in.ID, "kb", in.KB)
	}
	return nil
}

// uploadDirPrefix names an upload's temporary folder with the process
// that owns it ("quarry-upload-<pid>-…"), so a start removes those its
// dead predecessors left.
func uploadDirPrefix() string { return "quarry-upload-" + strconv.Itoa(os.Getpid()) + "-" }

// removeStaleUploads removes the temporary upload folders of processes on
// this host that are gone.
func removeStaleUploads(log *slog.Logger) {
	host, err := os.Hostname()
	if err != nil {
		return
	}
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "quarry-upload-*"))
	for _, m := range matches {
		pid, _, ok := strings.Cut(strings.TrimPrefix(filepath.Base(m), "quarry-upload-"), "-")
		if !ok || pid == strconv.Itoa(os.Getpid()) || !research.DeadHolder(host+":"+pid) {
			continue
		}
		if err := os.RemoveAll(m); err != nil {
			log.Warn("remove a dead upload's files", "dir", m, "err", err)
			continue
		}
		log.Info("removed the files of an upload whose server is gone", "dir", m)
	}
}
