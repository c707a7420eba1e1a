package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	verrors "github.com/pb33f/libopenapi-validator/errors"
	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/internal/testpg"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/server"
	"github.com/quarryhq/quarry/store/postgres"
	"github.com/quarryhq/quarry/store/sqlite"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The HTTP client's idle connections are closed by each test; the
		// transport's readers may still be winding down.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}

// corpus is a 50-paragraph slice of the bundled Wikipedia corpus.
var corpus = filepath.Join("..", "cmd", "quarry", "testdata", "research", "corpus.jsonl")

// env is a running server over a fresh store with a knowledge base "wiki".
type env struct {
	t      testing.TB
	URL    string
	App    *app.App
	Server *server.Server
	client *http.Client
	spec   validator.Validator
	stop   func()
	token  string
}

type envOptions struct {
	server.Options
	postgres bool
	// dataDir reuses a data directory (a restart); configure changes the
	// App's configuration.
	dataDir   string
	configure func(*app.Config)
}

var (
	specOnce sync.Once
	spec     validator.Validator
	specErr  error
)

// openAPI builds one validator from the served document for the package.
func openAPI(t testing.TB) validator.Validator {
	t.Helper()
	specOnce.Do(func() {
		raw, err := server.OpenAPI()
		if err != nil {
			specErr = err
			return
		}
		doc, err := libopenapi.NewDocument(raw)
		if err != nil {
			specErr = err
			return
		}
		v, errs := validator.NewValidator(doc)
		if len(errs) > 0 {
			specErr = errors.Join(errs...)
			return
		}
		if ok, derrs := v.ValidateDocument(); !ok {
			specErr = fmt.Errorf("the OpenAPI document is not valid:%s", fmtErrs(derrs))
			return
		}
		spec = v
	})
	if specErr != nil {
		t.Fatal(specErr)
	}
	return spec
}

func fmtErrs(errs []*verrors.ValidationError) string {
	var b strings.Builder
	for _, e := range errs {
		b.WriteString("\n  - [" + e.ValidationType + "/" + e.ValidationSubType + "] " + e.Message + " | " + e.Reason)
		for _, s := range e.SchemaValidationErrors {
			b.WriteString("\n      * " + s.FieldPath + ": " + s.Reason)
		}
	}
	return b.String()
}

func start(t testing.TB, o envOptions) *env {
	t.Helper()
	cfg := app.Config{DataDir: o.dataDir, LLM: "offline", Embedder: "hash", LogLevel: "warn", AllowPrivate: true}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if o.postgres {
		cfg.DatabaseURL = testpg.Schema(t, "QUARRY_TEST_POSTGRES_URL")
	}
	if o.configure != nil {
		o.configure(&cfg)
	}
	a := app.New(cfg, slog.New(slog.DiscardHandler))
	ctx := context.Background()
	svc, emb, err := a.OpenKB(ctx, "wiki", true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "wiki", []string{corpus}, kb.AddOptions{Embedder: emb}); err != nil {
		t.Fatal(err)
	}
	if o.Rate == 0 {
		o.Rate, o.IPRate = -1, -1 // tests that want limits set them
	}
	srv, err := server.New(ctx, a, o.Options, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln, 5*time.Second) }()
	e := &env{t: t, URL: "http://" + ln.Addr().String(), App: a, Server: srv, spec: openAPI(t),
		client: &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}}
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve: %v", err)
			}
			e.client.CloseIdleConnections()
			_ = a.Close()
		})
	}
	t.Cleanup(e.stop)
	return e
}

// response is a finished exchange: status, headers and body.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// apiErr decodes the one error shape.
func (r response) apiErr(t *testing.T) (code, field, msg string) {
	t.Helper()
	var e struct {
		Error struct{ Code, Field, Message string }
	}
	r.json(t, &e)
	if e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("not the error shape: %s", r.Body)
	}
	return e.Error.Code, e.Error.Field, e.Error.Message
}

// do sends a request and checks the request and the response against the
// OpenAPI document; documented says whether the request itself must be
// valid by the document (bad input on purpose is not).
func (e *env) do(method, path string, body []byte, header map[string]string, documented bool) response {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	if documented {
		if ok, errs := e.spec.ValidateHttpRequest(req); !ok {
			e.t.Errorf("%s %s: the request does not match the OpenAPI document:%s", method, path, fmtErrs(errs))
		}
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if ok, errs := e.spec.ValidateHttpResponse(req, resp); !ok {
		e.t.Errorf("%s %s → %d: the response does not match the OpenAPI document:%s", method, path, resp.StatusCode, fmtErrs(errs))
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

func (e *env) get(path string) response { e.t.Helper(); return e.do("GET", path, nil, nil, true) }

func (e *env) post(path string, v any) response {
	e.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do("POST", path, data, nil, true)
}

// postBad posts a body the document itself forbids (bad input on
// purpose); the response must still match it.
func (e *env) postBad(path string, v any) response {
	e.t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.do("POST", path, data, nil, false)
}

// raw sends a request to a route the document does not have.
func (e *env) raw(method, path string) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: data}
}

// want fails unless r has status.
func want(t testing.TB, r response, status int) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
}

// waitStatus polls a research until it has one of the statuses.
func (e *env) waitStatus(id string, statuses ...string) map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		var r map[string]any
		resp := e.get("/v1/researches/" + id)
		want(e.t, resp, 200)
		resp.json(e.t, &r)
		for _, s := range statuses {
			if r["status"] == s {
				return r
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	e.t.Fatalf("research %s never reached %v", id, statuses)
	return nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func decodeJSON(data []byte, v any) error { return json.Unmarshal(data, v) }

func readAll(t *testing.T, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// research starts a research of question over the wiki knowledge base
// and returns its id.
func (e *env) research(extra map[string]any) string {
	e.t.Helper()
	body := map[string]any{"question": question, "sources": []string{"kb:wiki"}}
	for k, v := range extra {
		body[k] = v
	}
	r := e.post("/v1/researches", body)
	want(e.t, r, 202)
	var c struct{ ID string }
	r.json(e.t, &c)
	return c.ID
}

// dialEvents opens a WebSocket on a research's events.
func (e *env) dialEvents(ctx context.Context, id string) *websocket.Conn {
	e.t.Helper()
	u := strings.Replace(e.URL, "http://", "ws://", 1) + "/v1/researches/" + id + "/events"
	conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: e.client})
	if err != nil {
		e.t.Fatal(err)
	}
	return conn
}

// countRows counts a table's rows in the server's store.
func (e *env) countRows(t testing.TB, table string) int {
	t.Helper()
	var db *sql.DB
	switch st := e.App.CurrentStore().(type) {
	case *sqlite.Store:
		db = st.SQL
	case *postgres.Store:
		db = st.SQL
	default:
		t.Fatalf("store %T", st)
	}
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
