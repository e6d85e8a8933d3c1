package semantic

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// BenchmarkNearest is the lookup cost of the semantic cache: one query against every entry of
// one partition, of random vectors. In each group, index is Nearest (its allocations reported:
// none); baseline-float32 is the brute force over the same float32 vectors with the same
// product, what Nearest does below quantiseFrom; pure-go is that brute force with the portable
// product, as on a processor without AVX2. entries/s counts the vectors compared.
func BenchmarkNearest(b *testing.B) {
	for _, dim := range []int{256, 768, 1536} {
		for _, n := range []int{1_000, 10_000, 100_000} {
			ix, queries := randomIndex(dim, n, 1)
			s := ix.shard("p0").slabs[slabKey{"p0", dim}]
			group := fmt.Sprintf("dim=%d/entries=%d", dim, n)
			b.Run(group+"/index", func(b *testing.B) {
				b.ReportAllocs()
				lookups(b, n, queries, func(q []float32, now time.Time) {
					if _, ok := ix.Nearest("p0", q, now); !ok {
						b.Fatal("no match")
					}
				})
			})
			b.Run(group+"/baseline-float32", func(b *testing.B) {
				lookups(b, n, queries, func(q []float32, now time.Time) {
					s.scanExact(q, now.UnixNano())
				})
			})
			b.Run(group+"/pure-go", func(b *testing.B) {
				lookups(b, n, queries, func(q []float32, now time.Time) {
					best := float32(-2)
					for off := 0; off < len(s.vecs); off += dim {
						best = max(best, dotGeneric(q, s.vecs[off:off+dim]))
					}
				})
			})
		}
	}
	// A lookup scans its own partition only: 100 partitions of 1,000 cost as one of 1,000.
	ix, queries := randomIndex(768, 100_000, 100)
	b.Run("dim=768/entries=100000/partitions=100/index", func(b *testing.B) {
		b.ReportAllocs()
		lookups(b, 1_000, queries, func(q []float32, now time.Time) {
			if _, ok := ix.Nearest("p0", q, now); !ok {
				b.Fatal("no match")
			}
		})
	})
	// The int8 codes' worst case: entries all near duplicates of one another and of the query
	// (cosine similarity about 0.99), which the codes cannot tell apart.
	ix, queries = nearDuplicates(768, 100_000)
	s := ix.shard("p0").slabs[slabKey{"p0", 768}]
	b.Run("dim=768/entries=100000/near-duplicates/index", func(b *testing.B) {
		lookups(b, 100_000, queries, func(q []float32, now time.Time) {
			if _, ok := ix.Nearest("p0", q, now); !ok {
				b.Fatal("no match")
			}
		})
	})
	b.Run("dim=768/entries=100000/near-duplicates/baseline-float32", func(b *testing.B) {
		lookups(b, 100_000, queries, func(q []float32, now time.Time) {
			s.scanExact(q, now.UnixNano())
		})
	})
}

// nearDuplicates is randomIndex with every vector, and every query, a small step away from one
// vector.
func nearDuplicates(dim, n int) (*Index, [][]float32) {
	r := rand.New(rand.NewPCG(2, uint64(dim)))
	base := randomVec(r, dim)
	near := func() []float32 {
		v := randomVec(r, dim)
		for i := range v {
			v[i] = base[i] + 0.1*v[i]
		}
		return v
	}
	ix := New(Options{MaxEntries: n})
	for i := range n {
		ix.Add("p0", "k"+strconv.Itoa(i), near(), time.Time{})
	}
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = near()
	}
	return ix, queries
}

// randomIndex returns an index of n random vectors of dim, spread over partitions p0, p1…, and
// queries to look up.
func randomIndex(dim, n, partitions int) (*Index, [][]float32) {
	r := rand.New(rand.NewPCG(1, uint64(dim)))
	ix := New(Options{MaxEntries: n})
	for i := range n {
		ix.Add("p"+strconv.Itoa(i%partitions), "k"+strconv.Itoa(i), randomVec(r, dim), time.Time{})
	}
	queries := make([][]float32, 64)
	for i := range queries {
		queries[i] = randomVec(r, dim)
	}
	return ix, queries
}

// lookups times lookup over queries, each comparing scanned vectors, and reports the mean
// lookup and the vectors compared per second.
func lookups(b *testing.B, scanned int, queries [][]float32, lookup func([]float32, time.Time)) {
	now := time.Now()
	i := 0
	for b.Loop() {
		lookup(queries[i%len(queries)], now)
		i++
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N), "lookup-µs")
	b.ReportMetric(float64(scanned)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
}
