package server_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/research"
	"github.com/quarryhq/quarry/server"
	"github.com/quarryhq/quarry/store/sqlite"
)

// slowSearch is a SearxNG instance that takes its time, and the pages its
// results point at.
func slowSearch(t *testing.T, delay time.Duration) *httptest.Server {
	t.Helper()
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/search" {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
			q := r.URL.Query().Get("q")
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"results":[{"url":"%s/page/%d","title":"On %s","content":"About %s."},{"url":"%s/page/%d","title":"More on %s","content":"More about %s."}]}`,
				srv.URL, len(q), q, q, srv.URL, len(q)+1000, q, q)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>Page %s</title></head><body><article><p>Antonín Dvořák was a Czech composer born on 8 September 1841 in Nelahozeves.</p><p>Giuseppe Verdi was an Italian opera composer born on 10 October 1813 in Le Roncole.</p></article></body></html>`, r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestShutdownResumes: a server stopped while a research runs leaves it
// checkpointed and queued (processing, not failed); the next start
// resumes it from there and its events continue without a gap.
func TestShutdownResumes(t *testing.T) {
	search := slowSearch(t, 150*time.Millisecond)
	data := t.TempDir()
	o := envOptions{dataDir: data, configure: func(c *app.Config) { c.WebSearch, c.SearxNGURL = "searxng", search.URL }}
	e := start(t, o)
	r := e.post("/v1/researches", map[string]any{"question": question, "sources": []string{"web"}, "level": "standard"})
	want(t, r, 202)
	var c struct{ ID string }
	r.json(t, &c)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var v struct{ Status, Stage string }
		g := e.get("/v1/researches/" + c.ID)
		g.json(t, &v)
		if v.Stage == "executing" {
			break
		}
		if v.Status == "completed" || time.Now().After(deadline) {
			t.Fatalf("the research never ran long enough to be stopped: %+v", v)
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // a search or two have answered
	e.stop()

	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(data, "quarry.db"))
	if err != nil {
		t.Fatal(err)
	}
	stopped, err := research.Load(ctx, st, c.ID)
	_ = st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Status != research.StatusProcessing || stopped.Error != "" {
		t.Fatalf("after the shutdown: status %s, error %q; want processing, checkpointed for the next start", stopped.Status, stopped.Error)
	}

	e2 := start(t, o)
	done := e2.waitStatus(c.ID, "completed", "failed")
	if done["status"] != "completed" {
		t.Fatalf("resumed research: %v %v", done["status"], done["error"])
	}
	warned := false
	for _, w := range done["warnings"].([]any) {
		warned = warned || strings.Contains(w.(string), "resumed at stage executing")
	}
	if !warned {
		t.Fatalf("no resume warning: %v", done["warnings"])
	}
	checkSeqs(t, e2.sse(c.ID, 0, -1, nil), 1)
}

// TestResume: a canceled research resumed over HTTP goes back to the
// queue (processing, for whichever worker is free) and a worker finishes
// it, its events without a gap.
func TestResume(t *testing.T) {
	e := start(t, envOptions{Options: server.Options{Workers: -1}}) // nothing here runs it
	id := e.research(nil)
	want(t, e.post("/v1/researches/"+id+"/cancel", nil), 202)
	e.waitStatus(id, "canceled")
	r := e.post("/v1/researches/"+id+"/resume", nil)
	want(t, r, 202)
	e.waitStatus(id, "processing")
	want(t, e.post("/v1/researches/"+id+"/resume", nil), 409) // queued already
	ctx := context.Background()
	rn, err := e.App.Runner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	done, err := rn.Work(ctx, id) // what a quarry worker does
	if err != nil || done.Status != research.StatusCompleted {
		t.Fatalf("worker: %v %v", done.Status, err)
	}
	checkSeqs(t, e.sse(id, 0, -1, nil), 1)
}
