package embed

import "math"

// Dot is the dot product of a and b over their common length; for unit
// vectors (as a Client returns them) it is their cosine similarity.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= n; i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Cosine is the cosine similarity of a and b, whatever their lengths; 0
// when either is zero or their dimensions differ.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	na, nb := Dot(a, a), Dot(b, b)
	if na == 0 || nb == 0 {
		return 0
	}
	return Dot(a, b) / float32(math.Sqrt(float64(na))*math.Sqrt(float64(nb)))
}

// Normalize scales v to unit length in place and returns it; a zero
// vector stays zero.
func Normalize(v []float32) []float32 {
	n := math.Sqrt(float64(Dot(v, v)))
	if n == 0 {
		return v
	}
	inv := float32(1 / n)
	for i := range v {
		v[i] *= inv
	}
	return v
}
