package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/store"
)

// ingest is a large upload being ingested in the background, by a job.
type ingest = app.IngestState

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
	return app.PutIngest(ctx, g.st, in, g.owner, now)
}

// add records an upload whose files the store holds (filesFrom), for an
// ingest job to take: no process owns it.
func (g *ingests) add(ctx context.Context, id, kbName string, files int, size int64, now time.Time) (*ingest, error) {
	in := &ingest{ID: id, KB: kbName, Status: store.IngestRunning, Files: files, Bytes: size, StartedAt: now}
	in.Links = map[string]string{"self": "/v1/knowledge-bases/" + kbName + "/ingests/" + in.ID}
	if err := app.PutIngest(ctx, g.st, in, app.IngestJobOwner, now); err != nil {
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
		ie := app.IngestError(e)
		in.Error = &ie
	}
	if perr := g.put(context.WithoutCancel(ctx), in, now); perr != nil {
		g.log.Error("record the end of an upload", "ingest", in.ID, "err", perr)
	}
}

func (g *ingests) get(ctx context.Context, id string) (*ingest, error) {
	return app.GetIngest(ctx, g.st, id)
}

// recover fails the uploads, from before uploads were jobs, whose process
// on this host is gone (the server was killed or crashed while ingesting
// them); their documents were never searchable in part. An upload a job
// ingests is owned by no process: its job finishes it after a restart.
func (g *ingests) recover(ctx context.Context, now time.Time) error {
	running, err := g.st.IngestRunning(ctx)
	if err != nil {
		return err
	}
	for _, rec := range running {
		if !g.gone(rec.Owner) {
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

// gone reports whether the process that owns an upload ("host:pid/start")
// has ended: one on this host that no longer runs, or an earlier start
// with this process's host and pid (a container restarted as pid 1).
func (g *ingests) gone(owner string) bool {
	if owner == g.owner {
		return false
	}
	hostPID, _, _ := strings.Cut(owner, "/")
	mine, _, _ := strings.Cut(g.owner, "/")
	return hostPID == mine || research.DeadHolder(owner)
}

// startID tells this start of the process from an earlier one with the
// same pid.
var startID = uuid.NewString()[:8]

// processOwner names this start of the process in upload records.
func processOwner() string { return research.ProcessOwner() + "/" + startID }

// uploadDirPrefix names an upload's temporary folder with the start of
// the process that owns it ("quarry-upload-<pid>-<start>-…"), so a start
// removes those its dead predecessors left.
func uploadDirPrefix() string {
	return "quarry-upload-" + strconv.Itoa(os.Getpid()) + "-" + startID + "-"
}

// removeStaleUploads removes the temporary upload folders of processes on
// this host that are gone, and of earlier starts with this pid.
func removeStaleUploads(log *slog.Logger) {
	host, err := os.Hostname()
	if err != nil {
		return
	}
	me := strconv.Itoa(os.Getpid())
	matches, _ := filepath.Glob(filepath.Join(os.TempDir(), "quarry-upload-*"))
	for _, m := range matches {
		parts := strings.SplitN(strings.TrimPrefix(filepath.Base(m), "quarry-upload-"), "-", 3)
		if len(parts) < 2 {
			continue
		}
		pid, start := parts[0], parts[1]
		switch {
		case pid == me && start == startID:
			continue // this start's own upload
		case pid == me:
			// An earlier start with this pid: it is gone.
		case !research.DeadHolder(host + ":" + pid):
			continue
		}
		if err := os.RemoveAll(m); err != nil {
			log.Warn("remove a dead upload's files", "dir", m, "err", err)
			continue
		}
		log.Info("removed the files of an upload whose server is gone", "dir", m)
	}
}
