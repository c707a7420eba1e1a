package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/jobs"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
)

// maxFileName is the longest file name an upload may carry (what file
// systems hold).
const maxFileName = 255

// uploadDocuments ingests the files of a multipart upload (parts named
// "file") like kb add: the same formats, and bad files listed with their
// reason while the rest is ingested. Each file's source URL is
// kb://NAME/upload/FILENAME, so uploading a file of the same name again
// replaces it.
func (s *Server) uploadDocuments(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		return &httpError{status: http.StatusUnsupportedMediaType, code: errcode.Invalid, field: "Content-Type", msg: "must be multipart/form-data with one or more parts named \"file\""}
	}
	svc, k, emb, err := s.kbEmbedder(r)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", uploadDirPrefix())
	if err != nil {
		return err
	}
	// A large upload's files are copied into the store before it
	// answers (storeUpload): the folder goes either way.
	defer func() { _ = os.RemoveAll(dir) }()
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadReadTime))
	r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxUploadBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return badRequest("body", "is not a multipart body: "+err.Error())
	}
	paths, names, total, err := receiveFiles(mr, dir)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return invalid("file", "the upload holds no file; send one or more parts named \"file\"")
	}
	opt := kb.AddOptions{Embedder: emb, URLOf: func(p string) (string, string) {
		n := names[p]
		return app.UploadURL(k.Name, n), n
	}}
	if total > s.opt.SyncUploadBytes {
		// A large upload is a job: its files are kept in the store, then
		// any process running jobs ingests them; its status resource
		// follows it, and a restart loses neither.
		in, err := s.storeUpload(ctx, k.Name, paths, names, total)
		if err != nil {
			return err
		}
		w.Header().Set("Location", in.Links["self"])
		s.writeJSON(w, http.StatusAccepted, in)
		return nil
	}
	rep, err := svc.AddPaths(ctx, k.Name, paths, opt)
	if err == nil {
		err = app.NothingIngested(rep)
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, rep)
	return nil
}

// receiveFiles writes each part named "file" of an upload into its own
// folder under dir: the paths, each path's file name (cleaned, without
// folders) and the bytes received.
func receiveFiles(mr *multipart.Reader, dir string) (paths []string, names map[string]string, total int64, err error) {
	names = map[string]string{}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, 0, uploadError(err)
		}
		if part.FormName() != "file" {
			_ = part.Close()
			return nil, nil, 0, badRequest(part.FormName(), "is not a known part; send files as parts named \"file\"")
		}
		// Cleaned after its spaces and control characters go: " .." is "..",
		// no name for a file.
		name := filepath.Base(filepath.Clean("/" + textclean.Line(part.FileName())))
		if name == "" || name == "/" || name == "." {
			return nil, nil, 0, invalid("file", "every file part needs a file name")
		}
		if len(name) > maxFileName {
			return nil, nil, 0, invalid("file", fmt.Sprintf("a file name must be at most %d bytes, got %d", maxFileName, len(name)))
		}
		p := filepath.Join(dir, strconv.Itoa(len(paths)), name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, nil, 0, err
		}
		f, err := os.Create(p)
		if err != nil {
			return nil, nil, 0, err
		}
		n, err := io.Copy(f, part)
		total += n
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, nil, 0, uploadError(err)
		}
		names[p], paths = name, append(paths, p)
	}
	return paths, names, total, nil
}

// storeUpload keeps an upload's files in the store, records it running
// and queues its ingest job. Files stored by a request that dies before
// the record are purged later (jobs.PurgeArgs).
func (s *Server) storeUpload(ctx context.Context, kbName string, paths []string, names map[string]string, total int64) (*ingest, error) {
	id := uuid.NewString()
	now := s.now()
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		if err := s.store.IngestFilePut(ctx, store.IngestFile{IngestID: id, Seq: i, Name: names[p], Data: data, CreatedAt: now}); err != nil {
			return nil, err
		}
	}
	in, err := s.ingests.add(ctx, id, kbName, len(paths), total, now)
	if err != nil {
		return nil, err
	}
	if err := s.jobs.EnqueueIngest(ctx, jobs.IngestArgs{ID: id, KB: kbName}); err != nil {
		s.ingests.finish(ctx, in, nil, err, s.now())
		_ = s.store.IngestFilesDelete(context.WithoutCancel(ctx), id)
		return nil, err
	}
	return in, nil
}

// getIngest reports a background upload.
func (s *Server) getIngest(w http.ResponseWriter, r *http.Request) error {
	in, err := s.ingests.get(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) || err == nil && in.KB != r.PathValue("name") {
		return errcode.New(errcode.NotFound, "id", fmt.Sprintf("no upload %s of knowledge base %q", r.PathValue("id"), r.PathValue("name")))
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, in)
	return nil
}

func uploadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return err
	}
	return badRequest("body", "the upload could not be read: "+err.Error())
}
