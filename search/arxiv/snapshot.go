package arxiv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/kb/analyze"
	"github.com/quarryhq/quarry/search"
)

// Snapshot is a local copy of arXiv metadata (the JSON Lines snapshot
// published on Kaggle, or a slice of it) searched with BM25 over titles and
// abstracts. It is loaded into memory; the full snapshot needs several GiB.
type Snapshot struct {
	entries []Entry
	bm25    *index.BM25
}

var _ search.Source = (*Snapshot)(nil)

// SnapshotError is a line of the snapshot that cannot be read.
type SnapshotError struct {
	Path string
	Line int
	Err  error
}

func (e *SnapshotError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err) }
func (e *SnapshotError) Unwrap() error { return e.Err }

// OpenSnapshot loads a snapshot file.
func OpenSnapshot(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("arxiv snapshot: %w", err)
	}
	defer f.Close()
	s, err := ReadSnapshot(f)
	if err != nil {
		if se, ok := err.(*SnapshotError); ok {
			se.Path = path
		}
		return nil, err
	}
	return s, nil
}

// ReadSnapshot reads snapshot records, one JSON object per line. A line
// that is not a record with an id and a title is an error naming the line:
// a snapshot is data the user pointed at, and a silently half-read one
// would answer wrongly.
func ReadSnapshot(r io.Reader) (*Snapshot, error) {
	s := &Snapshot{bm25: index.NewBM25(0, 0)} // k1 1.2, b 0.75, as kb uses
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		if line == 1 {
			raw = bytes.TrimPrefix(raw, []byte("\ufeff")) // an editor's byte-order mark is not data
		}
		raw = bytes.TrimSpace(raw)
		if len(raw) == 0 {
			continue
		}
		e, err := parseRecord(raw)
		if err != nil {
			return nil, &SnapshotError{Line: line, Err: err}
		}
		s.bm25.Add(len(s.entries), analyze.Terms(e.Title+"\n"+e.Title+"\n"+e.Abstract))
		s.entries = append(s.entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, &SnapshotError{Line: line + 1, Err: err}
	}
	if len(s.entries) == 0 {
		return nil, &SnapshotError{Line: line, Err: fmt.Errorf("no records")}
	}
	return s, nil
}

var texAccent = regexp.MustCompile(`\\(['"^` + "`" + `~=.])\{?([A-Za-z])\}?`)

var combining = map[string]string{"'": "\u0301", "`": "\u0300", "^": "\u0302", `"`: "\u0308", "~": "\u0303", "=": "\u0304", ".": "\u0307"}

// detex turns TeX accents (B\'alazs) into letters (Balázs).
func detex(s string) string {
	s = texAccent.ReplaceAllStringFunc(s, func(m string) string {
		sm := texAccent.FindStringSubmatch(m)
		return sm[2] + combining[sm[1]]
	})
	return norm.NFC.String(s)
}

func parseRecord(data []byte) (Entry, error) {
	var rec struct {
		ID       string `json:"id"`
		Title    string `json:"title"`
		Authors  string `json:"authors"`
		Abstract string `json:"abstract"`
		Versions []struct {
			Created string `json:"created"`
		} `json:"versions"`
		UpdateDate string `json:"update_date"`
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return Entry{}, fmt.Errorf("not a JSON record: %w", err)
	}
	if strings.TrimSpace(rec.ID) == "" || strings.TrimSpace(rec.Title) == "" {
		return Entry{}, fmt.Errorf("record needs \"id\" and \"title\"")
	}
	e := Entry{ID: strings.TrimSpace(rec.ID), Title: clean(detex(rec.Title)), Abstract: clean(detex(rec.Abstract))}
	for _, a := range strings.Split(detex(rec.Authors), ",") {
		for _, b := range strings.Split(a, " and ") {
			if n := clean(b); n != "" {
				e.Authors = append(e.Authors, n)
			}
		}
	}
	if len(rec.Versions) > 0 {
		if t, err := time.Parse("Mon, 2 Jan 2006 15:04:05 MST", rec.Versions[0].Created); err == nil {
			t = t.UTC()
			e.Published = &t
		}
	}
	if e.Published == nil {
		if t, err := time.Parse("2006-01-02", rec.UpdateDate); err == nil {
			e.Published = &t
		}
	}
	return e, nil
}

// Len is the number of papers.
func (s *Snapshot) Len() int { return len(s.entries) }

// Name implements search.Source.
func (s *Snapshot) Name() string { return "arxiv" }

// Search implements search.Source.
func (s *Snapshot) Search(ctx context.Context, query string, k int) ([]search.Result, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if k <= 0 {
		k = 5
	}
	hits := s.bm25.Search(analyze.Terms(query), k, nil)
	out := make([]search.Result, len(hits))
	for i, h := range hits {
		out[i] = s.entries[h.Doc].result(h.Score)
	}
	return out, nil
}
