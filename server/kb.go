package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/crawl"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/fetch"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/jobs"
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
	background := false
	defer func() {
		if !background {
			_ = os.RemoveAll(dir)
		}
	}()
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadReadTime))
	r.Body = http.MaxBytesReader(w, r.Body, s.opt.MaxUploadBytes)
	mr, err := r.MultipartReader()
	if err != nil {
		return badRequest("body", "is not a multipart body: "+err.Error())
	}
	names := map[string]string{} // temporary path → file name
	var paths []string
	var total int64
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return uploadError(err)
		}
		if part.FormName() != "file" {
			_ = part.Close()
			return badRequest(part.FormName(), "is not a known part; send files as parts named \"file\"")
		}
		name := textclean.Line(filepath.Base(filepath.Clean("/" + part.FileName())))
		if name == "" || name == "/" || name == "." {
			return invalid("file", "every file part needs a file name")
		}
		if len(name) > maxFileName {
			return invalid("file", fmt.Sprintf("a file name must be at most %d bytes, got %d", maxFileName, len(name)))
		}
		p := filepath.Join(dir, strconv.Itoa(len(paths)), name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		n, err := io.Copy(f, part)
		total += n
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return uploadError(err)
		}
		names[p], paths = name, append(paths, p)
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
	res, err := svc.Search(r.Context(), kbase.Name, emb, query)
	if err != nil {
		return err
	}
	if res == nil {
		res = []kb.Result{}
	}
	s.writeJSON(w, http.StatusOK, page[kb.Result]{Items: res})
	return nil
}

type crawlRequest struct {
	URL         string `json:"url"`
	MaxPages    *int   `json:"max_pages"`
	MaxDepth    *int   `json:"max_depth"`
	Concurrency *int   `json:"concurrency"`
	Delay       string `json:"delay"`
	NoSitemap   bool   `json:"no_sitemap"`
	WholeHost   bool   `json:"whole_host"`
}

// startCrawl starts a crawl of a site into the knowledge base and returns
// at once; its crawl log (GET …/crawls) follows it. The URL passes the
// SSRF guard before anything is fetched.
func (s *Server) startCrawl(w http.ResponseWriter, r *http.Request) error {
	var req crawlRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	opt, delay, u, err := s.crawlOptions(r.Context(), req)
	if err != nil {
		return err
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	if _, err := s.app.EmbedderFor(k); err != nil {
		return err
	}
	// A River job: whichever process runs jobs on this store crawls it,
	// one crawl of a knowledge base at a time across all of them.
	queued, err := s.jobs.EnqueueCrawl(r.Context(), jobs.CrawlArgs{KB: k.Name, URL: u.String(), Options: opt, Delay: delay})
	if err != nil {
		return err
	}
	if !queued {
		return errcode.New(errcode.Conflict, "name", fmt.Sprintf("knowledge base %q is being crawled; wait for that crawl to end (GET /v1/knowledge-bases/%s/crawls)", k.Name, k.Name))
	}
	w.Header().Set("Location", "/v1/knowledge-bases/"+k.Name+"/crawls")
	s.writeJSON(w, http.StatusAccepted, map[string]any{"knowledge_base": k.Name, "url": fetch.Redact(u), "status": "queued",
		"links": map[string]string{"logs": "/v1/knowledge-bases/" + k.Name + "/crawls"}})
	return nil
}

// crawlOptions validates a crawl's request: its options, its delay and its
// URL, which must pass the SSRF guard.
func (s *Server) crawlOptions(ctx context.Context, req crawlRequest) (crawl.Options, time.Duration, *url.URL, error) {
	opt := crawl.Options{MaxPages: 500, MaxDepth: 5, Concurrency: 4, NoSitemap: req.NoSitemap, WholeHost: req.WholeHost}
	for dst, v := range map[*int]*int{&opt.MaxPages: req.MaxPages, &opt.MaxDepth: req.MaxDepth, &opt.Concurrency: req.Concurrency} {
		if v != nil {
			*dst = *v
		}
	}
	if err := opt.Validate(); err != nil {
		return opt, 0, nil, err
	}
	delay := 250 * time.Millisecond
	if req.Delay != "" {
		d, err := time.ParseDuration(req.Delay)
		if err != nil || d < 0 {
			return opt, 0, nil, invalid("delay", fmt.Sprintf("must be a duration such as \"250ms\", 0 or more, got %q", req.Delay))
		}
		delay = d
	}
	u, err := fetch.ParseURL(req.URL)
	if err != nil {
		return opt, 0, nil, invalid("url", strings.TrimPrefix(err.Error(), "url "))
	}
	if err := s.guardHost(ctx, u, "url"); err != nil {
		return opt, 0, nil, err
	}
	return opt, delay, u, nil
}

type scheduleRequest struct {
	crawlRequest
	// Every is the time between crawls ("5m" when empty).
	Every string `json:"every"`
}

// putSchedule sets the knowledge base's re-crawl schedule; its first run
// is due at once, queued by whichever process runs jobs on this store.
func (s *Server) putSchedule(w http.ResponseWriter, r *http.Request) error {
	var req scheduleRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	every := jobs.DefaultEvery
	if req.Every != "" {
		d, err := time.ParseDuration(req.Every)
		if err != nil || d < time.Second {
			return invalid("every", fmt.Sprintf("must be a duration of at least 1s such as \"5m\", got %q", req.Every))
		}
		every = d
	}
	opt, delay, u, err := s.crawlOptions(r.Context(), req.crawlRequest)
	if err != nil {
		return err
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	sc, err := jobs.SetSchedule(r.Context(), s.store, k.ID, jobs.ScheduleSpec{URL: u.String(), Every: every, Options: opt, Delay: delay})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, jobs.View(sc))
	return nil
}

func (s *Server) getSchedule(w http.ResponseWriter, r *http.Request) error {
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	sc, err := s.store.ScheduleGet(r.Context(), k.ID)
	if errors.Is(err, store.ErrNotFound) {
		err = errcode.New(errcode.NotFound, "name", fmt.Sprintf("knowledge base %q has no crawl schedule (PUT one to this path)", k.Name))
	}
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, jobs.View(sc))
	return nil
}

func (s *Server) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	_, k, err := s.kbOf(r)
	if err == nil {
		err = s.store.ScheduleDelete(r.Context(), k.ID)
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// guardHost refuses a URL whose host is or resolves to an address the
// SSRF guard blocks; field names the request field in the error. (The
// fetcher refuses it again at dial time, for redirects and DNS changes.)
func (s *Server) guardHost(ctx context.Context, u *url.URL, field string) error {
	if s.app.Config.AllowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		addrs, err = net.DefaultResolver.LookupNetIP(rctx, "ip", host)
		if err != nil {
			return invalid(field, fmt.Sprintf("host %q cannot be resolved: %v", host, err))
		}
	}
	for _, a := range addrs {
		if err := fetch.Check(a.Unmap()); err != nil {
			return invalid(field, err.Error())
		}
	}
	return nil
}

func (s *Server) crawlLogs(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", 20, 1, 10000)
	if err != nil {
		return err
	}
	_, k, err := s.kbOf(r)
	if err != nil {
		return err
	}
	logs, err := s.store.CrawlLogList(r.Context(), k.ID, limit)
	if err != nil {
		return err
	}
	if logs == nil {
		logs = []store.CrawlLog{}
	}
	s.writeJSON(w, http.StatusOK, page[store.CrawlLog]{Items: logs})
	return nil
}
