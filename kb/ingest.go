package kb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/extract"
	"github.com/quarryhq/quarry/internal/safe"
	"github.com/quarryhq/quarry/internal/textclean"
	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/kb/chunk"
	"github.com/quarryhq/quarry/store"
)

// Document is one thing to ingest, already extracted.
type Document struct {
	URL          string
	DocID        string
	Title        string
	Text         string
	Metadata     map[string]string
	LastModified *time.Time
	ETag         string
	// Origin names where it came from in reports (a path, or path:line).
	Origin string
}

// Problem is one input that could not be ingested, with the reason.
type Problem struct {
	Origin string `json:"origin"`
	Reason string `json:"reason"`
}

// Report summarises an ingest.
type Report struct {
	Added     int       `json:"added"`
	Updated   int       `json:"updated"`
	Unchanged int       `json:"unchanged"`
	Chunks    int       `json:"chunks"`
	Tokens    int       `json:"tokens"`
	Failed    []Problem `json:"failed"`
	Seconds   float64   `json:"seconds"`
	// WrittenSeconds is when the last chunk was written, and so
	// searchable; Seconds adds what the store did after it (on
	// PostgreSQL, a new knowledge base's vector index built, which
	// searches do without meanwhile).
	WrittenSeconds float64 `json:"written_seconds"`
}

// Progress is reported after each written batch: Done documents written
// or found unchanged, of Total known. AddPaths reads its corpora as it
// writes them, so its Total grows as it reads.
type Progress struct {
	Done, Total int
}

// AddOptions tune an ingest.
type AddOptions struct {
	Embedder embed.Embedder
	Chunking chunk.Options
	// BatchSize is how many documents are chunked, embedded and written
	// together (default 256).
	BatchSize int
	// ChunkBatch is how many chunks of a document are embedded and written
	// together when it has more than that (default 256); see AddDocuments.
	ChunkBatch int
	// Touch records unchanged documents as fetched again (store.SourceTouch:
	// new ETag and Last-Modified, crawl time, failures reset) — what a
	// crawler wants for a page that answered with the same content.
	Touch    bool
	Progress func(Progress)
	// URLOf, when set, gives a file's source URL and the name it has in
	// reports (an upload's temporary path is neither); AddPaths
	// otherwise uses its file:// URL and its path.
	URLOf func(path string) (url, origin string)
}

// contentHash identifies a document's title and text, and the chunk size
// it is cut to when that is not the default (so the hashes stored before
// sizes could be chosen stay valid); an unchanged hash means nothing to
// re-chunk or re-embed (a document added again at another size is cut
// again). The overlap is not in it: no ingest sets one. It never holds a
// copy of the text.
func contentHash(d Document, chunking chunk.Options) string {
	h := sha256.New()
	_, _ = io.WriteString(h, d.Title)
	h.Write([]byte{0})
	if n := chunking.MaxTokens; n > 0 && n != chunk.DefaultMaxTokens {
		_, _ = io.WriteString(h, "chunk tokens "+strconv.Itoa(n))
		h.Write([]byte{0})
	}
	var buf [32 << 10]byte
	for text := d.Text; text != ""; {
		n := copy(buf[:], text)
		h.Write(buf[:n])
		text = text[n:]
	}
	return hex.EncodeToString(h.Sum(nil))
}

// todoDoc is a document to write, with its content hash.
type todoDoc struct {
	Document
	hash string
}

// AddDocuments ingests extracted documents. An unchanged document (same
// content hash) is skipped; a changed one has its own chunks replaced.
//
// Documents of up to AddOptions.ChunkBatch chunks are written BatchSize at a
// time, each batch in one transaction, so a failure loses nothing already
// stored and leaves nothing half-written. A longer document is streamed so
// that memory stays within a few chunk batches besides its text, however
// long it is: its source is written first with an empty content hash and
// no chunks (its old ones removed), then its chunks ChunkBatch at a time as
// they are cut, analysed and embedded, each batch in its own transaction,
// and its content hash is set with the last batch. Until then the store
// leaves its chunks out of searches (a source with an empty hash is
// incomplete): a document is searchable whole or not at all. A failure or
// a kill part-way leaves the empty hash, so the document never passes for
// unchanged and the next ingest writes it again, counted as added.
func (s *Service) AddDocuments(ctx context.Context, kb *store.KB, docs []Document, opt AddOptions) (*Report, error) {
	ctx, sp := otel.Tracer(TracerName).Start(ctx, "ingest", trace.WithAttributes(attribute.String("quarry.kb", kb.Name), attribute.Int("quarry.ingest.documents", len(docs))))
	defer sp.End()
	run := s.newIngest(kb, opt)
	err := checkEmbedder(kb, opt.Embedder)
	if err == nil {
		err = run.write(ctx, docs)
	}
	if err == nil {
		err = run.finish(ctx)
	}
	run.end(sp, err)
	return run.rep, err
}

// TracerName names the tracer of ingests.
const TracerName = "github.com/quarryhq/quarry/kb"

// ingest is one ingest: documents written a slice at a time (AddPaths
// reads a corpus of any size in slices), one report, each URL taken once
// across the slices, and the knowledge base's indexes brought up to date
// once, at its end.
type ingest struct {
	s     *Service
	kb    *store.KB
	opt   AddOptions
	rep   *Report
	start time.Time
	seen  map[string]string // each URL taken, and where it came from
	done  int               // documents written or found unchanged
	begun bool              // the store's BeforeIngest has run
	// writers is how many batches the store takes at once (BeforeIngest).
	writers int
}

func (s *Service) newIngest(kb *store.KB, opt AddOptions) *ingest {
	if opt.BatchSize <= 0 {
		opt.BatchSize = 256
	}
	if opt.ChunkBatch <= 0 {
		opt.ChunkBatch = 256
	}
	return &ingest{s: s, kb: kb, opt: opt, rep: &Report{Failed: []Problem{}}, start: time.Now(), seen: map[string]string{}}
}

// end records the ingest's figures and outcome on its span.
func (in *ingest) end(sp trace.Span, err error) {
	rep := in.rep
	sp.SetAttributes(attribute.Int("quarry.ingest.added", rep.Added), attribute.Int("quarry.ingest.updated", rep.Updated),
		attribute.Int("quarry.ingest.chunks", rep.Chunks), attribute.Int("quarry.ingest.failed", len(rep.Failed)))
	if err != nil {
		sp.RecordError(err)
		sp.SetStatus(codes.Error, "ingest failed")
	}
}

// write ingests docs, a slice of the ingest's documents (the caller has
// checked the embedder).
func (in *ingest) write(ctx context.Context, docs []Document) error {
	s, kb, opt, rep := in.s, in.kb, in.opt, in.rep
	defer func() { rep.Seconds = time.Since(in.start).Seconds() }()
	// What the store holds of these documents, not of the whole
	// knowledge base: an upload of one file reads one row.
	urls := make([]string, len(docs))
	for i, d := range docs {
		urls[i] = d.URL
	}
	known, err := s.store.SourceHashes(ctx, kb.ID, urls)
	if err != nil {
		return err
	}
	before := rep.Unchanged
	todo, touches := triage(docs, known, opt, in.seen, rep)
	in.done += rep.Unchanged - before
	if err := s.store.SourceTouch(ctx, kb.ID, touches); err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	count := func(url string, chunks []store.Chunk) {
		// A source an ingest left incomplete (no content hash: it failed
		// or was killed part-way) held no document a search could find:
		// writing it whole adds one.
		if h, ok := known[url]; ok && h != "" {
			rep.Updated++
		} else {
			rep.Added++
		}
		rep.Chunks += len(chunks)
		for _, c := range chunks {
			rep.Tokens += c.TokenCount
		}
	}
	tuner, tuned := s.store.(store.Tuner)
	if tuned && !in.begun && len(todo) > 0 {
		n, err := tuner.BeforeIngest(ctx, kb)
		if err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
		in.begun, in.writers = true, n
	}
	// The next batches are chunked and embedded while others are
	// written: the store's work and Quarry's own overlap. A store may
	// take more than one batch at a time (BeforeIngest), each in its own
	// transaction, so a batch may commit before one taken earlier. The
	// first failure stops the preparing and the taking of further batches
	// (and of a batch's long documents); a batch being written meanwhile
	// is written to its end.
	wctx, fail := context.WithCancelCause(ctx)
	defer fail(nil)
	batches, stop := s.prepareAhead(wctx, kb, todo, opt)
	defer stop()
	var mu sync.Mutex     // rep, in.done and written
	var tuning sync.Mutex // WhileIngesting
	locked := func(fn func()) {
		mu.Lock()
		defer mu.Unlock()
		fn()
	}
	written := 0 // documents of todo written
	writeBatch := func(b preparedBatch) error {
		locked(func() { rep.Failed = append(rep.Failed, b.probs...) })
		if _, err := s.store.SourcePutBatch(ctx, kb.ID, b.puts); err != nil {
			locked(func() { err = s.writeError(ctx, kb, rep, b.docs[0].Origin, err) })
			return err
		}
		locked(func() {
			for _, p := range b.puts {
				count(p.Source.URL, p.Chunks)
			}
		})
		for _, d := range b.long {
			if wctx.Err() != nil {
				return nil // another batch failed: its error is the ingest's
			}
			chunks, tokens, err := s.addLong(ctx, kb, d.src, opt)
			locked(func() {
				if err != nil {
					err = s.writeError(ctx, kb, rep, d.origin, err)
					return
				}
				count(d.src.URL, nil)
				rep.Chunks += chunks
				rep.Tokens += tokens
			})
			if err != nil {
				return err
			}
		}
		if tuned {
			// Outside the lock (it may analyse the tables), one at a time.
			var chunks int
			locked(func() { chunks = rep.Chunks })
			err := func() error {
				tuning.Lock()
				defer tuning.Unlock()
				return tuner.WhileIngesting(ctx, kb, chunks)
			}()
			if err != nil {
				return fmt.Errorf("ingest: %w", err)
			}
		}
		locked(func() {
			in.done += len(b.docs)
			written += len(b.docs)
			if opt.Progress != nil {
				opt.Progress(Progress{Done: in.done, Total: in.done + len(todo) - written})
			}
		})
		return nil
	}
	var wg sync.WaitGroup
	for range max(1, in.writers) {
		wg.Go(func() {
			for b := range batches {
				if wctx.Err() != nil {
					return // another batch failed
				}
				err := b.err
				if err == nil {
					// A panic in the store is this batch's failure.
					err = safe.Call(func() error { return writeBatch(b) })
				}
				if err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(wctx); err != nil && ctx.Err() == nil {
		return err
	}
	return ctx.Err()
}

// finish brings the knowledge base's indexes up to date once its chunks
// are all written: a new knowledge base's vector index is built over them
// at once (and after an ingest that failed before it could), statistics
// refreshed after a large ingest.
func (in *ingest) finish(ctx context.Context) error {
	in.rep.WrittenSeconds = time.Since(in.start).Seconds()
	defer func() { in.rep.Seconds = time.Since(in.start).Seconds() }()
	if tuner, ok := in.s.store.(store.Tuner); ok {
		if err := tuner.AfterIngest(ctx, in.kb, in.rep.Chunks); err != nil {
			return fmt.Errorf("ingest: %w", err)
		}
	}
	return nil
}

// preparedBatch is a batch of documents chunked, analysed and embedded,
// ready to write.
type preparedBatch struct {
	docs  []todoDoc
	puts  []store.SourcePut
	long  []longDoc
	probs []Problem
	err   error
}

// prepareAhead prepares todo's batches in order, one ahead of those being
// written (one more waits in the channel). The channel closes after the
// last batch, after a batch that failed, or when ctx ends; stop ends the
// preparing and waits for it. A panic in it is that batch's error.
func (s *Service) prepareAhead(ctx context.Context, kb *store.KB, todo []todoDoc, opt AddOptions) (<-chan preparedBatch, func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan preparedBatch, 1)
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(out)
		for i := 0; i < len(todo); i += opt.BatchSize {
			b := preparedBatch{docs: todo[i:min(len(todo), i+opt.BatchSize)]}
			b.err = safe.Call(func() (err error) {
				b.puts, b.long, b.probs, err = s.prepare(ctx, kb, b.docs, opt)
				return err
			})
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
			if b.err != nil {
				return
			}
		}
	})
	return out, func() {
		cancel()
		wg.Wait()
	}
}

// triage cleans each document's text and sorts the documents: those to
// write, those unchanged since the store's copy (touched when opt.Touch
// is set: a crawl saw them again), and those refused — a URL the ingest was
// given before (seen, which it adds to) or not valid — into rep.
func triage(docs []Document, known map[string]string, opt AddOptions, seen map[string]string, rep *Report) (todo []todoDoc, touches []store.SourceTouch) {
	for _, d := range docs {
		// Untrusted text stays text: no terminal escapes, bidirectional
		// overrides or invalid bytes are stored, so none is ever printed.
		d.Title, d.Text = textclean.Line(d.Title), textclean.Text(d.Text)
		d.Metadata = maps.Clone(d.Metadata) // the caller's map stays as it was
		for k, v := range d.Metadata {
			d.Metadata[k] = textclean.Line(v)
		}
		if first, dup := seen[d.URL]; dup {
			rep.Failed = append(rep.Failed, Problem{Origin: d.Origin, Reason: fmt.Sprintf("duplicate source URL %s (first from %s)", d.URL, first)})
			continue
		}
		seen[d.URL] = d.Origin
		if err := store.CheckSourceURL(d.URL); err != nil {
			rep.Failed = append(rep.Failed, Problem{Origin: d.Origin, Reason: fmt.Sprintf("%s (%q)", err, clipURL(d.URL))})
			continue
		}
		hash := contentHash(d, opt.Chunking)
		if h, ok := known[d.URL]; ok && h == hash {
			rep.Unchanged++
			if opt.Touch {
				touches = append(touches, store.SourceTouch{URL: d.URL, ETag: d.ETag, LastModified: d.LastModified, CrawledAt: time.Now().UTC()})
			}
			continue
		}
		todo = append(todo, todoDoc{d, hash})
	}
	return todo, touches
}

// writeError explains a failed write: a knowledge base removed meanwhile,
// or the batch that failed.
func (s *Service) writeError(ctx context.Context, kb *store.KB, rep *Report, origin string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		if _, verr := s.store.KBVersion(ctx, kb.ID); errors.Is(verr, store.ErrNotFound) {
			return fmt.Errorf("knowledge base %q was removed while documents were being added (%d were added before): %w", kb.Name, rep.Added+rep.Updated, store.ErrNotFound)
		}
	}
	return fmt.Errorf("ingest batch at %s: %w", origin, err)
}

// errLong stops chunking a document that has more than a batch of chunks:
// it is streamed by addLong instead.
var errLong = errors.New("more chunks than a batch")

// longDoc is a document with more chunks than a batch, to be streamed.
type longDoc struct {
	src    store.Source
	origin string
}

// prepare chunks, analyses and embeds a batch on all cores. Documents with
// more than opt.ChunkBatch chunks are returned in long, to be streamed.
func (s *Service) prepare(ctx context.Context, kb *store.KB, batch []todoDoc, opt AddOptions) ([]store.SourcePut, []longDoc, []Problem, error) {
	type result struct {
		put  store.SourcePut
		long bool
		prob *Problem
	}
	results := make([]result, len(batch))
	// The offline embedder's word features are a chunk's search terms,
	// already analysed for the terms column (over the same title and
	// text): it embeds each document where it is built, on all cores.
	hash, hashed := opt.Embedder.(embed.Hash)
	hashed = hashed && hash.Dimension() == kb.Dimension
	var wg sync.WaitGroup
	next := make(chan int)
	workers := runtime.GOMAXPROCS(0)
	for range workers {
		wg.Go(func() {
			for i := range next {
				var put store.SourcePut
				// A document that panics the chunker, the analyser or the
				// embedder is that document's problem, not the ingest's.
				err := safe.Call(func() (err error) {
					put, err = buildSource(batch[i], opt.Chunking, opt.ChunkBatch)
					if err == nil && hashed {
						for j, c := range put.Chunks {
							put.Chunks[j].Embedding = hash.VectorOfTerms(embedText(put.Source.Title, c.Text), strings.Fields(c.Terms))
						}
					}
					return err
				})
				switch {
				case errors.Is(err, errLong):
					results[i].put, results[i].long = put, true
				case err != nil:
					results[i].prob = &Problem{Origin: batch[i].Origin, Reason: err.Error()}
				default:
					results[i].put = put
				}
			}
		})
	}
	for i := range batch {
		next <- i
	}
	close(next)
	wg.Wait()

	// Embed all chunks of the batch in one call (providers batch further).
	var texts []string
	var puts []store.SourcePut
	var long []longDoc
	var probs []Problem
	for i, r := range results {
		switch {
		case r.prob != nil:
			probs = append(probs, *r.prob)
			continue
		case r.long:
			long = append(long, longDoc{r.put.Source, batch[i].Origin})
			continue
		}
		puts = append(puts, r.put)
		if !hashed {
			for _, c := range r.put.Chunks {
				texts = append(texts, embedText(r.put.Source.Title, c.Text))
			}
		}
	}
	if len(texts) == 0 {
		return puts, long, probs, nil
	}
	vecs, err := embedTexts(ctx, kb, texts, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	k := 0
	for i := range puts {
		for j := range puts[i].Chunks {
			puts[i].Chunks[j].Embedding = vecs[k]
			k++
		}
	}
	return puts, long, probs, nil
}

func embedTexts(ctx context.Context, kb *store.KB, texts []string, opt AddOptions) ([][]float32, error) {
	vecs, err := opt.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: got %d vectors for %d texts", len(vecs), len(texts))
	}
	for _, v := range vecs {
		if len(v) != kb.Dimension {
			return nil, fmt.Errorf("embed: got %d dimensions, knowledge base %q has %d", len(v), kb.Name, kb.Dimension)
		}
	}
	return vecs, nil
}

// addLong streams a document with more than opt.ChunkBatch chunks (see
// AddDocuments) through a pipeline of batches: cutting chunks, analysing
// them (on all cores), embedding them and writing them each run in their
// own goroutine, one batch apart, so a few batches are held at a time.
// It returns how many chunks and tokens it wrote.
func (s *Service) addLong(ctx context.Context, kb *store.KB, src store.Source, opt AddOptions) (chunks, tokens int, err error) {
	final := store.SourceAppendChunksParams{Final: true, ContentHash: src.ContentHash, ETag: src.ETag, LastModified: src.LastModified}
	src.ContentHash, src.ETag, src.LastModified = "", "", nil
	ids, err := s.store.SourcePutBatch(ctx, kb.ID, []store.SourcePut{{Source: src, Chunks: []store.Chunk{}}})
	if err != nil {
		return 0, 0, err
	}
	final.SourceID = ids[0]

	ctx, fail := context.WithCancelCause(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer fail(nil)
	cut := make(chan []chunk.Chunk, 1)
	wg.Go(func() {
		defer close(cut)
		batch := make([]chunk.Chunk, 0, opt.ChunkBatch)
		err := safe.Call(func() error {
			return chunk.Each(src.Content, opt.Chunking, chunk.Fenced(func(c chunk.Chunk) error {
				if batch = append(batch, c); len(batch) < opt.ChunkBatch {
					return nil
				}
				err := send(ctx, cut, batch)
				batch = make([]chunk.Chunk, 0, opt.ChunkBatch)
				return err
			}))
		})
		if err == nil && len(batch) > 0 {
			err = send(ctx, cut, batch)
		}
		if err != nil {
			fail(err)
		}
	})
	analysed := stage(ctx, &wg, fail, cut, func(b []chunk.Chunk) (analysedBatch, error) {
		return analyseChunks(src.Title, b), nil
	})
	embedded := stage(ctx, &wg, fail, analysed, func(b analysedBatch) ([]store.Chunk, error) {
		vecs, err := embedTexts(ctx, kb, b.texts, opt)
		for i := range vecs {
			b.chunks[i].Embedding = vecs[i]
		}
		return b.chunks, err
	})
	// Each batch is written once the next is embedded, so that the last
	// one's transaction also completes the source.
	write := func(p store.SourceAppendChunksParams) error {
		if err := s.store.SourceAppendChunks(ctx, kb.ID, p); err != nil {
			return err
		}
		chunks += len(p.Chunks)
		for _, c := range p.Chunks {
			tokens += c.TokenCount
		}
		return nil
	}
	var held []store.Chunk
	for b := range embedded {
		if held != nil {
			if err := write(store.SourceAppendChunksParams{SourceID: final.SourceID, Chunks: held}); err != nil {
				// A stage that failed first cancelled the write: report
				// what failed first.
				fail(err)
				return chunks, tokens, context.Cause(ctx)
			}
		}
		held = b
	}
	if err := context.Cause(ctx); err != nil {
		return chunks, tokens, err
	}
	final.Chunks = held
	return chunks, tokens, write(final)
}

// send sends v unless ctx is done first.
func send[T any](ctx context.Context, ch chan<- T, v T) error {
	select {
	case ch <- v:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// stage runs fn on each value from in, in a goroutine of wg, and sends the
// results on the channel it returns, which it closes when in is closed or
// ctx is done. An error from fn is passed to fail, which must cancel ctx.
func stage[In, Out any](ctx context.Context, wg *sync.WaitGroup, fail context.CancelCauseFunc, in <-chan In, fn func(In) (Out, error)) <-chan Out {
	out := make(chan Out, 1)
	wg.Go(func() {
		defer close(out)
		for v := range in {
			var r Out
			err := safe.Call(func() (err error) {
				r, err = fn(v)
				return err
			})
			if err == nil {
				err = send(ctx, out, r)
			}
			if err != nil {
				fail(err)
				return
			}
		}
	})
	return out
}

// analysedBatch is a batch of chunks analysed, with the texts to embed.
type analysedBatch struct {
	chunks []store.Chunk
	texts  []string
}

// analyseChunks analyses a batch of a document's chunks on all cores.
func analyseChunks(title string, pieces []chunk.Chunk) analysedBatch {
	b := analysedBatch{chunks: make([]store.Chunk, len(pieces)), texts: make([]string, len(pieces))}
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	for w := range workers {
		wg.Go(func() {
			errs[w] = safe.Do(func() {
				for i := w; i < len(pieces); i += workers {
					b.chunks[i] = chunkRow(title, pieces[i], analyze.Language(pieces[i].Text))
					b.texts[i] = embedText(title, pieces[i].Text)
				}
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			panic(err) // into the caller's goroutine, which recovers it
		}
	}
	return b
}

func embedText(title, text string) string {
	if title == "" {
		return extract.Unfenced(text)
	}
	return title + "\n" + extract.Unfenced(text)
}

// newSource is the source row for a document: sanitised text and title,
// its language.
func newSource(d todoDoc) (store.Source, error) {
	text := textclean.Debris(chunk.Sanitize(d.Text))
	title := strings.TrimSpace(chunk.Sanitize(d.Title))
	if r := []rune(title); len(r) > 500 {
		title = string(r[:500])
	}
	return store.Source{
		URL: d.URL, DocID: d.DocID, Title: title, Content: text, Language: analyze.Language(text),
		LastModified: d.LastModified, CrawledAt: time.Now().UTC(), Metadata: d.Metadata,
		ContentHash: d.hash, ETag: d.ETag,
	}, nil
}

// buildSource chunks and analyses a document of at most limit chunks. If
// it has more, it returns errLong with the source (and no chunks).
func buildSource(d todoDoc, copt chunk.Options, limit int) (store.SourcePut, error) {
	src, err := newSource(d)
	if err != nil {
		return store.SourcePut{}, err
	}
	var pieces []chunk.Chunk
	// A listing cut across chunks is code in each (chunk.Fenced).
	err = chunk.Each(src.Content, copt, chunk.Fenced(func(c chunk.Chunk) error {
		if len(pieces) == limit {
			return errLong
		}
		pieces = append(pieces, c)
		return nil
	}))
	if errors.Is(err, errLong) {
		return store.SourcePut{Source: src}, err
	}
	if err != nil {
		return store.SourcePut{}, err
	}
	if len(pieces) == 0 {
		// A title-only record still gets one chunk so it can be found.
		if src.Title == "" {
			return store.SourcePut{}, fmt.Errorf("no text to index")
		}
		n, err := chunk.CountTokens(src.Title)
		if err != nil {
			return store.SourcePut{}, err
		}
		pieces = []chunk.Chunk{{Text: src.Title, Tokens: n}}
	}
	chunks := make([]store.Chunk, len(pieces))
	for i, p := range pieces {
		lang := src.Language
		if len(pieces) > 1 {
			lang = analyze.Language(p.Text)
		}
		chunks[i] = chunkRow(src.Title, p, lang)
	}
	return store.SourcePut{Source: src, Chunks: chunks}, nil
}

// chunkRow is the stored form of a piece: its analysed terms carry the
// title so a search for it finds every chunk.
func chunkRow(title string, p chunk.Chunk, lang string) store.Chunk {
	return store.Chunk{
		ChunkIndex: p.Index, Text: p.Text, TokenCount: p.Tokens, Language: lang,
		Terms: strings.Join(analyze.Terms(title+"\n"+extract.Unfenced(p.Text)), " "),
	}
}
