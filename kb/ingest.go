package kb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/embed"
	"github.com/quarryhq/quarry/extract"
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
}

// Progress is reported after each written batch.
type Progress struct {
	Done, Total int
}

// AddOptions tune an ingest.
type AddOptions struct {
	Embedder  embed.Embedder
	Chunking  chunk.Options
	BatchSize int
	// Touch records unchanged documents as fetched again (store.SourceTouch:
	// new ETag and Last-Modified, crawl time, failures reset) — what a
	// crawler wants for a page that answered with the same content.
	Touch    bool
	Progress func(Progress)
}

// AddPaths ingests files, folders (recursively, hidden entries skipped) and
// BEIR JSON Lines corpora (*.jsonl). Bad files and lines are reported in
// Report.Failed and the rest is ingested.
func (s *Service) AddPaths(ctx context.Context, kbName string, paths []string, opt AddOptions) (*Report, error) {
	kb, err := s.Get(ctx, kbName)
	if err != nil {
		return nil, err
	}
	if err := checkEmbedder(kb, opt.Embedder); err != nil {
		return nil, err
	}
	rep := &Report{Failed: []Problem{}}
	var docs []Document
	for _, p := range paths {
		files, err := expand(p)
		if err != nil {
			rep.Failed = append(rep.Failed, Problem{Origin: p, Reason: err.Error()})
			continue
		}
		for _, f := range files {
			if strings.EqualFold(filepath.Ext(f), ".jsonl") {
				d, probs, err := readCorpus(kb.Name, f)
				if err != nil {
					rep.Failed = append(rep.Failed, Problem{Origin: f, Reason: err.Error()})
				}
				rep.Failed = append(rep.Failed, probs...)
				docs = append(docs, d...)
				continue
			}
			doc, err := fileDocument(f)
			if err != nil {
				rep.Failed = append(rep.Failed, Problem{Origin: f, Reason: err.Error()})
				continue
			}
			docs = append(docs, doc)
		}
	}
	sub, err := s.AddDocuments(ctx, kb, docs, opt)
	if sub != nil {
		rep.Added, rep.Updated, rep.Unchanged = sub.Added, sub.Updated, sub.Unchanged
		rep.Chunks, rep.Tokens, rep.Seconds = sub.Chunks, sub.Tokens, sub.Seconds
		rep.Failed = append(rep.Failed, sub.Failed...)
	}
	return rep, err
}

func expand(p string) ([]string, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{p}, nil
	}
	var out []string
	err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != p && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() {
			out = append(out, path)
		}
		return nil
	})
	sort.Strings(out)
	return out, err
}

func fileURL(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return "file://" + filepath.ToSlash(abs)
}

func fileDocument(path string) (Document, error) {
	d, err := extract.File(path)
	if err != nil {
		return Document{}, err
	}
	if strings.TrimSpace(d.Text) == "" {
		return Document{}, fmt.Errorf("no text found")
	}
	info, err := os.Stat(path)
	if err != nil {
		return Document{}, err
	}
	doc := DocumentFrom(d, fileURL(path), filepath.Base(path))
	mt := info.ModTime().UTC()
	doc.LastModified, doc.Origin = &mt, path
	return doc, nil
}

// DocumentFrom makes an extracted document (a file or a fetched page)
// ready to ingest at url: its format, description, keywords and published
// date become metadata, and untitled documents get fallbackTitle.
func DocumentFrom(d extract.Doc, url, fallbackTitle string) Document {
	meta := map[string]string{"format": d.Format}
	for k, v := range map[string]string{"description": d.Description, "keywords": d.Keywords, "published": d.Published} {
		if v != "" {
			meta[k] = v
		}
	}
	title := d.Title
	if title == "" {
		title = fallbackTitle
	}
	return Document{URL: url, Title: title, Text: d.Text, Metadata: meta, Origin: url}
}

func readCorpus(kbName, path string) ([]Document, []Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var docs []Document
	bad, err := corpus.ReadDocs(f, func(d corpus.Doc) error {
		u := d.URL
		if u == "" {
			u = "kb://" + kbName + "/" + d.ID
		}
		title := d.Title
		if title == "" {
			title = d.ID
		}
		docs = append(docs, Document{URL: u, DocID: d.ID, Title: title, Text: d.Text, Origin: fmt.Sprintf("%s:%d", path, d.Line)})
		return nil
	})
	var probs []Problem
	for _, b := range bad {
		probs = append(probs, Problem{Origin: fmt.Sprintf("%s:%d", path, b.Line), Reason: b.Err.Error()})
	}
	return docs, probs, err
}

// clipURL shortens a URL for a message.
func clipURL(u string) string {
	if utf8.RuneCountInString(u) <= 80 {
		return u
	}
	return string([]rune(u)[:79]) + "…"
}

// contentHash identifies a document's title and text; an unchanged hash
// means nothing to re-chunk or re-embed.
func contentHash(d Document) string {
	h := sha256.New()
	h.Write([]byte(d.Title))
	h.Write([]byte{0})
	h.Write([]byte(d.Text))
	return hex.EncodeToString(h.Sum(nil))
}

// AddDocuments ingests extracted documents. An unchanged document (same
// content hash) is skipped; a changed one has its own chunks replaced. Each
// batch is written in one transaction, so a failure loses nothing already
// stored and leaves nothing half-written.
func (s *Service) AddDocuments(ctx context.Context, kb *store.KB, docs []Document, opt AddOptions) (*Report, error) {
	start := time.Now()
	rep := &Report{Failed: []Problem{}}
	if err := checkEmbedder(kb, opt.Embedder); err != nil {
		return rep, err
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = 256
	}
	existing, err := s.store.SourceList(ctx, kb.ID)
	if err != nil {
		return rep, err
	}
	known := make(map[string]string, len(existing))
	for _, e := range existing {
		known[e.URL] = e.ContentHash
	}
	var todo []Document
	var touches []store.SourceTouch
	seen := map[string]string{}
	for _, d := range docs {
		if first, dup := seen[d.URL]; dup {
			rep.Failed = append(rep.Failed, Problem{Origin: d.Origin, Reason: fmt.Sprintf("duplicate source URL %s (first from %s)", d.URL, first)})
			continue
		}
		seen[d.URL] = d.Origin
		if err := store.CheckSourceURL(d.URL); err != nil {
			rep.Failed = append(rep.Failed, Problem{Origin: d.Origin, Reason: fmt.Sprintf("%s (%q)", err, clipURL(d.URL))})
			continue
		}
		if h, ok := known[d.URL]; ok && h == contentHash(d) {
			rep.Unchanged++
			if opt.Touch {
				touches = append(touches, store.SourceTouch{URL: d.URL, ETag: d.ETag, LastModified: d.LastModified, CrawledAt: time.Now().UTC()})
			}
			continue
		}
		todo = append(todo, d)
	}
	if err := s.store.SourceTouch(ctx, kb.ID, touches); err != nil {
		rep.Seconds = time.Since(start).Seconds()
		return rep, fmt.Errorf("ingest: %w", err)
	}
	for i := 0; i < len(todo); i += opt.BatchSize {
		batch := todo[i:min(len(todo), i+opt.BatchSize)]
		puts, probs, err := s.prepare(ctx, kb, batch, opt)
		if err != nil {
			rep.Seconds = time.Since(start).Seconds()
			return rep, err
		}
		rep.Failed = append(rep.Failed, probs...)
		if _, err := s.store.SourcePutBatch(ctx, kb.ID, puts); err != nil {
			rep.Seconds = time.Since(start).Seconds()
			if errors.Is(err, store.ErrNotFound) {
				return rep, fmt.Errorf("knowledge base %q was removed while documents were being added (%d were added before): %w", kb.Name, rep.Added+rep.Updated, store.ErrNotFound)
			}
			return rep, fmt.Errorf("ingest batch at %s: %w", batch[0].Origin, err)
		}
		for _, p := range puts {
			if _, ok := known[p.Source.URL]; ok {
				rep.Updated++
			} else {
				rep.Added++
			}
			rep.Chunks += len(p.Chunks)
			for _, c := range p.Chunks {
				rep.Tokens += c.TokenCount
			}
		}
		if opt.Progress != nil {
			opt.Progress(Progress{Done: min(len(todo), i+opt.BatchSize), Total: len(todo)})
		}
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// prepare chunks, analyses and embeds a batch on all cores.
func (s *Service) prepare(ctx context.Context, kb *store.KB, batch []Document, opt AddOptions) ([]store.SourcePut, []Problem, error) {
	type result struct {
		put  store.SourcePut
		prob *Problem
	}
	results := make([]result, len(batch))
	var wg sync.WaitGroup
	next := make(chan int)
	workers := runtime.GOMAXPROCS(0)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				put, err := buildSource(batch[i], opt.Chunking)
				if err != nil {
					results[i].prob = &Problem{Origin: batch[i].Origin, Reason: err.Error()}
					continue
				}
				results[i].put = put
			}
		}()
	}
	for i := range batch {
		next <- i
	}
	close(next)
	wg.Wait()

	// Embed all chunks of the batch in one call (providers batch further).
	var texts []string
	var puts []store.SourcePut
	var probs []Problem
	for _, r := range results {
		if r.prob != nil {
			probs = append(probs, *r.prob)
			continue
		}
		puts = append(puts, r.put)
		for _, c := range r.put.Chunks {
			texts = append(texts, embedText(r.put.Source.Title, c.Text))
		}
	}
	vecs, err := opt.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("embed: %w", err)
	}
	k := 0
	for i := range puts {
		for j := range puts[i].Chunks {
			if len(vecs[k]) != kb.Dimension {
				return nil, nil, fmt.Errorf("embed: got %d dimensions, knowledge base %q has %d", len(vecs[k]), kb.Name, kb.Dimension)
			}
			puts[i].Chunks[j].Embedding = vecs[k]
			k++
		}
	}
	return puts, probs, nil
}

func embedText(title, text string) string {
	if title == "" {
		return text
	}
	return title + "\n" + text
}

func buildSource(d Document, copt chunk.Options) (store.SourcePut, error) {
	if n := utf8.RuneCountInString(d.URL); n == 0 || n > 500 {
		return store.SourcePut{}, fmt.Errorf("source URL must be 1-500 characters, got %d", n)
	}
	text := chunk.Sanitize(d.Text)
	title := strings.TrimSpace(chunk.Sanitize(d.Title))
	if r := []rune(title); len(r) > 500 {
		title = string(r[:500])
	}
	pieces, err := chunk.Split(text, copt)
	if err != nil {
		return store.SourcePut{}, err
	}
	if len(pieces) == 0 {
		// A title-only record still gets one chunk so it can be found.
		if title == "" {
			return store.SourcePut{}, fmt.Errorf("no text to index")
		}
		n, err := chunk.CountTokens(title)
		if err != nil {
			return store.SourcePut{}, err
		}
		pieces = []chunk.Chunk{{Text: title, Tokens: n}}
	}
	src := store.Source{
		URL: d.URL, DocID: d.DocID, Title: title, Content: text, Language: analyze.Language(text),
		LastModified: d.LastModified, CrawledAt: time.Now().UTC(), Metadata: d.Metadata,
		ContentHash: contentHash(d), ETag: d.ETag,
	}
	chunks := make([]store.Chunk, len(pieces))
	for i, p := range pieces {
		lang := src.Language
		if len(pieces) > 1 {
			lang = analyze.Language(p.Text)
		}
		chunks[i] = store.Chunk{
			ChunkIndex: i, Text: p.Text, TokenCount: p.Tokens, Language: lang,
			Terms: strings.Join(analyze.Terms(title+"\n"+p.Text), " "),
		}
	}
	return store.SourcePut{Source: src, Chunks: chunks}, nil
}
