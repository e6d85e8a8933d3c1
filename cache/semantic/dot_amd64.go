package semantic

import "golang.org/x/sys/cpu"

var hasFMA = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// quantised tells whether scans take the int8 first pass; see scanQuantised.
var quantised = hasFMA

// dot is the dot product of a and b[:len(a)].
func dot(a, b []float32) float32 {
	n := len(a) &^ 7
	if !hasFMA || n == 0 {
		return dotGeneric(a, b)
	}
	b = b[:len(a)]
	s := dotFMA(&a[0], &b[0], n)
	if n < len(a) {
		s += dotGeneric(a[n:], b[n:])
	}
	return s
}

// dotInt8 is the dot product of a and the int8 vector b[:len(a)].
func dotInt8(a []float32, b []int8) float32 {
	n := len(a) &^ 7
	if !hasFMA || n == 0 {
		return dotInt8Generic(a, b)
	}
	b = b[:len(a)]
	s := dotInt8FMA(&a[0], &b[0], n)
	if n < len(a) {
		s += dotInt8Generic(a[n:], b[n:])
	}
	return s
}

// dotFMA is the dot product of the n float32 at a and at b, n a multiple of 8, with AVX2 and
// FMA.
//
//go:noescape
func dotFMA(a, b *float32, n int) float32

// dotInt8FMA is the dot product of the n float32 at a and the n int8 at b, n a multiple of 8,
// with AVX2 and FMA.
//
//go:noescape
func dotInt8FMA(a *float32, b *int8, n int) float32
