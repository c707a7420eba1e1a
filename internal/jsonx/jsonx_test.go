package jsonx

import (
	"encoding/json"
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
