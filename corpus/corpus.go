// Package corpus reads BEIR-format files: corpora and queries as JSON Lines
// and relevance judgements (qrels) as TSV. A broken line is reported with its
// line number and skipped; the rest is kept.
package corpus

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Doc is one corpus record.
type Doc struct {
	ID    string
	Title string
	Text  string
	URL   string
	Line  int
}

// LineError is a problem with one line.
type LineError struct {
	Line int
	Err  error
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

// MaxLine caps one JSON line (16 MiB).
const MaxLine = 16 << 20

type rawDoc struct {
	ID    *json.RawMessage `json:"_id"`
	Title string           `json:"title"`
	Text  string           `json:"text"`
	URL   string           `json:"url"`
}

// idString accepts string or number ids (some BEIR dumps use numbers).
func idString(raw *json.RawMessage) (string, error) {
	if raw == nil {
		return "", errors.New(`missing "_id"`)
	}
	var s string
	if err := json.Unmarshal(*raw, &s); err == nil {
		if strings.TrimSpace(s) == "" {
			return "", errors.New(`"_id" is empty`)
		}
		return s, nil
	}
	var n json.Number
	if err := json.Unmarshal(*raw, &n); err == nil {
		return n.String(), nil
	}
	return "", errors.New(`"_id" must be a string or number`)
}

var utf8BOM = []byte("\ufeff")

// lines calls fn with each non-blank line and its 1-based number.
func lines(r io.Reader, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if n == 1 {
			line = bytes.TrimPrefix(line, utf8BOM) // an editor's byte-order mark is not data
		}
		if len(line) > 0 {
			if ferr := fn(n, line); ferr != nil {
				return ferr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
}

var errLineTooLong = fmt.Errorf("line longer than %d bytes", MaxLine)

func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		part, err := br.ReadSlice('\n')
		if !tooLong {
			buf = append(buf, part...)
			if len(buf) > MaxLine {
				tooLong, buf = true, nil
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if tooLong {
			if err == nil || err == io.EOF {
				return []byte{0}, err // marker: reported by the caller's parser
			}
			return nil, err
		}
		return []byte(strings.TrimSpace(string(buf))), err
	}
}

// ReadDocs streams corpus records to fn. Bad lines and duplicate ids are
// returned as LineErrors; an error from fn or from reading stops it.
func ReadDocs(r io.Reader, fn func(Doc) error) ([]LineError, error) {
	var bad []LineError
	seen := map[string]int{}
	err := lines(r, func(n int, line []byte) error {
		if len(line) == 1 && line[0] == 0 {
			bad = append(bad, LineError{n, errLineTooLong})
			return nil
		}
		var d rawDoc
		if err := json.Unmarshal(line, &d); err != nil {
			bad = append(bad, LineError{n, fmt.Errorf("invalid JSON: %w", err)})
			return nil
		}
		id, err := idString(d.ID)
		if err != nil {
			bad = append(bad, LineError{n, err})
			return nil
		}
		if first, dup := seen[id]; dup {
			bad = append(bad, LineError{n, fmt.Errorf("duplicate _id %q (first on line %d)", id, first)})
			return nil
		}
		if strings.TrimSpace(d.Text) == "" && strings.TrimSpace(d.Title) == "" {
			bad = append(bad, LineError{n, fmt.Errorf("_id %q has no title and no text", id)})
			return nil
		}
		seen[id] = n
		return fn(Doc{ID: id, Title: d.Title, Text: d.Text, URL: d.URL, Line: n})
	})
	return bad, err
}

// Query is a BEIR query.
type Query struct {
	ID   string
	Text string
}

// ReadQueries reads a queries JSON Lines file; any bad line is an error.
func ReadQueries(r io.Reader) ([]Query, error) {
	var out []Query
	seen := map[string]bool{}
	err := lines(r, func(n int, line []byte) error {
		var q struct {
			ID   *json.RawMessage `json:"_id"`
			Text string           `json:"text"`
		}
		if err := json.Unmarshal(line, &q); err != nil {
			return LineError{n, fmt.Errorf("invalid JSON: %w", err)}
		}
		id, err := idString(q.ID)
		if err != nil {
			return LineError{n, err}
		}
		if seen[id] {
			return LineError{n, fmt.Errorf("duplicate query _id %q", id)}
		}
		seen[id] = true
		out = append(out, Query{ID: id, Text: q.Text})
		return nil
	})
	return out, err
}

// Qrels maps query id → doc id → graded relevance.
type Qrels map[string]map[string]int

// ReadQrels reads a BEIR qrels TSV with a header line
// (query-id, corpus-id, score).
func ReadQrels(r io.Reader) (Qrels, error) {
	out := Qrels{}
	err := lines(r, func(n int, line []byte) error {
		f := strings.Fields(string(line))
		if n == 1 && len(f) >= 1 && (f[0] == "query-id" || f[0] == "query_id") {
			return nil
		}
		if len(f) != 3 {
			return LineError{n, fmt.Errorf("want 3 columns (query-id corpus-id score), got %d", len(f))}
		}
		score, err := strconv.Atoi(f[2])
		if err != nil {
			return LineError{n, fmt.Errorf("score %q is not an integer", f[2])}
		}
		if out[f[0]] == nil {
			out[f[0]] = map[string]int{}
		}
		out[f[0]][f[1]] = score
		return nil
	})
	return out, err
}
