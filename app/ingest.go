package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
)

// IngestState is a background upload's status resource (the API's GET
// /v1/knowledge-bases/{name}/ingests/{id}), stored as the ingest record's
// state.
type IngestState struct {
	ID         string            `json:"id"`
	KB         string            `json:"knowledge_base"`
	Status     string            `json:"status"` // running, completed or failed
	Files      int               `json:"files"`
	Bytes      int64             `json:"bytes"`
	Report     *kb.Report        `json:"report,omitempty"`
	Error      *IngestError      `json:"error,omitempty"`
	StartedAt  time.Time         `json:"started_at"`
	FinishedAt *time.Time        `json:"finished_at,omitempty"`
	Links      map[string]string `json:"links"`
}

// IngestError is why an upload failed, in the API's error shape.
type IngestError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"`
}

// IngestJobOwner is the owner of an upload a job ingests: no one process
// owns it, whichever worker takes the job does.
const IngestJobOwner = "job"

// PutIngest stores an upload's state.
func PutIngest(ctx context.Context, st store.IngestStore, in *IngestState, owner string, now time.Time) error {
	state, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return st.IngestPut(ctx, store.Ingest{ID: in.ID, KB: in.KB, Owner: owner, Status: in.Status, State: state, StartedAt: in.StartedAt, UpdatedAt: now})
}

// GetIngest reads an upload's state.
func GetIngest(ctx context.Context, st store.IngestStore, id string) (*IngestState, error) {
	rec, err := st.IngestGet(ctx, id)
	if err != nil {
		return nil, err
	}
	var in IngestState
	if err := json.Unmarshal(rec.State, &in); err != nil {
		return nil, fmt.Errorf("ingest %s: stored state: %w", id, err)
	}
	return &in, nil
}

// Ingest is an upload's job: it ingests the files the upload stored, records
// how it went and drops the files. Documents are written whole or not at
// all, so an attempt cut short leaves nothing half-searchable, and one that
// runs again finds what the last one wrote unchanged. It returns an error
// only for a failure worth another attempt (the store away).
func (a *App) Ingest(ctx context.Context, id string) error {
	st, in, err := a.runningIngest(ctx, id)
	if err != nil || in == nil {
		return err
	}
	files, err := st.IngestFiles(ctx, id)
	if err != nil {
		return err
	}
	var rep *kb.Report
	err = a.ingestFiles(ctx, in.KB, files, &rep)
	if err != nil && (store.Transient(err) || ctx.Err() != nil) {
		return err
	}
	return a.finishIngest(ctx, st, in, rep, err)
}

// FailIngest records an upload failed with cause (its job gave up).
func (a *App) FailIngest(ctx context.Context, id string, cause error) error {
	st, in, err := a.runningIngest(ctx, id)
	if err != nil || in == nil {
		return err
	}
	a.Logger.Error("upload: every attempt failed", "ingest", id, "kb", in.KB, "err", cause)
	return a.finishIngest(ctx, st, in, nil, errcode.New(errcode.Conflict, "",
		"ingesting the upload failed on every attempt (each must end within 0.9 of the workers' --rescue-after); the server log has the details"))
}

// runningIngest reads an upload's state; nil when it has ended (an
// earlier attempt finished it).
func (a *App) runningIngest(ctx context.Context, id string) (store.Store, *IngestState, error) {
	st, err := a.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	in, err := GetIngest(ctx, st, id)
	if err != nil || in.Status != store.IngestRunning {
		return st, nil, err
	}
	return st, in, nil
}

func (a *App) finishIngest(ctx context.Context, st store.Store, in *IngestState, rep *kb.Report, err error) error {
	now := time.Now().UTC()
	in.Report, in.FinishedAt, in.Status = rep, &now, "completed"
	if err != nil {
		in.Status = "failed"
		e := &IngestError{Code: string(errcode.Of(err)), Message: err.Error(), Field: errcode.Field(err)}
		var ve *store.ValidationError
		if e.Field == "" && errors.As(err, &ve) {
			e.Field = ve.Field
		}
		if code := errcode.Of(err); code == errcode.Internal || code == errcode.Unavailable {
			a.Logger.Error("upload failed", "ingest", in.ID, "kb", in.KB, "err", err)
			e.Message = "the upload failed; the server log has the details"
		}
		in.Error = e
	}
	ctx = context.WithoutCancel(ctx)
	if err := PutIngest(ctx, st, in, IngestJobOwner, now); err != nil {
		return err
	}
	return st.IngestFilesDelete(ctx, in.ID)
}

// ingestFiles writes an upload's stored files to a temporary folder and
// adds them to the knowledge base as kb://NAME/upload/FILENAME.
func (a *App) ingestFiles(ctx context.Context, kbName string, files []store.IngestFile, rep **kb.Report) error {
	if len(files) == 0 {
		return errcode.New(errcode.Invalid, "file", "the upload's files are gone; upload them again")
	}
	svc, emb, err := a.OpenKB(ctx, kbName, false)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "quarry-ingest-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	names := map[string]string{}
	var paths []string
	for _, f := range files {
		p := filepath.Join(dir, strconv.Itoa(f.Seq), filepath.Base(filepath.Clean("/"+f.Name)))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, f.Data, 0o600); err != nil {
			return err
		}
		names[p], paths = f.Name, append(paths, p)
	}
	opt := kb.AddOptions{Embedder: emb, URLOf: func(p string) (string, string) {
		n := names[p]
		return UploadURL(kbName, n), n
	}}
	r, err := svc.AddPaths(ctx, kbName, paths, opt)
	*rep = r
	if err != nil {
		return err
	}
	return NothingIngested(r)
}

// UploadURL is the source URL of an uploaded file: uploading a file of the
// same name again replaces it.
func UploadURL(kbName, fileName string) string {
	return "kb://" + kbName + "/upload/" + url.PathEscape(fileName)
}

// NothingIngested is the error of an upload none of whose files could be
// ingested: each named with its reason.
func NothingIngested(rep *kb.Report) error {
	if rep.Added+rep.Updated+rep.Unchanged > 0 {
		return nil
	}
	var why []string
	for _, p := range rep.Failed {
		why = append(why, p.Origin+": "+p.Reason)
	}
	return errcode.New(errcode.Invalid, "file", fmt.Sprintf("nothing ingested: all %d inputs failed (%s)", len(rep.Failed), strings.Join(why, "; ")))
}
