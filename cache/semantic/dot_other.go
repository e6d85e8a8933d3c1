//go:build !amd64

package semantic

// quantised tells whether scans take the int8 first pass: without a vector kernel for it, the
// conversions cost more than the memory they save.
const quantised = false

func dot(a, b []float32) float32 { return dotGeneric(a, b) }

func dotInt8(a []float32, b []int8) float32 { return dotInt8Generic(a, b) }
