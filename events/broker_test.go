package events

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quarryhq/quarry/store"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ev(seq int64) store.ResearchEvent { return store.ResearchEvent{Seq: seq, Type: "status"} }

func TestOrderSlowAndClose(t *testing.T) {
	b := NewBroker(3)
	fast, slow, other := b.Subscribe("r1"), b.Subscribe("r1"), b.Subscribe("r2")
	var got []int64
	var wg sync.WaitGroup
	wg.Add(1)
	read := make(chan struct{})
	go func() {
		defer wg.Done()
		for e := range fast.C {
			got = append(got, e.Seq)
			read <- struct{}{}
		}
	}()
	for i := int64(1); i <= 100; i++ {
		b.Publish("r1", ev(i))
		<-read // the fast reader keeps up, however busy the machine
	}
	// The slow one never read: cut off after its buffer filled, with the
	// reason; it got the first three in order.
	var slowGot []int64
	for e := range slow.C {
		slowGot = append(slowGot, e.Seq)
	}
	if !errors.Is(slow.Err(), ErrSlow) || !slices.Equal(slowGot, []int64{1, 2, 3}) {
		t.Fatalf("slow: %v %v", slowGot, slow.Err())
	}
	if b.Subscribers("r1") != 1 {
		t.Fatalf("subscribers of r1 = %d", b.Subscribers("r1"))
	}
	fast.Close()
	wg.Wait()
	if fast.Err() != nil || len(got) != 100 || !slices.IsSorted(got) {
		t.Fatalf("fast: %d events, err %v", len(got), fast.Err())
	}
	select {
	case e := <-other.C:
		t.Fatalf("r2 received r1's event %d", e.Seq)
	default:
	}
	b.Close()
	if _, ok := <-other.C; ok || !errors.Is(other.Err(), ErrClosed) {
		t.Fatalf("close: %v", other.Err())
	}
	if s := b.Subscribe("r3"); s.Err() == nil {
		t.Fatal("subscribe after close")
	}
}

// BenchmarkFanOut1000: one research watched by 1,000 subscribers; every
// subscriber gets every event in order. Reports the p99 publish-to-receive
// latency and the memory each subscription holds.
func BenchmarkFanOut1000(b *testing.B) {
	const subs, events = 1000, 200
	var latencies []time.Duration
	var mu sync.Mutex
	var perSub float64
	for range b.N {
		br := NewBroker(0)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ss := make([]*Sub, subs)
		for i := range ss {
			ss[i] = br.Subscribe("r")
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perSub = float64(after.HeapAlloc-before.HeapAlloc) / subs
		sent := make([]time.Time, events+1)
		var wg sync.WaitGroup
		for _, s := range ss {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var want int64 = 1
				var local []time.Duration
				for e := range s.C {
					if e.Seq != want {
						panic(fmt.Sprintf("got seq %d, want %d", e.Seq, want))
					}
					local = append(local, time.Since(e.At))
					want++
				}
				if want != events+1 {
					panic(fmt.Sprintf("got %d events, want %d (%v)", want-1, events, s.Err()))
				}
				mu.Lock()
				latencies = append(latencies, local...)
				mu.Unlock()
			}()
		}
		for i := int64(1); i <= events; i++ {
			sent[i] = time.Now()
			br.Publish("r", store.ResearchEvent{Seq: i, At: sent[i]})
			time.Sleep(50 * time.Microsecond) // a research emits events over time
		}
		for _, s := range ss {
			s.Close()
		}
		wg.Wait()
	}
	slices.Sort(latencies)
	b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds()), "p99-µs")
	b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds()), "p50-µs")
	b.ReportMetric(perSub, "B/subscriber")
}
