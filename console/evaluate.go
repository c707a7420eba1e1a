package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/eval"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
)

// EvalRequest evaluates one or more pipelines on a dataset.
type EvalRequest struct {
	Pipelines []string `json:"pipelines"`
	// Dataset defaults to the first pipeline's dataset.
	Dataset string `json:"dataset,omitempty"`
	// K is the metrics' cut-off (default 10, at most 100).
	K int `json:"k,omitempty"`
	// Model, when set, also has each pipeline answer the questions that
	// have a reference answer, scored by token F1 and exact match.
	Model *ModelConfig `json:"model_config,omitempty"`
}

// QuestionResult is one question's figures in a run.
type QuestionResult struct {
	QueryID string `json:"query_id"`
	Query   string `json:"query"`
	eval.Scores
	// Level is "document" when the question is judged by documents
	// (scored on the document ranking, as eval retrieval does) or
	// "chunk" when judged by chunk positions (scored on the chunk ranking).
	Level     string   `json:"level"`
	Golden    int      `json:"golden"`
	Retrieved []string `json:"retrieved"`
	LatencyMs float64  `json:"latency_ms"`
	// Answer figures, with a model and a reference answer.
	Answer     string   `json:"answer,omitempty"`
	AnswerF1   *float64 `json:"answer_f1,omitempty"`
	ExactMatch *float64 `json:"exact_match,omitempty"`
}

// Overall is a run's means, with eval retrieval's field names, plus the
// answer figures over the questions that had a reference answer.
type Overall struct {
	eval.Result
	Answered   int      `json:"answered,omitempty"`
	AnswerF1   *float64 `json:"answer_f1,omitempty"`
	ExactMatch *float64 `json:"exact_match,omitempty"`
	Model      string   `json:"model,omitempty"`
	TokensUsed int      `json:"tokens_used,omitempty"`
}

// Run is a stored evaluation of a pipeline on a dataset.
type Run struct {
	ID        int64            `json:"id"`
	Pipeline  string           `json:"pipeline"`
	Dataset   string           `json:"dataset"`
	K         int              `json:"k"`
	Settings  *Settings        `json:"settings,omitempty"`
	CreatedAt time.Time        `json:"created_at"`
	Overall   Overall          `json:"overall"`
	Questions []QuestionResult `json:"questions,omitempty"`
}

// Difference is a pipeline's overall figures minus the baseline's (the
// first pipeline), and on how many questions its nDCG is higher or lower.
type Difference struct {
	Pipeline  string   `json:"pipeline"`
	Baseline  string   `json:"baseline"`
	NDCG      float64  `json:"ndcg"`
	Recall    float64  `json:"recall"`
	Precision float64  `json:"precision"`
	MRR       float64  `json:"mrr"`
	HitRate   float64  `json:"hit_rate"`
	AnswerF1  *float64 `json:"answer_f1,omitempty"`
	Better    int      `json:"better"`
	Worse     int      `json:"worse"`
}

// Comparison is several pipelines on one dataset.
type Comparison struct {
	Dataset     string       `json:"dataset"`
	K           int          `json:"k"`
	Runs        []*Run       `json:"runs"`
	Differences []Difference `json:"differences"`
}

// Evaluate runs each pipeline over the dataset's questions, stores a run
// per pipeline and compares them with the first.
func (s *Service) Evaluate(ctx context.Context, req EvalRequest) (*Comparison, error) {
	if len(req.Pipelines) == 0 || len(req.Pipelines) > 10 {
		return nil, invalid("pipelines", "give 1-10 pipelines")
	}
	if req.K == 0 {
		req.K = 10
	}
	if req.K < 1 || req.K > 100 {
		return nil, invalid("k", "must be between 1 and 100")
	}
	if req.Model != nil {
		if err := req.Model.Check(); err != nil {
			return nil, err
		}
		if err := s.checkEndpoint(ctx, *req.Model); err != nil {
			return nil, err
		}
	}
	ps := make([]*Pipeline, len(req.Pipelines))
	for i, name := range req.Pipelines {
		p, err := s.Pipeline(ctx, name)
		if err != nil {
			return nil, err
		}
		ps[i] = p
	}
	dsName := req.Dataset
	if dsName == "" {
		if ps[0].DatasetID == nil {
			return nil, invalid("dataset", fmt.Sprintf("pipeline %q has no dataset: name one", ps[0].Name))
		}
		dsName = strconv.FormatInt(*ps[0].DatasetID, 10)
	}
	d, err := s.dataset(ctx, dsName)
	if err != nil {
		return nil, err
	}
	for _, p := range ps {
		if k, err := s.Store.KBGet(ctx, p.KB); err != nil || k.ID != d.KBID {
			return nil, invalid("dataset", fmt.Sprintf("dataset %q is over another knowledge base than pipeline %q's (%s)", d.Name, p.Name, p.KB))
		}
	}
	qs, err := s.Store.DatasetQuestions(ctx, d.ID)
	if err != nil {
		return nil, err
	}
	cmp := &Comparison{Dataset: d.Name, K: req.K, Runs: []*Run{}, Differences: []Difference{}}
	for _, p := range ps {
		run, err := s.evaluate(ctx, p, d, qs, req)
		if err != nil {
			return nil, fmt.Errorf("pipeline %s: %w", p.Name, err)
		}
		cmp.Runs = append(cmp.Runs, run)
	}
	for _, r := range cmp.Runs[1:] {
		cmp.Differences = append(cmp.Differences, diff(cmp.Runs[0], r))
	}
	return cmp, nil
}

func (s *Service) evaluate(ctx context.Context, p *Pipeline, d *store.Dataset, qs []store.DatasetQuestion, req EvalRequest) (*Run, error) {
	svc, emb, err := s.KBs(ctx, p.KB)
	if err != nil {
		return nil, err
	}
	q := kb.Query{K: max(300, 3*req.K), Mode: p.Settings.Mode, Fusion: p.Settings.Fusion, BM25Weight: p.Settings.BM25Weight, VectorWeight: p.Settings.VectorWeight}
	// Warm the index so its loading is not counted as a query's latency.
	q.Text = "warm up"
	if _, err := svc.Search(ctx, p.KB, emb, q); err != nil {
		return nil, err
	}
	settings := p.Settings
	run := &Run{Pipeline: p.Name, Dataset: d.Name, K: req.K, Settings: &settings, CreatedAt: s.now(), Questions: []QuestionResult{}}
	run.Overall.K, run.Overall.Mode = req.K, p.Settings.Mode
	var lat []float64
	var f1, em float64
	for _, dq := range qs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		q.Text = dq.Text
		t0 := time.Now()
		found, err := svc.SearchNoted(ctx, p.KB, emb, q)
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", dq.QueryID, err)
		}
		res, err := found.AsAsked()
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", dq.QueryID, err)
		}
		ms := float64(time.Since(t0).Microseconds()) / 1000
		lat = append(lat, ms)
		ranking, rel, level := judge(res, dq.Golden)
		qr := QuestionResult{QueryID: dq.QueryID, Query: dq.Text, Scores: eval.Score(ranking, rel, req.K), Level: level, Golden: len(rel), Retrieved: ranking[:min(req.K, len(ranking))], LatencyMs: ms}
		run.Overall.Add(qr.Scores)
		if req.Model != nil && dq.Reference != "" {
			g, err := s.Generate(ctx, GenerateRequest{Pipeline: strconv.FormatInt(p.ID, 10), Query: dq.Text, Model: *req.Model}, nil)
			if err != nil {
				return nil, fmt.Errorf("question %s: %w", dq.QueryID, err)
			}
			plain := stripMarkers(g.Answer)
			f, e := TokenF1(plain, dq.Reference), ExactMatch(plain, dq.Reference)
			qr.Answer, qr.AnswerF1, qr.ExactMatch = g.Answer, &f, &e
			f1, em = f1+f, em+e
			run.Overall.Answered++
			run.Overall.TokensUsed += g.TokensUsed
			run.Overall.Model = g.Model
		}
		run.Questions = append(run.Questions, qr)
	}
	if run.Overall.Queries == 0 {
		return nil, invalid("dataset", fmt.Sprintf("dataset %q has no questions", d.Name))
	}
	run.Overall.Average()
	run.Overall.P50ms, run.Overall.P99ms = eval.Percentile(lat, 50), eval.Percentile(lat, 99)
	if n := float64(run.Overall.Answered); n > 0 {
		f1, em = f1/n, em/n
		run.Overall.AnswerF1, run.Overall.ExactMatch = &f1, &em
	}
	overall, err := json.Marshal(run.Overall)
	if err != nil {
		return nil, err
	}
	questions, err := json.Marshal(run.Questions)
	if err != nil {
		return nil, err
	}
	sr, err := s.Store.EvalRunCreate(ctx, store.EvalRun{PipelineID: &p.ID, PipelineName: p.Name, DatasetID: &d.ID, DatasetName: d.Name, K: req.K, CreatedAt: run.CreatedAt, Overall: overall, Questions: questions})
	if err != nil {
		return nil, err
	}
	run.ID = sr.ID
	return run, nil
}

// judge turns a question's golden refs into relevance judgements over the
// ranking they are scored on: documents when every ref is a whole
// document (as BEIR judges), else chunks, named "doc#index", where a
// whole-document ref stands for the document's first retrieved chunk.
func judge(res []kb.Result, golden []store.GoldenRef) (ranking []string, rel map[string]int, level string) {
	rel = map[string]int{}
	chunkLevel := false
	for _, g := range golden {
		chunkLevel = chunkLevel || g.ChunkIndex >= 0
	}
	if !chunkLevel {
		for _, g := range golden {
			rel[g.DocID] = 1
		}
		return kb.DocRanking(res), rel, "document"
	}
	whole := map[string]bool{}
	for _, g := range golden {
		if g.ChunkIndex < 0 {
			whole[g.DocID] = true
		} else {
			rel[chunkKey(g.DocID, g.ChunkIndex)] = 1
		}
	}
	for _, r := range res {
		key := chunkKey(r.Doc(), r.ChunkIndex)
		if whole[r.Doc()] {
			delete(whole, r.Doc())
			rel[key] = 1
		}
		ranking = append(ranking, key)
	}
	for doc := range whole { // never retrieved: still counts as missed
		rel[doc+"#?"] = 1
	}
	return ranking, rel, "chunk"
}

func chunkKey(doc string, i int) string { return doc + "#" + strconv.Itoa(i) }

func diff(base, r *Run) Difference {
	a, b := base.Overall, r.Overall
	d := Difference{Pipeline: r.Pipeline, Baseline: base.Pipeline, NDCG: b.NDCG - a.NDCG, Recall: b.Recall - a.Recall, Precision: b.Precision - a.Precision, MRR: b.MRR - a.MRR, HitRate: b.HitRate - a.HitRate}
	if a.AnswerF1 != nil && b.AnswerF1 != nil {
		v := *b.AnswerF1 - *a.AnswerF1
		d.AnswerF1 = &v
	}
	for i := range min(len(base.Questions), len(r.Questions)) {
		switch x, y := base.Questions[i].NDCG, r.Questions[i].NDCG; {
		case y > x+1e-9:
			d.Better++
		case y < x-1e-9:
			d.Worse++
		}
	}
	return d
}

// EvalRun returns a stored run with its questions.
func (s *Service) EvalRun(ctx context.Context, id int64) (*Run, error) {
	sr, err := s.Store.EvalRunGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errcode.New(errcode.NotFound, "id", fmt.Sprintf("evaluation run %d does not exist", id))
	}
	if err != nil {
		return nil, err
	}
	return runOf(sr)
}

// EvalRuns lists stored runs, newest first, without their questions; a
// pipeline (name or id) selects its runs.
func (s *Service) EvalRuns(ctx context.Context, pipeline string, limit int) ([]Run, error) {
	var pid *int64
	if pipeline != "" {
		p, err := s.Pipeline(ctx, pipeline)
		if err != nil {
			return nil, err
		}
		pid = &p.ID
	}
	srs, err := s.Store.EvalRunList(ctx, pid, limit)
	if err != nil {
		return nil, err
	}
	out := []Run{}
	for i := range srs {
		r, err := runOf(&srs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, *r)
	}
	return out, nil
}

func runOf(sr *store.EvalRun) (*Run, error) {
	r := &Run{ID: sr.ID, Pipeline: sr.PipelineName, Dataset: sr.DatasetName, K: sr.K, CreatedAt: sr.CreatedAt}
	if err := json.Unmarshal(sr.Overall, &r.Overall); err != nil {
		return nil, fmt.Errorf("evaluation run %d: %w", sr.ID, err)
	}
	if sr.Questions != nil {
		if err := json.Unmarshal(sr.Questions, &r.Questions); err != nil {
			return nil, fmt.Errorf("evaluation run %d: %w", sr.ID, err)
		}
	}
	return r, nil
}

// TokenF1 is SQuAD's answer measure: the harmonic mean of token precision
// and recall between an answer and a reference, after lower-casing and
// dropping punctuation and English articles. It credits an answer that
// holds the reference inside a longer sentence, needs no judge model, and
// is what HotpotQA reports, so figures compare with published ones.
func TokenF1(answer, reference string) float64 {
	a, r := normTokens(answer), normTokens(reference)
	if len(a) == 0 || len(r) == 0 {
		if len(a) == len(r) {
			return 1
		}
		return 0
	}
	count := map[string]int{}
	for _, t := range r {
		count[t]++
	}
	same := 0
	for _, t := range a {
		if count[t] > 0 {
			count[t]--
			same++
		}
	}
	if same == 0 {
		return 0
	}
	p, rc := float64(same)/float64(len(a)), float64(same)/float64(len(r))
	return 2 * p * rc / (p + rc)
}

// ExactMatch is 1 when the normalised answer is the normalised reference.
func ExactMatch(answer, reference string) float64 {
	if strings.Join(normTokens(answer), " ") == strings.Join(normTokens(reference), " ") {
		return 1
	}
	return 0
}

func normTokens(s string) []string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsPunct(r) || unicode.IsSymbol(r) {
			return ' '
		}
		return unicode.ToLower(r)
	}, s)
	var out []string
	for _, t := range strings.Fields(s) {
		if t != "a" && t != "an" && t != "the" {
			out = append(out, t)
		}
	}
	return out
}
