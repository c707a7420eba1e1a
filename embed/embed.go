// Package embed turns text into vectors. Embedder is the small interface
// the knowledge base uses; Hash is the offline embedder that needs no
// network or weights; embed/openai speaks the OpenAI-compatible
// /v1/embeddings API (OpenAI, vLLM, Ollama, TEI).
package embed

import (
	"context"
	"hash/fnv"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/quarryhq/quarry/kb/analyze"
)

// Embedder embeds a batch of texts; the result has one vector per text.
type Embedder interface {
	// Name identifies the model; a knowledge base records it and refuses
	// to be searched with another.
	Name() string
	// Dimension is the vector length, or 0 when not known until the first call.
	Dimension() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// DefaultHashDim is the offline embedder's default dimension.
const DefaultHashDim = 384

// Hash is a deterministic feature-hashing embedder: stemmed words (and CJK
// bigrams) plus character trigrams of each word, hashed into Dim signed
// buckets with sublinear term frequency, L2-normalised. It captures lexical
// and sub-word overlap, not meaning; it is honest about that in its name.
type Hash struct {
	Dim int
}

var _ Embedder = Hash{}

// Name is "hash-v1/<dim>".
func (h Hash) Name() string { return "hash-v1/" + strconv.Itoa(h.dim()) }

// Dimension returns Dim (DefaultHashDim when unset).
func (h Hash) Dimension() int { return h.dim() }

func (h Hash) dim() int {
	if h.Dim <= 0 {
		return DefaultHashDim
	}
	return h.Dim
}

// Embed never fails except on cancellation.
func (h Hash) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = h.Vector(t)
	}
	return out, nil
}

// Vector embeds one text.
func (h Hash) Vector(text string) []float32 {
	return h.VectorOfTerms(text, analyze.Terms(text))
}

// VectorOfTerms embeds a text whose search terms (analyze.Terms) are
// already known, as an ingest knows each chunk's: Vector(text) without
// analysing the text a second time.
func (h Hash) VectorOfTerms(text string, terms []string) []float32 {
	dim := h.dim()
	counts := make(map[string]float64, 2*len(terms))
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

// Normalize scales v to unit length in place (a zero vector stays zero).
func Normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}
