// Package codec turns an entry's vector into bytes and back: little-endian float32s, the form
// every backend stores (a bytea in PostgreSQL, a blob in SQLite, a hash field in Redis).
package codec

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Vector encodes v; an empty v encodes as nil, so that a store can tell "no vector" by length.
func Vector(v []float32) []byte {
	if len(v) == 0 {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

// ParseVector decodes what Vector encoded; empty bytes are no vector (nil).
func ParseVector(b []byte) ([]float32, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("a vector of %d bytes is not a whole number of float32s", len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}

// Bytes answers b, or nil when b is empty: the backends answer absent Meta as nil whatever
// their driver makes of an empty column.
func Bytes(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	return b
}
