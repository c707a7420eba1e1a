// Package console is the RAG console's core: pipelines
// (retrieval settings over a knowledge base, normal or test), evaluation
// datasets (questions with golden chunks, imported from BEIR) and
// retrieve, which marks golden chunks in a test pipeline. The seed's
// validation messages are kept word for word.
package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/llm"
	"github.com/quarryhq/quarry/session"
	"github.com/quarryhq/quarry/store"
)

// Pipeline types.
const (
	TypeNormal = "normal"
	TypeTest   = "test"
)

// Settings are a pipeline's retrieval settings.
type Settings struct {
	Mode         string  `json:"mode"`
	Fusion       string  `json:"fusion,omitempty"`
	BM25Weight   float64 `json:"bm25_weight,omitempty"`
	VectorWeight float64 `json:"vector_weight,omitempty"`
	TopK         int     `json:"top_k"`
}

// Pipeline is a stored pipeline with its knowledge base's name, its
// dataset's name and its settings.
type Pipeline struct {
	ID        int64     `json:"id"`
	Name      string    `json:"name"`
	Type      string    `json:"pipeline_type"`
	KB        string    `json:"knowledge_base"`
	DatasetID *int64    `json:"dataset_id,omitempty"`
	Dataset   string    `json:"dataset,omitempty"`
	Settings  Settings  `json:"settings"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func invalid(field, msg string) error { return errcode.New(errcode.Invalid, field, msg) }

// CheckType is the seed's rule for a pipeline type.
func CheckType(t string) error {
	if t != TypeNormal && t != TypeTest {
		return invalid("pipeline_type", "pipeline_type must be 'normal' or 'test'")
	}
	return nil
}

// CheckTopK is the seed's rule for top_k.
func CheckTopK(k int) error {
	if k < 1 || k > 20 {
		return invalid("top_k", "Top K must be between 1 and 20")
	}
	return nil
}

// CheckQuery is the seed's rule for a query.
func CheckQuery(q string) error {
	if n := utf8.RuneCountInString(strings.TrimSpace(q)); n < 1 || n > 10000 {
		return invalid("query", "Query must be 1-10000 characters")
	}
	return nil
}

// Check validates settings the way kb search does, plus the seed's top_k
// (0 included: the API and the CLI give 5 when none is given).
func (s *Settings) Check() error {
	if err := CheckTopK(s.TopK); err != nil {
		return err
	}
	q := kb.Query{Text: "x", K: s.TopK, Mode: s.Mode, Fusion: s.Fusion, BM25Weight: s.BM25Weight, VectorWeight: s.VectorWeight}
	if err := q.Validate(); err != nil {
		return err
	}
	s.Mode = q.Mode
	return nil
}

// KBs opens a knowledge base by name with its embedder.
type KBs func(ctx context.Context, name string) (*kb.Service, embed.Embedder, error)

// Service runs the console over a store.
type Service struct {
	Store store.Store
	KBs   KBs
	// Chats keeps console chats (nil: generate takes no chat_id).
	Chats session.Store
	// Models builds the client of a generate request's checked model
	// config; the app sets it (providers are constructed there only).
	// Nil refuses generate.
	Models func(ModelConfig) (llm.Provider, error)
	// CheckEndpoint, when set, vets a request's model endpoint before it
	// is called (the server's SSRF guard).
	CheckEndpoint func(ctx context.Context, u *url.URL) error
	Now           func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now().UTC()
}

func (s *Service) kb(ctx context.Context, name string) (*store.KB, error) {
	k, err := s.Store.KBGet(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, invalid("kb", fmt.Sprintf("knowledge base %q does not exist", name))
	}
	return k, err
}

func (s *Service) dataset(ctx context.Context, nameOrID string) (*store.Dataset, error) {
	d, err := s.Store.DatasetGet(ctx, nameOrID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "dataset_id", fmt.Sprintf("dataset %q does not exist", nameOrID))
	}
	return d, err
}

// PipelineSpec is what creates or updates a pipeline.
type PipelineSpec struct {
	Name, Type, KB, Dataset string
	Settings                Settings
}

// CreatePipeline stores a pipeline.
func (s *Service) CreatePipeline(ctx context.Context, spec PipelineSpec) (*Pipeline, error) {
	if err := checkPipelineName(spec.Name); err != nil {
		return nil, err
	}
	if err := CheckType(spec.Type); err != nil {
		return nil, err
	}
	if err := spec.Settings.Check(); err != nil {
		return nil, err
	}
	k, err := s.kb(ctx, spec.KB)
	if err != nil {
		return nil, err
	}
	p := store.Pipeline{Name: spec.Name, Type: spec.Type, KBID: k.ID, CreatedAt: s.now(), UpdatedAt: s.now()}
	if spec.Dataset != "" {
		d, err := s.dataset(ctx, spec.Dataset)
		if err != nil {
			return nil, err
		}
		if d.KBID != k.ID {
			return nil, invalid("dataset_id", fmt.Sprintf("dataset %q is over another knowledge base than %q", d.Name, k.Name))
		}
		p.DatasetID = &d.ID
	} else if spec.Type == TypeTest {
		return nil, invalid("dataset_id", "a test pipeline needs a dataset (its golden chunks)")
	}
	if p.Settings, err = json.Marshal(spec.Settings); err != nil {
		return nil, err
	}
	sp, err := s.Store.PipelineCreate(ctx, p)
	if errors.Is(err, store.ErrExists) {
		return nil, errcode.New(errcode.Conflict, "name", fmt.Sprintf("pipeline %q exists", spec.Name))
	}
	if err != nil {
		return nil, err
	}
	return s.Pipeline(ctx, fmt.Sprint(sp.ID))
}

// PipelineUpdate changes the fields that are set; Dataset "" removes the
// dataset, Settings replaces the settings whole.
type PipelineUpdate struct {
	Name     *string   `json:"name,omitempty"`
	Type     *string   `json:"pipeline_type,omitempty"`
	Dataset  *string   `json:"dataset,omitempty"`
	Settings *Settings `json:"settings,omitempty"`
}

// UpdatePipeline applies a change with the rules of CreatePipeline.
func (s *Service) UpdatePipeline(ctx context.Context, nameOrID string, u PipelineUpdate) (*Pipeline, error) {
	sp, err := s.Store.PipelineGet(ctx, nameOrID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "pipeline_id", "Invalid pipeline ID")
	}
	if err != nil {
		return nil, err
	}
	if u.Name != nil {
		if err := checkPipelineName(*u.Name); err != nil {
			return nil, err
		}
		sp.Name = *u.Name
	}
	if u.Type != nil {
		if err := CheckType(*u.Type); err != nil {
			return nil, err
		}
		sp.Type = *u.Type
	}
	if u.Dataset != nil {
		sp.DatasetID = nil
		if *u.Dataset != "" {
			d, err := s.dataset(ctx, *u.Dataset)
			if err != nil {
				return nil, err
			}
			if d.KBID != sp.KBID {
				return nil, invalid("dataset_id", fmt.Sprintf("dataset %q is over another knowledge base than %q", d.Name, sp.KBName))
			}
			sp.DatasetID = &d.ID
		}
	}
	if sp.Type == TypeTest && sp.DatasetID == nil {
		return nil, invalid("dataset_id", "a test pipeline needs a dataset (its golden chunks)")
	}
	if u.Settings != nil {
		if err := u.Settings.Check(); err != nil {
			return nil, err
		}
		if sp.Settings, err = json.Marshal(u.Settings); err != nil {
			return nil, err
		}
	}
	sp.UpdatedAt = s.now()
	err = s.Store.PipelineUpdate(ctx, *sp)
	if errors.Is(err, store.ErrExists) {
		return nil, errcode.New(errcode.Conflict, "name", fmt.Sprintf("pipeline %q exists", sp.Name))
	}
	if err != nil {
		return nil, err
	}
	return s.Pipeline(ctx, strconv.FormatInt(sp.ID, 10))
}

func checkPipelineName(name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > 255 || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
		return invalid("name", "must be 1-255 characters without control characters")
	}
	if name[0] >= '0' && name[0] <= '9' {
		return invalid("name", "must not start with a digit (ids are numbers)")
	}
	return nil
}

func view(p *store.Pipeline) (*Pipeline, error) {
	v := &Pipeline{ID: p.ID, Name: p.Name, Type: p.Type, KB: p.KBName, DatasetID: p.DatasetID, Dataset: p.DatasetName, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt}
	if err := json.Unmarshal(p.Settings, &v.Settings); err != nil {
		return nil, fmt.Errorf("pipeline %s: settings: %w", p.Name, err)
	}
	return v, nil
}

// Pipeline returns a pipeline by name or id; an unknown one is the seed's
// "Invalid pipeline ID".
func (s *Service) Pipeline(ctx context.Context, nameOrID string) (*Pipeline, error) {
	p, err := s.Store.PipelineGet(ctx, nameOrID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "pipeline_id", "Invalid pipeline ID")
	}
	if err != nil {
		return nil, err
	}
	return view(p)
}

// Pipelines lists pipelines, by dataset (name or id) and type.
func (s *Service) Pipelines(ctx context.Context, dataset, typ string) ([]Pipeline, error) {
	var f store.PipelineFilter
	if typ != "" {
		if err := CheckType(typ); err != nil {
			return nil, err
		}
		f.Type = typ
	}
	if dataset != "" {
		d, err := s.dataset(ctx, dataset)
		if err != nil {
			return nil, err
		}
		f.DatasetID = &d.ID
	}
	ps, err := s.Store.PipelineList(ctx, f)
	if err != nil {
		return nil, err
	}
	out := []Pipeline{}
	for i := range ps {
		v, err := view(&ps[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *v)
	}
	return out, nil
}

// DeletePipeline removes a pipeline.
func (s *Service) DeletePipeline(ctx context.Context, nameOrID string) error {
	p, err := s.Pipeline(ctx, nameOrID)
	if err != nil {
		return err
	}
	return s.Store.PipelineDelete(ctx, p.ID)
}

// ImportBEIR makes a dataset over a knowledge base from BEIR queries and
// qrels: each judged query becomes a question whose golden chunks are
// every chunk of its relevant documents (BEIR judges documents). Golden
// chunks are kept as (document id, position), so they survive a
// re-ingest of unchanged documents; a document that changed keeps its
// golden mark on all its chunks, whatever they now say. A qrel naming a
// document the knowledge base lacks is an error listing them.
func (s *Service) ImportBEIR(ctx context.Context, name, kbName string, queries []corpus.Query, qrels corpus.Qrels) (*store.Dataset, error) {
	if err := checkDatasetName(name); err != nil {
		return nil, err
	}
	k, err := s.kb(ctx, kbName)
	if err != nil {
		return nil, err
	}
	srcs, err := s.Store.SourceList(ctx, k.ID)
	if err != nil {
		return nil, err
	}
	docs := map[string]bool{}
	for _, src := range srcs {
		if src.DocID != "" {
			docs[src.DocID] = true
		}
	}
	var qs []store.DatasetQuestion
	var missing []string
	for _, q := range queries {
		rel := qrels[q.ID]
		var golden []store.GoldenRef
		for doc, score := range rel {
			if score <= 0 {
				continue
			}
			if !docs[doc] {
				missing = append(missing, doc)
				continue
			}
			golden = append(golden, store.GoldenRef{DocID: doc, ChunkIndex: -1})
		}
		if len(golden) == 0 {
			continue // unjudged, as eval retrieval skips it
		}
		sort.Slice(golden, func(i, j int) bool { return golden[i].DocID < golden[j].DocID })
		qs = append(qs, store.DatasetQuestion{QueryID: q.ID, Text: strings.TrimSpace(q.Text), Golden: golden})
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, invalid("qrels", fmt.Sprintf("%d golden documents are not in knowledge base %q (ingest the corpus first): %s", len(missing), kbName, strings.Join(missing[:min(5, len(missing))], ", ")))
	}
	if len(qs) == 0 {
		return nil, invalid("qrels", "no query has a relevant document")
	}
	return s.createDataset(ctx, name, k, qs)
}

// Chunk is a retrieved chunk.
type Chunk struct {
	ChunkID      int64          `json:"chunk_id"`
	DatasourceID string         `json:"datasource_id"`
	Content      string         `json:"content"`
	Score        float64        `json:"score"`
	Metadata     map[string]any `json:"metadata"`
	IsGolden     *bool          `json:"is_golden,omitempty"`
}

// Retrieval is retrieve's answer.
type Retrieval struct {
	Pipeline      string  `json:"pipeline"`
	Query         string  `json:"query"`
	Chunks        []Chunk `json:"chunks"`
	RetrievalTime float64 `json:"retrieval_time"`
	// QuestionID is the dataset question the query is, when it is one
	// (a test pipeline marks golden chunks only then).
	QuestionID string `json:"question_id,omitempty"`
}

// Retrieve searches a pipeline's knowledge base with its settings. Scores
// are relative to the best result (1.0). In a test pipeline, a query that
// is one of its dataset's questions gets each chunk marked is_golden.
func (s *Service) Retrieve(ctx context.Context, pipeline, query string, topK int) (*Retrieval, error) {
	if err := CheckQuery(query); err != nil {
		return nil, err
	}
	p, err := s.Pipeline(ctx, pipeline)
	if err != nil {
		return nil, err
	}
	if topK == 0 {
		topK = p.Settings.TopK
	}
	if err := CheckTopK(topK); err != nil {
		return nil, err
	}
	svc, emb, err := s.KBs(ctx, p.KB)
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	res, err := svc.Search(ctx, p.KB, emb, kb.Query{Text: query, K: topK, Mode: p.Settings.Mode, Fusion: p.Settings.Fusion, BM25Weight: p.Settings.BM25Weight, VectorWeight: p.Settings.VectorWeight})
	if err != nil {
		return nil, err
	}
	out := &Retrieval{Pipeline: p.Name, Query: query, Chunks: []Chunk{}, RetrievalTime: time.Since(t0).Seconds()}
	var golden []store.GoldenRef
	marked := p.Type == TypeTest && p.DatasetID != nil
	if marked {
		q, err := s.Store.DatasetQuestionByText(ctx, *p.DatasetID, strings.TrimSpace(query))
		switch {
		case err == nil:
			golden, out.QuestionID = q.Golden, q.QueryID
		case !errors.Is(err, store.ErrNotFound):
			return nil, err
		}
	}
	top := 0.0
	for _, r := range res {
		top = max(top, r.Score)
	}
	for _, r := range res {
		c := Chunk{ChunkID: r.ChunkID, DatasourceID: r.SourceURL, Content: r.Text,
			Metadata: map[string]any{"title": r.Title, "doc_id": r.DocID, "chunk_index": r.ChunkIndex, "language": r.Language, "raw_score": r.Score}}
		if top > 0 {
			c.Score = r.Score / top
		}
		if marked {
			g := isGolden(golden, r)
			c.IsGolden = &g
		}
		out.Chunks = append(out.Chunks, c)
	}
	return out, nil
}

func isGolden(refs []store.GoldenRef, r kb.Result) bool {
	doc := r.Doc()
	for _, g := range refs {
		if g.DocID == doc && (g.ChunkIndex < 0 || g.ChunkIndex == r.ChunkIndex) {
			return true
		}
	}
	return false
}
