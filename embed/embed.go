// Package embed turns text into vectors. Embedder is the small interface
// the knowledge base uses; Hash is the offline embedder that needs no
// network or weights; embed/openai speaks the OpenAI-compatible
// /v1/embeddings API (OpenAI, vLLM, Ollama, TEI).
package embed

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

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
	// Each feature is counted under its FNV-1a hash ("w:" and the term, or
	// "c:" and the trigram), hashed where it lies in the text rather than
	// built as a string first: the same features, without an allocation
	// each.
	counts := featureCounts.Get().(map[uint64]float64)
	defer func() {
		// A map a long text grew would cost its size to clear at every
		// later call: it is left to the collector.
		if len(counts) <= 1<<12 {
			clear(counts)
			featureCounts.Put(counts)
		}
	}()
	for _, t := range terms {
		counts[fnvAdd(wordFeature, t)]++
	}
	lower := strings.ToLower(text)
	var starts []int // the byte offsets of a word's runes, then its end
	for i := 0; i < len(lower); {
		r, size := utf8.DecodeRuneInString(lower[i:])
		if !wordRune(r) {
			i += size
			continue
		}
		starts = starts[:0]
		for i < len(lower) {
			if r, size = utf8.DecodeRuneInString(lower[i:]); !wordRune(r) {
				break
			}
			starts = append(starts, i)
			i += size
		}
		starts = append(starts, i)
		// The trigrams of "^" + word + "$", for words of three runes or
		// more: the k-th holds the word's runes k-1 to k+1 that exist.
		n := len(starts) - 1
		if n < 3 {
			continue
		}
		for k := range n {
			x := trigramFeature
			if k == 0 {
				x = fnvAdd(x, "^")
			}
			x = fnvAdd(x, lower[starts[max(k-1, 0)]:starts[min(k+2, n)]])
			if k == n-1 {
				x = fnvAdd(x, "$")
			}
			counts[x] += 0.25
		}
	}
	v := make([]float32, dim)
	for x, c := range counts {
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

// featureCounts holds the maps VectorOfTerms counts features in, kept
// between calls: a map grown anew for each chunk's thousand or so features
// was a fifth of the bytes an ingest allocated.
var featureCounts = sync.Pool{New: func() any { return map[uint64]float64{} }}

// FNV-1a, 64 bits, as hash/fnv computes it.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// The hashes of the features' prefixes.
var (
	wordFeature    = fnvAdd(fnvOffset, "w:")
	trigramFeature = fnvAdd(fnvOffset, "c:")
)

// fnvAdd goes on hashing h with the bytes of s.
func fnvAdd(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime
	}
	return h
}

// wordRune is a rune of a word: the text between others is split off.
func wordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

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
