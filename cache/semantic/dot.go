package semantic

// dotGeneric is the dot product of a and b[:len(a)], with four accumulators so that the
// additions do not wait on one another.
func dotGeneric(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dotInt8Generic is the dot product of a and the int8 vector b[:len(a)].
func dotInt8Generic(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * float32(b[i])
		s1 += a[i+1] * float32(b[i+1])
		s2 += a[i+2] * float32(b[i+2])
		s3 += a[i+3] * float32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}
