package kb

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/quarryhq/quarry/corpus"
	"github.com/quarryhq/quarry/extract"
)

// AddPaths ingests files, folders (recursively, hidden entries skipped) and
// BEIR JSON Lines corpora (*.jsonl). Bad files and lines are reported in
// Report.Failed and the rest is ingested. Documents are read and written
// a slice at a time (sliceDocs or sliceBytes of text), so a corpus of any
// size is ingested in memory that does not grow with it.
func (s *Service) AddPaths(ctx context.Context, kbName string, paths []string, opt AddOptions) (*Report, error) {
	kb, err := s.Get(ctx, kbName)
	if err != nil {
		return nil, err
	}
	if err := checkEmbedder(kb, opt.Embedder); err != nil {
		return nil, err
	}
	ctx, sp := otel.Tracer(TracerName).Start(ctx, "ingest", trace.WithAttributes(attribute.String("quarry.kb", kb.Name)))
	defer sp.End()
	run := s.newIngest(kb, opt)
	err = run.paths(ctx, paths)
	if err == nil {
		err = run.finish(ctx)
	}
	run.end(sp, err)
	return run.rep, err
}

// A slice of an ingest's documents is written once it holds sliceDocs
// documents or sliceBytes of text (variables for the tests).
var (
	sliceDocs  = 8192
	sliceBytes = 32 << 20
)

// paths reads the files, folders and corpora of paths and writes their
// documents a slice at a time.
func (in *ingest) paths(ctx context.Context, paths []string) error {
	rep, opt := in.rep, in.opt
	var slice []Document
	size := 0
	add := func(d Document) error {
		slice = append(slice, d)
		if size += len(d.Text); len(slice) < sliceDocs && size < sliceBytes {
			return nil
		}
		err := in.write(ctx, slice)
		slice, size = nil, 0
		return err
	}
	for _, p := range paths {
		files, err := expand(p)
		if err != nil {
			rep.Failed = append(rep.Failed, Problem{Origin: p, Reason: err.Error()})
			continue
		}
		for _, f := range files {
			if strings.EqualFold(filepath.Ext(f), ".jsonl") {
				probs, err := readCorpus(in.kb.Name, f, opt.origin(f), add)
				rep.Failed = append(rep.Failed, probs...)
				var werr writeError
				if errors.As(err, &werr) {
					return werr.err
				}
				if err != nil {
					rep.Failed = append(rep.Failed, Problem{Origin: opt.origin(f), Reason: err.Error()})
				}
				continue
			}
			u, origin := opt.locate(f)
			doc, err := fileDocument(f, u, origin)
			if err != nil {
				rep.Failed = append(rep.Failed, Problem{Origin: opt.origin(f), Reason: err.Error()})
				continue
			}
			if err := add(doc); err != nil {
				return err
			}
		}
	}
	if len(slice) == 0 {
		return ctx.Err()
	}
	return in.write(ctx, slice)
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

// fileURL is a file's source URL: file:// and its absolute path, the
// bytes of a name that are not UTF-8 (an old archive's Latin-1 "caf\xe9")
// percent-escaped, so the URL is text every store takes and still names
// that one file. (A valid path is kept as it is, as it always was.)
func fileURL(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	return "file://" + escapeInvalidUTF8(filepath.ToSlash(abs))
}

// escapeInvalidUTF8 percent-escapes each byte of s that is not part of a
// valid UTF-8 sequence.
func escapeInvalidUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			fmt.Fprintf(&b, "%%%02X", s[i])
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// locate is a file's source URL and the name reports give it.
func (o AddOptions) locate(path string) (url, origin string) {
	if o.URLOf == nil {
		return fileURL(path), path
	}
	return o.URLOf(path)
}

func (o AddOptions) origin(path string) string {
	_, origin := o.locate(path)
	return origin
}

func fileDocument(path, u, origin string) (Document, error) {
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
	doc := DocumentFrom(d, u, filepath.Base(origin))
	mt := info.ModTime().UTC()
	doc.LastModified, doc.Origin = &mt, origin
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

// readCorpus reads a BEIR JSON Lines corpus and hands each document to
// add; an error of add ends the reading and comes back as a writeError.
func readCorpus(kbName, path, origin string, add func(Document) error) ([]Problem, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bad, err := corpus.ReadDocs(f, func(d corpus.Doc) error {
		u := d.URL
		if u == "" {
			u = "kb://" + kbName + "/" + d.ID
		}
		// BEIR corpora carry HTML-escaped titles ("Bang &amp; Olufsen")
		// beside plain text: a title is text, so it is unescaped.
		title := html.UnescapeString(d.Title)
		if title == "" {
			title = d.ID
		}
		if err := add(Document{URL: u, DocID: d.ID, Title: title, Text: d.Text, Origin: fmt.Sprintf("%s:%d", origin, d.Line)}); err != nil {
			return writeError{err}
		}
		return nil
	})
	var probs []Problem
	for _, b := range bad {
		probs = append(probs, Problem{Origin: fmt.Sprintf("%s:%d", origin, b.Line), Reason: b.Err.Error()})
	}
	return probs, err
}

// writeError is an ingest's failure to write what a corpus held, as
// against a corpus that could not be read.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }
func (e writeError) Unwrap() error { return e.err }

// clipURL shortens a URL for a message.
func clipURL(u string) string {
	if utf8.RuneCountInString(u) <= 80 {
		return u
	}
	return string([]rune(u)[:79]) + "…"
}
