package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/internal/testredis"
	"github.com/quarryhq/quarry/store"
)

// proxy forwards connections to addr until stop, which also cuts the
// ones open: Redis going away, as a client sees it.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func newProxy(t *testing.T, addr string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", addr)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(up, c); _ = up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); _ = c.Close() })
		}
	})
	t.Cleanup(p.stop)
	return p
}

func (p *proxy) stop() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// TestRedisDown: with Redis gone, an ask is a 503 naming Redis, not a
// 500, and /readyz says the server is not ready.
func TestRedisDown(t *testing.T) {
	testredis.Client(t) // skips (or fails under CI) without Redis
	u, err := url.Parse(os.Getenv("QUARRY_TEST_REDIS_URL"))
	if err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, u.Host)
	via := *u
	via.Host = px.ln.Addr().String()
	e := start(t, envOptions{configure: func(c *app.Config) { c.RedisURL = via.String() }})
	want(t, e.post("/v1/knowledge-bases/wiki/ask", map[string]any{"question": "When was Verdi born?"}), 200)
	want(t, e.get("/readyz"), 200)
	px.stop()
	r := e.post("/v1/knowledge-bases/wiki/ask", map[string]any{"question": "When was Verdi born?"})
	want(t, r, 503)
	if code, _, msg := r.apiErr(t); code != "unavailable" || !strings.Contains(msg, "redis") {
		t.Fatalf("ask with Redis down: %s %s", code, msg)
	}
	r = e.get("/readyz")
	want(t, r, 503)
	if !strings.Contains(string(r.Body), "redis") {
		t.Fatalf("readyz: %s", r.Body)
	}
}

// TestOutOfRangeNumbers: weights that overflow a score or are not
// numbers, and a file name no file system holds, are 422s naming the
// field, never a 200 with an empty body or a 500.
func TestOutOfRangeNumbers(t *testing.T) {
	e := start(t, envOptions{})
	for _, q := range []string{"bm25_weight=Inf", "bm25_weight=NaN", "vector_weight=1e308", "bm25_weight=-1"} {
		r := e.do("GET", "/v1/knowledge-bases/wiki/search?q=Verdi&"+q, nil, nil, false) // not a request the document allows
		if r.Status != 422 {
			t.Fatalf("%s: status %d: %s", q, r.Status, r.Body)
		}
		if _, f, _ := r.apiErr(t); f != strings.Split(q, "=")[0] {
			t.Fatalf("%s: field %q", q, f)
		}
	}
	body, _ := json.Marshal(map[string]any{"name": "p", "knowledge_base": "wiki", "settings": map[string]any{"mode": "hybrid", "bm25_weight": 1e308}})
	r := e.do("POST", "/v1/pipelines", body, map[string]string{"Content-Type": "application/json"}, false) // outside the document's range
	want(t, r, 422)
	if _, f, _ := r.apiErr(t); !strings.Contains(f, "bm25_weight") {
		t.Fatalf("pipeline weight: field %q: %s", f, r.Body)
	}
	r = e.upload("wiki", map[string]string{strings.Repeat("n", 5000) + ".txt": "Verdi was born in 1813."})
	want(t, r, 422)
	if _, f, _ := r.apiErr(t); f != "file" {
		t.Fatalf("long file name: field %q: %s", f, r.Body)
	}
	for _, name := range []string{" ..", ".. ", "\t.", "a/ .."} {
		r = e.upload("wiki", map[string]string{name: "Verdi was born in 1813."})
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "file" {
			t.Fatalf("file name %q: field %q: %s", name, f, r.Body)
		}
	}
}

// TestUploadInterruptedByARestart: an upload whose server died while
// ingesting it (its record still running, owned by a process that is
// gone, its temporary files left behind) is reported failed by the next
// start, with its files removed; nothing of it is searchable.
func TestUploadInterruptedByARestart(t *testing.T) {
	dir := t.TempDir()
	e := start(t, envOptions{dataDir: dir})
	ctx := context.Background()
	st, err := e.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	dead := 1<<22 + 4321 // no such pid
	now := time.Now().UTC()
	state := fmt.Sprintf(`{"id":"u1","knowledge_base":"wiki","status":"running","files":1,"bytes":60000000,"started_at":%q,"links":{"self":"/v1/knowledge-bases/wiki/ingests/u1"}}`, now.Format(time.RFC3339Nano))
	if err := st.IngestPut(ctx, store.Ingest{ID: "u1", KB: "wiki", Owner: fmt.Sprintf("%s:%d", host, dead), Status: store.IngestRunning, State: []byte(state), StartedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	// And one of an earlier start of a process with this very pid (a
	// container restarted as pid 1).
	state2 := strings.ReplaceAll(state, "u1", "u2")
	if err := st.IngestPut(ctx, store.Ingest{ID: "u2", KB: "wiki", Owner: fmt.Sprintf("%s:%d/earlier1", host, os.Getpid()), Status: store.IngestRunning, State: []byte(state2), StartedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	left := filepath.Join(os.TempDir(), fmt.Sprintf("quarry-upload-%d-dead0001-x1", dead))
	if err := os.MkdirAll(filepath.Join(left, "0"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(left) })
	// Before the restart the record says running, as the dead server left it.
	var in struct {
		Status string
		Error  *struct{ Code, Message string }
	}
	e.get("/v1/knowledge-bases/wiki/ingests/u1").json(t, &in)
	if in.Status != "running" {
		t.Fatalf("before the restart: %+v", in)
	}
	e2 := start(t, envOptions{dataDir: dir})
	e2.get("/v1/knowledge-bases/wiki/ingests/u1").json(t, &in)
	if in.Status != "failed" || in.Error == nil || in.Error.Code != "unavailable" || !strings.Contains(in.Error.Message, "upload the files again") {
		t.Fatalf("after the restart: %+v %+v", in, in.Error)
	}
	e2.get("/v1/knowledge-bases/wiki/ingests/u2").json(t, &in)
	if in.Status != "failed" {
		t.Fatalf("an earlier start's upload with this pid: %+v", in)
	}
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("the dead upload's files are still there: %v", err)
	}
}
