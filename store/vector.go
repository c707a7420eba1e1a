package store

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeVector packs a vector as little-endian float32s for BLOB/bytea columns.
func EncodeVector(v []float32) []byte {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// DecodeVector is the inverse of EncodeVector.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("decode vector: %d bytes is not a multiple of 4", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Code is a vector quantised to one signed byte a component, scaled by
// the largest magnitude (a float32 before the bytes): a quarter of the
// vector's size, and its dot product with a query within about 1% of the
// exact one, so a scan of codes finds the candidates an exact comparison
// then ranks.
func Code(v []float32) []byte {
	var m float32
	for _, f := range v {
		m = max(m, f, -f)
	}
	b := make([]byte, 4+len(v))
	binary.LittleEndian.PutUint32(b, math.Float32bits(m/127))
	if m == 0 {
		return b
	}
	for i, f := range v {
		b[4+i] = byte(int8(math.Round(float64(f / m * 127))))
	}
	return b
}

// CodeDot is the dot product of a query vector with a Code, or false when
// the code is not of a vector of the query's length.
func CodeDot(q []float32, code []byte) (float64, bool) {
	if len(code) != 4+len(q) {
		return 0, false
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(code))
	var s0, s1, s2, s3 float32
	c := code[4:]
	i := 0
	for ; i+4 <= len(q); i += 4 {
		s0 += q[i] * float32(int8(c[i]))
		s1 += q[i+1] * float32(int8(c[i+1]))
		s2 += q[i+2] * float32(int8(c[i+2]))
		s3 += q[i+3] * float32(int8(c[i+3]))
	}
	for ; i < len(q); i++ {
		s0 += q[i] * float32(int8(c[i]))
	}
	return float64((s0 + s1 + s2 + s3) * scale), true
}
