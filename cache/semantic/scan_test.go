package semantic

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func randomVec(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, n := range append([]int{0, 1, 7, 8, 9, 31, 32, 33, 40, 63, 64, 65, 100}, 256, 384, 512, 768, 1536) {
		a, b := randomVec(r, n), randomVec(r, n+3) // b longer: only len(a) counts
		codes := make([]int8, n+3)
		for i := range codes {
			codes[i] = int8(r.IntN(255) - 127)
		}
		var want, wantInt8 float64
		for i := range a {
			want += float64(a[i]) * float64(b[i])
			wantInt8 += float64(a[i]) * float64(codes[i])
		}
		require.InDelta(t, want, dot(a, b), 1e-4*math.Sqrt(float64(n)+1), "n=%d", n)
		require.InDelta(t, want, dotGeneric(a, b), 1e-4*math.Sqrt(float64(n)+1), "n=%d", n)
		require.InDelta(t, wantInt8, dotInt8(a, codes), 1e-2*math.Sqrt(float64(n)+1), "n=%d", n)
		require.InDelta(t, wantInt8, dotInt8Generic(a, codes), 1e-2*math.Sqrt(float64(n)+1), "n=%d", n)
	}
}

// TestQuantisedScanIsExact holds the int8 first pass to the exact scan's answer, on data made to
// defeat it: rows crowded around the query, so that the codes alone would often pick the wrong
// one.
func TestQuantisedScanIsExact(t *testing.T) {
	if !quantised {
		t.Skip("scans on this processor take no int8 pass")
	}
	r := rand.New(rand.NewPCG(2, 2))
	for _, tc := range []struct {
		name   string
		dim, n int
		spread float64 // how far rows lie from the query; 0 for rows unrelated to it
	}{
		{"random rows", 256, 2000, 0},
		{"random rows, odd dimension", 203, 2000, 0},
		{"rows close to the query", 768, 2000, 0.05},
		{"rows very close to the query", 1536, 1000, 0.002},
		{"rows nearly equal to the query", 384, 3000, 0.0001},
		{"so many rows compared exactly that the scan goes on exactly", 64, 10000, 0.001},
	} {
		t.Run(tc.name, func(t *testing.T) {
			near := func(base []float32) []float32 {
				v := randomVec(r, tc.dim)
				if base != nil {
					for j := range v {
						v[j] = base[j] + float32(tc.spread)*v[j]
					}
				}
				return v
			}
			var base []float32
			if tc.spread > 0 {
				base = randomVec(r, tc.dim)
			}
			ix := New(Options{})
			for i := range tc.n {
				exp := time.Time{}
				if i%10 == 0 {
					exp = t0 // some rows expired, at times the best
				}
				ix.Add("p", strconv.Itoa(i), near(base), exp)
			}
			s := ix.shard("p").slabs[slabKey{"p", tc.dim}]
			now := t0.UnixNano()
			for trial := range 50 {
				q := near(base)
				inv, _ := invNorm(q)
				wantSlot, wantDot := s.scanExact(q, now)
				gotSlot, gotDot := s.scanQuantised(q, inv, now)
				require.Equal(t, wantDot, gotDot, "trial %d", trial)
				require.Equal(t, wantSlot, gotSlot, "trial %d", trial)
			}
		})
	}
}

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
