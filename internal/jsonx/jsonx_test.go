package jsonx

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEmptySlices(t *testing.T) {
	type inner struct {
		List []string `json:"list"`
		Opt  []string `json:"opt,omitempty"`
	}
	type outer struct {
		Items  []inner  `json:"items"`
		Ptr    *inner   `json:"ptr"`
		Nested []*inner `json:"nested"`
		Bytes  []byte   `json:"bytes,omitempty"`
		hidden []int
	}
	v := outer{Items: []inner{{}}, Ptr: &inner{}, Nested: []*inner{{}, nil}}
	EmptySlices(&v)
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"items":[{"list":[]}],"ptr":{"list":[]},"nested":[{"list":[]},null]}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	var empty outer
	EmptySlices(&empty)
	if b, _ := json.Marshal(empty); string(b) != `{"items":[],"ptr":null,"nested":[]}` {
		t.Fatalf("zero value: %s", b)
	}
	_ = v.hidden
}

func TestReadLinesFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "q.jsonl")
	if err := os.WriteFile(p, []byte("{\"q\":\"a\"}\n{\"q\":\""+strings.Repeat("b", 100000)+"\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type line struct{ Q string }
	got, err := ReadLinesFile[line](p)
	if err != nil || len(got) != 2 || got[0].Q != "a" || len(got[1].Q) != 100000 {
		t.Fatalf("%d lines, %v", len(got), err)
	}
	if err := os.WriteFile(p, []byte("{\"q\":\"a\"}\n{broken\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadLinesFile[line](p); err == nil || !strings.Contains(err.Error(), "value 2") {
		t.Fatalf("a broken line: %v", err)
	}
}
