package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"

	"github.com/quarryhq/quarry/server"
)

const question = "Which composer was born first, Antonín Dvořák or Giuseppe Verdi?"

// TestAPI walks every route of the running server, the happy path and
// the error paths, checking each request and response against the
// OpenAPI document; at the end every documented operation must have been
// called (read back from the server's own request metrics).
func TestAPI(t *testing.T) {
	walkAPI(t, start(t, envOptions{Options: server.Options{SyncUploadBytes: 4096}}))
}

// TestAPIPostgres is the same walk on PostgreSQL, where events reach the
// streams through LISTEN/NOTIFY.
func TestAPIPostgres(t *testing.T) {
	walkAPI(t, start(t, envOptions{postgres: true, Options: server.Options{SyncUploadBytes: 4096}}))
}

func walkAPI(t *testing.T, e *env) {
	t.Run("operations", func(t *testing.T) {
		want(t, e.get("/healthz"), 200)
		want(t, e.get("/readyz"), 200)
		want(t, e.get("/openapi.json"), 200)
	})

	// A research, followed to its end over SSE.
	r := e.post("/v1/researches", map[string]any{"question": question, "sources": []string{"kb:wiki"}, "level": "quick"})
	want(t, r, 202)
	var c struct {
		ID       string `json:"id"`
		ThreadID string `json:"thread_id"`
		Links    map[string]string
	}
	r.json(t, &c)
	if r.Header.Get("Location") != "/v1/researches/"+c.ID || c.Links["events"] != "/v1/researches/"+c.ID+"/events" {
		t.Fatalf("links: %s %v", r.Header.Get("Location"), c.Links)
	}
	seqs := e.sse(c.ID, 0, -1, nil)
	checkSeqs(t, seqs, 1)
	res := e.waitStatus(c.ID, "completed")
	if res["thread_id"] == "" || len(res["sources"].([]any)) == 0 {
		t.Fatalf("research: %v", res["thread_id"])
	}

	t.Run("report", func(t *testing.T) {
		md := e.get("/v1/researches/" + c.ID + "/report")
		want(t, md, 200)
		if !strings.HasPrefix(md.Header.Get("Content-Type"), "text/markdown") || !bytes.Contains(md.Body, []byte("[1]")) {
			t.Fatalf("markdown: %s", md.Body[:min(200, len(md.Body))])
		}
		html := e.get("/v1/researches/" + c.ID + "/report?format=html")
		want(t, html, 200)
		if !bytes.Contains(html.Body, []byte(`href="#ref-1"`)) || bytes.Contains(html.Body, []byte("<script")) {
			t.Fatalf("html: %s", html.Body[:min(300, len(html.Body))])
		}
		js := e.get("/v1/researches/" + c.ID + "/report?format=json")
		want(t, js, 200)
		ck := e.get("/v1/researches/" + c.ID + "/check")
		want(t, ck, 200)
		var checks struct {
			Rate float64 `json:"citation_support_rate"`
		}
		ck.json(t, &checks)
		if checks.Rate != 1 {
			t.Fatalf("offline citation support %v", checks.Rate)
		}
		r := e.do("GET", "/v1/researches/"+c.ID+"/report?format=pdf", nil, nil, false)
		want(t, r, 400)
		if _, f, _ := r.apiErr(t); f != "format" {
			t.Fatalf("field %q", f)
		}
	})

	t.Run("lifecycle errors", func(t *testing.T) {
		for _, p := range []string{"/cancel", "/resume"} {
			r := e.post("/v1/researches/"+c.ID+p, nil)
			want(t, r, 409)
		}
		r := e.get("/v1/researches/nope")
		want(t, r, 404)
		if code, f, _ := r.apiErr(t); code != "not_found" || f != "id" {
			t.Fatalf("%s %s", code, f)
		}
		want(t, e.post("/v1/researches/nope/cancel", nil), 404)
		want(t, e.post("/v1/researches/nope/resume", nil), 404)
		want(t, e.get("/v1/researches/nope/report"), 404)
		want(t, e.get("/v1/researches/nope/check"), 404)
		want(t, e.get("/v1/researches/nope/events"), 404)
		r = e.get("/v1/researches/" + c.ID + "/events?after=100000")
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "after" {
			t.Fatalf("field %q", f)
		}
		want(t, e.do("GET", "/v1/researches/"+c.ID+"/events?after=-1", nil, nil, false), 400)
		// Nothing after the last event of a finished research: 204, so
		// an EventSource stops reconnecting.
		want(t, e.get(fmt.Sprintf("/v1/researches/%s/events?after=%d", c.ID, seqs[len(seqs)-1])), 204)
	})

	t.Run("threads", func(t *testing.T) {
		r := e.post("/v1/threads/"+c.ThreadID+"/researches", map[string]any{"question": "When did he die?"})
		want(t, r, 202)
		var f struct {
			ID       string `json:"id"`
			ThreadID string `json:"thread_id"`
		}
		r.json(t, &f)
		if f.ThreadID != c.ThreadID {
			t.Fatalf("follow-up in thread %s, want %s", f.ThreadID, c.ThreadID)
		}
		done := e.waitStatus(f.ID, "completed")
		if len(done["history"].([]any)) != 1 {
			t.Fatalf("follow-up history: %v", done["history"])
		}
		var v struct {
			Queries []struct {
				Question, Answer string
			}
		}
		tv := e.get("/v1/threads/" + c.ThreadID)
		want(t, tv, 200)
		tv.json(t, &v)
		if len(v.Queries) != 2 || v.Queries[0].Question != question || v.Queries[1].Answer == "" {
			t.Fatalf("thread queries: %+v", v.Queries)
		}
		want(t, e.get("/v1/threads"), 200)
		nt := e.post("/v1/threads", map[string]any{"title": "empty one"})
		want(t, nt, 201)
		var th struct{ ID, Status string }
		nt.json(t, &th)
		if th.Status != "active" {
			t.Fatalf("new thread: %s", nt.Body)
		}
		want(t, e.post("/v1/threads/"+th.ID+"/close", nil), 200)
		r = e.post("/v1/threads/"+th.ID+"/researches", map[string]any{"question": "anything?", "sources": []string{"kb:wiki"}})
		want(t, r, 409)
		want(t, e.post("/v1/threads/"+th.ID+"/close", nil), 409)
		want(t, e.get("/v1/threads/nope"), 404)
		want(t, e.post("/v1/threads/nope/close", nil), 404)
		want(t, e.post("/v1/threads/nope/researches", map[string]any{"question": "q"}), 404)
		want(t, e.postBad("/v1/threads", map[string]any{"title": ""}), 422)
	})

	t.Run("list", func(t *testing.T) {
		for range 3 {
			want(t, e.post("/v1/researches", map[string]any{"question": "Who was Verdi?", "sources": []string{"kb:wiki"}, "breadth": 1, "depth": 0}), 202)
		}
		var ids []string
		next := ""
		for range 10 {
			r := e.get("/v1/researches?limit=2" + next)
			want(t, r, 200)
			var p struct {
				Items []struct {
					ID string `json:"id"`
				}
				NextCursor string `json:"next_cursor"`
			}
			r.json(t, &p)
			for _, it := range p.Items {
				ids = append(ids, it.ID)
			}
			if p.NextCursor == "" {
				break
			}
			next = "&cursor=" + p.NextCursor
		}
		if len(ids) != 5 || slices.Compact(slices.Clone(ids)) == nil {
			t.Fatalf("paged ids: %v", ids)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %s twice in %v", id, ids)
			}
			seen[id] = true
		}
		r := e.get("/v1/researches?thread_id=" + c.ThreadID + "&status=completed")
		want(t, r, 200)
		var p struct{ Items []any }
		r.json(t, &p)
		if len(p.Items) != 2 {
			t.Fatalf("thread filter: %d items", len(p.Items))
		}
		want(t, e.do("GET", "/v1/researches?cursor=garbage", nil, nil, true), 400)
		want(t, e.do("GET", "/v1/researches?status=done", nil, nil, false), 400)
		want(t, e.do("GET", "/v1/researches?limit=0", nil, nil, false), 400)
	})

	t.Run("knowledge bases", func(t *testing.T) {
		r := e.post("/v1/knowledge-bases", map[string]any{"name": "notes", "description": "my notes"})
		want(t, r, 201)
		want(t, e.post("/v1/knowledge-bases", map[string]any{"name": "notes"}), 409)
		r = e.postBad("/v1/knowledge-bases", map[string]any{"name": "../etc"})
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "name" {
			t.Fatalf("field %q", f)
		}
		up := e.upload("notes", map[string]string{"fees.md": "# Fees\n\nFees are paid on the 25th of each month by bank transfer.\n", "blob.bin": "\x00\x01\x02\x03binary", "empty.txt": ""})
		want(t, up, 200)
		var rep struct {
			Added  int
			Failed []struct{ Origin, Reason string }
		}
		up.json(t, &rep)
		if rep.Added != 1 || len(rep.Failed) != 2 {
			t.Fatalf("upload report: %s", up.Body)
		}
		for _, f := range rep.Failed {
			if strings.Contains(f.Origin, "quarry-upload") || (f.Origin != "blob.bin" && f.Origin != "empty.txt") {
				t.Fatalf("a failure names the temporary file: %+v", f)
			}
		}
		bad := e.upload("notes", map[string]string{"only.bin": "\x00\x00\x00"})
		want(t, bad, 422)
		if _, f, msg := bad.apiErr(t); f != "file" || !strings.Contains(msg, "only.bin") {
			t.Fatalf("all-bad upload: %s %s", f, msg)
		}
		want(t, e.do("POST", "/v1/knowledge-bases/notes/documents", []byte(`{}`), nil, false), 415)
		// An upload over the server's synchronous size is ingested in the
		// background and followed through its status.
		long := "# Minutes\n\n" + strings.Repeat("The committee met on Tuesday and approved the annual budget of the library. ", 80)
		big := e.upload("notes", map[string]string{"minutes.md": long, "broken.bin": "\x00\x01"})
		want(t, big, 202)
		var in struct {
			ID, Status string
			Links      map[string]string
			Report     *struct {
				Added  int
				Failed []struct{ Origin string }
			}
		}
		big.json(t, &in)
		if big.Header.Get("Location") != in.Links["self"] || in.Status != "running" {
			t.Fatalf("background upload: %s", big.Body)
		}
		for deadline := time.Now().Add(30 * time.Second); in.Status == "running" && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			g := e.get(in.Links["self"])
			want(t, g, 200)
			g.json(t, &in)
		}
		if in.Status != "completed" || in.Report == nil || in.Report.Added != 1 || len(in.Report.Failed) != 1 || in.Report.Failed[0].Origin != "broken.bin" {
			t.Fatalf("background upload ended: %+v %+v", in, in.Report)
		}
		want(t, e.get("/v1/knowledge-bases/notes/ingests/nope"), 404)
		want(t, e.raw("DELETE", "/v1/knowledge-bases/notes/documents"), 405)
		s := e.get("/v1/knowledge-bases/notes/search?q=when+are+fees+paid&k=3&mode=bm25")
		want(t, s, 200)
		var hits struct {
			Items []struct {
				SourceURL string `json:"source_url"`
			}
		}
		s.json(t, &hits)
		if len(hits.Items) != 1 || hits.Items[0].SourceURL != "kb://notes/upload/fees.md" {
			t.Fatalf("search: %s", s.Body)
		}
		want(t, e.get("/v1/knowledge-bases/notes/search?q=fees&include_stale=true&fusion=rrf&bm25_weight=1&vector_weight=0.5&lang=en&source=kb://"), 200)
		r = e.do("GET", "/v1/knowledge-bases/notes/search?q=", nil, nil, false)
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "q" {
			t.Fatalf("field %q", f)
		}
		want(t, e.do("GET", "/v1/knowledge-bases/notes/search?q=x&mode=magic", nil, nil, false), 422)
		want(t, e.get("/v1/knowledge-bases/nope/search?q=x"), 404)
		kbv := e.get("/v1/knowledge-bases/notes")
		want(t, kbv, 200)
		var st struct{ Sources, Chunks int }
		kbv.json(t, &st)
		if st.Sources != 2 || st.Chunks < 2 {
			t.Fatalf("stats: %s", kbv.Body)
		}
		want(t, e.get("/v1/knowledge-bases"), 200)

		// A crawl of a local site (the test server allows private
		// addresses), followed by its log.
		site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/":
				fmt.Fprint(w, `<html><head><title>Home</title></head><body><p>Welcome to the billing help pages of the example utility company.</p><a href="/fees">fees</a></body></html>`)
			case "/fees":
				fmt.Fprint(w, `<html><head><title>Fees</title></head><body><p>Fees are due on the 25th of every month, and late fees start after ten days.</p></body></html>`)
			default:
				http.NotFound(w, r)
			}
		}))
		defer site.Close()
		cr := e.post("/v1/knowledge-bases/notes/crawls", map[string]any{"url": site.URL + "/", "max_pages": 10, "delay": "0s"})
		want(t, cr, 202)
		var logs struct {
			Items []struct {
				Status       string
				PagesCrawled int `json:"pages_crawled"`
			}
		}
		deadline := time.Now().Add(30 * time.Second)
		for time.Now().Before(deadline) {
			lr := e.get("/v1/knowledge-bases/notes/crawls")
			want(t, lr, 200)
			lr.json(t, &logs)
			if len(logs.Items) > 0 && logs.Items[0].Status != "running" {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if len(logs.Items) != 1 || logs.Items[0].Status != "success" || logs.Items[0].PagesCrawled != 2 {
			t.Fatalf("crawl log: %+v", logs.Items)
		}
		r = e.post("/v1/knowledge-bases/notes/crawls", map[string]any{"url": "ftp://example.com/"})
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "url" {
			t.Fatalf("field %q", f)
		}
		want(t, e.postBad("/v1/knowledge-bases/notes/crawls", map[string]any{"url": site.URL, "max_pages": 0}), 422)
		// Q&A over it, in a session.
		a := e.post("/v1/knowledge-bases/notes/ask", map[string]any{"question": "When are fees paid?"})
		want(t, a, 200)
		var ans struct {
			SessionID string `json:"session_id"`
			Answer    string
			Unknown   bool
		}
		a.json(t, &ans)
		if ans.Unknown || !strings.Contains(ans.Answer, "25th") {
			t.Fatalf("ask: %s", a.Body)
		}
		want(t, e.post("/v1/knowledge-bases/notes/ask", map[string]any{"question": "And late fees?", "session_id": ans.SessionID, "top_k": 3}), 200)
		sess := e.get("/v1/sessions/" + ans.SessionID)
		want(t, sess, 200)
		var sv struct{ Messages []any }
		sess.json(t, &sv)
		if len(sv.Messages) != 4 {
			t.Fatalf("session: %s", sess.Body)
		}
		want(t, e.postBad("/v1/knowledge-bases/notes/ask", map[string]any{"question": "q", "top_k": 21}), 422)
		want(t, e.post("/v1/knowledge-bases/nope/ask", map[string]any{"question": "q"}), 404)
		want(t, e.do("DELETE", "/v1/sessions/"+ans.SessionID, nil, nil, true), 204)
		want(t, e.get("/v1/sessions/"+ans.SessionID), 404)
		want(t, e.get("/v1/sessions/not-a-uuid"), 422)
		want(t, e.do("DELETE", "/v1/knowledge-bases/notes", nil, nil, true), 204)
		want(t, e.do("DELETE", "/v1/knowledge-bases/notes", nil, nil, true), 404)
		want(t, e.get("/v1/knowledge-bases/notes"), 404)
		want(t, e.get("/v1/knowledge-bases/notes/crawls"), 404)
	})

	t.Run("routes", func(t *testing.T) {
		r := e.raw("GET", "/v2/nothing")
		want(t, r, 404)
		r = e.raw("DELETE", "/v1/researches")
		if r.Status != 405 || !strings.Contains(r.Header.Get("Allow"), "POST") {
			t.Fatalf("405: %d %v", r.Status, r.Header)
		}
	})

	// Every documented operation was called.
	want(t, e.get("/metrics"), 200)
	metrics := e.get("/metrics")
	for _, op := range documentedOperations(t) {
		if !bytes.Contains(metrics.Body, []byte(`route="`+op+`"`)) {
			t.Errorf("the test never called %s", op)
		}
	}
	for _, series := range []string{"quarry_researches{status=\"completed\"}", "quarry_queue_depth", "quarry_llm_tokens_total", "quarry_http_request_duration_seconds_bucket"} {
		if !bytes.Contains(metrics.Body, []byte(series)) {
			t.Errorf("metrics lack %s", series)
		}
	}
}

// documentedOperations lists "METHOD /path" for every operation of the
// OpenAPI document.
func documentedOperations(t *testing.T) []string {
	raw, err := server.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := libopenapi.NewDocument(raw)
	if err != nil {
		t.Fatal(err)
	}
	m, err := doc.BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for path, item := range m.Model.Paths.PathItems.FromOldest() {
		for method := range item.GetOperations().FromOldest() {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	if len(ops) < 25 {
		t.Fatalf("only %d operations documented", len(ops))
	}
	return ops
}

// upload sends files as a multipart upload.
func (e *env) upload(kbName string, files map[string]string) response {
	e.t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		w, err := mw.CreateFormFile("file", n)
		if err != nil {
			e.t.Fatal(err)
		}
		_, _ = io.WriteString(w, files[n])
	}
	_ = mw.Close()
	return e.do("POST", "/v1/knowledge-bases/"+kbName+"/documents", buf.Bytes(), map[string]string{"Content-Type": mw.FormDataContentType()}, true)
}

// checkSeqs fails unless seqs run from first without a gap or repeat.
func checkSeqs(t *testing.T, seqs []int64, first int64) {
	t.Helper()
	if len(seqs) == 0 {
		t.Fatal("no events")
	}
	for i, s := range seqs {
		if s != first+int64(i) {
			t.Fatalf("event %d has seq %d, want %d (seqs %v)", i, s, first+int64(i), seqs)
		}
	}
}

var sseField = regexp.MustCompile(`^(id|event|data): ?(.*)$`)

// sse reads a research's Server-Sent Events after after, up to n events
// (all when n < 0) and returns their sequence numbers; header is sent
// with the request (Last-Event-ID).
func (e *env) sse(id string, after int64, n int, header map[string]string) []int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u := e.URL + "/v1/researches/" + id + "/events"
	if after > 0 {
		u += "?after=" + strconv.FormatInt(after, 10)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
	req.Header.Set("Accept", "text/event-stream")
	if e.token != "" {
		req.Header.Set("Authorization", "Bearer "+e.token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if ok, errs := e.spec.ValidateHttpRequest(req); !ok {
		e.t.Errorf("events request:%s", fmtErrs(errs))
	}
	resp, err := e.client.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(resp.Body)
		e.t.Fatalf("events: %d %s", resp.StatusCode, b)
	}
	var seqs []int64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var evID, evType, data string
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			switch {
			case evType == "end":
				return seqs
			case evID != "":
				seq, err := strconv.ParseInt(evID, 10, 64)
				if err != nil {
					e.t.Fatalf("id %q", evID)
				}
				var ev struct {
					Seq  int64
					Type string
				}
				if err := json.Unmarshal([]byte(data), &ev); err != nil || ev.Seq != seq || ev.Type != evType {
					e.t.Fatalf("event %s/%s does not match its data %s", evID, evType, data)
				}
				seqs = append(seqs, seq)
				if n >= 0 && len(seqs) == n {
					return seqs
				}
			}
			evID, evType, data = "", "", ""
			continue
		}
		if m := sseField.FindStringSubmatch(line); m != nil {
			switch m[1] {
			case "id":
				evID = m[2]
			case "event":
				evType = m[2]
			case "data":
				data = m[2]
			}
		}
	}
	e.t.Fatalf("the stream ended without an end event after %v: %v", seqs, sc.Err())
	return nil
}
