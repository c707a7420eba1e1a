package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/server"
)

// BenchmarkWatchers1000 has 1,000 WebSocket clients watch one research
// over loopback: every client must get every event once and in order.
// It reports the delivery latency (an event's timestamp, taken when the
// research emits it, to its arrival at a client, so the store write is
// included) and the memory per watcher (heap in use, server and client
// sides together: both run in this process).
func BenchmarkWatchers1000(b *testing.B) {
	const watchers = 1000
	e := start(b, envOptions{Options: server.Options{Workers: -1, MaxConns: 4 * watchers, MaxConnsPerIP: 4 * watchers, Rate: -1, IPRate: -1, Heartbeat: time.Minute}})
	ctx := context.Background()
	rn, err := e.App.Runner(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for range b.N {
		r := e.post("/v1/researches", map[string]any{"question": question, "sources": []string{"kb:wiki"}, "level": "standard"})
		want(b, r, 202)
		var c struct{ ID string }
		r.json(b, &c)
		runtime.GC()
		var m0 runtime.MemStats
		runtime.ReadMemStats(&m0)
		g0 := runtime.NumGoroutine()

		u := strings.Replace(e.URL, "http://", "ws://", 1) + "/v1/researches/" + c.ID + "/events"
		var ready, finished sync.WaitGroup
		var mu sync.Mutex
		var lat []time.Duration
		var bad atomic.Int64
		counts := make([]int, watchers)
		dial := make(chan struct{}, 32)
		for i := range watchers {
			ready.Add(1)
			finished.Add(1)
			go func() {
				defer finished.Done()
				dial <- struct{}{}
				conn, _, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: e.client})
				<-dial
				if err != nil {
					bad.Add(1)
					ready.Done()
					return
				}
				defer conn.CloseNow()
				conn.SetReadLimit(1 << 22)
				var local []time.Duration
				next := int64(1)
				for {
					_, data, err := conn.Read(ctx)
					now := time.Now()
					if err != nil {
						if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
							bad.Add(1)
						}
						break
					}
					var ev struct {
						Seq int64
						At  time.Time
					}
					if json.Unmarshal(data, &ev) != nil || ev.Seq != next {
						bad.Add(1)
					}
					if next == 1 {
						ready.Done()
					} else {
						local = append(local, now.Sub(ev.At))
					}
					next++
				}
				counts[i] = int(next - 1)
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			}()
		}
		ready.Wait()
		runtime.GC()
		var m1 runtime.MemStats
		runtime.ReadMemStats(&m1)
		g1 := runtime.NumGoroutine()
		if _, err := rn.Run(ctx, c.ID); err != nil {
			b.Fatal(err)
		}
		finished.Wait()
		last, err := e.App.CurrentStore().ResearchLastSeq(ctx, c.ID)
		if err != nil {
			b.Fatal(err)
		}
		for i, n := range counts {
			if int64(n) != last {
				b.Fatalf("watcher %d got %d events of %d", i, n, last)
			}
		}
		if bad.Load() > 0 {
			b.Fatalf("%d watchers saw an error or an event out of order", bad.Load())
		}
		slices.Sort(lat)
		p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		perWatcher := float64(int64(m1.HeapInuse)-int64(m0.HeapInuse)) / watchers / 1024
		b.ReportMetric(float64(last), "events")
		b.ReportMetric(p(0.5), "p50-ms")
		b.ReportMetric(p(0.99), "p99-ms")
		b.ReportMetric(perWatcher, "KB/watcher")
		b.ReportMetric(float64(g1-g0)/watchers, "goroutines/watcher")
	}
}

// BenchmarkSearchHTTP measures GET /v1/knowledge-bases/scifact/search
// over loopback at 8 and 64 concurrent clients (requests per second, p50
// and p99) beside the same queries through kb.Service.Search in process
// at the same concurrency; the ratio is the HTTP overhead. It needs
// ../shared/data/scifact.
func BenchmarkSearchHTTP(b *testing.B) {
	const dir = "../../shared/data/scifact/"
	queries := scifactQueries(b, dir+"queries_train.jsonl")
	e := start(b, envOptions{Options: server.Options{Rate: -1, IPRate: -1}})
	ctx := context.Background()
	svc, emb, err := e.App.OpenKB(ctx, "scifact", true)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := svc.AddPaths(ctx, "scifact", []string{dir + "corpus.jsonl"}, kb.AddOptions{Embedder: emb}); err != nil {
		b.Fatal(err)
	}
	e.client.Transport.(*http.Transport).MaxIdleConnsPerHost = 128
	if _, err := svc.Search(ctx, "scifact", emb, kb.Query{Text: queries[0], K: 10}); err != nil { // load the index
		b.Fatal(err)
	}
	const requests = 4000
	for range b.N {
		for _, conc := range []int{8, 64} {
			inproc := measure(conc, requests, func(i int) error {
				_, err := svc.Search(ctx, "scifact", emb, kb.Query{Text: queries[i%len(queries)], K: 10})
				return err
			})
			overHTTP := measure(conc, requests, func(i int) error {
				resp, err := e.client.Get(e.URL + "/v1/knowledge-bases/scifact/search?k=10&q=" + url.QueryEscape(queries[i%len(queries)]))
				if err != nil {
					return err
				}
				defer resp.Body.Close()
				if _, err := io.Copy(io.Discard, resp.Body); err != nil {
					return err
				}
				if resp.StatusCode != 200 {
					return fmt.Errorf("status %d", resp.StatusCode)
				}
				return nil
			})
			for _, m := range []struct {
				name string
				r    result
			}{{"inproc", inproc}, {"http", overHTTP}} {
				if m.r.err != nil {
					b.Fatal(m.r.err)
				}
				b.ReportMetric(m.r.rps, fmt.Sprintf("%s-c%d-rps", m.name, conc))
				b.ReportMetric(m.r.p50, fmt.Sprintf("%s-c%d-p50-ms", m.name, conc))
				b.ReportMetric(m.r.p99, fmt.Sprintf("%s-c%d-p99-ms", m.name, conc))
			}
			b.ReportMetric(inproc.rps/overHTTP.rps, fmt.Sprintf("overhead-c%d-x", conc))
		}
	}
}

type result struct {
	rps, p50, p99 float64
	err           error
}

// measure runs n calls of fn from conc goroutines.
func measure(conc, n int, fn func(i int) error) result {
	var next atomic.Int64
	lat := make([]time.Duration, n)
	var wg sync.WaitGroup
	var firstErr atomic.Value
	t0 := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				s := time.Now()
				if err := fn(i); err != nil {
					firstErr.CompareAndSwap(nil, err)
				}
				lat[i] = time.Since(s)
			}
		})
	}
	wg.Wait()
	el := time.Since(t0)
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	r := result{rps: float64(n) / el.Seconds(), p50: ms(lat[n/2]), p99: ms(lat[n*99/100])}
	if e, ok := firstErr.Load().(error); ok {
		r.err = e
	}
	return r
}

func scifactQueries(b *testing.B, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		b.Fatalf("the benchmark needs ../shared/data/scifact: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var q struct{ Text string }
		if json.Unmarshal(sc.Bytes(), &q) == nil && q.Text != "" {
			out = append(out, q.Text)
		}
	}
	if len(out) == 0 {
		b.Fatalf("no queries in %s", path)
	}
	return out
}
