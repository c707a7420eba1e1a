package embed

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"testing"
	"unicode"

	"github.com/quarryhq/quarry/kb/analyze"
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

// referenceVector is VectorOfTerms as first written: each feature built
// as a string and hashed with hash/fnv. The vectors of hash-v1 stored in
// knowledge bases were made by it, so the faster one must agree.
func referenceVector(dim int, text string, terms []string) []float32 {
	counts := map[string]float64{}
	for _, t := range terms {
		counts["w:"+t]++
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		rs := []rune("^" + w + "$")
		if len(rs) < 5 {
			continue
		}
		for i := 0; i+3 <= len(rs); i++ {
			counts["c:"+string(rs[i:i+3])] += 0.25
		}
	}
	v := make([]float32, dim)
	for f, c := range counts {
		hs := fnv.New64a()
		_, _ = hs.Write([]byte(f))
		x := hs.Sum64()
		w := 1 + math.Log(c)
		if c < 1 {
			w = c
		}
		if x>>63 == 1 {
			w = -w
		}
		v[x%uint64(dim)] += float32(w)
	}
	Normalize(v)
	return v
}

// sameVector reports whether two vectors agree but for the order their
// features were added in (map order), which moves the last bits.
func sameVector(a, b []float32) bool {
	for i := range a {
		if math.Abs(float64(a[i]-b[i])) > 1e-6 {
			return false
		}
	}
	return len(a) == len(b)
}

func FuzzVectorOfTerms(f *testing.F) {
	for _, s := range []string{"", "The crawler re-crawls stale pages.", "인터넷은 언제 개통했나요", "ab abc ÀÉÎ straße", "\xff\xfeab\xc3cd", "x1y2z3 αβγδ", "İstanbul ǅ"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		terms := analyze.Terms(text)
		for _, dim := range []int{384, 7} {
			if got, want := (Hash{Dim: dim}).VectorOfTerms(text, terms), referenceVector(dim, text, terms); !sameVector(got, want) {
				t.Fatalf("%q at %d dimensions: %v, want %v", text, dim, got, want)
			}
		}
	})
}

func BenchmarkVectorOfTerms(b *testing.B) {
	text := strings.Repeat("The crawler re-crawls stale pages every five minutes, and the index keeps up. ", 12)
	terms := analyze.Terms(text)
	h := Hash{}
	for b.Loop() {
		h.VectorOfTerms(text, terms)
	}
}
