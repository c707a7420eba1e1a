package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/quarryhq/quarry/server"
)

// BenchmarkSoak runs mixed traffic for QUARRY_SOAK (default 30s; the
// docs/benchmarks.md's figure is 10m): researches on the offline engine, searches,
// uploads and WebSocket watchers joining and leaving, under a per-address
// rate limit it is meant to hit. Any answer other than the expected one
// or a 429 fails it. It reports requests, 429s, and goroutines and heap in
// use (after a collection) once warmed up and again at the end, when the
// traffic has stopped.
func BenchmarkSoak(b *testing.B) {
	dur := 30 * time.Second
	if v := os.Getenv("QUARRY_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatalf("QUARRY_SOAK: %v", err)
		}
		dur = d
	}
	e := start(b, envOptions{Options: server.Options{Workers: 2, Rate: -1, IPRate: 150, IPBurst: 150, MaxResearches: 1000, Heartbeat: 5 * time.Second}})
	e.client.Transport.(*http.Transport).MaxIdleConnsPerHost = 32
	for range b.N {
		var requests, limited, failures atomic.Int64
		var firstErr atomic.Value
		fail := func(format string, args ...any) {
			failures.Add(1)
			firstErr.CompareAndSwap(nil, fmt.Sprintf(format, args...))
		}
		// call sends one request and checks its status: ok, or 429.
		call := func(method, path, ctype string, body io.Reader, ok int) []byte {
			req, _ := http.NewRequest(method, e.URL+path, body)
			if ctype != "" {
				req.Header.Set("Content-Type", ctype)
			}
			resp, err := e.client.Do(req)
			requests.Add(1)
			if err != nil {
				fail("%s %s: %v", method, path, err)
				return nil
			}
			defer resp.Body.Close()
			data, _ := io.ReadAll(resp.Body)
			switch resp.StatusCode {
			case ok:
				return data
			case http.StatusTooManyRequests:
				limited.Add(1)
				time.Sleep(200 * time.Millisecond)
			default:
				fail("%s %s: %d %s", method, path, resp.StatusCode, data)
			}
			return nil
		}
		ctx, stop := context.WithTimeout(context.Background(), dur)
		var wg sync.WaitGroup
		loop := func(pause time.Duration, fn func(i int)) {
			wg.Go(func() {
				for i := 0; ctx.Err() == nil; i++ {
					fn(i)
					time.Sleep(pause)
				}
			})
		}
		ids := make(chan string, 16)
		loop(300*time.Millisecond, func(i int) {
			body := fmt.Sprintf(`{"question":"Who was Giuseppe Verdi? (%d)","sources":["kb:wiki"],"breadth":2,"depth":1}`, i)
			if data := call("POST", "/v1/researches", "application/json", strings.NewReader(body), 202); data != nil {
				var c struct{ ID string }
				if decodeJSON(data, &c) == nil {
					select {
					case ids <- c.ID:
					default:
					}
				}
			}
		})
		for range 3 {
			loop(10*time.Millisecond, func(i int) {
				call("GET", "/v1/knowledge-bases/wiki/search?k=5&q="+url.QueryEscape([]string{"Verdi opera", "Dvořák symphony", "composer born", "Czech music"}[i%4]), "", nil, 200)
			})
		}
		loop(time.Second, func(i int) {
			var buf strings.Builder
			fmt.Fprintf(&buf, "--x\r\nContent-Disposition: form-data; name=\"file\"; filename=\"note-%d.md\"\r\n\r\n# Note %d\n\nThe meeting number %d is on Tuesday at ten.\n\r\n--x--\r\n", i%20, i, i)
			call("POST", "/v1/knowledge-bases/wiki/documents", "multipart/form-data; boundary=x", strings.NewReader(buf.String()), 200)
		})
		loop(50*time.Millisecond, func(int) {
			call("GET", "/v1/researches?limit=5", "", nil, 200)
		})
		for range 2 {
			wg.Go(func() {
				for ctx.Err() == nil {
					var id string
					select {
					case id = <-ids:
					case <-ctx.Done():
						return
					}
					wctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					conn, resp, err := websocket.Dial(wctx, strings.Replace(e.URL, "http://", "ws://", 1)+"/v1/researches/"+id+"/events", &websocket.DialOptions{HTTPClient: e.client})
					requests.Add(1)
					if err != nil {
						if resp != nil && resp.StatusCode == http.StatusTooManyRequests {
							limited.Add(1)
						} else {
							fail("watch %s: %v", id, err)
						}
						cancel()
						continue
					}
					conn.SetReadLimit(1 << 22)
					for range 5 { // read a few events, then leave
						if _, _, err := conn.Read(wctx); err != nil {
							if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
								fail("watch %s: %v", id, err)
							}
							break
						}
					}
					_ = conn.Close(websocket.StatusNormalClosure, "leaving")
					cancel()
				}
			})
		}
		warm := time.After(dur / 10)
		<-warm
		g0, h0 := settle()
		<-ctx.Done()
		wg.Wait()
		stop()
		e.client.CloseIdleConnections()
		// Let the queued researches finish, then measure again.
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			var p struct{ Items []any }
			if data := call("GET", "/v1/researches?status=pending&limit=1", "", nil, 200); data != nil && decodeJSON(data, &p) == nil && len(p.Items) == 0 {
				if data := call("GET", "/v1/researches?status=processing&limit=1", "", nil, 200); data != nil && decodeJSON(data, &p) == nil && len(p.Items) == 0 {
					break
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		e.client.CloseIdleConnections()
		time.Sleep(time.Second)
		g1, h1 := settle()
		if failures.Load() > 0 {
			b.Fatalf("%d unexpected answers; the first: %v", failures.Load(), firstErr.Load())
		}
		b.ReportMetric(dur.Seconds(), "seconds")
		b.ReportMetric(float64(requests.Load()), "requests")
		b.ReportMetric(float64(limited.Load()), "429s")
		b.ReportMetric(float64(g0), "goroutines-start")
		b.ReportMetric(float64(g1), "goroutines-end")
		b.ReportMetric(float64(h0)/(1<<20), "heap-MB-start")
		b.ReportMetric(float64(h1)/(1<<20), "heap-MB-end")
		if g1 > g0+20 {
			b.Fatalf("goroutines grew from %d to %d", g0, g1)
		}
	}
}

// settle collects garbage and returns the goroutines and heap in use.
func settle() (int, uint64) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return runtime.NumGoroutine(), m.HeapInuse
}
