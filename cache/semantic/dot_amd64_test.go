package semantic

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKernels holds each vector kernel this processor runs to the float64 products.
func TestKernels(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 and FMA: the portable products are used")
	}
	type kernels struct {
		f32  func(a, b *float32, n int) float32
		int8 func(a *float32, b *int8, n int) float32
	}
	sets := map[string]kernels{"avx2": {dotFMA, dotInt8FMA}}
	if hasAVX512 {
		sets["avx512"] = kernels{dotAVX512, dotInt8AVX512}
	}
	r := rand.New(rand.NewPCG(4, 4))
	for name, k := range sets {
		for _, n := range []int{8, 16, 24, 32, 40, 56, 64, 72, 88, 128, 200, 256, 384, 768, 1536, 3072} {
			a, b := randomVec(r, n), randomVec(r, n)
			codes := make([]int8, n)
			for i := range codes {
				codes[i] = int8(r.IntN(255) - 127)
			}
			var want, wantInt8 float64
			for i := range a {
				want += float64(a[i]) * float64(b[i])
				wantInt8 += float64(a[i]) * float64(codes[i])
			}
			tol := 1e-4 * math.Sqrt(float64(n))
			require.InDelta(t, want, k.f32(&a[0], &b[0], n), tol, "%s n=%d", name, n)
			require.InDelta(t, wantInt8, k.int8(&a[0], &codes[0], n), 127*tol, "%s n=%d", name, n)
		}
	}
}
