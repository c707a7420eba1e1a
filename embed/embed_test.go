package embed

import (
	"context"
	"math"
	"testing"
)

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashDeterministicAndSimilar(t *testing.T) {
	t.Parallel()
	h := Hash{}
	vs, err := h.Embed(context.Background(), []string{
		"The crawler re-crawls stale pages every five minutes.",
		"How does the crawler handle stale pages?",
		"Korean barbecue recipes with kimchi.",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(vs[0]) != DefaultHashDim || h.Name() != "hash-v1/384" {
		t.Fatalf("dim %d name %s", len(vs[0]), h.Name())
	}
	if n := cos(vs[0], vs[0]); math.Abs(n-1) > 1e-5 {
		t.Fatalf("not unit length: %v", n)
	}
	if again := h.Vector("The crawler re-crawls stale pages every five minutes."); cos(again, vs[0]) < 0.99999 {
		t.Fatal("not deterministic")
	}
	if cos(vs[0], vs[1]) <= cos(vs[0], vs[2]) {
		t.Fatalf("related texts not closer: %v vs %v", cos(vs[0], vs[1]), cos(vs[0], vs[2]))
	}
	if z := h.Vector("!!!"); cos(z, z) != 0 {
		t.Fatal("empty text should embed to zero")
	}
}
