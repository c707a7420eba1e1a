package store

import (
	"math"
	"testing"
)

func TestCode(t *testing.T) {
	t.Parallel()
	a := []float32{0.6, -0.8, 0, 0, 0.01}
	b := []float32{0.5, -0.5, 0.5, -0.5, 0.1}
	code := Code(a)
	if len(code) != 4+len(a) {
		t.Fatalf("code of %d bytes", len(code))
	}
	exact := 0.6*0.5 + 0.8*0.5 + 0.01*0.1
	got, ok := CodeDot(b, code)
	if !ok || math.Abs(got-exact) > 0.01*math.Abs(exact) {
		t.Fatalf("code dot %v, exact %v", got, exact)
	}
	if _, ok := CodeDot(b[:4], code); ok {
		t.Fatal("a code of another length compared")
	}
	if got, ok := CodeDot(b, Code(make([]float32, 5))); !ok || got != 0 {
		t.Fatalf("zero vector: %v %v", got, ok)
	}
}
