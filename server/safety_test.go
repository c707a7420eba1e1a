package server_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/quarryhq/quarry/app"
	"github.com/quarryhq/quarry/server"
)

// TestTokens: loopback is open while no token exists; after one is
// created every request needs a valid, unrevoked token with the route's
// scope.
func TestTokens(t *testing.T) {
	e := start(t, envOptions{})
	want(t, e.get("/v1/knowledge-bases"), 200)
	ctx := context.Background()
	st, err := e.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret, tok, err := server.CreateToken(ctx, st, "ci", []string{"research"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "qry_") || tok.Hash == secret || tok.Hash != server.HashToken(secret) {
		t.Fatalf("token %+v", tok)
	}
	if _, _, err := server.CreateToken(ctx, st, "ci", []string{"research"}, time.Now()); err == nil {
		t.Fatal("a second live token of one name")
	}
	if _, _, err := server.CreateToken(ctx, st, "x", []string{"admin"}, time.Now()); err == nil || !strings.Contains(err.Error(), "scope") {
		t.Fatalf("unknown scope: %v", err)
	}
	r := e.get("/v1/researches")
	want(t, r, 401)
	if code, f, _ := r.apiErr(t); code != "unauthorized" || f != "Authorization" {
		t.Fatalf("%s %s", code, f)
	}
	want(t, e.get("/metrics"), 401)
	want(t, e.get("/healthz"), 200) // probes need no token
	e.token = "qry_wrong"
	want(t, e.get("/v1/researches"), 401)
	e.token = secret
	want(t, e.get("/v1/researches"), 200)
	want(t, e.get("/metrics"), 200)
	r = e.get("/v1/knowledge-bases")
	want(t, r, 403)
	if code, _, msg := r.apiErr(t); code != "forbidden" || !strings.Contains(msg, `"kb"`) {
		t.Fatalf("%s %s", code, msg)
	}
	r = e.do("GET", "/v1/researches", nil, map[string]string{"Authorization": "Basic abc"}, true)
	want(t, r, 401)
	if err := st.TokenRevoke(ctx, "ci", time.Now()); err != nil {
		t.Fatal(err)
	}
	r = e.get("/v1/researches")
	want(t, r, 401)
	if _, _, msg := r.apiErr(t); !strings.Contains(msg, "revoked") {
		t.Fatalf("revoked: %s", msg)
	}
	// The secret is in no stored row and no response.
	toks, err := st.TokenList(ctx)
	if err != nil || len(toks) != 1 || toks[0].Hash == secret {
		t.Fatalf("stored: %+v %v", toks, err)
	}
}

// TestExposure: a non-loopback address with no token refuses to start
// unless insecure; with a token it starts.
func TestExposure(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	if err := e.Server.CheckExposure(ctx, "127.0.0.1:8080"); err != nil {
		t.Fatal(err)
	}
	err := e.Server.CheckExposure(ctx, "0.0.0.0:8080")
	if err == nil || !strings.Contains(err.Error(), "--insecure") {
		t.Fatalf("non-loopback without a token: %v", err)
	}
	st, _ := e.App.Store(ctx)
	if _, _, err := server.CreateToken(ctx, st, "ops", []string{"kb"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := e.Server.CheckExposure(ctx, "0.0.0.0:8080"); err != nil {
		t.Fatalf("with a token: %v", err)
	}
	for addr, loop := range map[string]bool{"127.0.0.1:1": true, "[::1]:1": true, "localhost:1": true, "0.0.0.0:1": false, ":8080": false, "10.0.0.1:1": false} {
		if server.Loopback(addr) != loop {
			t.Errorf("Loopback(%q) = %v", addr, !loop)
		}
	}
}

// TestBadInput: every kind of bad request gets its status and a message
// naming the field or the rule, and nothing is stored.
func TestBadInput(t *testing.T) {
	e := start(t, envOptions{Options: server.Options{MaxBodyBytes: 4096}})
	cases := []struct {
		name, body   string
		status       int
		field, words string
	}{
		{"malformed", `{"question": "x",`, 400, "body", "ends too early"},
		{"not json", `question=x`, 400, "body", "not valid JSON"},
		{"wrong type", `{"question": 42, "sources": ["kb:wiki"]}`, 400, "question", "must be a string"},
		{"wrong type nested", `{"question": "q", "sources": "kb:wiki"}`, 400, "sources", "must be an array"},
		{"fraction for an integer", `{"question": "q", "sources": ["kb:wiki"], "depth": 1.5}`, 400, "depth", "must be an integer"},
		{"exponent for an integer", `{"question": "q", "sources": ["kb:wiki"], "max_tokens": 1e12}`, 400, "max_tokens", "must be an integer"},
		{"unknown field", `{"question": "q", "sources": ["kb:wiki"], "depht": 2}`, 400, "depht", "not a known field"},
		{"two objects", `{"question": "q", "sources": ["kb:wiki"]} {}`, 400, "body", "one JSON object"},
		{"empty", ``, 400, "body", "empty"},
		{"too long", `{"question": "` + strings.Repeat("x", 2001) + `", "sources": ["kb:wiki"]}`, 422, "question", "at most 2000 characters, got 2001"},
		{"empty question", `{"question": "  ", "sources": ["kb:wiki"]}`, 422, "question", "must not be empty"},
		{"no sources", `{"question": "q"}`, 422, "sources", "at least one source"},
		{"missing kb", `{"question": "q", "sources": ["kb:nope"]}`, 422, "sources", `"nope" does not exist`},
		{"bad source", `{"question": "q", "sources": ["gopher"]}`, 422, "sources", "gopher"},
		{"breadth", `{"question": "q", "sources": ["kb:wiki"], "breadth": 21}`, 422, "breadth", "between 1 and 20"},
		{"depth", `{"question": "q", "sources": ["kb:wiki"], "breadth": 2, "depth": 9}`, 422, "depth", "between 0 and 5"},
		{"level and breadth", `{"question": "q", "sources": ["kb:wiki"], "level": "quick", "breadth": 2}`, 422, "level", "not both"},
		{"level", `{"question": "q", "sources": ["kb:wiki"], "level": "deep"}`, 422, "level", "quick, standard or comprehensive"},
		{"max tokens", `{"question": "q", "sources": ["kb:wiki"], "max_tokens": 10}`, 422, "max_tokens", "at least 8000"},
		{"timeout", `{"question": "q", "sources": ["kb:wiki"], "timeout": "soon"}`, 422, "timeout", "duration"},
		{"over the limit", `{"question": "` + strings.Repeat("x", 5000) + `", "sources": ["kb:wiki"]}`, 413, "", "over the limit of 4096 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", "/v1/researches", []byte(c.body), nil, false)
			want(t, r, c.status)
			_, field, msg := r.apiErr(t)
			if field != c.field || !strings.Contains(msg, c.words) {
				t.Fatalf("field %q message %q; want %q and %q", field, msg, c.field, c.words)
			}
		})
	}
	r := e.do("POST", "/v1/researches", []byte(`{"question": "q", "sources": ["kb:wiki"]}`), map[string]string{"Content-Type": "text/plain"}, false)
	want(t, r, 415)
	list := e.get("/v1/researches")
	want(t, list, 200)
	var p struct{ Items []any }
	list.json(t, &p)
	if len(p.Items) != 0 {
		t.Fatalf("bad requests stored %d researches", len(p.Items))
	}
}

// TestLimits: per-address and per-token rate limits answer 429 with
// Retry-After; a token's pending and running researches are bounded.
func TestLimits(t *testing.T) {
	t.Run("rate", func(t *testing.T) {
		// One request every 5 s after a burst of 3: the fourth is refused
		// however slowly this machine sends them.
		e := start(t, envOptions{Options: server.Options{Rate: -1, IPRate: 0.2, IPBurst: 3}})
		codes := map[int]int{}
		var last response
		for range 6 {
			last = e.get("/v1/threads")
			codes[last.Status]++
			if last.Status == 429 {
				break
			}
		}
		if codes[200] != 3 || codes[429] != 1 {
			t.Fatalf("statuses %v", codes)
		}
		if ra, err := strconv.Atoi(last.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 5 {
			t.Fatalf("Retry-After %q", last.Header.Get("Retry-After"))
		}
		if code, _, _ := last.apiErr(t); code != "rate_limited" {
			t.Fatalf("code %s", code)
		}
		want(t, e.get("/healthz"), 200) // probes are never limited
	})
	t.Run("researches per token", func(t *testing.T) {
		e := start(t, envOptions{Options: server.Options{MaxResearches: 2, Workers: -1}})
		body := map[string]any{"question": "Who was Verdi?", "sources": []string{"kb:wiki"}, "breadth": 1, "depth": 0}
		want(t, e.post("/v1/researches", body), 202)
		want(t, e.post("/v1/researches", body), 202)
		r := e.post("/v1/researches", body)
		want(t, r, 429)
		if _, f, msg := r.apiErr(t); f != "question" || !strings.Contains(msg, "2 researches") {
			t.Fatalf("%s %s", f, msg)
		}
	})
}

// TestWebSocketResume: a WebSocket client that leaves mid-stream and comes
// back with after= its last seq gets every event once, in order; so does
// an SSE client with Last-Event-ID.
func TestWebSocketResume(t *testing.T) {
	e := start(t, envOptions{})
	c := struct{ ID string }{e.research(nil)}
	first := e.ws(c.ID, 0, 3)
	checkSeqs(t, first, 1)
	rest := e.ws(c.ID, first[len(first)-1], -1)
	checkSeqs(t, append(first, rest...), 1)

	head := e.sse(c.ID, 0, 4, nil)
	tail := e.sse(c.ID, 0, -1, map[string]string{"Last-Event-ID": "4"})
	checkSeqs(t, append(head, tail...), 1)
	if len(head)+len(tail) != len(first)+len(rest) {
		t.Fatalf("SSE saw %d events, WebSocket %d", len(head)+len(tail), len(first)+len(rest))
	}
}

// ws reads up to n events (all when n < 0) after after over a WebSocket
// and returns their sequence numbers; reading all ends with the normal
// close the server sends when the research ends.
func (e *env) ws(id string, after int64, n int) []int64 {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	u := strings.Replace(e.URL, "http://", "ws://", 1) + "/v1/researches/" + id + "/events?after=" + itoa(after)
	c, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: e.client})
	if err != nil {
		e.t.Fatal(err)
	}
	defer c.CloseNow()
	c.SetReadLimit(1 << 22)
	var seqs []int64
	for n < 0 || len(seqs) < n {
		_, data, err := c.Read(ctx)
		if err != nil {
			if n < 0 && websocket.CloseStatus(err) == websocket.StatusNormalClosure {
				return seqs
			}
			e.t.Fatalf("after %v: %v", seqs, err)
		}
		var ev struct{ Seq int64 }
		if err := decodeJSON(data, &ev); err != nil {
			e.t.Fatal(err)
		}
		seqs = append(seqs, ev.Seq)
	}
	_ = c.Close(websocket.StatusNormalClosure, "enough")
	return seqs
}

// TestShutdownClosesStreams: a server shutting down closes WebSocket
// watchers with 1012 (reconnect) and SSE watchers with a reconnect event,
// and Serve returns with nothing left running.
func TestShutdownClosesStreams(t *testing.T) {
	e := start(t, envOptions{Options: server.Options{Workers: -1}}) // nothing runs it: it stays pending
	c := struct{ ID string }{e.research(nil)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := e.dialEvents(ctx, c.ID)
	defer conn.CloseNow()
	if _, _, err := conn.Read(ctx); err != nil { // the pending event
		t.Fatal(err)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", e.URL+"/v1/researches/"+c.ID+"/events?after=1", nil)
	resp, err := e.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	go func() { time.Sleep(100 * time.Millisecond); e.stop() }()
	_, _, err = conn.Read(ctx)
	if websocket.CloseStatus(err) != websocket.StatusServiceRestart {
		t.Fatalf("close: %v", err)
	}
	var ce websocket.CloseError
	if !errors.As(err, &ce) || !strings.Contains(ce.Reason, "after=1") {
		t.Fatalf("close reason: %v", err)
	}
	body := readAll(t, resp)
	if !strings.Contains(body, "event: reconnect") || !strings.Contains(body, `"after":1`) {
		t.Fatalf("SSE at shutdown: %q", body)
	}
}

// TestSilentWatcher: a WebSocket client that never reads neither slows
// the research nor the other watchers, and the server still shuts down
// with nothing left running.
func TestSilentWatcher(t *testing.T) {
	e := start(t, envOptions{Options: server.Options{Workers: -1, WriteTimeout: 200 * time.Millisecond}})
	c := struct{ ID string }{e.research(nil)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	silent := e.dialEvents(ctx, c.ID)
	defer silent.CloseNow()
	got := make(chan []int64, 1)
	go func() { got <- e.ws(c.ID, 0, -1) }()
	rn, err := e.App.Runner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // both watchers are subscribed
	res, err := rn.Run(ctx, c.ID)
	if err != nil || res.Status != "completed" {
		t.Fatalf("research with a silent watcher: %v", err)
	}
	select {
	case seqs := <-got:
		checkSeqs(t, seqs, 1)
	case <-ctx.Done():
		t.Fatal("the reading watcher never finished")
	}
}

// TestConnectionsFromEightAddresses: clients on 8 addresses holding every
// connection the defaults let them (idle keep-alives) leave room for
// another client, whose health check is answered at once. (At 256 per
// address, 4 addresses filled the server's 1,024.)
func TestConnectionsFromEightAddresses(t *testing.T) {
	e := start(t, envOptions{})
	addr := strings.TrimPrefix(e.URL, "http://")
	var mu sync.Mutex
	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	var wg sync.WaitGroup
	for a := 2; a < 10; a++ {
		d := &net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(a))}}
		for range 200 {
			wg.Go(func() {
				c, err := d.Dial("tcp", addr)
				if err != nil {
					return
				}
				mu.Lock()
				held = append(held, c)
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	other := &http.Client{Timeout: time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.10")}}).DialContext}}
	defer other.CloseIdleConnections()
	resp, err := other.Get(e.URL + "/healthz")
	if err != nil {
		t.Fatalf("a ninth address while eight hold all they may: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("healthz: %d", resp.StatusCode)
	}
}

// TestConnectionFlood: one address opening 10,000 connections holds at
// most its share of them; the rest are closed at once, and a client at
// another address is still served.
func TestConnectionFlood(t *testing.T) {
	const attempts, perIP = 10000, 64
	e := start(t, envOptions{Options: server.Options{MaxConns: 256, MaxConnsPerIP: perIP}})
	addr := strings.TrimPrefix(e.URL, "http://")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			_ = c.Close()
		}
	}()
	var mu sync.Mutex
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	var dialErrs atomic.Int64
	for range attempts {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err != nil {
				dialErrs.Add(1)
				return
			}
			// A connection over the limit is closed by the server at once.
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
			if _, err := c.Read(make([]byte, 1)); err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
				_ = c.Close()
				return
			}
			_ = c.SetReadDeadline(time.Time{})
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		})
	}
	wg.Wait()
	// A slow machine may close a refused connection after the first
	// look: look again once things are quiet.
	time.Sleep(300 * time.Millisecond)
	open := held[:0]
	for _, c := range held {
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Millisecond))
		if _, err := c.Read(make([]byte, 1)); errors.Is(err, os.ErrDeadlineExceeded) {
			open = append(open, c)
			continue
		}
		_ = c.Close()
	}
	held = open
	if len(held) > perIP {
		t.Fatalf("one address holds %d connections, more than its %d", len(held), perIP)
	}
	if len(held) < perIP/2 {
		t.Fatalf("only %d connections were kept open (dial errors %d)", len(held), dialErrs.Load())
	}
	// Another address (127.0.0.2 is loopback too) is served.
	other := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}).DialContext}}
	defer other.CloseIdleConnections()
	resp, err := other.Get(e.URL + "/healthz")
	if err != nil {
		t.Fatalf("another client during the flood: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("another client: %d", resp.StatusCode)
	}
	// Once the flood lets go, the address is served again, and the
	// refusals were counted.
	for _, c := range held {
		_ = c.Close()
	}
	held = nil
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := e.client.Get(e.URL + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the flooding address is never served again: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	m := e.get("/metrics")
	if !regexp.MustCompile(`quarry_http_rejected_total\{reason="connections"\} [1-9]`).Match(m.Body) {
		t.Fatal("refused connections are not counted in /metrics")
	}
}

// TestBrowserPages: without a token the server answers loopback names
// only, and refuses requests a page from another site sends (a visited
// page posting a form, DNS rebinding).
func TestBrowserPages(t *testing.T) {
	e := start(t, envOptions{Options: server.Options{CORSOrigins: []string{"https://app.example.com"}}})
	port := e.URL[strings.LastIndex(e.URL, ":")+1:]
	cases := []struct {
		name   string
		header map[string]string
		status int
		field  string
	}{
		{"loopback", nil, 200, ""},
		{"localhost", map[string]string{"Host": "localhost:" + port}, 200, ""},
		{"rebound name", map[string]string{"Host": "attacker.example:" + port}, 403, "Host"},
		{"another site", map[string]string{"Origin": "https://attacker.example"}, 403, "Origin"},
		{"a sandboxed page", map[string]string{"Origin": "null"}, 403, "Origin"},
		{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, "Origin"},
		{"the server's own pages", map[string]string{"Origin": "http://127.0.0.1:" + port}, 200, ""},
		{"an allowed origin", map[string]string{"Origin": "https://app.example.com"}, 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("GET", "/v1/knowledge-bases", nil, c.header, true)
			want(t, r, c.status)
			if c.status != 200 {
				if code, f, _ := r.apiErr(t); code != "forbidden" || f != c.field {
					t.Fatalf("%s %s", code, f)
				}
			}
		})
	}
	// A form a page posts cross-site starts nothing.
	r := e.do("POST", "/v1/researches", []byte(`{"question":"q","sources":["kb:wiki"]}`), map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://attacker.example"}, false)
	want(t, r, 403)
	if rs, _ := e.App.CurrentStore().ResearchList(context.Background(), 10); len(rs) != 0 {
		t.Fatalf("a cross-site form started %d researches", len(rs))
	}
	// With --insecure any host name is served.
	in := start(t, envOptions{Options: server.Options{Insecure: true}})
	want(t, in.do("GET", "/v1/knowledge-bases", nil, map[string]string{"Host": "quarry.internal"}, true), 200)
}

// TestScopesOfSources: a research over a knowledge base takes the kb
// scope as well, since its report quotes the knowledge base.
func TestScopesOfSources(t *testing.T) {
	e := start(t, envOptions{})
	ctx := context.Background()
	st, _ := e.App.Store(ctx)
	secret, _, err := server.CreateToken(ctx, st, "reader", []string{"research"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.token = secret
	r := e.post("/v1/researches", map[string]any{"question": question, "sources": []string{"kb:wiki"}})
	want(t, r, 403)
	if _, f, msg := r.apiErr(t); f != "sources" || !strings.Contains(msg, `"kb" scope`) {
		t.Fatalf("%s %s", f, msg)
	}
	// A research over a knowledge base, started by a token with both
	// scopes: the research-only token can neither read its report, events,
	// check or thread, nor cancel or resume it.
	full, _, err := server.CreateToken(ctx, st, "full", []string{"research", "kb"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.token = full
	id := e.research(nil)
	res := e.waitStatus(id, "completed")
	thread, _ := res["thread_id"].(string)
	e.token = secret
	for _, c := range []struct{ method, path string }{
		{"GET", "/v1/researches/" + id}, {"GET", "/v1/researches/" + id + "/report"}, {"GET", "/v1/researches/" + id + "/check"},
		{"GET", "/v1/researches/" + id + "/events"}, {"POST", "/v1/researches/" + id + "/cancel"}, {"POST", "/v1/researches/" + id + "/resume"},
		{"GET", "/v1/threads/" + thread}, {"POST", "/v1/threads/" + thread + "/close"},
	} {
		r := e.do(c.method, c.path, nil, nil, true)
		want(t, r, 403)
		if _, _, msg := r.apiErr(t); !strings.Contains(msg, `"kb" scope`) {
			t.Fatalf("%s %s: %s", c.method, c.path, msg)
		}
	}
	// Nor can it ask in that thread, whose earlier answers a follow-up is
	// given, whatever sources it names.
	for _, path := range []string{"/v1/threads/" + thread + "/researches", "/v1/researches"} {
		r := e.post(path, map[string]any{"question": "When did he die?", "sources": []string{"arxiv"}, "thread_id": thread})
		want(t, r, 403)
	}
	e.token = full
	want(t, e.get("/v1/researches/"+id+"/report"), 200)
}

// TestAdmissionUnderLoad: researches asked for at once never exceed the
// per-token limit.
func TestAdmissionUnderLoad(t *testing.T) {
	e := start(t, envOptions{Options: server.Options{MaxResearches: 2, Workers: -1}})
	body := []byte(`{"question":"Who was Verdi?","sources":["kb:wiki"],"breadth":1,"depth":0}`)
	var wg sync.WaitGroup
	var accepted, limited atomic.Int64
	for range 12 {
		wg.Go(func() {
			req, _ := http.NewRequest("POST", e.URL+"/v1/researches", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			resp, err := e.client.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			_ = resp.Body.Close()
			switch resp.StatusCode {
			case 202:
				accepted.Add(1)
			case 429:
				limited.Add(1)
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	if accepted.Load() != 2 || limited.Load() != 10 {
		t.Fatalf("%d accepted, %d limited; want 2 and 10", accepted.Load(), limited.Load())
	}
}

// TestModelEndpointGuard: a model endpoint named in a request is held to
// the SSRF guard (loopback, private, metadata addresses) unless the server
// allows private addresses, and a key sent with the request never comes
// back.
func TestModelEndpointGuard(t *testing.T) {
	e := start(t, envOptions{configure: func(c *app.Config) { c.AllowPrivate = false }})
	want(t, e.post("/v1/pipelines", map[string]any{"name": "p", "knowledge_base": "wiki", "settings": map[string]any{"mode": "bm25"}}), 201)
	for _, endpoint := range []string{"http://127.0.0.1:8000/v1", "http://169.254.169.254/v1", "http://10.1.2.3/v1", "http://[::1]:8000/v1"} {
		r := e.post("/v1/pipelines/p/generate", map[string]any{"query": "Dvořák", "model_config": map[string]any{
			"type": "claude", "model_name": "m", "api_key": "sk-ant-do-not-echo", "endpoint": endpoint}})
		want(t, r, 422)
		if _, f, _ := r.apiErr(t); f != "model_config.endpoint" || bytes.Contains(r.Body, []byte("do-not-echo")) {
			t.Fatalf("%s: %s", endpoint, r.Body)
		}
	}
	// Ollama with no endpoint defaults to loopback: held to the same
	// guard as the address written out, for a generate and an evaluation.
	ollama := map[string]any{"type": "ollama", "model_name": "llama3"}
	r := e.post("/v1/pipelines/p/generate", map[string]any{"query": "Dvořák", "model_config": ollama})
	want(t, r, 422)
	if _, f, _ := r.apiErr(t); f != "model_config.endpoint" {
		t.Fatalf("defaulted endpoint: %s", r.Body)
	}
	r = e.post("/v1/evaluations", map[string]any{"pipelines": []string{"p"}, "dataset": "d", "model_config": ollama})
	want(t, r, 422)
	if _, f, _ := r.apiErr(t); f != "model_config.endpoint" {
		t.Fatalf("evaluation with a defaulted endpoint: %s", r.Body)
	}
}

// TestNULInRequest: a NUL character in a path, a query value or a body's
// string is the client's error, naming where it is, on PostgreSQL too
// (which cannot store or compare one), never a 500.
func TestNULInRequest(t *testing.T) {
	e := start(t, envOptions{postgres: true})
	for _, tc := range []struct{ path, field string }{
		{"/v1/researches/a%00b", "path"},
		{"/v1/threads/a%00b", "path"},
		{"/v1/knowledge-bases/wiki/search?q=Verdi&source=a%00b", "source"},
		{"/v1/knowledge-bases/wiki/search?q=Verdi&lang=e%00n", "lang"},
	} {
		r := e.raw("GET", tc.path)
		if r.Status != http.StatusBadRequest {
			t.Errorf("GET %s: %d %s, want 400", tc.path, r.Status, r.Body)
			continue
		}
		if _, field, msg := r.apiErr(t); field != tc.field || !strings.Contains(msg, "NUL") {
			t.Errorf("GET %s: field %q, %q", tc.path, field, msg)
		}
	}
	for _, tc := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{"/v1/researches", map[string]any{"question": "Who was Verdi?", "sources": []string{"kb:wiki"}, "thread_id": "a\x00b"}, "thread_id"},
		{"/v1/researches", map[string]any{"question": "Who was Verdi?", "sources": []string{"kb:wiki", "kb:a\x00b"}}, "sources[1]"},
		{"/v1/evaluations", map[string]any{"pipelines": []string{"a\x00b"}}, "pipelines[0]"},
		// A dataset's lines are read after the body: the store's refusal
		// is still the request's error.
		{"/v1/datasets", map[string]any{"name": "nul", "knowledge_base": "wiki", "questions": []map[string]any{{"question": "a\x00b", "doc_ids": []string{"w00612"}}}}, "body"},
	} {
		r := e.postBad(tc.path, tc.body)
		if r.Status != http.StatusUnprocessableEntity {
			t.Errorf("POST %s %v: %d %s, want 422", tc.path, tc.body, r.Status, r.Body)
			continue
		}
		if _, field, msg := r.apiErr(t); field != tc.field || !strings.Contains(msg, "NUL") {
			t.Errorf("POST %s: field %q, %q; want %q", tc.path, field, msg, tc.field)
		}
	}
	// Once tokens are in force, a caller without one learns nothing of
	// the request: the answer is the token's, not the NUL's.
	ctx := context.Background()
	st, err := e.App.Store(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := server.CreateToken(ctx, st, "nul", []string{"research"}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if r := e.raw("GET", "/v1/researches/a%00b"); r.Status != http.StatusUnauthorized {
		t.Errorf("a NUL in the path without a token: %d %s, want 401", r.Status, r.Body)
	}
}
