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
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pb33f/libopenapi"

	"github.com/quarryhq/quarry/research/pdf"
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
		r := e.do("GET", "/v1/researches/"+c.ID+"/report?format=docx", nil, nil, false)
		want(t, r, 400)
		if _, f, _ := r.apiErr(t); f != "format" {
			t.Fatalf("field %q", f)
		}
		if _, err := pdf.Chromium(""); err == nil || os.Getenv("CI") == "true" {
			for _, path := range []string{"/v1/researches/" + c.ID + "?format=pdf", "/v1/researches/" + c.ID + "/report?format=pdf"} {
				p := e.do("GET", path, nil, nil, true)
				want(t, p, 200)
				if p.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(p.Body, []byte("%PDF-")) {
					t.Fatalf("%s: %s %q", path, p.Header.Get("Content-Type"), p.Body[:min(16, len(p.Body))])
				}
			}
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
		srcs := e.get("/v1/knowledge-bases/notes/sources?limit=1")
		want(t, srcs, 200)
		var sv0 struct {
			Items []struct{ URL string }
			Total int
		}
		srcs.json(t, &sv0)
		if sv0.Total < 2 || len(sv0.Items) != 1 {
			t.Fatalf("sources: %s", srcs.Body)
		}
		want(t, e.get("/v1/knowledge-bases/notes/sources?stale=true"), 200)
		want(t, e.do("GET", "/v1/knowledge-bases/notes/sources?stale=maybe", nil, nil, false), 400)
		want(t, e.get("/v1/knowledge-bases/nope/sources"), 404)
		chk := e.get("/v1/knowledge-bases/notes/chunks?source=" + url.QueryEscape(sv0.Items[0].URL))
		want(t, chk, 200)
		var chunks struct {
			Source string
			Items  []struct {
				ChunkIndex int `json:"chunk_index"`
				Text       string
				Tokens     int
			}
			Total, Offset int
		}
		chk.json(t, &chunks)
		if chunks.Source != sv0.Items[0].URL || len(chunks.Items) == 0 || chunks.Items[0].ChunkIndex != 0 || chunks.Items[0].Text == "" || chunks.Items[0].Tokens == 0 || chunks.Total != len(chunks.Items) {
			t.Fatalf("chunks: %s", chk.Body)
		}
		// The long upload's chunks, a page at a time.
		page := e.get("/v1/knowledge-bases/notes/chunks?limit=1&offset=1&source=" + url.QueryEscape("kb://notes/upload/minutes.md"))
		want(t, page, 200)
		page.json(t, &chunks)
		if len(chunks.Items) != 1 || chunks.Items[0].ChunkIndex != 1 || chunks.Offset != 1 || chunks.Total < 2 {
			t.Fatalf("a page of chunks: %s", page.Body)
		}
		for _, bad := range []string{"limit=0", "limit=1001", "offset=-1", "offset=x"} {
			r := e.do("GET", "/v1/knowledge-bases/notes/chunks?"+bad+"&source="+url.QueryEscape(sv0.Items[0].URL), nil, nil, false)
			want(t, r, 400)
			if _, f, _ := r.apiErr(t); f != strings.SplitN(bad, "=", 2)[0] {
				t.Fatalf("%s: the error names %q", bad, f)
			}
		}
		want(t, e.do("GET", "/v1/knowledge-bases/notes/chunks", nil, nil, false), 400)
		want(t, e.get("/v1/knowledge-bases/notes/chunks?source=https%3A%2F%2Fnowhere.example%2F"), 404)
		r = e.post("/v1/knowledge-bases/notes/crawls", map[string]any{"url": "ftp://example.com/"})
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "url" {
			t.Fatalf("field %q", f)
		}
		want(t, e.postBad("/v1/knowledge-bases/notes/crawls", map[string]any{"url": site.URL, "max_pages": 0}), 422)
		r = e.post("/v1/knowledge-bases/notes/crawls", map[string]any{"url": site.URL, "delay": "1000h"})
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "delay" {
			t.Fatalf("field %q", f)
		}
		// A schedule: stored, its first crawl at once, the next a second
		// later, each queued once by this server's job runner.
		put := func(v map[string]any, documented bool) response {
			data, _ := json.Marshal(v)
			return e.do("PUT", "/v1/knowledge-bases/notes/schedule", data, nil, documented)
		}
		want(t, e.get("/v1/knowledge-bases/notes/schedule"), 404)
		for _, bad := range []map[string]any{{"url": site.URL, "every": "500ms"}, {"url": site.URL, "every": "soon"}} {
			r := put(bad, true)
			want(t, r, 422)
			if _, f, _ := r.apiErr(t); f != "every" {
				t.Fatalf("%v: the error names %q", bad, f)
			}
		}
		r = put(map[string]any{"url": "ftp://example.com/"}, true)
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "url" {
			t.Fatalf("bad url: the error names %q", f)
		}
		want(t, put(map[string]any{"url": site.URL + "/", "every": "1s", "max_pages": 10, "delay": "0s"}, true), 200)
		deadline = time.Now().Add(30 * time.Second)
		for {
			lr := e.get("/v1/knowledge-bases/notes/crawls")
			lr.json(t, &logs)
			if len(logs.Items) >= 3 && logs.Items[0].Status != "running" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("scheduled crawls did not run: %+v", logs.Items)
			}
			time.Sleep(50 * time.Millisecond)
		}
		sg := e.get("/v1/knowledge-bases/notes/schedule")
		want(t, sg, 200)
		var sch struct {
			Every        string
			EverySeconds float64 `json:"every_seconds"`
		}
		sg.json(t, &sch)
		if sch.Every != "1s" || sch.EverySeconds != 1 {
			t.Fatalf("schedule: %s", sg.Body)
		}
		want(t, e.do("DELETE", "/v1/knowledge-bases/notes/schedule", nil, nil, true), 204)
		want(t, e.get("/v1/knowledge-bases/notes/schedule"), 404)
		want(t, put(map[string]any{"url": site.URL + "/", "every": "1h", "max_pages": 10, "delay": "0s"}, true), 200) // goes with its knowledge base
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
		r0 := e.postBad("/v1/knowledge-bases/notes/ask", map[string]any{"question": "q", "top_k": 0})
		want(t, r0, 422)
		if _, field, msg := r0.apiErr(t); field != "top_k" || !strings.Contains(msg, "got 0") {
			t.Errorf("top_k 0: field %q, %q", field, msg)
		}
		want(t, e.post("/v1/knowledge-bases/nope/ask", map[string]any{"question": "q"}), 404)
		want(t, e.do("DELETE", "/v1/sessions/"+ans.SessionID, nil, nil, true), 204)
		want(t, e.get("/v1/sessions/"+ans.SessionID), 404)
		want(t, e.get("/v1/sessions/not-a-uuid"), 422)
		want(t, e.do("DELETE", "/v1/knowledge-bases/notes", nil, nil, true), 204)
		want(t, e.do("DELETE", "/v1/knowledge-bases/notes", nil, nil, true), 404)
		want(t, e.get("/v1/knowledge-bases/notes"), 404)
		want(t, e.get("/v1/knowledge-bases/notes/crawls"), 404)
		want(t, e.get("/v1/knowledge-bases/notes/schedule"), 404)
		if n := e.countRows(t, "crawl_schedules"); n != 0 {
			t.Fatalf("%d schedules left after their knowledge base was deleted", n)
		}
	})

	t.Run("console", func(t *testing.T) { walkConsole(t, e) })

	t.Run("mcp", func(t *testing.T) {
		// The protocol itself is TestMCPOverHTTP's; here the three
		// methods answer as documented without a session.
		init := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
		r := e.do("POST", "/mcp", init, map[string]string{"Accept": "application/json, text/event-stream"}, false)
		if r.Status != 200 || r.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("initialize: %d %v %s", r.Status, r.Header, r.Body)
		}
		want(t, e.do("GET", "/mcp", nil, map[string]string{"Accept": "text/event-stream"}, false), 400)
		want(t, e.do("DELETE", "/mcp", nil, nil, false), 400)
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
	for _, series := range []string{"quarry_researches{status=\"completed\"}", "quarry_queue_depth", "quarry_jobs{kind=\"research\",state=\"completed\"}", "quarry_llm_tokens_total", "quarry_http_request_duration_seconds_bucket"} {
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

// walkConsole: datasets, pipelines, retrieve, generate against a fake
// OpenAI-compatible server (whole and streamed), chats and evaluations.
func walkConsole(t *testing.T, e *env) {
	ds := e.post("/v1/datasets", map[string]any{"name": "wiki-dev", "knowledge_base": "wiki", "questions": []map[string]any{
		{"id": "a", "question": "When was Antonín Dvořák born?", "answer": "8 September 1841", "doc_ids": []string{"w00612"}},
		{"id": "b", "question": "Giuseppe Verdi opera composer", "chunks": []map[string]any{{"doc_id": "w02079", "chunk_index": 0}}},
	}})
	want(t, ds, 201)
	var d struct{ ID, Questions int }
	ds.json(t, &d)
	if d.Questions != 2 {
		t.Fatalf("dataset: %s", ds.Body)
	}
	want(t, e.post("/v1/datasets", map[string]any{"name": "wiki-dev", "knowledge_base": "wiki", "questions": []map[string]any{{"question": "q", "doc_ids": []string{"w00612"}}}}), 409)
	r := e.post("/v1/datasets", map[string]any{"name": "bad", "knowledge_base": "wiki", "questions": []map[string]any{{"question": "q", "doc_ids": []string{"nope"}}}})
	want(t, r, 422)
	if _, f, _ := r.apiErr(t); f != "golden" {
		t.Fatalf("field %q", f)
	}
	want(t, e.post("/v1/datasets", map[string]any{"name": "beir", "knowledge_base": "wiki", "beir": map[string]string{
		"queries": `{"_id": "q1", "text": "Giuseppe Verdi"}` + "\n", "qrels": "query-id\tcorpus-id\tscore\nq1\tw02079\t1\n"}}), 201)
	want(t, e.post("/v1/datasets", map[string]any{"name": "none", "knowledge_base": "wiki"}), 422)
	list := e.get("/v1/datasets")
	want(t, list, 200)
	if !bytes.Contains(list.Body, []byte(`"wiki-dev"`)) || !bytes.Contains(list.Body, []byte(`"beir"`)) {
		t.Fatalf("datasets: %s", list.Body)
	}
	got := e.get("/v1/datasets/wiki-dev")
	want(t, got, 200)
	if !bytes.Contains(got.Body, []byte(`"chunk_index":-1`)) {
		t.Fatalf("dataset: %s", got.Body)
	}
	want(t, e.do("DELETE", "/v1/datasets/beir", nil, nil, true), 204)
	want(t, e.get("/v1/datasets/beir"), 404)

	p := e.post("/v1/pipelines", map[string]any{"name": "wiki-test", "pipeline_type": "test", "knowledge_base": "wiki", "dataset_id": d.ID, "settings": map[string]any{"mode": "bm25", "top_k": 3}})
	want(t, p, 201)
	want(t, e.post("/v1/pipelines", map[string]any{"name": "wiki-hybrid", "knowledge_base": "wiki", "dataset_id": "wiki-dev"}), 201)
	r = e.postBad("/v1/pipelines", map[string]any{"name": "x", "pipeline_type": "prod", "knowledge_base": "wiki"})
	want(t, r, 422)
	if _, f, msg := r.apiErr(t); f != "pipeline_type" || msg != "pipeline_type must be 'normal' or 'test'" {
		t.Fatalf("%s %s", f, msg)
	}
	want(t, e.get("/v1/pipelines?pipeline_type=prod"), 422)
	l := e.get("/v1/pipelines?pipeline_type=test&dataset_id=" + strconv.Itoa(d.ID))
	want(t, l, 200)
	if !bytes.Contains(l.Body, []byte("wiki-test")) || bytes.Contains(l.Body, []byte("wiki-hybrid")) {
		t.Fatalf("filtered: %s", l.Body)
	}
	want(t, e.get("/v1/pipelines/wiki-test"), 200)
	r = e.get("/v1/pipelines/999")
	want(t, r, 404)
	if _, _, msg := r.apiErr(t); msg != "Invalid pipeline ID" {
		t.Fatalf("unknown pipeline: %s", msg)
	}
	patch := func(path string, v any) response {
		b, _ := json.Marshal(v)
		return e.do("PATCH", path, b, nil, true)
	}
	want(t, patch("/v1/pipelines/wiki-hybrid", map[string]any{"settings": map[string]any{"mode": "hybrid", "top_k": 4}, "dataset_id": nil}), 200)
	want(t, patch("/v1/pipelines/wiki-hybrid", map[string]any{"settings": map[string]any{"top_k": 21}}), 422)
	// Given as 0, top_k is refused on create and update, not read as 5.
	for _, r := range []response{
		patch("/v1/pipelines/wiki-hybrid", map[string]any{"settings": map[string]any{"mode": "bm25", "top_k": 0}}),
		e.postBad("/v1/pipelines", map[string]any{"name": "zero", "knowledge_base": "wiki", "settings": map[string]any{"top_k": 0}}),
	} {
		if _, field, msg := r.apiErr(t); r.Status != 422 || field != "top_k" || msg != "Top K must be between 1 and 20" {
			t.Errorf("settings.top_k 0: %d %s %s", r.Status, field, msg)
		}
	}

	rt := e.post("/v1/pipelines/wiki-test/retrieve", map[string]any{"query": "When was Antonín Dvořák born?", "top_k": 2})
	want(t, rt, 200)
	var ret struct {
		Chunks []struct {
			IsGolden *bool `json:"is_golden"`
		}
		RetrievalTime float64 `json:"retrieval_time"`
	}
	rt.json(t, &ret)
	golden := 0
	for _, c := range ret.Chunks {
		if c.IsGolden != nil && *c.IsGolden {
			golden++
		}
	}
	if len(ret.Chunks) != 2 || ret.Chunks[1].IsGolden == nil || golden != 1 || ret.RetrievalTime <= 0 {
		t.Fatalf("retrieve: %s", rt.Body)
	}
	for _, c := range []struct {
		body map[string]any
		msg  string
	}{
		{map[string]any{"query": ""}, "Query must be 1-10000 characters"},
		{map[string]any{"query": "q", "top_k": 21}, "Top K must be between 1 and 20"},
		{map[string]any{"query": "q", "top_k": 0}, "Top K must be between 1 and 20"},
	} {
		r := e.postBad("/v1/pipelines/wiki-test/retrieve", c.body)
		want(t, r, 422)
		if _, _, msg := r.apiErr(t); msg != c.msg {
			t.Fatalf("%v: %s", c.body, msg)
		}
	}

	var seen []map[string]any
	var mu sync.Mutex
	llmSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		seen = append(seen, body)
		mu.Unlock()
		if body["stream"] == true {
			w.Header().Set("Content-Type", "text/event-stream")
			for _, piece := range []string{"Dvořák was born ", "on 8 September 1841 [S1]."} {
				b, _ := json.Marshal(piece)
				fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"llama3\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%s},\"finish_reason\":null}]}\n\n", b)
			}
			fmt.Fprint(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"llama3\",\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":10,\"total_tokens\":60}}\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"c","object":"chat.completion","created":1,"model":"llama3","choices":[{"index":0,"message":{"role":"assistant","content":"Dvořák was born on 8 September 1841 [S1]."},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":10,"total_tokens":60}}`)
	}))
	defer llmSrv.Close()
	model := map[string]any{"type": "vllm", "model_name": "llama3", "endpoint": llmSrv.URL + "/v1", "parameters": map[string]any{"temperature": 0.2}}
	sess := e.post("/v1/sessions", map[string]any{"language": "en"})
	want(t, sess, 201)
	var chat struct {
		ID string `json:"session_id"`
	}
	sess.json(t, &chat)
	g := e.post("/v1/pipelines/wiki-test/generate", map[string]any{"query": "When was Antonín Dvořák born?", "model_config": model, "chat_id": chat.ID})
	want(t, g, 200)
	var gen struct {
		Answer     string
		TokensUsed int     `json:"tokens_used"`
		LLMTime    float64 `json:"llm_time"`
		Messages   int     `json:"chat_messages"`
	}
	g.json(t, &gen)
	if gen.Answer != "Dvořák was born on 8 September 1841 [S1]." || gen.TokensUsed != 60 || gen.LLMTime <= 0 || gen.Messages != 2 {
		t.Fatalf("generate: %s", g.Body)
	}
	// Streamed: delta events, then the answer.
	b, _ := json.Marshal(map[string]any{"query": "When was Antonín Dvořák born?", "model_config": model})
	st := e.do("POST", "/v1/pipelines/wiki-test/generate", b, map[string]string{"Accept": "text/event-stream"}, true)
	want(t, st, 200)
	if !bytes.Contains(st.Body, []byte("event: delta\ndata: {\"text\":\"Dvořák was born \"}")) || !bytes.Contains(st.Body, []byte("event: answer\n")) {
		t.Fatalf("stream: %s", st.Body)
	}
	claude := map[string]any{"type": "claude", "model_name": "m", "api_key": "sk-wrong-secret"}
	r = e.post("/v1/pipelines/wiki-test/generate", map[string]any{"query": "q", "model_config": claude})
	want(t, r, 422)
	if _, f, msg := r.apiErr(t); f != "model_config.api_key" || msg != "Invalid Claude API key format" || bytes.Contains(r.Body, []byte("sk-wrong-secret")) {
		t.Fatalf("%s %s", f, r.Body)
	}
	for _, c := range []struct {
		params map[string]any
		msg    string
	}{
		{map[string]any{"temperature": 1.5}, "Temperature must be between 0.0 and 1.0"},
		{map[string]any{"max_tokens": 50}, "Max tokens must be between 100 and 4000"},
	} {
		m := map[string]any{"type": "vllm", "model_name": "llama3", "endpoint": llmSrv.URL + "/v1", "parameters": c.params}
		r := e.post("/v1/pipelines/wiki-test/generate", map[string]any{"query": "q", "model_config": m})
		want(t, r, 422)
		if _, _, msg := r.apiErr(t); msg != c.msg {
			t.Fatalf("%v: %s", c.params, msg)
		}
	}
	r = e.post("/v1/pipelines/wiki-test/generate", map[string]any{"query": "q", "model_config": map[string]any{"type": "vllm", "model_name": "m", "endpoint": "not a url"}})
	want(t, r, 422)
	if _, _, msg := r.apiErr(t); msg != "Invalid vLLM endpoint URL" {
		t.Fatalf("endpoint: %s", msg)
	}
	r = e.postBad("/v1/pipelines/wiki-test/generate", map[string]any{"query": "q", "model_config": model, "top_k": 0})
	want(t, r, 422)
	if _, field, msg := r.apiErr(t); field != "top_k" || msg != "Top K must be between 1 and 20" {
		t.Fatalf("top_k 0: %s %s", field, msg)
	}
	want(t, e.post("/v1/pipelines/999/generate", map[string]any{"query": "q", "model_config": model}), 404)
	// A model that is down: 502 with the timings.
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	r = e.post("/v1/pipelines/wiki-test/generate", map[string]any{"query": "Dvořák", "model_config": map[string]any{"type": "vllm", "model_name": "m", "endpoint": downURL + "/v1"}})
	want(t, r, 502)
	var fail struct {
		RetrievalTime float64 `json:"retrieval_time"`
	}
	r.json(t, &fail)
	if fail.RetrievalTime <= 0 {
		t.Fatalf("timings: %s", r.Body)
	}
	want(t, e.do("DELETE", "/v1/sessions/"+chat.ID, nil, nil, true), 204)

	ev := e.post("/v1/evaluations", map[string]any{"pipelines": []string{"wiki-test", "wiki-hybrid"}, "dataset": "wiki-dev", "k": 5, "model_config": model})
	want(t, ev, 201)
	var cmp struct {
		Runs []struct {
			ID      int
			Overall struct {
				NDCG     float64
				Answered int
				AnswerF1 float64 `json:"answer_f1"`
			}
		}
		Differences []struct{ Baseline string }
	}
	ev.json(t, &cmp)
	if len(cmp.Runs) != 2 || len(cmp.Differences) != 1 || cmp.Differences[0].Baseline != "wiki-test" || cmp.Runs[0].Overall.NDCG <= 0 || cmp.Runs[0].Overall.Answered != 1 || cmp.Runs[0].Overall.AnswerF1 <= 0 {
		t.Fatalf("evaluation: %s", ev.Body)
	}
	want(t, e.postBad("/v1/evaluations", map[string]any{"pipelines": []string{}}), 422)
	want(t, e.post("/v1/evaluations", map[string]any{"pipelines": []string{"nope"}}), 404)
	runs := e.get("/v1/evaluations?pipeline_id=wiki-test")
	want(t, runs, 200)
	want(t, e.get("/v1/evaluations/"+strconv.Itoa(cmp.Runs[1].ID)), 200)
	want(t, e.get("/v1/evaluations/99999"), 404)
	want(t, e.do("DELETE", "/v1/pipelines/wiki-hybrid", nil, nil, true), 204)
	want(t, e.do("DELETE", "/v1/pipelines/wiki-hybrid", nil, nil, true), 404)
	mu.Lock()
	defer mu.Unlock()
	if len(seen) < 3 || seen[0]["temperature"] != 0.2 || seen[0]["top_p"] != 0.9 {
		t.Fatalf("model requests: %v", seen)
	}
}
