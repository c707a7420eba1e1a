package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/quarryhq/quarry/console"
	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/errcode"
)

// console returns the RAG console's service with the server's chats and
// its SSRF guard on model endpoints a request names.
func (s *Server) console(ctx context.Context, chats bool) (*console.Service, error) {
	svc, err := s.app.Console(ctx)
	if err != nil {
		return nil, err
	}
	svc.CheckEndpoint = func(ctx context.Context, u *url.URL) error { return s.guardHost(ctx, u, "model_config.endpoint") }
	if chats {
		if svc.Chats, err = s.app.Sessions(ctx); err != nil {
			return nil, err
		}
	}
	return svc, nil
}

// consoleCall runs fn with the console service and writes its result
// with status, or its error.
func consoleCall[T any](s *Server, w http.ResponseWriter, r *http.Request, status int, fn func(ctx context.Context, svc *console.Service) (T, error)) error {
	svc, err := s.console(r.Context(), false)
	if err != nil {
		return err
	}
	v, err := fn(r.Context(), svc)
	if err != nil {
		return err
	}
	s.writeJSON(w, status, v)
	return nil
}

type pipelineRequest struct {
	Name          string           `json:"name"`
	Type          string           `json:"pipeline_type"`
	KnowledgeBase string           `json:"knowledge_base"`
	DatasetID     *json.RawMessage `json:"dataset_id"`
	Settings      settingsBody     `json:"settings"`
}

// settingsBody is a pipeline's settings as a request gives them: top_k
// given as 0 is refused, not read as the default.
type settingsBody struct {
	console.Settings
	TopK *int `json:"top_k"`
}

// settings are the settings given, top_k 5 when it is not.
func (b settingsBody) settings() (console.Settings, error) {
	set := b.Settings
	var err error
	set.TopK, err = consoleTopK(b.TopK)
	return set, err
}

// datasetRef reads dataset_id as a number or a name.
func datasetRef(raw *json.RawMessage) (string, error) {
	if raw == nil || string(*raw) == "null" {
		return "", nil
	}
	var n int64
	if err := json.Unmarshal(*raw, &n); err == nil {
		return strconv.FormatInt(n, 10), nil
	}
	var name string
	if err := json.Unmarshal(*raw, &name); err == nil && name != "" {
		return name, nil
	}
	return "", badRequest("dataset_id", "must be a dataset id (a number) or name")
}

func (s *Server) createPipeline(w http.ResponseWriter, r *http.Request) error {
	var req pipelineRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	ds, err := datasetRef(req.DatasetID)
	if err != nil {
		return err
	}
	if req.Type == "" {
		req.Type = console.TypeNormal
	}
	set, err := req.Settings.settings()
	if err != nil {
		return err
	}
	return consoleCall(s, w, r, http.StatusCreated, func(ctx context.Context, svc *console.Service) (*console.Pipeline, error) {
		return svc.CreatePipeline(ctx, console.PipelineSpec{Name: req.Name, Type: req.Type, KB: req.KnowledgeBase, Dataset: ds, Settings: set})
	})
}

func (s *Server) listPipelines(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (map[string]any, error) {
		ps, err := svc.Pipelines(ctx, q.Get("dataset_id"), q.Get("pipeline_type"))
		return map[string]any{"pipelines": ps}, err
	})
}

func (s *Server) getPipeline(w http.ResponseWriter, r *http.Request) error {
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (*console.Pipeline, error) {
		return svc.Pipeline(ctx, r.PathValue("id"))
	})
}

func (s *Server) updatePipeline(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Name      *string          `json:"name"`
		Type      *string          `json:"pipeline_type"`
		DatasetID *json.RawMessage `json:"dataset_id"`
		Settings  *settingsBody    `json:"settings"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	u := console.PipelineUpdate{Name: req.Name, Type: req.Type}
	if req.Settings != nil { // replaced whole: top_k 5 when it is not given
		set, err := req.Settings.settings()
		if err != nil {
			return err
		}
		u.Settings = &set
	}
	if req.DatasetID != nil { // null removes the dataset
		ds, err := datasetRef(req.DatasetID)
		if err != nil {
			return err
		}
		u.Dataset = &ds
	}
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (*console.Pipeline, error) {
		return svc.UpdatePipeline(ctx, r.PathValue("id"), u)
	})
}

func (s *Server) deletePipeline(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.console(r.Context(), false)
	if err == nil {
		err = svc.DeletePipeline(r.Context(), r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// consoleTopK is a console request's top_k: 5 when it is not given; one
// given must be in the seed's range, 0 included, rather than read as the
// default.
func consoleTopK(v *int) (int, error) {
	if v == nil {
		return 5, nil
	}
	if err := console.CheckTopK(*v); err != nil {
		return 0, err
	}
	return *v, nil
}

func (s *Server) retrieve(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Query string `json:"query"`
		TopK  *int   `json:"top_k"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	topK, err := consoleTopK(req.TopK)
	if err != nil {
		return err
	}
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (*console.Retrieval, error) {
		return svc.Retrieve(ctx, r.PathValue("id"), req.Query, topK)
	})
}

// generate retrieves and has a model answer. With Accept:
// text/event-stream the answer streams as "delta" events and ends with an
// "answer" event (the whole response) or an "error" event. A model that
// fails is a 502 with the timings spent.
func (s *Server) generate(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		console.GenerateRequest
		TopK *int `json:"top_k"` // given as 0, refused, not read as the default
	}
	if err := s.decode(w, r, &body); err != nil {
		return err
	}
	req := body.GenerateRequest
	if req.Pipeline != "" && req.Pipeline != r.PathValue("id") {
		return invalid("pipeline_id", "must be empty or the pipeline of the path")
	}
	req.Pipeline = r.PathValue("id")
	var err error
	if req.TopK, err = consoleTopK(body.TopK); err != nil {
		return err
	}
	// Bad input is a 4xx before a chat is started or a stream begins.
	if err := req.Check(); err != nil {
		return err
	}
	ctx := r.Context()
	svc, err := s.console(ctx, req.ChatID != "")
	if err != nil {
		return err
	}
	if req.ChatID == "new" {
		chat, err := svc.NewChat(ctx, req.Query)
		if err != nil {
			return err
		}
		req.ChatID = chat.ID
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		g, err := svc.Generate(ctx, req, nil)
		if err != nil {
			s.writeGenerateError(w, r, err)
			return nil
		}
		s.writeJSON(w, http.StatusOK, g)
		return nil
	}
	rc := http.NewResponseController(w)
	defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	send := func(event string, v any) {
		b, _ := json.Marshal(v)
		_ = rc.SetWriteDeadline(time.Now().Add(s.opt.WriteTimeout))
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b); err == nil {
			_ = rc.Flush()
		}
	}
	g, err := svc.Generate(ctx, req, func(d string) { send("delta", map[string]string{"text": d}) })
	if err != nil {
		status, body := s.generateError(r, err)
		body["status"] = status
		send("error", body)
		return nil
	}
	send("answer", g)
	return nil
}

func (s *Server) writeGenerateError(w http.ResponseWriter, r *http.Request, err error) {
	var ge *console.GenerateError
	if !errors.As(err, &ge) {
		s.writeError(w, r, err)
		return
	}
	status, body := s.generateError(r, err)
	s.writeJSON(w, status, body)
}

// generateError is a failed model call's answer: 502 with the provider's
// message (keys are redacted from it) and the timings spent; any other
// error in the one error shape.
func (s *Server) generateError(r *http.Request, err error) (int, map[string]any) {
	var ge *console.GenerateError
	if !errors.As(err, &ge) {
		status, body := s.errorBody(r, err)
		return status, map[string]any{"error": body}
	}
	s.log.Warn("generate: the model failed", "path", r.URL.Path, "err", ge.Err)
	return http.StatusBadGateway, map[string]any{
		"error":           apiError{Code: string(errcode.Unavailable), Message: "the model did not answer: " + ge.Err.Error(), Field: "model_config"},
		"retrieval_time":  ge.RetrievalTime,
		"llm_time":        ge.LLMTime,
		"generation_time": ge.GenerationTime,
	}
}

func (s *Server) createSession(w http.ResponseWriter, r *http.Request) error {
	var req struct {
		Language string `json:"language"`
	}
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if req.Language == "" {
		req.Language = "en"
	}
	st, err := s.app.Sessions(r.Context())
	if err != nil {
		return err
	}
	chat, err := st.Create(r.Context(), req.Language)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, chat)
	return nil
}

type datasetRequest struct {
	Name          string            `json:"name"`
	KnowledgeBase string            `json:"knowledge_base"`
	Questions     []json.RawMessage `json:"questions"`
	BEIR          *struct {
		Queries string `json:"queries"`
		Qrels   string `json:"qrels"`
	} `json:"beir"`
}

// createDataset imports a dataset: questions in the JSON Lines format's
// objects, or BEIR queries (JSON Lines) and qrels (TSV) as text.
func (s *Server) createDataset(w http.ResponseWriter, r *http.Request) error {
	var req datasetRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	if (len(req.Questions) > 0) == (req.BEIR != nil) {
		return invalid("questions", "give questions or beir (queries and qrels), one of them")
	}
	return consoleCall(s, w, r, http.StatusCreated, func(ctx context.Context, svc *console.Service) (any, error) {
		if req.BEIR != nil {
			queries, err := corpus.ReadQueries(strings.NewReader(req.BEIR.Queries))
			if err != nil {
				return nil, errcode.New(errcode.Invalid, "beir.queries", err.Error())
			}
			qrels, err := corpus.ReadQrels(strings.NewReader(req.BEIR.Qrels))
			if err != nil {
				return nil, errcode.New(errcode.Invalid, "beir.qrels", err.Error())
			}
			return svc.ImportBEIR(ctx, req.Name, req.KnowledgeBase, queries, qrels)
		}
		var lines strings.Builder
		for _, q := range req.Questions {
			lines.Write(q)
			lines.WriteByte('\n')
		}
		qs, err := console.ReadJSONL(strings.NewReader(lines.String()))
		if err != nil {
			return nil, err
		}
		return svc.ImportJSONL(ctx, req.Name, req.KnowledgeBase, qs)
	})
}

func (s *Server) listDatasets(w http.ResponseWriter, r *http.Request) error {
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (map[string]any, error) {
		ds, err := svc.Datasets(ctx)
		return map[string]any{"datasets": ds}, err
	})
}

func (s *Server) getDataset(w http.ResponseWriter, r *http.Request) error {
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (map[string]any, error) {
		d, err := svc.Dataset(ctx, r.PathValue("id"))
		if err != nil {
			return nil, err
		}
		qs, err := svc.Store.DatasetQuestions(ctx, d.ID)
		return map[string]any{"dataset": d, "questions": qs}, err
	})
}

func (s *Server) deleteDataset(w http.ResponseWriter, r *http.Request) error {
	svc, err := s.console(r.Context(), false)
	if err == nil {
		err = svc.DeleteDataset(r.Context(), r.PathValue("id"))
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) createEvaluation(w http.ResponseWriter, r *http.Request) error {
	var req console.EvalRequest
	if err := s.decode(w, r, &req); err != nil {
		return err
	}
	svc, err := s.console(r.Context(), false)
	if err != nil {
		return err
	}
	cmp, err := svc.Evaluate(r.Context(), req)
	if err != nil {
		s.writeGenerateError(w, r, err)
		return nil
	}
	s.writeJSON(w, http.StatusCreated, cmp)
	return nil
}

func (s *Server) listEvaluations(w http.ResponseWriter, r *http.Request) error {
	limit, err := intParam(r, "limit", 20, 1, 200)
	if err != nil {
		return err
	}
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (map[string]any, error) {
		runs, err := svc.EvalRuns(ctx, r.URL.Query().Get("pipeline_id"), limit)
		return map[string]any{"evaluations": runs}, err
	})
}

func (s *Server) getEvaluation(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return errcode.New(errcode.NotFound, "id", fmt.Sprintf("evaluation run %q does not exist", r.PathValue("id")))
	}
	return consoleCall(s, w, r, http.StatusOK, func(ctx context.Context, svc *console.Service) (*console.Run, error) {
		return svc.EvalRun(ctx, id)
	})
}
