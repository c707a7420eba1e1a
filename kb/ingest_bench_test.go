package kb_test

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/extract"
	"github.com/quarryhq/quarry/kb"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/sqlite"
)

// BenchmarkIngestLargeFile ingests one ~60 MB plain-text file with the
// offline embedder into SQLite and reports the peak Go heap in use while it
// runs (peak-MB): ingest streams a long document in chunk batches, so the
// peak is the text plus a few batches and the garbage collector's headroom,
// not a multiple of the file. AddPaths reads the file too (extract holds it
// twice while it reads, so its peak depends on when a collection falls);
// AddDocuments starts from the extracted document.
//
//	go test ./kb -run '^$' -bench IngestLargeFile -benchtime 1x
func BenchmarkIngestLargeFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "big.txt")
	writeLargeText(b, path, 60<<20)
	ctx := context.Background()
	emb := embed.Hash{}
	run := func(b *testing.B, ingest func(svc *kb.Service, k *store.KB) (*kb.Report, error)) {
		for range b.N {
			b.StopTimer()
			st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "q.db"))
			if err != nil {
				b.Fatal(err)
			}
			svc := kb.New(st, nil)
			k, err := svc.Create(ctx, "big", "", emb)
			if err != nil {
				b.Fatal(err)
			}
			runtime.GC()
			peak := watchHeap()
			b.StartTimer()
			rep, err := ingest(svc, k)
			b.StopTimer()
			mb := peak()
			if err != nil || rep.Added != 1 {
				b.Fatalf("ingest: %+v %v", rep, err)
			}
			if err := st.Close(); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(mb, "peak-MB")
			b.ReportMetric(float64(rep.Chunks), "chunks")
			b.StartTimer()
		}
	}
	b.Run("AddPaths", func(b *testing.B) {
		run(b, func(svc *kb.Service, k *store.KB) (*kb.Report, error) {
			return svc.AddPaths(ctx, k.Name, []string{path}, kb.AddOptions{Embedder: emb})
		})
	})
	b.Run("AddDocuments", func(b *testing.B) {
		d, err := extract.File(path)
		if err != nil {
			b.Fatal(err)
		}
		doc := kb.DocumentFrom(d, "file://"+filepath.ToSlash(path), "big.txt")
		run(b, func(svc *kb.Service, k *store.KB) (*kb.Report, error) {
			return svc.AddDocuments(ctx, k, []kb.Document{doc}, kb.AddOptions{Embedder: emb})
		})
	})
}

// watchHeap samples the heap in use every few milliseconds until the
// returned function is called, which returns the peak in MiB.
func watchHeap() func() float64 {
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	var peak uint64
	read := func() {
		metrics.Read(samples)
		peak = max(peak, samples[0].Value.Uint64()+samples[1].Value.Uint64())
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				read()
			}
		}
	})
	return func() float64 {
		close(stop)
		wg.Wait()
		read()
		return float64(peak) / (1 << 20)
	}
}

// writeLargeText writes about size bytes of English-like paragraphs:
// sentences of words drawn from a small vocabulary, a blank line between
// paragraphs.
func writeLargeText(tb testing.TB, path string, size int) {
	tb.Helper()
	words := []string{"quarry", "research", "evidence", "source", "chunk", "token", "memory", "stream",
		"model", "report", "citation", "alpha", "beta", "gamma", "delta", "index", "search", "vector",
		"batch", "answer", "question", "paper", "claim", "result", "method", "the", "of", "and", "in", "a"}
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriter(f)
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < size; {
		for s := 3 + r.IntN(6); s > 0; s-- {
			for i, k := 0, 8+r.IntN(16); i < k; i++ {
				word := words[r.IntN(len(words))]
				if i == 0 {
					word = string(word[0]-'a'+'A') + word[1:]
				} else {
					word = " " + word
				}
				n += mustWrite(tb, w, word)
			}
			end := ". "
			if s == 1 {
				end = ".\n\n"
			}
			n += mustWrite(tb, w, end)
		}
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

func mustWrite(tb testing.TB, w *bufio.Writer, s string) int {
	n, err := w.WriteString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}
