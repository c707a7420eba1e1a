package console

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/quarryhq/quarry/errcode"
	"github.com/quarryhq/quarry/store"
)

// JSONLQuestion is one line of the JSON Lines dataset format:
//
//	{"id": "q1", "question": "…", "answer": "a reference answer (optional)",
//	 "doc_ids": ["doc-7"],                            // every chunk of a document
//	 "chunks": [{"doc_id": "doc-7", "chunk_index": 2}], // one chunk by position
//	 "chunk_ids": [4211]}                              // one chunk by its current id
//
// A question needs at least one of doc_ids, chunks and chunk_ids. Chunk ids
// are turned into (document, position) on import, which survives a
// re-ingest where row ids do not.
type JSONLQuestion struct {
	ID       string            `json:"id"`
	Question string            `json:"question"`
	Answer   string            `json:"answer,omitempty"`
	DocIDs   []string          `json:"doc_ids,omitempty"`
	Chunks   []store.GoldenRef `json:"chunks,omitempty"`
	ChunkIDs []int64           `json:"chunk_ids,omitempty"`
}

// MaxDatasetQuestions bounds a dataset.
const MaxDatasetQuestions = 100000

// ReadJSONL parses the JSON Lines dataset format. Blank lines are
// skipped; an error names the line and the field.
func ReadJSONL(r io.Reader) ([]JSONLQuestion, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	var out []JSONLQuestion
	seen := map[string]int{}
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		bad := func(field, rule string) error {
			return invalid(field, fmt.Sprintf("line %d: %s", line, rule))
		}
		var q JSONLQuestion
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return nil, bad("dataset", fmt.Sprintf("not a JSON object of the dataset format: %v", err))
		}
		if dec.More() {
			return nil, bad("dataset", "one JSON object per line")
		}
		q.ID, q.Question = strings.TrimSpace(q.ID), strings.TrimSpace(q.Question)
		if q.ID == "" {
			q.ID = fmt.Sprint(line)
		}
		if utf8.RuneCountInString(q.ID) > 255 {
			return nil, bad("id", "must be at most 255 characters")
		}
		if prev, ok := seen[q.ID]; ok {
			return nil, bad("id", fmt.Sprintf("%q is also the id on line %d", q.ID, prev))
		}
		seen[q.ID] = line
		if err := CheckQuery(q.Question); err != nil {
			return nil, bad("question", "Query must be 1-10000 characters")
		}
		if utf8.RuneCountInString(q.Answer) > 10000 {
			return nil, bad("answer", "must be at most 10000 characters")
		}
		if len(q.DocIDs)+len(q.Chunks)+len(q.ChunkIDs) == 0 {
			return nil, bad("golden", "give doc_ids, chunks or chunk_ids")
		}
		for _, c := range q.Chunks {
			if c.DocID == "" || c.ChunkIndex < 0 {
				return nil, bad("chunks", "each needs a doc_id and a chunk_index of 0 or more")
			}
		}
		for _, d := range q.DocIDs {
			if d == "" {
				return nil, bad("doc_ids", "must not be empty")
			}
		}
		if len(out) == MaxDatasetQuestions {
			return nil, bad("dataset", fmt.Sprintf("at most %d questions", MaxDatasetQuestions))
		}
		out = append(out, q)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, invalid("dataset", "a line is over 1 MiB")
		}
		return nil, err
	}
	if len(out) == 0 {
		return nil, invalid("dataset", "no questions")
	}
	return out, nil
}

func checkDatasetName(name string) error {
	if n := utf8.RuneCountInString(name); n < 1 || n > 255 || name[0] >= '0' && name[0] <= '9' {
		return invalid("name", "must be 1-255 characters, not starting with a digit")
	}
	return nil
}

// ImportJSONL makes a dataset over a knowledge base from the JSON Lines
// format. Every golden document, position and chunk id must exist in the
// knowledge base; the error lists the first that do not.
func (s *Service) ImportJSONL(ctx context.Context, name, kbName string, lines []JSONLQuestion) (*store.Dataset, error) {
	if err := checkDatasetName(name); err != nil {
		return nil, err
	}
	k, err := s.kb(ctx, kbName)
	if err != nil {
		return nil, err
	}
	// chunks: document → number of chunks it has now.
	chunks := map[string]int{}
	byID := map[int64]store.GoldenRef{}
	if err := s.Store.ChunkScan(ctx, k.ID, func(c store.IndexedChunk) error {
		doc := docKey(c)
		chunks[doc] = max(chunks[doc], c.ChunkIndex+1)
		byID[c.ID] = store.GoldenRef{DocID: doc, ChunkIndex: c.ChunkIndex}
		return nil
	}); err != nil {
		return nil, err
	}
	var missing []string
	qs := make([]store.DatasetQuestion, 0, len(lines))
	for _, l := range lines {
		var golden []store.GoldenRef
		for _, d := range l.DocIDs {
			if chunks[d] == 0 {
				missing = append(missing, "doc "+d)
				continue
			}
			golden = append(golden, store.GoldenRef{DocID: d, ChunkIndex: -1})
		}
		for _, c := range l.Chunks {
			if c.ChunkIndex >= chunks[c.DocID] {
				missing = append(missing, fmt.Sprintf("chunk %d of doc %s", c.ChunkIndex, c.DocID))
				continue
			}
			golden = append(golden, c)
		}
		for _, id := range l.ChunkIDs {
			ref, ok := byID[id]
			if !ok {
				missing = append(missing, fmt.Sprintf("chunk id %d", id))
				continue
			}
			golden = append(golden, ref)
		}
		qs = append(qs, store.DatasetQuestion{QueryID: l.ID, Text: l.Question, Reference: strings.TrimSpace(l.Answer), Golden: dedupe(golden)})
	}
	if len(missing) > 0 {
		return nil, invalid("golden", fmt.Sprintf("%d golden chunks do not exist in knowledge base %q: %s", len(missing), kbName, strings.Join(missing[:min(5, len(missing))], ", ")))
	}
	return s.createDataset(ctx, name, k, qs)
}

// docKey is how a golden ref names a chunk's document: its corpus id, or
// its URL for a document without one.
func docKey(c store.IndexedChunk) string {
	if c.DocID != "" {
		return c.DocID
	}
	return c.SourceURL
}

func dedupe(refs []store.GoldenRef) []store.GoldenRef {
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].DocID != refs[j].DocID {
			return refs[i].DocID < refs[j].DocID
		}
		return refs[i].ChunkIndex < refs[j].ChunkIndex
	})
	out := refs[:0]
	for i, r := range refs {
		if i > 0 && r == refs[i-1] {
			continue
		}
		out = append(out, r)
	}
	return out
}

func (s *Service) createDataset(ctx context.Context, name string, k *store.KB, qs []store.DatasetQuestion) (*store.Dataset, error) {
	d, err := s.Store.DatasetCreate(ctx, store.Dataset{Name: name, KBID: k.ID, CreatedAt: s.now()}, qs)
	if errors.Is(err, store.ErrExists) {
		return nil, errcode.New(errcode.Conflict, "name", fmt.Sprintf("dataset %q exists or repeats a question id", name))
	}
	return d, err
}

// Datasets lists the datasets.
func (s *Service) Datasets(ctx context.Context) ([]store.Dataset, error) {
	return s.Store.DatasetList(ctx)
}

// Dataset returns a dataset by name or id.
func (s *Service) Dataset(ctx context.Context, nameOrID string) (*store.Dataset, error) {
	return s.dataset(ctx, nameOrID)
}

// DeleteDataset removes a dataset; pipelines that used it keep going
// without one (a test pipeline then marks nothing golden).
func (s *Service) DeleteDataset(ctx context.Context, nameOrID string) error {
	d, err := s.dataset(ctx, nameOrID)
	if err != nil {
		return err
	}
	return s.Store.DatasetDelete(ctx, d.ID)
}
